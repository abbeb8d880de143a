package tlsgapmodel

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"

	"pqrepro/analysis/gapmodel"
	"pqrepro/analysis/stats"
	"pqrepro/analysis/tlsstudy"
	"pqrepro/internal/render"
)

// Output paths of the second registration's tables, relative to the
// repository root.
const (
	TableJoint    = "paper/generated/tls-gapjoint.tex"
	TableJointAll = "paper/generated/tls-gapjoint-all.tex"
)

// fits is every gap-model result of one run: the first registration's
// fit and explanation, the second's fit, and the joint fit over the
// definitions the run's captures give (missing says why not the others).
type fits struct {
	first   *gapmodel.Fit
	explain *gapmodel.Explanation
	second  *gapmodel.OverlapFit
	joint   []gapmodel.JointRow
	missing map[string]string
}

// fitAll fits both registrations and the joint fit on rows; nil, nil
// without rows.
func fitAll(rows []gapmodel.Row, missing map[string]string) (*fits, error) {
	f, e, err := fit(rows)
	if err != nil || f == nil {
		return nil, err
	}
	out := &fits{first: f, explain: e, missing: missing}
	if out.second, err = gapmodel.FitOverlap(rows, gapmodel.Registered2); err != nil {
		return nil, fmt.Errorf("gap model, second registration: %w", err)
	}
	var defs []string
	for _, d := range gapmodel.Definitions {
		if _, gone := missing[d.Key()]; !gone {
			defs = append(defs, d.Key())
		}
	}
	if out.joint, err = gapmodel.JointFit(rows, defs, published(), gapmodel.Registered2); err != nil {
		return nil, fmt.Errorf("gap model, joint fit: %w", err)
	}
	return out, nil
}

// fitsOf is fitAll on the results' rows.
func fitsOf(r *tlsstudy.Results) (*fits, error) { return fitAll(r.GapModelRows, r.GapModelMissing) }

// modelsTable compares the two registered models on the held-out cells
// with a window stall, where they differ, and states both tests.
func modelsTable(r *tlsstudy.Results) (string, error) {
	fs, err := fitsOf(r)
	if err != nil {
		return "", err
	}
	t := render.Table{
		Label: "tab:tls-gapmodel",
		Caption: `Study~A, the two registered gap models on the held-out cells whose server flight exceeds TCP's initial window ` +
			`(the cells where they differ). First: $T_{hs} = c_0 + k\,\mathrm{RTT} + s\,\mathrm{CPU}$, every cell within ` + render.Fixed(gapmodel.Registered.BoundMs, 2) +
			`\,ms. Second: the stall costs $\max(\mathrm{RTT} - t_{sign}, 0)$, every cell within its own bound $z\sqrt{SE^2 + \tau^2}$. Times in ms; error = predicted $-$ observed.`,
		Align:  "lrrrrrrr",
		Header: []string{"Held-out cell", "RTT", "$t_{sign}$", "Observed", "First: error", "Second: error", "Bound", "Second"},
	}
	if fs == nil {
		t.Rows = append(t.Rows, []string{"Emulated-path cells: " + notMeasured, "---", "---", "---", "---", "---", "---", "---"})
		t.Notes = "The run holds no emulated-path cell: both models are registered (analysis/gapmodel) but not fitted."
		return t.Latex()
	}
	first := map[*gapmodel.Row]gapmodel.Prediction{}
	for _, p := range fs.first.Predictions {
		first[p.Row] = p
	}
	for _, p := range fs.second.Predictions {
		if p.Row.Stalls() == 0 {
			continue
		}
		verdict := "within"
		if !p.Pass {
			verdict = "\\textbf{outside}"
		}
		t.Rows = append(t.Rows, []string{render.Escape(cellName(p.Row)), render.Fixed(p.Row.RTTMs, 2), render.Fixed(p.Row.SignMs, 2),
			render.Fixed(p.ObservedMs, 2), signed(first[p.Row].ErrorMs, 2), signed(p.ErrorMs, 2), render.Fixed(p.BoundMs, 2), verdict})
	}
	f1, f2 := fs.first, fs.second
	notes := []string{
		fmt.Sprintf(`First model: $c_0 = %s$, $s = %s$; max $|$error$|$ over its %d held-out cells %s\,ms, it %s.`,
			render.Fixed(f1.C0.Est, 3), render.Fixed(f1.S.Est, 3), len(f1.Predictions), render.Fixed(f1.MaxAbsErrMs, 2), passWord(f1)),
		fmt.Sprintf(`Second model: $c_0 = %s$ [%s, %s], $s = %s$ [%s, %s]; %d of %d held-out cells outside their bounds (bounds %s to %s\,ms: $z = %s$, Bonferroni at $\alpha = %s$; $\tau = %s$\,ms from %d identical-handshake pairs); it %s.`,
			render.Fixed(f2.C0.Est, 3), render.Fixed(f2.C0.Lower, 3), render.Fixed(f2.C0.Upper, 3), render.Fixed(f2.S.Est, 3), render.Fixed(f2.S.Lower, 3), render.Fixed(f2.S.Upper, 3),
			f2.Misses, len(f2.Predictions), render.Fixed(minBound(f2), 2), render.Fixed(maxBound(f2), 2), render.Fixed(f2.Z, 2), render.Fixed(f2.Reg.Alpha, 2),
			render.Fixed(f2.TauMs, 3), f2.Pairs, passWord2(f2)),
	}
	t.Notes = strings.Join(notes, " ")
	return t.Latex()
}

