package netstudy

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"pqrepro/internal/render"
)

// hygieneTables renders paper/generated/net-hygiene.tex: the late-packet
// flag per comparison (tab:net-late) and the serial controls
// (tab:net-control). A run without the records gets the tables with one
// row saying so, so that the paper's references still resolve.
func hygieneTables(res *Results) (string, error) {
	h := res.Hygiene
	if h == nil {
		h = &Hygiene{Note: "no measurement hygiene in these results"}
	}
	b, t := res.Design.Groups[0], res.Design.Groups[1]
	late := render.Table{
		Label: "tab:net-late",
		Caption: fmt.Sprintf("Handshakes touched by a late packet (one the link emulator wrote more than %s ms after its due time, on the handshake's flow and within its window) per scenario and round, flagged of the sample and share per group, and the median difference (%s minus %s, ms) on all handshakes (the study's estimate) and without the flagged ones, with its 95\\,\\%% circular block bootstrap interval. Verdict: direction of the comparison, same or changed without the flagged handshakes (a comparison has no test of its own: significance is tested over a scenario's rounds).",
			render.Fixed(float64(h.LateBoundMs), 1), groupTeX(t), groupTeX(b)),
		Align:  "lrrrrrl",
		Header: []string{"Scenario", "Round", "Flagged " + groupTeX(b), "Flagged " + groupTeX(t), "$\\Delta$ all", "$\\Delta$ without [95\\,\\% CI]", "Verdict"},
	}
	flag := func(sc string, rd int, g string) string {
		for _, s := range h.Series {
			if s.Scenario == sc && s.Round == rd && s.Group == g {
				return fmt.Sprintf("%s (%s\\,\\%%)", intTeX(s.Flagged), render.Fixed(float64(s.SharePct), 2))
			}
		}
		return "---"
	}
	changed := map[string]bool{}
	for _, v := range h.VerdictChanges {
		changed[v] = true
	}
	for i, c := range res.Comparisons {
		w := "---"
		if i < len(h.WithoutFlagged.Comparisons) {
			x := h.WithoutFlagged.Comparisons[i]
			w = diffCI(x.DiffMs, x.DiffLowerMs, x.DiffUpperMs)
		}
		v := "same"
		if changed[fmt.Sprintf("%s/%d", c.Scenario, c.Round)] {
			v = "changed"
		}
		late.Rows = append(late.Rows, []string{render.Escape(c.Scenario), intTeX(c.Round), flag(c.Scenario, c.Round, b), flag(c.Scenario, c.Round, t), signed(c.DiffMs, 3), w, v})
	}
	late.Notes = fmt.Sprintf("%s late packets in the run, %s of them on a recorded handshake's flow and window; %s of %s handshakes of the sample flagged.",
		intTeX(h.LateEvents), intTeX(h.LateTouching), intTeX(h.Flagged), intTeX(h.Sample))
	if h.Note != "" && h.LateEvents == 0 && h.LateBoundMs == 0 {
		late.Notes = render.Escape(h.Note)
	}
	s1, err := late.Latex()
	if err != nil {
		return "", err
	}
	c := h.Control
	ctl := render.Table{
		Label:   "tab:net-control",
		Caption: "Serial controls: series run a second time, alone, after every other series (the same link seed), against the same series run concurrently. Medians of $T_{hs}$ in ms; shift = concurrent minus alone, with its 95\\,\\% interval from the circular block bootstrap of both series, and the Hodges--Lehmann shift (its distribution-free interval assumes independent handshakes and is not shown).",
		Align:   "llrrrrr",
		Header:  []string{"Series", "Toolchain", "$n$", "Concurrent", "Alone", "Shift [95\\,\\% CI]", "HL"},
	}
	if c == nil || len(c.Series) == 0 {
		ctl.Rows = append(ctl.Rows, []string{"---", "---", "---", "---", "---", "---", "---"})
		ctl.Notes = "This run has no serial controls."
	} else {
		var notes []string
		for _, s := range c.Series {
			ctl.Rows = append(ctl.Rows, []string{
				render.Escape(s.Scenario) + " " + intTeX(s.Round) + " " + groupTeX(s.Group), render.Escape(s.Toolchain),
				intTeX(s.NConcurrent) + "/" + intTeX(s.NAlone), ms(s.ConcurrentMs), ms(s.AloneMs),
				diffCI(s.ShiftMs, s.ShiftLowerMs, s.ShiftUpperMs), signed(s.HLMs, 3),
			})
			if s.Note != "" {
				notes = append(notes, fmt.Sprintf("%s %s %s: %s.", render.Escape(s.Scenario), intTeX(s.Round), groupTeX(s.Group), render.Escape(s.Note)))
			}
		}
		var diffs []string
		for _, d := range c.Diffs {
			diffs = append(diffs, fmt.Sprintf("%s %s: %s ms concurrent, %s ms alone", render.Escape(d.Scenario), intTeX(d.Round), signed(d.ConcurrentMs, 3), signed(d.AloneMs, 3)))
		}
		ctl.Notes = fmt.Sprintf("$n$: handshakes concurrent/alone. Largest absolute shift %s ms (%s); smallest median difference the study reports %s ms (%s).",
			ms(c.MaxShiftMs), atTeX(c.MaxShiftAt), ms(c.SmallestDiffMs), atTeX(c.SmallestAt))
		if len(diffs) > 0 {
			ctl.Notes += " Hybrid's difference: " + strings.Join(diffs, "; ") + "."
		}
		if len(notes) > 0 {
			ctl.Notes += " " + strings.Join(notes, " ")
		}
	}
	s2, err := ctl.Latex()
	if err != nil {
		return "", err
	}
	return s1 + s2, nil
}

