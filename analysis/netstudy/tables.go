package netstudy

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode"

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
	add(TexComparison, s, err)
	s, err = bytesTable(res)
	add(TexBytes, s, err)
	s, err = serialTable(res)
	add(TexSerial, s, err)
	s, err = toolchainTable(res)
	add(TexToolchains, s, err)
	s, err = hygieneTables(res)
	add(TexHygiene, s, err)
	s, err = numbers(res)
	add(TexNumbers, s, err)
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
		Label:   "tab:net-comparisons",
		Caption: fmt.Sprintf("Handshake latency of %s against %s: the %d comparisons (scenario $\\times$ round). Medians of $T_{hs}$ in ms, difference with its 95\\,\\%% percentile bootstrap interval (%d resamples, seed %d), Vargha--Delaney $A_{12}$ = P(%s slower), and the two-sided Mann--Whitney $p$ Bonferroni-adjusted over the %d comparisons (a supplement: the series are serially dependent).", groupTeX(t), groupTeX(b), len(res.Comparisons), res.Params.BootstrapResamples, res.Params.BootstrapSeed, groupTeX(t), len(res.Comparisons)),
		Align:   "lrrrrrrrlr",
		Header:  []string{"Scenario", "RTT", "Round", "Failed", groupTeX(b), groupTeX(t), "$\\Delta$ ms [95\\,\\% CI]", "$\\Delta$ \\%", "$A_{12}$", "$p_{\\mathrm{Bonf}}$"},
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
			ms(c.BaseMedianMs), ms(c.TargetMedianMs),
			fmt.Sprintf("%s [%s, %s]", signed(c.DiffMs, 3), signed(c.DiffLowerMs, 3), signed(c.DiffUpperMs, 3)),
			signed(c.DiffPct, 2), render.Fixed(float64(c.A12), 3) + " " + render.Escape(c.A12Magnitude), pval(c.MWUPAdj),
		})
	}
	p := res.Published
	tab.Notes = fmt.Sprintf("Published (round %s): differences %s to %s ms, relative increase %s\\,\\%% (fastest) to %s\\,\\%% (slowest). RTT in ms; Failed: failed handshakes (%s/%s).",
		intTeX(p.Round), render.Fixed(p.DiffMsMin, 3), render.Fixed(p.DiffMsMax, 3), render.Fixed(p.RelIncFastestPct, 2), render.Fixed(p.RelIncSlowestPct, 2), groupTeX(b), groupTeX(t))
	return tab.Latex()
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
		Caption: fmt.Sprintf("Serial dependence of each latency series (handshakes in time order): lag-1 autocorrelation, the largest $|r_k|$ for $k = 1..%d$, Ljung--Box $Q(%d)$ with its p-value, and the runs test about the median.", L, L),
		Align:   "llrrrrrrrr",
		Header:  []string{"Scenario", "Group", "Round", "$n$", "$r_1$", "$\\max|r_k|$", "$Q$", "$p_Q$", "$z_{runs}$", "$p_{runs}$"},
	}
	for _, s := range res.Series {
		r1, rmax := math.NaN(), math.NaN()
		if len(s.Serial.ACF) > 0 {
			r1 = float64(s.Serial.ACF[0])
			rmax = 0
			for _, r := range s.Serial.ACF {
				rmax = max(rmax, math.Abs(float64(r)))
			}
		}
		tab.Rows = append(tab.Rows, []string{
			render.Escape(s.Scenario), groupTeX(s.Group), intTeX(s.Round), intTeX(s.OK),
			signed(Num(r1), 3), render.Fixed(rmax, 3), render.Fixed(float64(s.Serial.LjungBoxQ), 1), pval(s.Serial.LjungBoxP),
			signed(s.Serial.RunsZ, 2), pval(s.Serial.RunsP),
		})
	}
	tab.Notes = "ACF as statsmodels acf (adjusted=False); Ljung--Box with model\\_df = 0; runs test as statsmodels runstest\\_1samp (cutoff = median, correction). Small p: the series is not independent, so the comparisons are descriptive."
	return tab.Latex()
}

func pval(p Num) string {
	f := float64(p)
	switch {
	case math.IsNaN(f):
		return "---"
	case f < 0.001:
		return "$<$0.001"
	}
	return render.Fixed(f, 3)
}

// macroSuffix turns a scenario name into letters for a macro name:
// "wan-quick" -> "WanQuick"; digits are spelt out.
func macroSuffix(s string) string {
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
		suf := macroSuffix(role[s.Name])
		set("RTT"+suf, render.Fixed(s.RTTms, 1))
		set("Loss"+suf, render.Fixed(s.LossPct, 1))
	}
	toolchainNumbers(res, set)
	hygieneNumbers(res, set)
	for _, c := range res.Comparisons {
		if c.Round != r.Round {
			continue
		}
		suf := macroSuffix(role[c.Scenario])
		set("DiffMs"+suf, ms(c.DiffMs))
		set("DiffPct"+suf, render.Fixed(float64(c.DiffPct), 2))
		set("AOneTwo"+suf, render.Fixed(float64(c.A12), 3))
		set("MedianBase"+suf, ms(c.BaseMedianMs))
		set("MedianTarget"+suf, ms(c.TargetMedianMs))
	}
	return n.Latex(), errors.Join(errs...)
}
