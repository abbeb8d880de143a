package netstudy

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"gonum.org/v1/gonum/stat/distuv"

	"pqrepro/analysis/stats"
	"pqrepro/internal/render"
)

// Tables renders the LaTeX outputs of the results, by output path.
func Tables(res *Results) (map[string]string, error) {
	out := map[string]string{}
	var errs []error
	add := func(name string, s string, err error) {
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", name, err))
		}
		out[name] = s
	}
	s, err := comparisonTable(res)
	add(TableComparison, s, err)
	s, err = bytesTable(res)
	add(TableBytes, s, err)
	s, err = serialTable(res)
	add(TableSerial, s, err)
	s, err = toolchainTable(res)
	add(TableToolchains, s, err)
	s, err = hygieneTables(res)
	add(TableHygiene, s, err)
	s, err = modelTable(res)
	add(TableModel, s, err)
	s, err = numbers(res)
	add(NumbersFile, s, err)
	return out, errors.Join(errs...)
}

func groupTeX(g string) string {
	if g == "X25519MLKEM768" {
		return "X25519\\-MLKEM768"
	}
	return render.Escape(g)
}

func ms(x Num) string { return render.Fixed(float64(x), 3) }

func signed(x Num, d int) string {
	s := render.Fixed(float64(x), d)
	if float64(x) >= 0 && !strings.HasPrefix(s, "-") && s != "---" {
		s = "+" + s
	}
	return strings.Replace(s, "-", "$-$", 1)
}

// intTeX writes an integer with thin-space thousands separators.
func intTeX(n int) string {
	s := strconv.Itoa(n)
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteString("{,}")
		}
		b.WriteRune(c)
	}
	return b.String()
}

func (res *Results) series(scenario string, round int, group string) *Series {
	for i := range res.Series {
		s := &res.Series[i]
		if s.Scenario == scenario && s.Round == round && s.Group == group {
			return s
		}
	}
	return nil
}

func comparisonTable(res *Results) (string, error) {
	b, t := res.Design.Groups[0], res.Design.Groups[1]
	tab := render.Table{
		Label: "tab:net-comparisons",
		Caption: fmt.Sprintf("Handshake latency of %s against %s: the %d comparisons (scenario $\\times$ round), one series per group each. Medians of $T_{hs}$ in ms, difference with its 95\\,\\%% interval from the circular block bootstrap of both series (%d resamples, seed %d; block lengths by Politis and White), Vargha--Delaney $A_{12}$ = P(%s slower), and the series' effective sample sizes on ranks ($n_{\\mathrm{eff}}$, %s/%s). A comparison contrasts one series per group, and the handshakes of a series are not replications, so its interval is descriptive and no $p$ is given per comparison: significance is tested at the level of the design, over a scenario's rounds (Table~\\ref{tab:net-scenarios}).",
			groupTeX(t), groupTeX(b), len(res.Comparisons), res.Params.BootstrapResamples, res.Params.BootstrapSeed, groupTeX(t), groupTeX(b), groupTeX(t)),
		Align:  "lrrrrrrrlr",
		Header: []string{"Scenario", "RTT", "Round", "Failed", groupTeX(b), groupTeX(t), "$\\Delta$ ms [95\\,\\% CI]", "$\\Delta$ \\%", "$A_{12}$", "$n_{\\mathrm{eff}}$"},
	}
	for _, c := range res.Comparisons {
		fb, ft := 0, 0
		if s := res.series(c.Scenario, c.Round, b); s != nil {
			fb = s.Failed
		}
		if s := res.series(c.Scenario, c.Round, t); s != nil {
			ft = s.Failed
		}
		tab.Rows = append(tab.Rows, []string{
			render.Escape(c.Scenario), render.Fixed(c.RTTms, 1), intTeX(c.Round), fmt.Sprintf("%d/%d", fb, ft),
			ms(c.BaseMedianMs), ms(c.TargetMedianMs), diffCI(c.DiffMs, c.DiffLowerMs, c.DiffUpperMs),
			signed(c.DiffPct, 2), render.Fixed(float64(c.A12), 3) + " " + render.Escape(c.A12Magnitude),
			neffTeX(c.NEffBase) + "/" + neffTeX(c.NEffTarget),
		})
	}
	p := res.Published
	tab.Notes = fmt.Sprintf("Published (round %s): differences %s to %s ms, relative increase %s\\,\\%% (fastest) to %s\\,\\%% (slowest). RTT in ms; Failed: failed handshakes (%s/%s). The Mann--Whitney test, which treats the handshakes as independent, stays in results/net.json as a supplement.",
		intTeX(p.Round), render.Fixed(p.DiffMsMin, 3), render.Fixed(p.DiffMsMax, 3), render.Fixed(p.RelIncFastestPct, 2), render.Fixed(p.RelIncSlowestPct, 2), groupTeX(b), groupTeX(t))
	if notes := comparisonNotes(res.Comparisons); notes != "" {
		tab.Notes += " " + notes
	}
	s1, err := tab.Latex()
	if err != nil {
		return "", err
	}
	s2, err := scenarioTable(res)
	return s1 + s2, err
}