// cellName is a row's cell without its level: list, chain, role.
func cellName(r *gapmodel.Row) string {
	return fmt.Sprintf("%s, %s, %s", r.Groups, r.Chain, roleLabel(r.Role))
}

func minBound(f *gapmodel.OverlapFit) float64 {
	m := math.Inf(1)
	for _, p := range f.Predictions {
		m = min(m, p.BoundMs)
	}
	return m
}

func maxBound(f *gapmodel.OverlapFit) float64 {
	m := 0.0
	for _, p := range f.Predictions {
		m = max(m, p.BoundMs)
	}
	return m
}

func passWord2(f *gapmodel.OverlapFit) string {
	if f.Pass {
		return "passes"
	}
	return "fails"
}

// bestPerDefinition is, per definition in registered order, the joint-fit
// row with the smallest worst error (the first in the fit's order on a
// tie).
func bestPerDefinition(rows []gapmodel.JointRow) []gapmodel.JointRow {
	var out []gapmodel.JointRow
	for _, d := range gapmodel.Definitions {
		var best *gapmodel.JointRow
		for i := range rows {
			r := &rows[i]
			if r.Definition.Key() == d.Key() && (best == nil || r.WorstPct < best.WorstPct) {
				best = r
			}
		}
		if best != nil {
			out = append(out, *best)
		}
	}
	return out
}

// jointHeader is the joint-fit tables' columns.
var jointHeader = []string{"$T_{hs}$ from, to", "End", "Group list, chain", "RTT", "Worst", "Inc.\\ RTT", "Worst", "Offset"}

// jointRow renders one joint-fit row.
func jointRow(r gapmodel.JointRow) []string {
	worst := render.Fixed(r.WorstPct, 1) + `\,\%`
	if r.Reaches {
		worst = `\textbf{` + worst + `}`
	}
	return []string{render.Escape(r.Definition.Short), r.Definition.End, render.Escape(r.Combo.String()), edged(r, r.RTTMs), worst,
		edged(r, r.IncRTTMs), render.Fixed(r.IncWorstPct, 1) + `\,\%`, signed(r.BaselineOffsetMs, 2)}
}

// edged renders a fitted RTT, with a dagger when it lies on the edge of
// the measured range: a better fit may lie outside it, unmeasured.
func edged(r gapmodel.JointRow, rtt float64) string {
	s := render.Fixed(rtt, 2)
	if atEdge(r, rtt) {
		s += `$^\dagger$`
	}
	return s
}

