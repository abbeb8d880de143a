package netstudy

import (
	"cmp"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"pqrepro/analysis/stats"
	"pqrepro/internal/render"
)

// The toolchain factor (issue 11 section 5): the hybrid's difference per
// scenario and round for each Go toolchain of the run, and the change of
// each difference from the primary toolchain (the design's first, Go
// 1.24.4 as in the original) to each other one.

// Toolchains is the toolchain factor's results.
type Toolchains struct {
	Primary string   `json:"primary"`
	Levels  []string `json:"levels"` // present in the run, the primary first
	// Note says why there are no changes (one toolchain only), else is
	// empty.
	Note string `json:"note,omitempty"`
	// PerToolchain are the comparisons of every toolchain, each computed
	// as the study's (Bonferroni within the toolchain); the primary's are
	// Results.Comparisons.
	PerToolchain []ToolchainResult `json:"per_toolchain"`
	Changes      []ToolchainChange `json:"changes"`
	// ScenarioChanges are each scenario's change over its series (the
	// rounds), per other toolchain: the between-series t interval of the
	// rounds' changes (inference.go).
	ScenarioChanges []ScenarioChange `json:"scenario_changes"`
}

// ScenarioChange is one scenario's toolchain change over its rounds.
type ScenarioChange struct {
	From string `json:"from"`
	To   string `json:"to"`
	ScenarioEffect
}

// ToolchainResult is one toolchain's comparisons.
type ToolchainResult struct {
	Toolchain   string           `json:"toolchain"`
	Comparisons []Comparison     `json:"comparisons"`
	Scenarios   []ScenarioEffect `json:"scenarios"` // over the rounds (inference.go)
}

// ToolchainChange is the change of one comparison's difference (target
// median - baseline median) from the primary toolchain to another. That
// is, with a 95 % percentile interval from the circular block bootstrap
// of its four series, and the two-sided p of the bootstrap z test,
// Holm-adjusted over all changes; NEffMin is the smallest effective
// sample size of the four series (the test's n is at most about that).
// Note says why an interval is missing.
type ToolchainChange struct {
	Scenario   string  `json:"scenario"`
	RTTms      float64 `json:"rtt_ms"`
	Round      int     `json:"round"`
	From       string  `json:"from"` // the primary toolchain
	To         string  `json:"to"`
	FromDiffMs Num     `json:"from_diff_ms"`
	ToDiffMs   Num     `json:"to_diff_ms"`
	ChangeMs   Num     `json:"change_ms"`
	Lower      Num     `json:"lower"`
	Upper      Num     `json:"upper"`
	SE         Num     `json:"se_bootstrap"`
	P          Num     `json:"p_bootstrap_z" range:"0,1"`
	PHolm      Num     `json:"p_holm" range:"0,1"`
	NEffMin    Num     `json:"n_eff_min" range:"0,"`
	// The independent-sample bootstrap's interval and Holm-adjusted z-test
	// p (every handshake resampled as if independent, as the analysis did
	// before the block bootstrap; medians drawn as order statistics,
	// stats.BootstrapMediansOrderStats), for the record.
	IndepLower      Num    `json:"independent_lower"`
	IndepUpper      Num    `json:"independent_upper"`
	IndepPHolm      Num    `json:"independent_p_holm" range:"0,1"`
	ChangePctPoints Num    `json:"change_pct_points"` // of the relative differences
	Note            string `json:"note,omitempty"`
}

// toolchainLevels are the toolchains of rows: the design's, in its order,
// those that have rows, or the one toolchain of rows without a design
// list.
func toolchainLevels(d *Design, rows []Row) []string {
	have := map[string]bool{}
	for _, r := range rows {
		have[r.Toolchain] = true
	}
	if len(d.Toolchains) == 0 {
		return slices.Sorted(maps.Keys(have))
	}
	var out []string
	for _, t := range d.Toolchains {
		if have[t] {
			out = append(out, t)
		}
	}
	return out
}

// sampleKey names one series of one toolchain.
type sampleKey struct {
	toolchain, scenario, group string
	round                      int
}

// PrimaryToolchain is the toolchain whose rows are the study's: the
// design's first, or the one toolchain of rows without a design list.
func PrimaryToolchain(d *Design, rows []Row) string {
	if len(d.Toolchains) > 0 {
		return d.Toolchains[0]
	}
	if l := toolchainLevels(d, rows); len(l) > 0 {
		return l[0]
	}
	return ""
}