// comparisonNotes lists why comparisons have no interval ("---").
func comparisonNotes(cs []Comparison) string {
	var out []string
	for _, c := range cs {
		if c.Note != "" {
			out = append(out, fmt.Sprintf("%s %s: %s.", render.Escape(c.Scenario), intTeX(c.Round), render.Escape(c.Note)))
		}
	}
	return strings.Join(out, " ")
}

// scenarioTable is tab:net-scenarios: each scenario's difference over
// its series (rounds), the interval at the top level of the design.
func scenarioTable(res *Results) (string, error) {
	tab := render.Table{
		Label:   "tab:net-scenarios",
		Caption: "A scenario's difference over its series: the rounds are replications of the same comparison, so the interval for the scenario is over them (Kalibera and Jones). Per scenario, the rounds' median differences (ms), how far they disagree beyond their block bootstrap standard errors (Cochran's $Q$ with its $p$, $I^2$), and their mean with the Student $t$ interval over the $k$ rounds ($k-1$ degrees of freedom) and the one-sample $t$ test's $p$ ($n_{\\mathrm{eff}} = k$).",
		Align:   "lrlrrrrl",
		Header:  []string{"Scenario", "RTT", "$\\Delta$ per round", "$Q$", "$p_Q$", "$I^2$", "Mean [95\\,\\% $t$ CI]", "$p_t$ ($k$)"},
	}
	for _, e := range res.Scenarios {
		tab.Rows = append(tab.Rows, scenarioRow(e, render.Fixed(e.RTTms, 1)))
	}
	if notes := scenarioNotes(res.Scenarios); notes != "" {
		tab.Notes = notes
	}
	return tab.Latex()
}

// scenarioRow renders one ScenarioEffect.
func scenarioRow(e ScenarioEffect, rtt string) []string {
	ds := make([]string, len(e.DiffsMs))
	for i, d := range e.DiffsMs {
		ds[i] = signed(d, 3)
	}
	return []string{render.Escape(e.Scenario), rtt, strings.Join(ds, ", "), render.Fixed(float64(e.Q), 1), pval(e.QP),
		render.Fixed(float64(e.I2), 2), diffCI(e.MeanMs, e.LowerMs, e.UpperMs), pval(e.P) + fmt.Sprintf(" (%d)", e.K)}
}

func scenarioNotes(es []ScenarioEffect) string {
	var out []string
	for _, e := range es {
		if e.Note != "" {
			out = append(out, fmt.Sprintf("%s: %s.", render.Escape(e.Scenario), render.Escape(e.Note)))
		}
	}
	return strings.Join(out, " ")
}

// diffCI renders "d [lo, hi]", the interval "---" when missing.
func diffCI(d, lo, hi Num) string {
	if math.IsNaN(float64(lo)) || math.IsNaN(float64(hi)) {
		return signed(d, 3) + " [---]"
	}
	return fmt.Sprintf("%s [%s, %s]", signed(d, 3), signed(lo, 3), signed(hi, 3))
}