// edgeNote is the paper's parenthesis on a fitted RTT at the edge of the
// measured range, empty inside it.
func edgeNote(r gapmodel.JointRow, rtt float64) string {
	if !atEdge(r, rtt) {
		return ""
	}
	which := "smallest"
	if rtt > (r.MinRTTMs+r.MaxRTTMs)/2 {
		which = "largest"
	}
	return " (the " + which + " RTT we measured: a better fit may lie beyond it)"
}

// atEdge says whether rtt is the lowest or the highest RTT measured.
func atEdge(r gapmodel.JointRow, rtt float64) bool {
	step := gapmodel.Registered2.JointStepMs
	return rtt < r.MinRTTMs+step/2 || rtt > r.MaxRTTMs-step/2
}

// jointNotes is what both joint-fit tables say under the rows: the
// status (exploratory when the second model failed) and the definitions
// the run could not give.
func jointNotes(fs *fits) string {
	status := "The second model passed its test."
	if !fs.second.Pass {
		status = "Exploratory: the second model failed its registered test, so this fit describes our cells and explains nothing."
	}
	notes := []string{status, fmt.Sprintf(`RTT (ms) minimises the worst relative error over the four published medians (bold: within %s\,\%%); Inc.\ RTT does so for the three increases alone, and Offset (ms) is our baseline minus the published one there; $^\dagger$: the edge of the RTTs measured, so a better fit may lie beyond it. Finished: the client's.`,
		render.Fixed(gapmodel.Registered2.JointTargetPct, 0))}
	for _, d := range gapmodel.Definitions {
		if why, ok := fs.missing[d.Key()]; ok {
			notes = append(notes, render.Escape(fmt.Sprintf("%s at the %s's end: not measured (%s).", capitalise(d.About), d.End, why)))
		}
	}
	return strings.Join(notes, " ")
}

// jointTable is the joint fit's best combination per definition.
func jointTable(r *tlsstudy.Results) (string, error) {
	return jointLatex(r, false)
}

// jointAllTable is the joint fit of every definition and combination.
func jointAllTable(r *tlsstudy.Results) (string, error) {
	return jointLatex(r, true)
}

func jointLatex(r *tlsstudy.Results, all bool) (string, error) {
	fs, err := fitsOf(r)
	if err != nil {
		return "", err
	}
	t := render.Table{Label: "tab:tls-gapjoint", Align: "lllrrrrr", Header: jointHeader,
		Caption: `Study~A, the joint fit: per $T_{hs}$ definition, the client group list and chain whose cells, interpolated in RTT, come closest to all four published medians, and the path RTT at which they do.`}
	if all {
		t.Label, t.Long = "tab:tls-gapjoint-all", true
		t.Align = "llp{9em}rrrrr"
		t.Caption = `Study~A, the joint fit of every $T_{hs}$ definition, client group list and chain (Table~\ref{tab:tls-gapjoint} gives the best per definition).`
	}
	if fs == nil {
		t.Rows = append(t.Rows, []string{"---", "---", "---", "---", "---", "---", "---", "---"})
		t.Notes = "Emulated-path cells: " + notMeasured + "."
		return t.Latex()
	}
	rows := fs.joint
	if !all {
		rows = bestPerDefinition(rows)
	}
	for _, jr := range rows {
		t.Rows = append(t.Rows, jointRow(jr))
	}
	t.Notes = jointNotes(fs)
	return t.Latex()
}

