package picostudy

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"pqrepro/datasets/picodata"
	"pqrepro/internal/render"
)

// ms formats a time with three significant digits' worth of decimals.
func ms(x *float64) string {
	if x == nil {
		return "---"
	}
	switch v := math.Abs(*x); {
	case v >= 100:
		return render.Fixed(*x, 1)
	case v >= 10:
		return render.Fixed(*x, 2)
	}
	return render.Fixed(*x, 3)
}

func ptr(x float64) *float64 { return &x }

// mhzText is a clock in MHz with no trailing zeros ("133", "114.857143").
func mhzText(hz uint32) string {
	return strconv.FormatFloat(round(float64(hz)/1e6), 'f', -1, 64)
}

func kb(bytes uint32) string { return render.Fixed(float64(bytes)/1024, 1) }

func thousands(x float64) string { return render.GroupDigits(render.Fixed(x, 0), "{,}") }

// caption tail shared by the tables: where the numbers come from.
func source(r *Results) string {
	return fmt.Sprintf("RP2040 at %s\\,MHz, %s, %s %s; run %s",
		mhzText(r.ClockHz), render.Escape(r.Board), render.Escape(r.Compiler), render.Escape(strings.ReplaceAll(r.CFlags, ",", " ")), render.Escape(r.Run))
}

// Tables renders the LaTeX tables and the number macros, keyed by output
// path.
func Tables(r *Results) (map[string]string, error) {
	out := map[string]string{}
	t, err := opsTable(r)
	if err != nil {
		return nil, err
	}
	// A run that compared boards gets the between-board table after the
	// operations (in the same file, so the paper picks it up without a new
	// \input); a single-board run's file is unchanged.
	if r.Boards != nil && len(r.Boards.Ops) > 0 {
		b, err := boardsTable(r)
		if err != nil {
			return nil, err
		}
		t += "\n" + b
	}
	out[TableOps] = t
	if t, err = paperTable(r); err != nil {
		return nil, err
	}
	out[TableVersusPaper] = t
	if t, err = m4Table(r); err != nil {
		return nil, err
	}
	out[TableM4] = t
	if t, err = deadlineTable(r); err != nil {
		return nil, err
	}
	out[TableDeadlines] = t
	if t, err = configurationsTable(r); err != nil {
		return nil, err
	}
	out[TableConfigurations] = t
	if t, err = signingTable(r); err != nil {
		return nil, err
	}
	out[TableSigning] = t
	n, err := numbers(r)
	if err != nil {
		return nil, err
	}
	out[NumbersFile] = n
	return out, nil
}

func opsTable(r *Results) (string, error) {
	t := render.Table{Label: "tab:pico-ops", Align: "llrrrrrrrr",
		Caption: fmt.Sprintf("Time per operation (ms), peak stack and energy (%s)", source(r)),
		Header:  []string{"Scheme", "Operation", "$n$", "Mean", "SD", "p95", "p99", "CV (\\%)", "Stack (KB)", "Energy (mJ)"},
		Notes: fmt.Sprintf("Times from the 1\\,MHz timer; p95/p99 are R type 7 quantiles; CV = SD/mean; stack by painting; "+
			"energy = mean time $\\times$ %s\\,mW (%.1f\\,V $\\times$ %s\\,mA, the paper's datasheet model).",
			render.Fixed(r.Energy.Milliwatts, 1), r.Energy.Volts, render.Fixed(r.Energy.Milliamps, 0))}
	if r.Emulated {
		t.Notes += " Emulated: no bus contention or wait states are modelled."
	}
	if r.Host != nil {
		t.Align += "r"
		t.Header = append(t.Header, "Host ($\\mu$s)")
		t.Notes += fmt.Sprintf(" Host: mean on %s (%d cores), cloudflare/circl for ML-KEM and ML-DSA, Go's crypto for the classical schemes.",
			render.Escape(r.Host.CPU), r.Host.Cores)
		if slices.ContainsFunc(picodata.SPHINCSSchemes, func(s string) bool { return r.Schemes[s] != nil }) {
			t.Notes += " SPHINCS+ on the host: circl's FIPS 205 SLH-DSA of the same parameter set (the same hashes, not the same signatures)."
		}
	}
	for _, s := range schemeOrder(r) {
		sc := r.Schemes[s]
		for i, op := range opOrder(sc) {
			o := sc.Ops[op]
			name := ""
			if i == 0 {
				name = render.Escape(displayName(s))
			}
			cv := "---"
			if o.CV != nil {
				cv = render.Fixed(100**o.CV, 1)
			}
			row := []string{name, render.Escape(op), fmt.Sprint(o.N), ms(o.MeanMs), ms(o.SDMs),
				ms(o.P95Ms), ms(o.P99Ms), cv, kb(o.PeakStackBytes), ms(o.EnergyMJ)}
			if r.Host != nil {
				if v, _, ok := r.HostMean(s, op); ok {
					row = append(row, ms(&v))
				} else {
					row = append(row, "---")
				}
			}
			t.Rows = append(t.Rows, row)
		}
	}
	return t.Latex()
}

