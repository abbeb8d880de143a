package tlsstudy

import (
	"fmt"
	"image/color"
	"math"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"pqrepro/internal/render"
)

// Renderings of the drift and dependence checks: the per-round table and
// figure (TableDrift, FigureDrift), the serial-dependence table
// (TableSerial) and their \newcommand numbers.

// fixedOrDash is render.Fixed of a Num.
func fixedOrDash(x Num, d int) string { return render.Fixed(float64(x), d) }

func signedOrDash(x Num, d int) string { return signed(float64(x), d) }

// driftTable: per round the primary cell's baseline block median and each
// paper target's paired difference, then the run's fifths by ClientHello
// time.
func driftTable(r *Results) (string, error) {
	f := r.Families["paper"]
	t := render.Table{
		Label: "tab:tls-drift",
		Caption: `Study~A, drift over the run (primary cell): per round the baseline's block median and each of the paper's configurations' paired difference ` +
			`(its block median minus the baseline's in the same round), ms; below, the run cut into five equal spans of ClientHello time, ` +
			`the baseline median and each configuration's median minus it within the fifth.`,
		Align:  "lrrrr",
		Header: []string{"Round", "Baseline (ms)", roleNames["pq-sig"], roleNames["pq-kem"], roleNames["hybrid"]},
	}
	byRole := map[string]*Comparison{}
	for i := range f.Comparisons {
		byRole[f.Comparisons[i].Role] = &f.Comparisons[i]
	}
	n := len(f.BaselineRoundsMs)
	for _, role := range Roles[1:] {
		if c := byRole[role]; c != nil {
			n = max(n, len(c.Rounds.DiffsMs))
		}
	}
	at := func(x []Num, i int) Num {
		if i < len(x) {
			return x[i]
		}
		return Num(math.NaN())
	}
	for i := range n {
		row := []string{strconv.Itoa(i + 1), fixedOrDash(at(f.BaselineRoundsMs, i), 3)}
		for _, role := range Roles[1:] {
			v := Num(math.NaN())
			if c := byRole[role]; c != nil {
				v = at(c.Rounds.DiffsMs, i)
			}
			row = append(row, signedOrDash(v, 3))
		}
		t.Rows = append(t.Rows, row)
	}
	med := []string{`\midrule Median`, fixedOrDash(medianNums(f.BaselineRoundsMs), 3)}
	for _, role := range Roles[1:] {
		v := Num(math.NaN())
		if c := byRole[role]; c != nil {
			v = c.Rounds.IncreaseMs
		}
		med = append(med, signedOrDash(v, 3))
	}
	t.Rows = append(t.Rows, med)
	fi := r.Dependence.Fifths
	for i, b := range fi.BaselineMs {
		lead := fmt.Sprintf("Fifth %d", i+1)
		if i == 0 {
			lead = `\midrule ` + lead
		}
		row := []string{lead, fixedOrDash(b, 3)}
		for _, role := range Roles[1:] {
			row = append(row, signedOrDash(at(fi.IncreaseMs[role], i), 3))
		}
		t.Rows = append(t.Rows, row)
	}
	t.Notes = fmt.Sprintf(`Median: of the rounds' values, the round-level increase of Table~\ref{tab:tls-paper}. The baseline's median per fifth varies by a factor of %s (largest over smallest); within a round the drift cancels. `+"``---'': no block (or connection) of the configuration there.",
		fixedOrDash(fi.MaxOverMin, 2))
	return t.Latex()
}

func medianNums(x []Num) Num {
	var v []float64
	for _, n := range x {
		if !math.IsNaN(float64(n)) {
			v = append(v, float64(n))
		}
	}
	if len(v) == 0 {
		return Num(math.NaN())
	}
	slices.Sort(v)
	m := len(v) / 2
	if len(v)%2 == 1 {
		return Num(v[m])
	}
	return Num((v[m-1] + v[m]) / 2)
}