// b01 is a TeX \ifnum flag.
func b01(v bool) string {
	if v {
		return "1"
	}
	return "0"
}

// neffTeX renders an effective sample size, rounded to an integer.
func neffTeX(n Num) string {
	if math.IsNaN(float64(n)) {
		return "---"
	}
	return intTeX(int(math.Round(float64(n))))
}

func bytesTable(res *Results) (string, error) {
	b, t := res.Design.Groups[0], res.Design.Groups[1]
	tab := render.Table{
		Label:   "tab:net-bytes",
		Caption: "Bytes per connection (medians, both directions, SYN to close) on two bases: IP datagram bytes (frame) and TCP payload bytes, and their growth.",
		Align:   "lrrrrrrr",
		Header:  []string{"Scenario", "Round", "Frame " + groupTeX(b), "Frame " + groupTeX(t), "Growth \\%", "Payload " + groupTeX(b), "Payload " + groupTeX(t), "Growth \\%"},
	}
	for _, c := range res.Comparisons {
		tab.Rows = append(tab.Rows, []string{
			render.Escape(c.Scenario), intTeX(c.Round),
			render.Fixed(float64(c.BaseFrame), 0), render.Fixed(float64(c.TargetFrame), 0), signed(c.FrameGrowthPct, 1),
			render.Fixed(float64(c.BasePayload), 0), render.Fixed(float64(c.TargetPayload), 0), signed(c.PayloadGrowthPct, 1),
		})
	}
	tab.Notes = fmt.Sprintf("Published: volume grew by about %s--%s\\,\\%% (counting basis not stated).", render.Fixed(res.Published.VolumeGrowthMinPct, 0), render.Fixed(res.Published.VolumeGrowthMaxPct, 0))
	return tab.Latex()
}

func serialTable(res *Results) (string, error) {
	L := res.Params.MaxLag
	tab := render.Table{
		Label:   "tab:net-serial",
		Caption: fmt.Sprintf("Serial dependence of each latency series (handshakes in time order), on the raw values and on their ranks: the effective sample size on ranks $n_{\\mathrm{eff}} = n/(1 + 2\\sum_{k=1}^{K} r_k)$ ($K$ by Geyer's initial positive sequence), the block length $b$ of the series' block bootstrap (Politis and White, on ranks), lag-1 autocorrelation of the values and of the ranks, the Ljung--Box $p$ at lag %d of both, and the runs test about the median.", L),
		Align:   "llrrrrrrrrrr",
		Header:  []string{"Scenario", "Group", "Round", "$n$", "$n_{\\mathrm{eff}}$", "$b$", "$r_1$", "$r_1^{\\mathrm{rank}}$", "$p_Q$", "$p_Q^{\\mathrm{rank}}$", "$z_{runs}$", "$p_{runs}$"},
	}
	var notes []string
	for _, s := range res.Series {
		first := func(a []Num) Num {
			if len(a) == 0 {
				return Num(math.NaN())
			}
			return a[0]
		}
		b := "---"
		if s.Serial.Block > 0 {
			b = intTeX(s.Serial.Block)
		}
		tab.Rows = append(tab.Rows, []string{
			render.Escape(s.Scenario), groupTeX(s.Group), intTeX(s.Round), intTeX(s.OK), neffTeX(s.Serial.NEff), b,
			signed(first(s.Serial.ACF), 3), signed(first(s.Serial.RankACF), 3), pval(s.Serial.LjungBoxP), pval(s.Serial.RankLjungBoxP),
			signed(s.Serial.RunsZ, 2), pval(s.Serial.RunsP),
		})
		if s.Serial.Note != "" {
			notes = append(notes, fmt.Sprintf("%s %s %s: %s.", render.Escape(s.Scenario), groupTeX(s.Group), intTeX(s.Round), render.Escape(s.Serial.Note)))
		}
	}
	tab.Notes = "ACF as statsmodels acf (adjusted=False), on the values and on their mid-ranks; Ljung--Box with model\\_df = 0; runs test as statsmodels runstest\\_1samp (cutoff = median, correction). A heavy tail hides dependence from the raw ACF; the ranks show it. $p$ below $10^{-6}$ is printed as $<10^{-6}$."
	if len(notes) > 0 {
		tab.Notes += " " + strings.Join(notes, " ")
	}
	return tab.Latex()
}

