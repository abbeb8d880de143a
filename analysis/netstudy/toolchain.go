package netstudy

import (
	"cmp"
	"fmt"
	"hash/fnv"
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
}

// ToolchainResult is one toolchain's comparisons.
type ToolchainResult struct {
	Toolchain   string       `json:"toolchain"`
	Comparisons []Comparison `json:"comparisons"`
}

// ToolchainChange is the change of one comparison's difference (target
// median - baseline median) from the primary toolchain to another: with
// a 95 % percentile bootstrap interval, and the two-sided p of the
// bootstrap z test, Holm-adjusted over all changes.
type ToolchainChange struct {
	Scenario        string  `json:"scenario"`
	RTTms           float64 `json:"rtt_ms"`
	Round           int     `json:"round"`
	From            string  `json:"from"` // the primary toolchain
	To              string  `json:"to"`
	FromDiffMs      Num     `json:"from_diff_ms"`
	ToDiffMs        Num     `json:"to_diff_ms"`
	ChangeMs        Num     `json:"change_ms"`
	Lower           Num     `json:"lower"`
	Upper           Num     `json:"upper"`
	SE              Num     `json:"se_bootstrap"`
	P               Num     `json:"p_bootstrap_z"`
	PHolm           Num     `json:"p_holm"`
	ChangePctPoints Num     `json:"change_pct_points"` // of the relative differences
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

// toolchainFactor compares every toolchain's series and the changes from
// the primary one.
func toolchainFactor(d *Design, all []Row, p Params) (*Toolchains, error) {
	levels := toolchainLevels(d, all)
	if len(levels) == 0 {
		return nil, fmt.Errorf("no rows of the design's toolchains %v", d.Toolchains)
	}
	tc := &Toolchains{Primary: levels[0], Levels: levels, Changes: []ToolchainChange{}}
	samples := map[sampleKey][]float64{}
	base, target := d.Groups[0], d.Groups[1]
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
					rs := byKey[k]
					slices.SortStableFunc(rs, func(a, b Row) int { return a.Seq - b.Seq })
					s, _, err := series(sc.Name, rd, g, rs, p.MaxLag)
					if err != nil {
						return nil, fmt.Errorf("toolchain %s scenario %s round %d group %s: %w", t, sc.Name, rd, g, err)
					}
					all[k], samples[k] = s, s.lat
				}
			}
		}
		cs, err := comparisons(d, func(sc string, rd int, g string) *sample { return all[sampleKey{t, sc, g, rd}] }, p)
		if err != nil {
			return nil, fmt.Errorf("toolchain %s: %w", t, err)
		}
		tc.PerToolchain = append(tc.PerToolchain, ToolchainResult{Toolchain: t, Comparisons: cs})
	}
	if len(levels) < 2 {
		tc.Note = fmt.Sprintf("the run has one toolchain only (%s): no change between toolchains to estimate", levels[0])
		return tc, nil
	}
	// Each series' resample medians, drawn once from a stream of its own.
	reps := func(k sampleKey) ([]float64, error) {
		h := fnv.New64a()
		fmt.Fprintf(h, "%s|%s|%d|%s", k.toolchain, k.scenario, k.round, k.group)
		return stats.BootstrapMedians(samples[k], p.BootstrapSeed, h.Sum64(), p.BootstrapResamples)
	}
	memo := map[sampleKey][]float64{}
	get := func(k sampleKey) ([]float64, error) {
		if v, ok := memo[k]; ok {
			return v, nil
		}
		v, err := reps(k)
		memo[k] = v
		return v, err
	}
	prim := tc.PerToolchain[0]
	var ps []float64
	for _, other := range tc.PerToolchain[1:] {
		for i, c1 := range other.Comparisons {
			c0 := prim.Comparisons[i]
			ch := ToolchainChange{Scenario: c0.Scenario, RTTms: c0.RTTms, Round: c0.Round, From: prim.Toolchain, To: other.Toolchain,
				FromDiffMs: c0.DiffMs, ToDiffMs: c1.DiffMs, ChangeMs: Num(float64(c1.DiffMs) - float64(c0.DiffMs)),
				ChangePctPoints: Num(float64(c1.DiffPct) - float64(c0.DiffPct))}
			var r [4][]float64
			for j, k := range []sampleKey{
				{prim.Toolchain, c0.Scenario, base, c0.Round}, {prim.Toolchain, c0.Scenario, target, c0.Round},
				{other.Toolchain, c0.Scenario, base, c0.Round}, {other.Toolchain, c0.Scenario, target, c0.Round},
			} {
				var err error
				if r[j], err = get(k); err != nil {
					return nil, fmt.Errorf("toolchain %s scenario %s round %d group %s: %w", k.toolchain, k.scenario, k.round, k.group, err)
				}
			}
			d := make([]float64, len(r[0]))
			for b := range d {
				d[b] = (r[3][b] - r[2][b]) - (r[1][b] - r[0][b])
			}
			s, err := stats.BootstrapReplicates(float64(ch.ChangeMs), d, Level)
			if err != nil {
				return nil, err
			}
			ch.Lower, ch.Upper, ch.SE, ch.P = Num(s.Lower), Num(s.Upper), Num(s.SE), Num(s.P)
			tc.Changes = append(tc.Changes, ch)
			ps = append(ps, s.P)
		}
	}
	for i, h := range stats.Holm(ps) {
		tc.Changes[i].PHolm = Num(h)
	}
	return tc, nil
}