// serialTable: per paper configuration of the primary cell, the lag-1
// rank autocorrelation and the runs test of its series in time order.
func serialTable(r *Results) (string, error) {
	t := render.Table{
		Label: "tab:tls-serial",
		Caption: `Study~A, serial dependence within each of the paper's configurations (primary cell), its measured handshakes in time order over all its blocks: ` +
			`the lag-1 autocorrelation of the ranks of $T_\mathrm{hs}$ and the runs test about the median ($z < 0$: fewer runs, longer stretches above or below the median, than independent handshakes give).`,
		Align:  "lrrrrr",
		Header: []string{"Configuration", "$n$", "Rounds", `Rank ACF(1)`, `Runs $z$`, `$p$`},
	}
	lo, hi, zlo, zhi := serialRange(r)
	var notes []string
	for _, id := range r.Families["paper"].Configs { // the paper's order
		i := slices.IndexFunc(r.Dependence.Configs, func(s SerialConfig) bool { return s.Config == id })
		if i < 0 {
			continue
		}
		s := r.Dependence.Configs[i]
		if s.Note != "" {
			notes = append(notes, render.Escape(r.label(s.Config)+": "+s.Note))
		}
		t.Rows = append(t.Rows, []string{render.Escape(r.label(s.Config)), strconv.Itoa(s.N), strconv.Itoa(s.Rounds),
			fixedOrDash(s.RankACF1, 2), fixedOrDash(s.RunsZ, 1), pValue(float64(s.RunsP))})
	}
	n := fmt.Sprintf(`Independent handshakes would give a rank ACF near 0 and $z$ near 0. Over all %d configurations of the primary cell: rank ACF(1) %s to %s, runs $z$ %s to %s. `+
		`Hence the handshakes are not the unit of replication: the round is (Table~\ref{tab:tls-paper}).`,
		len(r.Dependence.Configs), render.Fixed(lo, 2), render.Fixed(hi, 2), render.Fixed(zlo, 1), render.Fixed(zhi, 1))
	if len(notes) > 0 {
		n += " ``---'': " + strings.Join(notes, "; ") + "."
	}
	t.Notes = n
	return t.Latex()
}

// serialRange is the range of the rank ACF at lag 1 and of the runs z
// over the primary cell's configurations (Inf and -Inf when none has one,
// which render.Fixed prints as "---").
func serialRange(r *Results) (lo, hi, zlo, zhi float64) {
	lo, hi, zlo, zhi = math.Inf(1), math.Inf(-1), math.Inf(1), math.Inf(-1)
	for _, s := range r.Dependence.Configs {
		if v := float64(s.RankACF1); !math.IsNaN(v) {
			lo, hi = min(lo, v), max(hi, v)
		}
		if v := float64(s.RunsZ); !math.IsNaN(v) {
			zlo, zhi = min(zlo, v), max(zhi, v)
		}
	}
	return lo, hi, zlo, zhi
}

// dependenceNumbers sets the drift and dependence macros.
func dependenceNumbers(r *Results, set func(name, v string)) {
	lo, hi, zlo, zhi := serialRange(r)
	set("RankACFMin", render.Fixed(lo, 2))
	set("RankACFMax", render.Fixed(hi, 2))
	set("RunsZMin", render.Fixed(zlo, 1))
	set("RunsZMax", render.Fixed(zhi, 1))
	fi := r.Dependence.Fifths
	var parts []string
	for _, b := range fi.BaselineMs {
		parts = append(parts, fixedOrDash(b, 3))
	}
	set("FifthBaselineMs", strings.Join(parts, ", "))
	set("FifthMaxOverMin", fixedOrDash(fi.MaxOverMin, 2))
	for _, role := range Roles[1:] {
		var p []string
		var xs []float64
		for _, v := range fi.IncreaseMs[role] {
			p = append(p, signedOrDash(v, 3))
			xs = append(xs, float64(v))
		}
		set("Fifth"+roleMacro[role]+"IncreaseMs", strings.Join(p, ", "))
		// The words for their signs, generated with them (the prose test
		// of pipeline checks every sign word against its numbers).
		set("Fifth"+roleMacro[role]+"IncreaseSign", render.SignWords(xs))
	}
	f := r.Families["paper"]
	var b []float64
	for _, v := range f.BaselineRoundsMs {
		if !math.IsNaN(float64(v)) {
			b = append(b, float64(v))
		}
	}
	set("LevelPct", render.Fixed(100*r.Params.Level, 0)+`\,\%`)
	set("Rounds", strconv.Itoa(len(f.BaselineRoundsMs)))
	set("MinRounds", strconv.Itoa(r.Params.MinRounds))
	if len(b) > 0 {
		lo, hi := b[0], b[0]
		for _, v := range b {
			lo, hi = min(lo, v), max(hi, v)
		}
		set("RoundBaselineMinMs", render.Fixed(lo, 3))
		set("RoundBaselineMaxMs", render.Fixed(hi, 3))
	} else {
		set("RoundBaselineMinMs", "---")
		set("RoundBaselineMaxMs", "---")
	}
}