func paperTable(r *Results) (string, error) {
	t := render.Table{Label: "tab:pico-vs-paper", Align: "lrrr",
		Caption: fmt.Sprintf("Our results beside the paper's published numbers (%s)", source(r)),
		Header:  []string{"Quantity", "Paper", "Ours (" + render.Escape(r.Label) + ")", "Ours / paper"},
		Notes:   "Energy is modelled, not measured: time $\\times$ the same 79.2\\,mW as the paper."}
	sdk := r.sdkConfiguration()
	if sdk != nil {
		t.Align += "rr"
		t.Header = append(t.Header, "SDK build", "SDK / paper")
		t.Notes = fmt.Sprintf("SDK build: the configuration %s (%s), each time at its own clock. ", render.Escape(sdk.Factors.Name), factorText(sdk.Differs)) + t.Notes
	}
	dash := false
	cell := func(v *PublishedValue) (ours, ratio string) {
		ours, ratio = "---", "---"
		if v.Ours != nil {
			ours = render.Fixed(*v.Ours, decimals(v.Paper))
		}
		if v.Ratio != nil {
			ratio = render.Fixed(*v.Ratio, 2)
		}
		dash = dash || ours == "---" || ratio == "---"
		return ours, ratio
	}
	for i, v := range r.Published {
		unit := v.Unit
		if unit == "%" {
			unit = "\\%"
		}
		q := render.Escape(v.Quantity) + " (" + unit + ")"
		ours, ratio := cell(&v)
		row := []string{q, render.Fixed(v.Paper, decimals(v.Paper)), ours, ratio}
		if sdk != nil {
			o, rt := cell(&sdk.Published[i])
			row = append(row, o, rt)
		}
		t.Rows = append(t.Rows, row)
	}
	// The dash is explained only where one appears.
	if dash {
		t.Notes = "--- : not measured in this run (never estimated). " + t.Notes
	}
	return t.Latex()
}

// SDKConfiguration names the configuration set beside the primary in the
// comparison with the original. It is the board as a pico-sdk build runs
// it (experiments/pico.toml [configurations.sdk]).
const SDKConfiguration = "sdk"

// sdkConfiguration is the run's SDKConfiguration, nil when it has none
// (or its published figures are not in step with the primary's).
func (r *Results) sdkConfiguration() *Configuration {
	if r.Configurations == nil {
		return nil
	}
	for _, c := range r.Configurations.Others {
		if c.Factors.Name == SDKConfiguration && len(c.Published) == len(r.Published) {
			return c
		}
	}
	return nil
}

// factorText lists factor changes as "clock_mhz 125, runtime sdk-like".
func factorText(ch []FactorChange) string {
	var parts []string
	for _, c := range ch {
		parts = append(parts, render.Escape(strings.ReplaceAll(c.Factor, "_", " ")+" "+c.Value))
	}
	return strings.Join(parts, ", ")
}

// decimals shows ours with as many decimals as the paper's number has
// (at least one).
func decimals(x float64) int {
	for d := 0; d < 3; d++ {
		p := math.Pow(10, float64(d))
		if math.Abs(math.Round(x*p)-x*p) < 1e-9 {
			return max(d, 1)
		}
	}
	return 3
}