// secondNumbers sets the second registration's and the joint fit's
// macros from fs, the run's fits (nil without emulated cells).
func secondNumbers(r *tlsstudy.Results, fs *fits, set func(name, v string)) error {
	reg := gapmodel.Registered2
	set("GapTwoAlpha", render.Fixed(reg.Alpha, 2))
	set("GapTwoJointTargetPct", render.Fixed(reg.JointTargetPct, 0))
	keys := []string{"GapTwoCZeroMs", "GapTwoS", "GapTwoMisses", "GapTwoHeldOut", "GapTwoPass", "GapTwoMaxErrMs", "GapTwoBoundMinMs", "GapTwoBoundMaxMs",
		"GapTwoTauMs", "GapTwoPairs", "GapTwoZ", "GapOneMisses", "GapOneHeldOut", "GapOneStallMisses", "GapJointReaches", "GapJointBest", "GapJointBestWorstPct",
		"GapJointBestRTTMs", "GapJointOursBest", "GapJointOursWorstPct", "GapJointOursRTTMs", "GapJointOursIncRTTMs", "GapJointOursIncWorstPct", "GapJointOursBaselineOffsetMs",
		"GapJointOursKemErrPct", "GapJointOursBaselineErrPct", "GapJointStatus", "GapTwoMissPattern", "GapTwoStallMaxErrMs", "GapOneStallMaxErrMs", "GapJointVerdict", "GapStallShape", "GapJointOursIncEdge", "GapJointOursEdge", "GapStallServerBytesMin", "GapNoStallServerBytesMax", "GapKemReach", "GapOneStallShare"}
	for _, k := range keys {
		set(k, "---")
	}
	if fs == nil {
		return nil
	}
	f1, f2 := fs.first, fs.second
	set("GapTwoCZeroMs", render.Fixed(f2.C0.Est, 3))
	set("GapTwoS", render.Fixed(f2.S.Est, 2))
	set("GapTwoMisses", fmt.Sprint(f2.Misses))
	set("GapTwoHeldOut", fmt.Sprint(len(f2.Predictions)))
	set("GapTwoPass", passWord2(f2))
	set("GapTwoMaxErrMs", render.Fixed(f2.MaxAbsErrMs, 2))
	set("GapTwoBoundMinMs", render.Fixed(minBound(f2), 2))
	set("GapTwoBoundMaxMs", render.Fixed(maxBound(f2), 2))
	set("GapTwoTauMs", render.Fixed(f2.TauMs, 2))
	set("GapTwoPairs", fmt.Sprint(f2.Pairs))
	set("GapTwoZ", render.Fixed(f2.Z, 2))
	misses, stallMisses := 0, 0
	for _, p := range f1.Predictions {
		if math.Abs(p.ErrorMs) > f1.Reg.BoundMs {
			misses++
			if p.Row.Stalls() > 0 {
				stallMisses++
			}
		}
	}
	set("GapTwoMissPattern", missPattern(f2))
	set("GapStallShape", stallShape(r.GapModelRows, f2))
	stallMin, plainMax := math.Inf(1), 0.0
	for _, row := range r.GapModelRows {
		if row.Stalls() > 0 {
			stallMin = min(stallMin, row.ServerBytes)
		} else {
			plainMax = max(plainMax, row.ServerBytes)
		}
	}
	if !math.IsInf(stallMin, 1) {
		set("GapStallServerBytesMin", render.Thousands(stallMin))
		set("GapNoStallServerBytesMax", render.Thousands(plainMax))
	}
	s1, s2 := 0.0, 0.0
	for i, p := range f2.Predictions {
		if p.Row.Stalls() > 0 {
			s1, s2 = max(s1, math.Abs(f1.Predictions[i].ErrorMs)), max(s2, math.Abs(p.ErrorMs))
		}
	}
	set("GapOneStallMaxErrMs", render.Fixed(s1, 2))
	set("GapTwoStallMaxErrMs", render.Fixed(s2, 2))
	set("GapOneMisses", fmt.Sprint(misses))
	set("GapOneHeldOut", fmt.Sprint(len(f1.Predictions)))
	set("GapOneStallMisses", fmt.Sprint(stallMisses))
	set("GapOneStallShare", shareWords(stallMisses, misses))
	set("GapJointStatus", map[bool]string{true: "a test of the passed model", false: "exploratory"}[f2.Pass])
	reach := 0
	for _, jr := range fs.joint {
		if jr.Reaches {
			reach++
		}
	}
	set("GapJointReaches", fmt.Sprint(reach))
	set("GapJointVerdict", jointVerdict(fs.joint, reach))
	if len(fs.joint) == 0 {
		return nil
	}
	best := slices.MinFunc(fs.joint, func(a, b gapmodel.JointRow) int { return cmp.Compare(a.WorstPct, b.WorstPct) })
	set("GapJointBest", render.Escape(fmt.Sprintf("%s (%s's end), %s", best.Definition.About, best.Definition.End, best.Combo)))
	set("GapJointBestWorstPct", render.Fixed(best.WorstPct, 1))
	set("GapJointBestRTTMs", render.Fixed(best.RTTMs, 2))
	i := slices.IndexFunc(bestPerDefinition(fs.joint), func(r gapmodel.JointRow) bool { return r.Definition == gapmodel.Definitions[0] })
	if i < 0 {
		return nil // ours not given: the macros stay "---"
	}
	ours := bestPerDefinition(fs.joint)[i]
	set("GapKemReach", kemReach(r.GapModelRows, ours.Combo))
	set("GapJointOursBest", render.Escape(ours.Combo.String()))
	set("GapJointOursWorstPct", render.Fixed(ours.WorstPct, 1))
	set("GapJointOursRTTMs", render.Fixed(ours.RTTMs, 2))
	set("GapJointOursIncRTTMs", render.Fixed(ours.IncRTTMs, 2))
	set("GapJointOursIncEdge", edgeNote(ours, ours.IncRTTMs))
	set("GapJointOursEdge", edgeNote(ours, ours.RTTMs))
	set("GapJointOursIncWorstPct", render.Fixed(ours.IncWorstPct, 1))
	set("GapJointOursBaselineOffsetMs", signed(ours.BaselineOffsetMs, 2))
	set("GapJointOursBaselineErrPct", signed(ours.ErrPct[0], 1))
	set("GapJointOursKemErrPct", signed(ours.ErrPct[slices.Index(gapmodel.Roles, "pq-kem")], 1))
	return nil
}