// pval renders a p-value: three decimals, "$<$0.001" to "$<10^{-6}$"
// with three significant digits and a power of ten in between, never
// below stats.PFloor; NaN is "---".
func pval(p Num) string {
	f := float64(p)
	switch {
	case math.IsNaN(f):
		return "---"
	case f < stats.PFloor:
		return "$<10^{-6}$"
	case f < 0.001:
		e := int(math.Floor(math.Log10(f)))
		m := f / math.Pow(10, float64(e))
		if m >= 9.995 {
			m, e = m/10, e+1
		}
		return fmt.Sprintf("$%.2f\\times10^{%d}$", m, e)
	}
	return render.Fixed(f, 3)
}

// MacroSuffix turns a scenario name into letters for a macro name:
// "wan-quick" -> "WanQuick"; digits are spelt out.
func MacroSuffix(s string) string {
	digits := []string{"Zero", "One", "Two", "Three", "Four", "Five", "Six", "Seven", "Eight", "Nine"}
	var b strings.Builder
	up := true
	for _, r := range s {
		switch {
		case r >= '0' && r <= '9':
			b.WriteString(digits[r-'0'])
			up = true
		case unicode.IsLetter(r) && r < unicode.MaxASCII:
			if up {
				r = unicode.ToUpper(r)
			}
			b.WriteRune(r)
			up = false
		default:
			up = true
		}
	}
	return b.String()
}

// scenarioRoles names each scenario of the run by its role, for macro
// names: the name before its first "-" ("wan-quick" plays the role of
// "wan" at the quick profile), so that the paper's text finds the same
// macros (\NetDiffPctWan) at every profile. A role two scenarios of the
// run share keeps their full names.
func scenarioRoles(res *Results) map[string]string {
	role, count := map[string]string{}, map[string]int{}
	for _, s := range res.Design.Scenarios {
		r, _, _ := strings.Cut(s.Name, "-")
		role[s.Name] = r
		count[r]++
	}
	for name, r := range role {
		if count[r] > 1 {
			role[name] = name
		}
	}
	return role
}