func m4Table(r *Results) (string, error) {
	t := render.Table{Label: "tab:pico-m4", Align: "llrrrrr",
		Caption: "Cycles of the same PQClean clean code on the Cortex-M0+ (ours, " + render.Escape(r.Label) + ") and the Cortex-M4 (pqm4)",
		Header:  []string{"Scheme", "Operation", "M0+ cycles", "M4 cycles", "M0+/M4", "M0+ stack (B)", "M4 stack (B)"},
		Notes: "M4: " + render.Escape(r.M4.Source) + ". M0+ cycles are SysTick counts at " + mhzText(r.ClockHz) + "\\,MHz; means. " +
			"ML-DSA signing means depend on the messages signed (rejection sampling)."}
	prev := ""
	for _, row := range r.M4.Rows {
		name := ""
		if row.Scheme != prev {
			name = render.Escape(displayName(row.Scheme))
			prev = row.Scheme
		}
		t.Rows = append(t.Rows, []string{name, render.Escape(row.Op), thousands(row.M0Cycles), thousands(row.M4Cycles),
			render.Fixed(row.Ratio, 2), thousands(float64(row.M0StackBytes)), thousands(float64(row.M4StackBytes))})
	}
	if len(t.Rows) == 0 {
		t.Rows = append(t.Rows, []string{"---", "---", "---", "---", "---", "---", "---"})
	}
	return t.Latex()
}

var schemeWords = map[string]string{
	"ml-kem-512": "MlkemFiveTwelve", "ml-kem-768": "MlkemSevenSixtyEight", "ml-kem-1024": "MlkemTenTwentyFour",
	"ml-dsa-44": "MldsaFortyFour", "ml-dsa-65": "MldsaSixtyFive", "ml-dsa-87": "MldsaEightySeven",
	"rsa-2048": "RsaTwentyFortyEight", "ecdsa-p256": "EcdsaPTwoFiftySix", "ecdh-p256": "EcdhPTwoFiftySix",
	"sphincs-sha2-128f": "SphincsShaTwoOneTwentyEightF", "sphincs-shake-128f": "SphincsShakeOneTwentyEightF",
	"sphincs-sha2-128s": "SphincsShaTwoOneTwentyEightS",
}

var digitWords = []string{"Zero", "One", "Two", "Three", "Four", "Five", "Six", "Seven", "Eight", "Nine"}

// macroWord turns a name into letters for a LaTeX macro: known schemes by
// their spoken numbers, anything else with its digits spelt one by one
// and other characters dropped, each part capitalised.
func macroWord(s string) string {
	if w, ok := schemeWords[s]; ok {
		return w
	}
	var b strings.Builder
	up := true
	for _, c := range s {
		switch {
		case unicode.IsDigit(c):
			b.WriteString(digitWords[c-'0'])
			up = true
		case unicode.IsLetter(c) && c < unicode.MaxASCII:
			if up {
				c = unicode.ToUpper(c)
			}
			b.WriteRune(c)
			up = false
		default:
			up = true
		}
	}
	return b.String()
}