// toolchainFactor compares every toolchain's series and the changes from
// the primary one. prim are the study's samples (Analyze's), reused for
// the primary toolchain so that its block bootstrap runs once.
func toolchainFactor(d *Design, all []Row, p Params, prim map[sampleKey]*sample) (*Toolchains, error) {
	levels := toolchainLevels(d, all)
	if len(levels) == 0 {
		return nil, fmt.Errorf("no rows of the design's toolchains %v", d.Toolchains)
	}
	tc := &Toolchains{Primary: levels[0], Levels: levels, Changes: []ToolchainChange{}, ScenarioChanges: []ScenarioChange{}}
	samples := map[sampleKey]*sample{}
	base, target := d.Groups[0], d.Groups[1]
	reuse := len(d.Toolchains) > 0 || len(levels) == 1
	for _, t := range levels {
		rows := slices.DeleteFunc(slices.Clone(all), func(r Row) bool { return r.Toolchain != t })
		if err := checkRows(d, rows); err != nil {
			return nil, fmt.Errorf("toolchain %s: the dataset does not match its design: %w", t, err)
		}
		byKey := map[sampleKey][]Row{}
		for _, r := range rows {
			k := sampleKey{t, r.Scenario, r.Group, r.Round}
			byKey[k] = append(byKey[k], r)
		}
		all := map[sampleKey]*sample{}
		for _, sc := range d.Scenarios {
			for _, rd := range d.Rounds {
				for _, g := range d.Groups {
					k := sampleKey{t, sc.Name, g, rd}
					if s, ok := prim[k]; ok && reuse && t == levels[0] {
						all[k], samples[k] = s, s
						continue
					}
					rs := byKey[k]
					slices.SortStableFunc(rs, func(a, b Row) int { return a.Seq - b.Seq })
					s, _, err := series(sc.Name, rd, g, rs, p.MaxLag)
					if err != nil {
						return nil, fmt.Errorf("toolchain %s scenario %s round %d group %s: %w", t, sc.Name, rd, g, err)
					}
					s.stream = SeriesStream(t, sc.Name, rd, g, "")
					all[k], samples[k] = s, s
				}
			}
		}
		cs, err := comparisons(d, func(sc string, rd int, g string) *sample { return all[sampleKey{t, sc, g, rd}] }, p)
		if err != nil {
			return nil, fmt.Errorf("toolchain %s: %w", t, err)
		}
		tc.PerToolchain = append(tc.PerToolchain, ToolchainResult{Toolchain: t, Comparisons: cs, Scenarios: scenarioEffects(d, cs)})
	}
	if len(levels) < 2 {
		tc.Note = fmt.Sprintf("the run has one toolchain only (%s): no change between toolchains to estimate", levels[0])
		return tc, nil
	}
	first := tc.PerToolchain[0]
	indep := map[sampleKey][]float64{}
	indepReps := func(k sampleKey) ([]float64, error) {
		if v, ok := indep[k]; ok {
			return v, nil
		}
		v, err := stats.BootstrapMediansOrderStats(samples[k].lat, p.BootstrapSeed, SeriesStream(k.toolchain, k.scenario, k.round, k.group, ""), p.BootstrapResamples)
		indep[k] = v
		return v, err
	}
	var ps, pi []float64
	for _, other := range tc.PerToolchain[1:] {
		for i, c1 := range other.Comparisons {
			c0 := first.Comparisons[i]
			ch := ToolchainChange{Scenario: c0.Scenario, RTTms: c0.RTTms, Round: c0.Round, From: first.Toolchain, To: other.Toolchain,
				FromDiffMs: c0.DiffMs, ToDiffMs: c1.DiffMs, ChangeMs: Num(float64(c1.DiffMs) - float64(c0.DiffMs)),
				ChangePctPoints: Num(float64(c1.DiffPct) - float64(c0.DiffPct))}
			nan := Num(math.NaN())
			ch.Lower, ch.Upper, ch.SE, ch.P = nan, nan, nan, nan
			ch.NEffMin = Num(min(float64(c0.NEffBase), float64(c0.NEffTarget), float64(c1.NEffBase), float64(c1.NEffTarget)))
			get := func(t, g string) *sample { return samples[sampleKey{t, c0.Scenario, g, c0.Round}] }
			s, err := contrast(p, term{1, get(first.Toolchain, base)}, term{-1, get(first.Toolchain, target)},
				term{-1, get(other.Toolchain, base)}, term{1, get(other.Toolchain, target)})
			if err != nil {
				ch.Note = "no block bootstrap interval: " + err.Error()
			} else {
				ch.Lower, ch.Upper, ch.SE, ch.P = Num(s.Lower), Num(s.Upper), Num(s.SE), Num(s.P)
			}
			ch.IndepLower, ch.IndepUpper = nan, nan
			var r [4][]float64
			for j, k := range []sampleKey{
				{first.Toolchain, c0.Scenario, base, c0.Round}, {first.Toolchain, c0.Scenario, target, c0.Round},
				{other.Toolchain, c0.Scenario, base, c0.Round}, {other.Toolchain, c0.Scenario, target, c0.Round},
			} {
				var err error
				if r[j], err = indepReps(k); err != nil {
					return nil, fmt.Errorf("toolchain %s scenario %s round %d group %s: %w", k.toolchain, k.scenario, k.round, k.group, err)
				}
			}
			dd := make([]float64, len(r[0]))
			for b := range dd {
				dd[b] = (r[3][b] - r[2][b]) - (r[1][b] - r[0][b])
			}
			is, err := stats.BootstrapReplicates(float64(ch.ChangeMs), dd, Level)
			if err != nil {
				return nil, err
			}
			ch.IndepLower, ch.IndepUpper = Num(is.Lower), Num(is.Upper)
			tc.Changes = append(tc.Changes, ch)
			ps, pi = append(ps, float64(ch.P)), append(pi, is.P)
		}
		for _, sc := range d.Scenarios {
			e := ScenarioChange{From: first.Toolchain, To: other.Toolchain,
				ScenarioEffect: ScenarioEffect{Scenario: sc.Name, RTTms: sc.RTTms, Rounds: []int{}, DiffsMs: []Num{}, SEsMs: []Num{}}}
			var est, se []float64
			for _, ch := range tc.Changes {
				if ch.To == other.Toolchain && ch.Scenario == sc.Name {
					e.Rounds, e.DiffsMs, e.SEsMs = append(e.Rounds, ch.Round), append(e.DiffsMs, ch.ChangeMs), append(e.SEsMs, ch.SE)
					est, se = append(est, float64(ch.ChangeMs)), append(se, float64(ch.SE))
				}
			}
			e.fill(est, se)
			tc.ScenarioChanges = append(tc.ScenarioChanges, e)
		}
	}
	for i, h := range holmFinite(ps) {
		tc.Changes[i].PHolm = Num(h)
	}
	for i, h := range holmFinite(pi) {
		tc.Changes[i].IndepPHolm = Num(h)
	}
	return tc, nil
}