// capitalise starts s with an upper-case letter, for a sentence.
func capitalise(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// missPattern says which held-out cells the second model missed, by
// kind (a window stall, a HelloRetryRequest, neither) and by the sign of
// their errors, so that the paper names the term that failed.
func missPattern(f *gapmodel.OverlapFit) string {
	if f.Misses == 0 {
		return "every held-out cell is within its bound"
	}
	kinds := []struct {
		name string
		is   func(r *gapmodel.Row) bool
	}{
		{"with a window stall", func(r *gapmodel.Row) bool { return r.Stalls() > 0 }},
		{"with a HelloRetryRequest and no stall", func(r *gapmodel.Row) bool { return r.Stalls() == 0 && r.HRRShare > 0 }},
		{"with neither", func(r *gapmodel.Row) bool { return r.Stalls() == 0 && r.HRRShare == 0 }},
	}
	var parts []string
	for _, k := range kinds {
		n, of, long, short := 0, 0, 0, 0
		for _, p := range f.Predictions {
			if !k.is(p.Row) {
				continue
			}
			of++
			if p.Pass {
				continue
			}
			n++
			if p.ErrorMs > 0 {
				long++
			} else {
				short++
			}
		}
		if n == 0 {
			continue
		}
		sign := "predicted too long"
		switch {
		case short == n:
			sign = "predicted too short"
		case long != n:
			sign = fmt.Sprintf("%d predicted too long, %d too short", long, short)
		}
		if n > 1 && (short == n || long == n) {
			sign = "all " + sign
		}
		parts = append(parts, fmt.Sprintf("%d of the %d cells %s (%s)", n, of, k.name, sign))
	}
	return strings.Join(parts, "; ")
}

// jointVerdict is the paper's sentence on what the joint fit rules out:
// with no row within the target, that a slower path alone does not
// reproduce the published medians under any definition measured; with
// some, that a slower path is consistent with them but not shown to be
// their cause.
func jointVerdict(rows []gapmodel.JointRow, reach int) string {
	target := render.Fixed(gapmodel.Registered2.JointTargetPct, 0)
	if reach == 0 {
		return fmt.Sprintf("no definition, group list and chain reaches all four within %s~\\%%: round trips on a slower path, timed any of these ways, do not reproduce the published medians on our host, and what is left lies in what we did not vary", target)
	}
	var names []string
	for _, r := range rows {
		if r.Reaches {
			names = append(names, fmt.Sprintf("%s at the %s's end with %s", r.Definition.About, r.Definition.End, r.Combo))
		}
	}
	verb := "rows reach"
	if reach == 1 {
		verb = "rows: one reaches"
		return render.Escape(fmt.Sprintf("of %d %s all four within %s %%: ", len(rows), verb, target)) + render.Escape(names[0]) +
			"; a slower path is consistent with the published medians under this definition, but, the original's RTT not being published, it is not shown to be their cause"
	}
	return render.Escape(fmt.Sprintf("%d of %d %s all four within %s %%: ", reach, len(rows), verb, target)) + render.Escape(strings.Join(names, "; ")) +
		"; a slower path is consistent with the published medians under these definitions, but, the original's RTT not being published, it is not shown to be their cause"
}

// stallShape says what a window stall cost at each delay level against
// the second model's term: per level, the median over the stall cells of
// Ths - c0 - (1 + h) RTT - s CPU (the part the stall term must explain,
// c0 and s as fitted), beside max(RTT - t_sign, 0), and whether it is
// above, below or within 0.05 ms of it.
func stallShape(rows []gapmodel.Row, f *gapmodel.OverlapFit) string {
	type level struct{ rtt, obs, term float64 }
	by := map[float64][]*gapmodel.Row{}
	var keys []float64
	for i := range rows {
		r := &rows[i]
		if r.Stalls() == 0 {
			continue
		}
		if by[r.OneWayDelayMs] == nil {
			keys = append(keys, r.OneWayDelayMs)
		}
		by[r.OneWayDelayMs] = append(by[r.OneWayDelayMs], r)
	}
	if len(keys) == 0 {
		return "no cell stalled"
	}
	slices.Sort(keys)
	var ls []level
	for _, k := range keys {
		var obs, term, rtt []float64
		for _, r := range by[k] {
			m, _ := stats.Median(r.RoundThsMs)
			obs = append(obs, m-f.C0.Est-(1+r.HRRShare)*r.RTTMs-f.S.Est*r.CPUMs)
			term = append(term, r.OverlapMs())
			rtt = append(rtt, r.RTTMs)
		}
		l := level{}
		l.obs, _ = stats.Median(obs)
		l.term, _ = stats.Median(term)
		l.rtt, _ = stats.Median(rtt)
		ls = append(ls, l)
	}
	var at, obs, term []string
	side := map[string][]string{}
	for _, l := range ls {
		rtt := render.Fixed(l.rtt, 2)
		at, obs, term = append(at, rtt), append(obs, render.Fixed(l.obs, 2)), append(term, render.Fixed(l.term, 2))
		switch d := l.obs - l.term; {
		case d > 0.05:
			side["more than the term"] = append(side["more than the term"], rtt)
		case d < -0.05:
			side["less"] = append(side["less"], rtt)
		default:
			side["the term within 0.05~ms"] = append(side["the term within 0.05~ms"], rtt)
		}
	}
	var parts []string
	for _, k := range []string{"more than the term", "less", "the term within 0.05~ms"} {
		if v := side[k]; len(v) > 0 {
			parts = append(parts, fmt.Sprintf("%s at %s~ms", k, strings.Join(v, ", ")))
		}
	}
	out := fmt.Sprintf("at RTTs of %s~ms a stall cost %s~ms, against $\\max(\\mathrm{RTT} - t_{sign}, 0)$ = %s~ms: %s",
		strings.Join(at, ", "), strings.Join(obs, ", "), strings.Join(term, ", "), strings.Join(parts, "; "))
	var reading []string
	if len(side["less"]) > 0 {
		reading = append(reading, "where it cost less, the wait overlaps more than the signature (the server also builds and encrypts its flight while the ACK travels)")
	}
	if len(side["more than the term"]) > 0 {
		reading = append(reading, "where it cost more, the stall costs time even though the signature outlasts the round trip (the rest of the flight leaves only once the ACK is processed)")
	}
	if len(reading) > 0 {
		out += ". Our reading, not tested: " + strings.Join(reading, "; ")
	}
	return out
}

// kemReach says at which path RTT ML-KEM-1024's increase over the
// baseline, by our definition of Ths in one combination's cells, would
// equal the published one, and what our baseline would then be: the
// issue's "what would have to be true". The cells' medians are joined
// linearly in RTT; beyond the largest RTT measured, the line through the
// two largest is extended, and the sentence says it is extrapolated.
func kemReach(rows []gapmodel.Row, c gapmodel.Combo) string {
	type pt struct{ rtt, base, kem float64 }
	by := map[float64]*pt{}
	for i := range rows {
		r := &rows[i]
		if r.Groups != c.Groups || r.Chain != c.Chain || (r.Role != "baseline" && r.Role != "pq-kem") {
			continue
		}
		p := by[r.OneWayDelayMs]
		if p == nil {
			p = &pt{rtt: r.RTTMs}
			by[r.OneWayDelayMs] = p
		}
		m, _ := stats.Median(r.RoundThsMs)
		if r.Role == "baseline" {
			p.base = m
		} else {
			p.kem = m
		}
	}
	var pts []pt
	for _, p := range by {
		if p.base > 0 && p.kem > 0 {
			pts = append(pts, *p)
		}
	}
	if len(pts) < 2 {
		return "not measured in this run"
	}
	slices.SortFunc(pts, func(a, b pt) int { return cmp.Compare(a.rtt, b.rtt) })
	want := tlsstudy.Published.Increases["pq-kem"].IncreaseMs
	inc := func(p pt) float64 { return p.kem - p.base }
	say := func(a, b pt, how string) string {
		f := (want - inc(a)) / (inc(b) - inc(a))
		rtt, base := a.rtt+f*(b.rtt-a.rtt), a.base+f*(b.base-a.base)
		return fmt.Sprintf("in the %s cells ML-KEM-1024's increase would reach the published %s~ms at an RTT of about %s~ms (%s), where our baseline would be %s~ms against the published %s~ms",
			render.Escape(c.String()), signed(want, 3), render.Fixed(rtt, 2), how, render.Fixed(base, 2), render.Fixed(tlsstudy.Published.BaselineMedianMs, 1))
	}
	for k := 1; k < len(pts); k++ {
		a, b := pts[k-1], pts[k]
		if inc(a) != inc(b) && want >= min(inc(a), inc(b)) && want <= max(inc(a), inc(b)) {
			return say(a, b, "within the RTTs we measured")
		}
	}
	if a, b := pts[len(pts)-2], pts[len(pts)-1]; inc(b) > inc(a) && want > inc(b) {
		return say(a, b, fmt.Sprintf("beyond our largest, %s~ms: extrapolated along the line through the two largest", render.Fixed(b.rtt, 2)))
	}
	return fmt.Sprintf("in the %s cells ML-KEM-1024's increase does not grow with the RTT towards the published %s~ms", render.Escape(c.String()), signed(want, 3))
}

// shareWords says how many of n things are k of them: "all of them",
// "none of them", or "k of them".
func shareWords(k, n int) string {
	switch {
	case n > 0 && k == n:
		return "all of them"
	case k == 0:
		return "none of them"
	}
	return fmt.Sprintf("%d of them", k)
}
