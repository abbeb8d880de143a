package netstudy

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"pqrepro/analysis/stats"
	"pqrepro/internal/render"
)

// modelTable is net-model.tex: each comparison's difference beside the
// prediction from the run's host probe and its link
// (NormalisedDifferences), or why it has none.
func modelTable(res *Results) (string, error) {
	b, t := res.Design.Groups[0], res.Design.Groups[1]
	tab := render.Table{
		Label: "tab:net-model",
		Caption: fmt.Sprintf("What the host and the link predict, fitted to nothing: per comparison the observed median difference (%s minus %s, ms, with its block bootstrap standard error), the host probe's CPU term (the %s handshake's span from ClientHello to client Finished without a network, minus %s's, mean of the probes before and after the series), the bytes term (the extra IP bytes of %s's median connection, both directions, serialised at the link's rate), their sum, and observed over predicted. Descriptive: no bound was registered for this model, so it tests nothing.",
			groupTeX(t), groupTeX(b), groupTeX(t), groupTeX(b), groupTeX(t)),
		Align:  "lrrrrrr",
		Header: []string{"Scenario", "Round", "Observed (SE)", "CPU", "Bytes (extra B)", "Predicted", "Observed/predicted"},
	}
	why := map[string][]string{}
	for _, n := range res.Normalised {
		row := []string{render.Escape(n.Scenario), intTeX(n.Round), fmt.Sprintf("%s (%s)", signed(n.ObservedMs, 3), ms(n.SEMs)), "---", "---", "---", "---"}
		if !math.IsNaN(float64(n.PredictedMs)) {
			row[3], row[4], row[5] = ms(n.CPUMs), fmt.Sprintf("%s (%s)", ms(n.BytesMs), intTeX(int(math.Round(float64(n.ExtraBytes))))), ms(n.PredictedMs)
		}
		if n.NotJudged == "" {
			row[6] = render.Fixed(float64(n.Ratio), 2)
		} else {
			why[n.NotJudged] = append(why[n.NotJudged], render.Escape(n.Scenario)+" "+intTeX(n.Round))
		}
		tab.Rows = append(tab.Rows, row)
	}
	if len(tab.Rows) == 0 {
		tab.Rows = append(tab.Rows, []string{"---", "---", "---", "---", "---", "---", "---"})
	}
	var notes []string
	for _, r := range slices.Sorted(maps.Keys(why)) {
		notes = append(notes, fmt.Sprintf("Not formed for %s: %s.", strings.Join(why[r], ", "), render.Escape(r)))
	}
	tab.Notes = strings.Join(notes, " ")
	return tab.Latex()
}

// modelSentence is \NetModelSentence: what the model's ratios say, in
// generated words, or why the run has none.
func modelSentence(res *Results) string {
	var formed []NormalisedDifference
	reasons := map[string]int{}
	for _, n := range res.Normalised {
		if n.NotJudged == "" {
			formed = append(formed, n)
		} else {
			reasons[n.NotJudged]++
		}
	}
	total := len(res.Normalised)
	if len(formed) == 0 {
		if total == 0 {
			return "This run has no comparison to set beside a prediction."
		}
		r := slices.Sorted(maps.Keys(reasons))
		if len(r) == 1 {
			return fmt.Sprintf("No difference of this run is set beside a prediction (Table~\\ref{tab:net-model}): %s.", render.Escape(r[0]))
		}
		return fmt.Sprintf("No difference of this run is set beside a prediction (Table~\\ref{tab:net-model}, notes give the %d reasons).", len(r))
	}
	lo, hi := math.Inf(1), math.Inf(-1)
	byScenario := map[string][]float64{}
	var order []string
	for _, n := range formed {
		q := float64(n.Ratio)
		lo, hi = min(lo, q), max(hi, q)
		if byScenario[n.Scenario] == nil {
			order = append(order, n.Scenario)
		}
		byScenario[n.Scenario] = append(byScenario[n.Scenario], q)
	}
	var per []string
	for _, sc := range order {
		m, _ := stats.Median(byScenario[sc]) // never empty
		per = append(per, fmt.Sprintf("%s %s", render.Escape(sc), render.Fixed(m, 2)))
	}
	s := fmt.Sprintf("Observed over predicted ranges from %s to %s over the %d of %d comparisons whose prediction is formed (median per scenario: %s; Table~\\ref{tab:net-model})",
		render.Fixed(lo, 2), render.Fixed(hi, 2), len(formed), total, strings.Join(per, ", "))
	switch left := total - len(formed); {
	case left == 1:
		s += "; the other one is not formed, for the reason in the table's notes"
	case left > 1:
		s += fmt.Sprintf("; the other %d are not formed, for the reasons in the table's notes", left)
	}
	return s + "."
}