// numbers makes the \newcommand macros of every number the text quotes,
// e.g. \PicoMlkemFiveTwelveExchangeMs.
func numbers(r *Results) (string, error) {
	var n render.Numbers
	var errs []error
	set := func(name, v string) {
		if err := n.Set("Pico"+name, v); err != nil {
			errs = append(errs, err)
		}
	}
	set("Board", render.Escape(r.Board))
	set("Label", render.Escape(r.Label))
	set("ClockMHz", mhzText(r.ClockHz))
	set("PowerMw", render.Fixed(r.Energy.Milliwatts, 1))
	set("RunID", render.Escape(r.Run))
	set("Profile", render.Escape(r.Profile))
	// The published signing times the text sets against the summary's
	// lay figures (which contradict them).
	for key, name := range map[string]string{
		"mldsa44_sign_mean_ms": "PubMldsaFortyFourSignMeanMs", "mldsa44_sign_p99_ms": "PubMldsaFortyFourSignPNinetyNineMs",
		"mldsa87_sign_mean_ms": "PubMldsaEightySevenSignMeanMs", "mldsa87_sign_p99_ms": "PubMldsaEightySevenSignPNinetyNineMs",
	} {
		i := slices.IndexFunc(published, func(p publishedSpec) bool { return p.key == key })
		if i < 0 {
			errs = append(errs, fmt.Errorf("no published value %q", key))
			continue
		}
		v := published[i].paper
		if v == math.Trunc(v) {
			set(name, thousands(v))
		} else {
			set(name, render.Fixed(v, 1))
		}
	}
	for _, s := range schemeOrder(r) {
		sc := r.Schemes[s]
		w := macroWord(s)
		set(w+"PeakStackKB", kb(sc.PeakStackBytes))
		set(w+"PeakStackSramPct", render.Fixed(100*float64(sc.PeakStackBytes)/float64(r.SRAMBytes), 1))
		set(w+"CodeBytes", thousands(float64(sc.Code.FlashBytes)))
		set(w+"ImageFlashKB", kb(sc.ImageFlashBytes))
		for _, op := range opOrder(sc) {
			o := sc.Ops[op]
			p := w + macroWord(op)
			set(p+"N", fmt.Sprint(o.N))
			set(p+"MeanMs", ms(o.MeanMs))
			set(p+"MedianMs", ms(o.MedianMs))
			set(p+"SdMs", ms(o.SDMs))
			set(p+"PNinetyFiveMs", ms(o.P95Ms))
			set(p+"PNinetyNineMs", ms(o.P99Ms))
			set(p+"MaxMs", ms(o.MaxMs))
			if o.CV != nil {
				set(p+"CvPct", render.Fixed(100**o.CV, 1))
			} else {
				set(p+"CvPct", "---")
			}
			set(p+"StackKB", kb(o.PeakStackBytes))
			set(p+"EnergyMJ", ms(o.EnergyMJ))
			if o.MeanIterations != nil {
				set(p+"MeanIterations", render.Fixed(*o.MeanIterations, 2))
			}
			if v, _, ok := r.HostMean(s, op); ok {
				set(p+"HostUs", ms(&v))
			}
		}
	}
	for _, s := range slices.Sorted(maps.Keys(r.Exchanges)) {
		x := r.Exchanges[s]
		set(macroWord(s)+"ExchangeMs", ms(ptr(x.Ms)))
		set(macroWord(s)+"ExchangeMJ", ms(ptr(x.EnergyMJ)))
	}
	for _, s := range []string{"ml-kem-512", "ml-kem-768", "ml-kem-1024"} {
		w := macroWord(s) + "VsEcdh"
		if v := r.Versus[s]; v != nil {
			set(w+"Speedup", render.Fixed(v.Speedup, 1))
			set(w+"EnergySavingPct", render.Fixed(100*v.EnergySaving, 1))
		} else {
			set(w+"Speedup", "---")
			set(w+"EnergySavingPct", "---")
		}
	}
	for _, s := range slices.Sorted(maps.Keys(r.SignVerify)) {
		c := r.SignVerify[s]
		set(macroWord(s)+"SignVerifyMs", ms(ptr(c.Ms)))
		set(macroWord(s)+"SignVerifyMJ", ms(ptr(c.EnergyMJ)))
	}
	for _, s := range slices.Sorted(maps.Keys(r.SignVerifyVsECDSA)) {
		set(macroWord(s)+"SignVerifyEnergyVsEcdsa", render.Fixed(r.SignVerifyVsECDSA[s], 2))
	}
	configurationNumbers(r, set)
	recommendationNumbers(r, set)
	if len(r.M4.Rows) > 0 {
		set("MFourRatioMin", render.Fixed(r.M4.RatioMin, 2))
		set("MFourRatioMax", render.Fixed(r.M4.RatioMax, 2))
		set("MFourRatioGeoMean", render.Fixed(r.M4.RatioGeoMean, 2))
	}
	if len(errs) > 0 {
		return "", fmt.Errorf("number macros: %v", errs)
	}
	return n.Latex(), nil
}

// pval formats a p-value: three decimals, or "<0.001".
func pval(p float64) string {
	if p < 0.001 {
		return "$<$0.001"
	}
	return render.Fixed(p, 3)
}