// toolchainTable: one row per scenario and round, each toolchain's
// difference and, with two or more, the change from the primary one.
func toolchainTable(res *Results) (string, error) {
	tc := res.Toolchains
	b, t := res.Design.Groups[0], res.Design.Groups[1]
	tab := render.Table{
		Label: "tab:net-toolchains",
		Caption: fmt.Sprintf("The toolchain factor: the difference of the median $T_{hs}$ of %s and %s (ms, 95\\,\\%% percentile bootstrap interval) per scenario and round for each Go toolchain of the endpoints",
			groupTeX(t), groupTeX(b)),
		Header: []string{"Scenario", "Round"},
	}
	for _, l := range tc.Levels {
		tab.Header = append(tab.Header, "$\\Delta$ "+render.Escape(l))
	}
	for _, l := range tc.Levels[1:] {
		tab.Header = append(tab.Header, "Change to "+render.Escape(l))
	}
	tab.Align = "lr" + strings.Repeat("r", len(tab.Header)-2)
	if len(tc.Levels) > 1 {
		tab.Caption += fmt.Sprintf(", and the change of the difference from %s to each other toolchain with its bootstrap interval ($^{*}$: Holm-adjusted $p < 0.05$ of the bootstrap $z$ test over the %d changes).",
			render.Escape(tc.Primary), len(tc.Changes))
	} else {
		tab.Caption += "."
	}
	for i, c0 := range tc.PerToolchain[0].Comparisons {
		row := []string{render.Escape(c0.Scenario), intTeX(c0.Round)}
		for _, pt := range tc.PerToolchain {
			c := pt.Comparisons[i]
			row = append(row, fmt.Sprintf("%s [%s, %s]", signed(c.DiffMs, 3), signed(c.DiffLowerMs, 3), signed(c.DiffUpperMs, 3)))
		}
		for _, ch := range tc.Changes {
			if ch.Scenario != c0.Scenario || ch.Round != c0.Round {
				continue
			}
			star := ""
			if float64(ch.PHolm) < 0.05 {
				star = "$^{*}$"
			}
			row = append(row, fmt.Sprintf("%s%s [%s, %s]", signed(ch.ChangeMs, 3), star, signed(ch.Lower, 3), signed(ch.Upper, 3)))
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

// toolchainNumbers sets \NetToolchain... macros: the levels, and over the
// changes the count significant after Holm and the largest in size (with
// its scenario and round), "---" with one toolchain.
func toolchainNumbers(res *Results, set func(name, v string)) {
	tc := res.Toolchains
	set("ToolchainCount", strconv.Itoa(len(tc.Levels)))
	set("ToolchainPrimary", render.Escape(tc.Primary))
	set("ToolchainOthers", render.Escape(cmp.Or(strings.Join(tc.Levels[1:], ", "), "none")))
	set("ToolchainNote", render.Escape(cmp.Or(tc.Note, "measured")))
	set("ToolchainChanges", strconv.Itoa(len(tc.Changes)))
	sig := 0
	var big *ToolchainChange
	for i := range tc.Changes {
		c := &tc.Changes[i]
		if float64(c.PHolm) < 0.05 {
			sig++
		}
		if big == nil || math.Abs(float64(c.ChangeMs)) > math.Abs(float64(big.ChangeMs)) {
			big = c
		}
	}
	set("ToolchainSignificant", strconv.Itoa(sig))
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