// toolchainTable: one row per scenario and round, each toolchain's
// difference and, with two or more, the change from the primary one;
// then one row per scenario over its rounds (the between-series t
// interval).
func toolchainTable(res *Results) (string, error) {
	tc := res.Toolchains
	b, t := res.Design.Groups[0], res.Design.Groups[1]
	tab := render.Table{
		Label: "tab:net-toolchains",
		Caption: fmt.Sprintf("The toolchain factor: the difference of the median $T_{hs}$ of %s and %s (ms, 95\\,\\%% circular block bootstrap interval) per scenario and round for each Go toolchain of the endpoints",
			groupTeX(t), groupTeX(b)),
		Header: []string{"Scenario", "Round"},
	}
	for _, l := range tc.Levels {
		tab.Header = append(tab.Header, "$\\Delta$ "+render.Escape(l))
	}
	for _, l := range tc.Levels[1:] {
		tab.Header = append(tab.Header, "Change to "+render.Escape(l), "$p_t$ ($k$)")
	}
	tab.Align = "lr" + strings.Repeat("r", len(tab.Header)-2)
	if len(tc.Levels) > 1 {
		tab.Caption += fmt.Sprintf(", and the change of the difference from %s to each other toolchain with its block bootstrap interval. A round's change contrasts four series, one replication each, so its interval is descriptive and it has no test. Rows ``all'': the scenario over its rounds, mean and Student $t$ interval over the rounds (%d degrees of freedom), and the one-sample $t$ test's $p$ over the $k$ rounds: the test at the level of the design, the only one given.",
			render.Escape(tc.Primary), len(res.Design.Rounds)-1)
	} else {
		tab.Caption += ". Rows ``all'': the scenario over its rounds, mean and Student $t$ interval over the rounds."
	}
	for i, c0 := range tc.PerToolchain[0].Comparisons {
		row := []string{render.Escape(c0.Scenario), intTeX(c0.Round)}
		for _, pt := range tc.PerToolchain {
			c := pt.Comparisons[i]
			row = append(row, diffCI(c.DiffMs, c.DiffLowerMs, c.DiffUpperMs))
		}
		for _, ch := range tc.Changes {
			if ch.Scenario != c0.Scenario || ch.Round != c0.Round {
				continue
			}
			row = append(row, diffCI(ch.ChangeMs, ch.Lower, ch.Upper), "")
		}
		tab.Rows = append(tab.Rows, row)
	}
	for si, sc := range res.Design.Scenarios {
		row := []string{render.Escape(sc.Name), "all"}
		for _, pt := range tc.PerToolchain {
			e := pt.Scenarios[si]
			row = append(row, diffCI(e.MeanMs, e.LowerMs, e.UpperMs))
		}
		for _, e := range tc.ScenarioChanges {
			if e.Scenario == sc.Name {
				row = append(row, diffCI(e.MeanMs, e.LowerMs, e.UpperMs), pval(e.P)+fmt.Sprintf(" (%d)", e.K))
			}
		}
		tab.Rows = append(tab.Rows, row)
	}
	tab.Notes = fmt.Sprintf("Published (the original measured Go 1.24's crypto/tls; round %s): differences %s to %s ms.", intTeX(res.Published.Round),
		render.Fixed(res.Published.DiffMsMin, 3), render.Fixed(res.Published.DiffMsMax, 3))
	if tc.Note != "" {
		tab.Notes += " " + render.Escape("The "+strings.TrimPrefix(tc.Note, "the ")) + "."
	}
	return tab.Latex()
}