// boardsTable is the between-board test per operation (BoardFactor).
func boardsTable(r *Results) (string, error) {
	f := r.Boards
	ids := slices.Sorted(maps.Keys(f.Boards))
	t := render.Table{Label: "tab:pico-boards", Align: "llrrrrrl",
		Caption: fmt.Sprintf("Between-board comparison: median time per board (ms) over %d boards (%s)", len(ids), source(r)),
		Header:  []string{"Scheme", "Operation", "Boards", "Median range", "$H$", "$p$ (Holm)", "$\\varepsilon^2$", ""},
		Notes: fmt.Sprintf("Boards: %s. Kruskal-Wallis $H$ per operation (tie-corrected), $p$ Holm-adjusted over the %d operations, "+
			"$\\varepsilon^2 = H/(N-1)$; ``identical'': every board gave the same times.", render.Escape(joinComma(ids)), len(f.Ops))}
	ops := slices.Clone(f.Ops)
	order := schemeOrder(r) // the operations table's order: ML-KEM, ML-DSA, classical
	slices.SortStableFunc(ops, func(a, b BoardOp) int { return slices.Index(order, a.Scheme) - slices.Index(order, b.Scheme) })
	for i, o := range ops {
		name := ""
		if i == 0 || ops[i-1].Scheme != o.Scheme {
			name = render.Escape(displayName(o.Scheme))
		}
		lo, hi := slices.Min(o.MedianMs), slices.Max(o.MedianMs)
		rng := ms(&lo)
		if hi != lo {
			rng += "--" + ms(&hi)
		}
		mark := ""
		if o.Identical {
			mark = "identical"
		}
		t.Rows = append(t.Rows, []string{name, render.Escape(o.Op), fmt.Sprint(len(o.Boards)), rng,
			render.Fixed(o.H, 2), pval(o.PHolm), render.Fixed(o.Epsilon2, 3), mark})
	}
	return t.Latex()
}

func joinComma(s []string) string { return strings.Join(s, ", ") }

// configurationNumbers sets the macros of each further configuration. Per
// operation it shares with the primary they are Cfg<Name><Scheme><Op>
// CyclesRatio and TimeRatio; for the SDK build also its clock and each
// operation's mean time, Sdk<Scheme><Op>MeanMs.
func configurationNumbers(r *Results, set func(name, v string)) {
	if r.Configurations == nil {
		return
	}
	for _, c := range r.Configurations.Others {
		w := "Cfg" + macroWord(c.Factors.Name)
		if len(c.Moved) > 0 {
			lo, hi := c.Moved[0].TimeRatio, c.Moved[0].TimeRatio
			for _, m := range c.Moved {
				lo, hi = min(lo, m.TimeRatio), max(hi, m.TimeRatio)
			}
			set(w+"TimeRatioMin", render.Fixed(lo, 2))
			set(w+"TimeRatioMax", render.Fixed(hi, 2))
		}
		for _, m := range c.Moved {
			p := w + macroWord(m.Scheme) + macroWord(m.Op)
			set(p+"CyclesRatio", render.Fixed(m.CyclesRatio, 3))
			set(p+"TimeRatio", render.Fixed(m.TimeRatio, 3))
			// Signing: the fewest cycles (a one-iteration signature) and
			// the mean iterations, which tell the factor's cost from the
			// rejection paths a changed message takes.
			po, co := r.Schemes[m.Scheme].Ops[m.Op], c.Schemes[m.Scheme].Ops[m.Op]
			if po.MinCycles != nil && co.MinCycles != nil && *po.MinCycles > 0 {
				set(p+"MinCyclesRatio", render.Fixed(float64(*co.MinCycles)/float64(*po.MinCycles), 3))
			}
			if po.MeanIterations != nil && co.MeanIterations != nil {
				set(p+"MeanIterations", render.Fixed(*co.MeanIterations, 2))
			}
		}
	}
	sdk := r.sdkConfiguration()
	if sdk == nil {
		return
	}
	set("SdkClockMHz", mhzText(sdk.Factors.ClockHz))
	for _, s := range slices.Sorted(maps.Keys(sdk.Schemes)) {
		sc := sdk.Schemes[s]
		for _, op := range opOrder(sc) {
			set("Sdk"+macroWord(s)+macroWord(op)+"MeanMs", ms(sc.Ops[op].MeanMs))
		}
	}
}