// hygieneNumbers sets the hygiene macros (\NetLate..., \NetFlagged...,
// \NetControl...); every macro is set for every run ("---" or 0 when the
// run lacks the records) so that the paper compiles on any run.
func hygieneNumbers(res *Results, set func(name, v string)) {
	h := res.Hygiene
	if h == nil {
		h = &Hygiene{}
	}
	set("ParallelSeries", strconv.Itoa(max(h.ParallelSeries, 1)))
	set("ExclusiveScenarios", render.Escape(cmp.Or(strings.Join(h.Exclusive, ", "), "none")))
	set("WallTimeMin", render.Fixed(float64(h.WallTimeMin), 1))
	set("LateRecorded", b01(h.LateBoundMs > 0))
	set("LateBoundMs", render.Fixed(float64(h.LateBoundMs), 1))
	set("LateEvents", intTeX(h.LateEvents))
	set("LateTouching", intTeX(h.LateTouching))
	set("Flagged", intTeX(h.Flagged))
	set("FlaggedSample", intTeX(h.Sample))
	set("FlaggedShare", render.Fixed(float64(h.SharePct), 2))
	var top *FlagSeries
	for i := range h.Series {
		if top == nil || h.Series[i].SharePct > top.SharePct {
			top = &h.Series[i]
		}
	}
	if top == nil {
		set("FlaggedMaxShare", "---")
		set("FlaggedMaxShareAt", "---")
	} else {
		set("FlaggedMaxShare", render.Fixed(float64(top.SharePct), 2))
		set("FlaggedMaxShareAt", fmt.Sprintf("%s, round %s, %s", render.Escape(top.Scenario), intTeX(top.Round), groupTeX(top.Group)))
	}
	set("VerdictChanges", strconv.Itoa(len(h.VerdictChanges)))
	wr := h.WithoutFlagged.Reproduced
	set("CleanDiffMsMin", ms(wr.DiffMsMin))
	set("CleanDiffMsMax", ms(wr.DiffMsMax))
	set("CleanRelIncFastest", render.Fixed(float64(wr.RelIncFastestPct), 2))
	set("CleanRelIncSlowest", render.Fixed(float64(wr.RelIncSlowestPct), 2))
	set("CleanHigherLatency", strconv.Itoa(wr.HigherLatency))
	// The largest change of a difference without the flagged handshakes.
	big, at := 0.0, "---"
	for i, c := range h.WithoutFlagged.Comparisons {
		if i >= len(res.Comparisons) {
			break
		}
		if d := float64(c.DiffMs - res.Comparisons[i].DiffMs); math.Abs(d) >= math.Abs(big) {
			big, at = d, fmt.Sprintf("%s, round %s", render.Escape(c.Scenario), intTeX(c.Round))
		}
	}
	set("CleanMaxChangeMs", signed(Num(big), 3))
	set("CleanMaxChangeAt", at)
	c := h.Control
	if c == nil {
		c = &Control{SmallestDiffMs: Num(math.NaN()), MaxShiftMs: Num(math.NaN()), MaxShiftBoundMs: Num(math.NaN())}
	}
	set("ControlRecorded", b01(len(c.Series) > 0))
	set("ControlSeries", strconv.Itoa(len(c.Series)))
	set("SmallestDiffMs", ms(c.SmallestDiffMs))
	set("SmallestDiffAt", atTeX(c.SmallestAt))
	set("ControlMaxShiftMs", ms(c.MaxShiftMs))
	set("ControlMaxShiftAt", atTeX(c.MaxShiftAt))
	set("ControlMaxShiftBoundMs", ms(c.MaxShiftBoundMs))
	set("ControlExceeds", b01(c.Exceeds))
	set("ControlExceedsBound", b01(c.ExceedsBound))
	lo, hi := Num(math.NaN()), Num(math.NaN())
	for i, x := range c.Series {
		if i == 0 || x.ShiftMs < lo {
			lo = x.ShiftMs
		}
		if i == 0 || x.ShiftMs > hi {
			hi = x.ShiftMs
		}
	}
	// The smallest difference among the scenarios whose series ran
	// concurrently (not exclusive), the one a concurrent shift competes with.
	conc := math.Inf(1)
	concAt := ""
	for _, x := range res.Comparisons {
		if !slices.Contains(h.Exclusive, x.Scenario) && math.Abs(float64(x.DiffMs)) < conc {
			conc, concAt = math.Abs(float64(x.DiffMs)), fmt.Sprintf("%s/%d", x.Scenario, x.Round)
		}
	}
	set("ConcurrentSmallestDiffMs", ms(Num(conc)))
	set("ConcurrentSmallestDiffAt", atTeX(concAt))
	set("ControlShiftMinMs", signed(lo, 3))
	set("ControlShiftMaxMs", signed(hi, 3))
	dbig := Num(math.NaN())
	for _, d := range c.Diffs {
		if math.IsNaN(float64(dbig)) || math.Abs(float64(d.ShiftMs)) > math.Abs(float64(dbig)) {
			dbig = d.ShiftMs
		}
	}
	set("ControlDiffShiftMs", signed(dbig, 3))
}

// atTeX renders a "scenario/round[/group]" reference of the hygiene
// results as "scenario, round N[, group]".
func atTeX(at string) string {
	parts := strings.Split(at, "/")
	if at == "" || len(parts) < 2 {
		return "---"
	}
	out := render.Escape(parts[0]) + ", round "
	if n, err := strconv.Atoi(parts[1]); err == nil {
		out += intTeX(n)
	} else {
		out += render.Escape(parts[1])
	}
	if len(parts) > 2 {
		out += ", " + groupTeX(parts[2])
	}
	return out
}