// toolchainNumbers sets \NetToolchain... macros: the levels, the largest
// change of a round in size (with its scenario and round; descriptive),
// and at the level of the design the scenarios whose change over their
// rounds has a t interval excluding zero, "---" with one toolchain. No
// count of significant rounds: a round's change has no test of its own.
func toolchainNumbers(res *Results, set func(name, v string)) {
	tc := res.Toolchains
	set("ToolchainCount", strconv.Itoa(len(tc.Levels)))
	set("ToolchainPrimary", render.Escape(tc.Primary))
	set("ToolchainOthers", render.Escape(cmp.Or(strings.Join(tc.Levels[1:], ", "), "none")))
	set("ToolchainNote", render.Escape(cmp.Or(tc.Note, "measured")))
	set("ToolchainChanges", strconv.Itoa(len(tc.Changes)))
	var big *ToolchainChange
	for i := range tc.Changes {
		c := &tc.Changes[i]
		if big == nil || math.Abs(float64(c.ChangeMs)) > math.Abs(float64(big.ChangeMs)) {
			big = c
		}
	}
	// Against the machine: the largest shift of a median that running
	// series concurrently caused (the serial controls, hygiene.go).
	shift := math.NaN()
	if res.Hygiene != nil && res.Hygiene.Control != nil {
		shift = float64(res.Hygiene.Control.MaxShiftMs)
	}
	measured := !math.IsNaN(shift) && len(res.Hygiene.Control.Series) > 0
	scExclude, scBeyond := 0, 0
	for _, e := range tc.ScenarioChanges {
		lo, hi := float64(e.LowerMs), float64(e.UpperMs)
		if lo > 0 || hi < 0 {
			scExclude++
			if measured && (lo > shift || hi < -shift) {
				scBeyond++
			}
		}
	}
	set("ToolchainShiftMeasured", b01(measured))
	set("ToolchainScenarioChanges", strconv.Itoa(len(tc.ScenarioChanges)))
	set("ToolchainScenarioExcludeZero", strconv.Itoa(scExclude))
	set("ToolchainScenarioBeyondShift", strconv.Itoa(scBeyond))
	// The largest scenario-level change (over its rounds) in size.
	var sbig *ScenarioChange
	for i := range tc.ScenarioChanges {
		e := &tc.ScenarioChanges[i]
		if sbig == nil || math.Abs(float64(e.MeanMs)) > math.Abs(float64(sbig.MeanMs)) {
			sbig = e
		}
	}
	if sbig == nil {
		for _, k := range []string{"ScenarioMaxMs", "ScenarioMaxLowMs", "ScenarioMaxHighMs", "ScenarioMaxAt"} {
			set("Toolchain"+k, "---")
		}
	} else {
		set("ToolchainScenarioMaxMs", signed(sbig.MeanMs, 3))
		set("ToolchainScenarioMaxLowMs", signed(sbig.LowerMs, 3))
		set("ToolchainScenarioMaxHighMs", signed(sbig.UpperMs, 3))
		set("ToolchainScenarioMaxAt", render.Escape(sbig.Scenario))
	}
	if big == nil {
		for _, k := range []string{"MaxChangeMs", "MaxChangeLowMs", "MaxChangeHighMs", "MaxChangeScenario", "MaxChangeRound"} {
			set("Toolchain"+k, "---")
		}
		return
	}
	set("ToolchainMaxChangeMs", signed(big.ChangeMs, 3))
	set("ToolchainMaxChangeLowMs", signed(big.Lower, 3))
	set("ToolchainMaxChangeHighMs", signed(big.Upper, 3))
	set("ToolchainMaxChangeScenario", render.Escape(big.Scenario))
	set("ToolchainMaxChangeRound", intTeX(big.Round))
}