func numbers(res *Results) (string, error) {
	var n render.Numbers
	var errs []error
	set := func(name, v string) {
		if err := n.Set("Net"+name, v); err != nil {
			errs = append(errs, err)
		}
	}
	r, p := res.Reproduced, res.Published
	set("Handshakes", intTeX(r.Handshakes))
	set("Attempts", intTeX(r.Attempts))
	set("Failed", intTeX(r.Failed))
	set("Comparisons", strconv.Itoa(r.Comparisons))
	set("LargestRound", intTeX(r.Round))
	set("DiffMsMin", ms(r.DiffMsMin))
	set("DiffMsMax", ms(r.DiffMsMax))
	set("RelIncFastest", render.Fixed(float64(r.RelIncFastestPct), 2))
	set("RelIncSlowest", render.Fixed(float64(r.RelIncSlowestPct), 2))
	set("FastestScenario", render.Escape(r.Fastest))
	set("SlowestScenario", render.Escape(r.Slowest))
	set("FrameGrowthMin", render.Fixed(float64(r.FrameGrowthMin), 1))
	set("FrameGrowthMax", render.Fixed(float64(r.FrameGrowthMax), 1))
	set("PayloadGrowthMin", render.Fixed(float64(r.PayloadGrowthMin), 1))
	set("PayloadGrowthMax", render.Fixed(float64(r.PayloadGrowthMax), 1))
	set("HigherLatency", strconv.Itoa(r.HigherLatency))
	set("HigherBytes", strconv.Itoa(r.HigherBytes))
	set("DirectionPhrase", directionPhrase(res.Comparisons))
	set("ModelSentence", modelSentence(res))
	set("Significant", strconv.Itoa(r.Significant))
	set("PubHandshakes", intTeX(p.Handshakes))
	set("PubDiffMsMin", render.Fixed(p.DiffMsMin, 3))
	set("PubDiffMsMax", render.Fixed(p.DiffMsMax, 3))
	set("PubRelIncFastest", render.Fixed(p.RelIncFastestPct, 2))
	set("PubRelIncSlowest", render.Fixed(p.RelIncSlowestPct, 2))
	set("PubVolumeGrowthMin", render.Fixed(p.VolumeGrowthMinPct, 0))
	set("PubVolumeGrowthMax", render.Fixed(p.VolumeGrowthMaxPct, 0))
	set("CertKey", render.Escape(res.Design.CertKey))
	set("Order", render.Escape(res.Design.Order))
	role := scenarioRoles(res)
	for _, s := range res.Design.Scenarios {
		suf := MacroSuffix(role[s.Name])
		set("RTT"+suf, render.Fixed(s.RTTms, 1))
		set("Loss"+suf, render.Fixed(s.LossPct, 1))
	}
	toolchainNumbers(res, set)
	hygieneNumbers(res, set)
	dependenceNumbers(res, set)
	for _, c := range res.Comparisons {
		if c.Round != r.Round {
			continue
		}
		suf := MacroSuffix(role[c.Scenario])
		set("DiffMs"+suf, ms(c.DiffMs))
		set("DiffPct"+suf, render.Fixed(float64(c.DiffPct), 2))
		set("AOneTwo"+suf, render.Fixed(float64(c.A12), 3))
		set("MedianBase"+suf, ms(c.BaseMedianMs))
		set("MedianTarget"+suf, ms(c.TargetMedianMs))
	}
	return n.Latex(), errors.Join(errs...)
}