// driftPlot draws, per round, the primary cell's baseline block median
// (black crosses) and each paper target's paired difference (the role's
// series style), with each target's round-level increase as a dashed
// line; the key sits above the panel (render.Compose).
func driftPlot(r *Results) (keyed, error) {
	f := r.Families["paper"]
	p := render.NewPlot("")
	p.X.Label.Text = "Round (blocks in a freshly shuffled order per round)"
	p.Y.Label.Text = "ms"
	grid := plotter.NewGrid()
	grid.Vertical.Color = nil
	grid.Horizontal.Color = color.Gray{Y: 0xe4}
	p.Add(grid)
	n := len(f.BaselineRoundsMs)
	lo, hi := 0.0, math.Inf(-1)
	var key []render.KeyEntry
	series := func(x []Num, line draw.LineStyle, glyph draw.GlyphStyle, label string) error {
		var pts plotter.XYs
		for i, v := range x {
			if fv := float64(v); !math.IsNaN(fv) {
				if math.IsInf(fv, 0) {
					return fmt.Errorf("%s round %d: %v ms is not finite", label, i+1, fv)
				}
				pts = append(pts, plotter.XY{X: float64(i + 1), Y: fv})
				lo, hi = min(lo, fv), max(hi, fv)
			}
		}
		if len(pts) == 0 {
			return nil
		}
		l, s, err := plotter.NewLinePoints(pts)
		if err != nil {
			return err
		}
		l.LineStyle, s.GlyphStyle = line, glyph
		p.Add(l, s)
		key = append(key, render.KeyEntry{Name: label, Thumb: render.Thumb{Line: line, Glyph: glyph}})
		return nil
	}
	black := draw.LineStyle{Color: color.Black, Width: vg.Points(0.9)}
	if err := series(f.BaselineRoundsMs, black, draw.GlyphStyle{Color: color.Black, Radius: vg.Points(2), Shape: draw.CrossGlyph{}},
		"baseline block median ("+r.label(f.Baseline)+")"); err != nil {
		return keyed{}, err
	}
	for _, c := range f.Comparisons {
		k := slices.Index(Roles[1:], c.Role)
		if k < 0 {
			continue
		}
		st := roleSeries(k)
		n = max(n, len(c.Rounds.DiffsMs))
		line := draw.LineStyle{Color: st.Color, Width: vg.Points(0.9)}
		if err := series(c.Rounds.DiffsMs, line, draw.GlyphStyle{Color: st.Color, Radius: vg.Points(2), Shape: st.Shape}, "increase: "+r.label(c.Target)); err != nil {
			return keyed{}, err
		}
		if v := float64(c.Rounds.IncreaseMs); !math.IsNaN(v) && !math.IsInf(v, 0) && n > 0 {
			l, err := plotter.NewLine(plotter.XYs{{X: 0.6, Y: v}, {X: float64(n) + 0.4, Y: v}})
			if err != nil {
				return keyed{}, err
			}
			l.LineStyle = draw.LineStyle{Color: st.Color, Width: vg.Points(0.6), Dashes: []vg.Length{vg.Points(3), vg.Points(2)}}
			p.Add(l)
		}
	}
	if n == 0 || math.IsInf(hi, -1) {
		return keyed{}, fmt.Errorf("no round has a value to draw")
	}
	key = append(key, render.KeyEntry{Name: "dashed: the round-level increase (median over rounds)"})
	p.X.Min, p.X.Max = 0.5, float64(n)+0.5
	p.Y.Min, p.Y.Max = lo, hi+0.05*(hi-lo)
	if p.Y.Max <= p.Y.Min {
		p.Y.Max = p.Y.Min + 1
	}
	p.X.Tick.Marker = roundTicks{}
	p.Y.Tick.Marker = render.LinearTicks{}
	return keyed{p: p, key: key, cols: 2, rows: 8}, nil
}

// roundTicks labels every round up to 20 rounds, else every fifth.
type roundTicks struct{}

func (roundTicks) Ticks(lo, hi float64) []plot.Tick {
	var ts []plot.Tick
	step := 1
	if hi-lo > 20 {
		step = 5
	}
	for i := int(math.Ceil(lo)); float64(i) <= hi; i++ {
		if i < 1 {
			continue
		}
		t := plot.Tick{Value: float64(i)}
		if i%step == 0 || step == 1 {
			t.Label = strconv.Itoa(i)
		}
		ts = append(ts, t)
	}
	return ts
}