// dependenceNumbers sets the macros of the inference for dependent
// series (inference.go): the rank-versus-raw lag-1 autocorrelation of the
// fastest scenario's series, how many series the raw Ljung-Box passes and
// the rank one rejects, the effective sample sizes and block lengths, the
// block interval's width against the independent one, and each
// scenario's between-series interval.
func dependenceNumbers(res *Results, set func(name, v string)) {
	inf := math.Inf(1)
	rawLo, rawHi, rankLo, rankHi := inf, -inf, inf, -inf
	shareLo, shareAt := inf, ""
	bLo, bHi := math.MaxInt, 0
	rankOnly, rankDep := 0, 0
	for _, s := range res.Series {
		sr := s.Serial
		if s.Scenario == res.Reproduced.Fastest && len(sr.ACF) > 0 && len(sr.RankACF) > 0 {
			rawLo, rawHi = min(rawLo, float64(sr.ACF[0])), max(rawHi, float64(sr.ACF[0]))
			rankLo, rankHi = min(rankLo, float64(sr.RankACF[0])), max(rankHi, float64(sr.RankACF[0]))
		}
		if float64(sr.RankLjungBoxP) < res.Params.Alpha {
			rankDep++
			if float64(sr.LjungBoxP) >= res.Params.Alpha {
				rankOnly++
			}
		}
		if v := float64(sr.NEff) / float64(s.OK); s.OK > 0 && v < shareLo {
			shareLo, shareAt = v, fmt.Sprintf("%s, round %s, %s", render.Escape(s.Scenario), intTeX(s.Round), groupTeX(s.Group))
		}
		if sr.Block > 0 {
			bLo, bHi = min(bLo, sr.Block), max(bHi, sr.Block)
		}
	}
	orDash := func(v float64, f func(float64) string) string {
		if math.IsInf(v, 0) || math.IsNaN(v) {
			return "---"
		}
		return f(v)
	}
	sg := func(v float64) string { return signed(Num(v), 3) }
	set("FastRawROneMin", orDash(rawLo, sg))
	set("FastRawROneMax", orDash(rawHi, sg))
	set("FastRankROneMin", orDash(rankLo, sg))
	set("FastRankROneMax", orDash(rankHi, sg))
	set("SeriesCount", strconv.Itoa(len(res.Series)))
	set("RankDependent", strconv.Itoa(rankDep))
	set("RankOnlyDependent", strconv.Itoa(rankOnly))
	set("NEffShareMin", orDash(100*shareLo, func(v float64) string { return render.Fixed(v, 1) }))
	set("NEffShareMinAt", cmp.Or(shareAt, "---"))
	if bHi == 0 {
		set("BlockMin", "---")
		set("BlockMax", "---")
	} else {
		set("BlockMin", intTeX(bLo))
		set("BlockMax", intTeX(bHi))
	}
	// Block interval width over the independent one, per comparison.
	var ratios []float64
	for _, c := range res.Comparisons {
		w, wi := float64(c.DiffUpperMs-c.DiffLowerMs), float64(c.IndepUpperMs-c.IndepLowerMs)
		if wi > 0 && !math.IsNaN(w) {
			ratios = append(ratios, w/wi)
		}
	}
	if len(ratios) == 0 {
		set("WidthRatioMin", "---")
		set("WidthRatioMax", "---")
		set("WidthRatioMedian", "---")
	} else {
		m, _ := stats.Median(ratios)
		set("WidthRatioMin", render.Fixed(slices.Min(ratios), 1))
		set("WidthRatioMax", render.Fixed(slices.Max(ratios), 1))
		set("WidthRatioMedian", render.Fixed(m, 1))
	}
	// Scenario level.
	exclude := 0
	for _, e := range res.Scenarios {
		suf := MacroSuffix(scenarioRoles(res)[e.Scenario])
		ds := make([]string, len(e.DiffsMs))
		for i, d := range e.DiffsMs {
			ds[i] = signed(d, 3)
		}
		set("ScenarioDiffs"+suf, cmp.Or(strings.Join(ds, ", "), "---"))
		set("ScenarioMeanMs"+suf, signed(e.MeanMs, 3))
		set("ScenarioLowMs"+suf, signed(e.LowerMs, 3))
		set("ScenarioHighMs"+suf, signed(e.UpperMs, 3))
		set("ScenarioRangeMs"+suf, ms(e.RangeMs))
		set("ScenarioISq"+suf, render.Fixed(float64(e.I2), 2))
		set("ScenarioQP"+suf, pval(e.QP))
		if float64(e.LowerMs) > 0 || float64(e.UpperMs) < 0 {
			exclude++
		}
	}
	set("ScenarioCount", strconv.Itoa(len(res.Scenarios)))
	set("ScenarioExcludeZero", strconv.Itoa(exclude))
	k := 0
	if len(res.Scenarios) > 0 {
		k = res.Scenarios[0].K
	}
	set("ScenarioK", strconv.Itoa(k))
	tq := "---"
	if k >= 2 {
		tq = render.Fixed(distuv.StudentsT{Mu: 0, Sigma: 1, Nu: float64(k - 1)}.Quantile((1+Level)/2), 2)
	}
	set("ScenarioTQuantile", tq)
	set("Alpha", render.Fixed(res.Params.Alpha, 2))
	// The statistics library's validation design and required rates.
	set("ValidationN", intTeX(stats.ValidationN))
	set("ValidationSims", intTeX(stats.ValidationSims))
	set("ValidationPhi", render.Fixed(stats.ValidationPhi, 1))
	set("ValidationMinCoverage", render.Fixed(100*stats.ValidationMinCoverage, 0))
	set("ValidationMaxIndependent", render.Fixed(100*stats.ValidationMaxIndependent, 0))
	set("ValidationMaxFalsePositive", render.Fixed(100*stats.ValidationMaxFalsePositive, 0))
}
