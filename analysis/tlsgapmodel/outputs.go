package tlsgapmodel

import (
	"cmp"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"pqrepro/analysis/gapmodel"
	"pqrepro/analysis/stats"
	"pqrepro/analysis/tlsstudy"
	"pqrepro/internal/render"
)

// Output paths of the gap model's renderings, relative to the repository
// root.
const (
	Figure = "figures/tls-gapmodel" // .pdf and .svg
	Table  = "paper/generated/tls-gapmodel.tex"
)

// Part returns the gap model as a part of Study A's stages (tlsstudy.Part).
//
// tls:analyze fits it on the emulated-path cells (Attach); tls:figures
// draws Figure, each configuration's increase over the baseline against
// the path's RTT, a panel per client group list, with the model's lines
// and the published increases; tls:tables writes Table, the fitted
// parameters and the published-vs-predicted residuals per combination,
// and the GapModel macros in tlsstudy.NumbersFile. A run without
// emulated-path cells gets each output saying "not measured in this run".
func Part() tlsstudy.Part {
	return tlsstudy.Part{
		Code:        []string{codeDir},
		Attach:      Attach,
		Figures:     figures,
		FigureBases: []string{Figure},
		Tables:      map[string]func(*tlsstudy.Results) (string, error){Table: modelsTable, TableJoint: jointTable, TableJointAll: jointAllTable},
		Numbers:     numbers,
	}
}

// figures is Part's list of figures: the one figure.
func figures(r *tlsstudy.Results) ([]render.Figure, error) {
	f, err := figure(r)
	if err != nil {
		return nil, err
	}
	return []render.Figure{f}, nil
}

// codeDir is the package's directory, which versions the stages.
const codeDir = "analysis/tlsgapmodel"

// notMeasured is what every gap-model output says without the cells.
const notMeasured = "not measured in this run"

// published converts tlsstudy.Published, the one copy of the original's
// numbers, for gapmodel.Explain.
func published() gapmodel.Published {
	p := gapmodel.Published{Source: tlsstudy.Published.Source, BaselineMs: tlsstudy.Published.BaselineMedianMs, IncreaseMs: map[string]float64{}}
	for role, inc := range tlsstudy.Published.Increases {
		p.IncreaseMs[role] = inc.IncreaseMs
	}
	return p
}

// fit fits the model on rows and, if the prediction passes, explains
// the published medians; nil, nil without rows.
func fit(rows []gapmodel.Row) (*gapmodel.Fit, *gapmodel.Explanation, error) {
	if len(rows) == 0 {
		return nil, nil, nil
	}
	f, err := gapmodel.FitModel(rows, gapmodel.Registered)
	if err != nil {
		return nil, nil, fmt.Errorf("gap model: %w", err)
	}
	if !f.Pass {
		return f, nil, nil
	}
	e, err := gapmodel.Explain(f, rows, published())
	if err != nil {
		return nil, nil, fmt.Errorf("gap model: %w", err)
	}
	return f, e, nil
}

// roleLabel names a role in the figure's key and the table.
func roleLabel(role string) string {
	if role == "baseline" {
		return "Baseline"
	}
	return tlsstudy.Published.Increases[role].Config
}

// figure draws, per client group list, each configuration's
// observed increase over the baseline (median over rounds of the paired
// per-round difference) against the path's self-tested RTT, marker per
// chain; the model's increase, (k_j - k_base) RTT + s (CPU_j - CPU_base),
// as lines (solid: leaf, dashed: leaf and CA); and the published
// increases as dotted horizontal lines. Without rows it draws the
// published lines alone and says the cells were not measured.
func figure(r *tlsstudy.Results) (render.Figure, error) {
	rows := r.GapModelRows
	fs, err := fitsOf(r)
	if err != nil {
		return render.Figure{}, err
	}
	var f *gapmodel.OverlapFit
	if fs != nil {
		f = fs.second
	}
	var groups []string
	for i := range rows {
		if !slices.Contains(groups, rows[i].Groups) {
			groups = append(groups, rows[i].Groups)
		}
	}
	slices.Sort(groups)
	maxRTT := 4.0
	for i := range rows {
		maxRTT = max(maxRTT, rows[i].RTTMs)
	}
	var key []render.KeyEntry
	panel := func(title string, rs []gapmodel.Row) (*plot.Plot, error) {
		p := render.NewPlot(title)
		p.X.Label.Text = "Path RTT, self-tested (ms)"
		p.Y.Label.Text = "Increase over the baseline (ms)"
		p.X.Min, p.X.Max, p.Y.Min, p.Y.Max = 0, maxRTT*1.05, 0, 10
		p.X.Tick.Marker, p.Y.Tick.Marker = render.LinearTicks{}, render.LinearTicks{}
		for k, role := range tlsstudy.Roles[1:] {
			st := render.SeriesStyle(k)
			pub := tlsstudy.Published.Increases[role].IncreaseMs
			l, err := plotter.NewLine(plotter.XYs{{X: 0, Y: pub}, {X: maxRTT * 1.05, Y: pub}})
			if err != nil {
				return nil, err
			}
			l.LineStyle = draw.LineStyle{Color: st.Color, Width: vg.Points(0.8), Dashes: []vg.Length{vg.Points(1), vg.Points(2)}}
			p.Add(l)
			if len(key) < 3 {
				key = append(key, render.KeyEntry{Name: roleLabel(role) + ": published", Thumb: l})
			}
			p.Y.Max = max(p.Y.Max, pub*1.1)
		}
		if f == nil {
			return p, nil
		}
		chains := map[string]bool{}
		for i := range rs {
			chains[rs[i].Chain] = true
		}
		for k, role := range tlsstudy.Roles[1:] {
			st := render.SeriesStyle(k)
			for _, chain := range slices.Sorted(maps.Keys(chains)) {
				obs, roleRow, baseRow := increases(rs, role, chain)
				if len(obs) == 0 {
					continue
				}
				sc, err := plotter.NewScatter(obs)
				if err != nil {
					return nil, err
				}
				sc.GlyphStyle = draw.GlyphStyle{Color: st.Color, Radius: vg.Points(2.4), Shape: st.Shape}
				if chain != "leaf" {
					sc.GlyphStyle.Shape = st.Hollow
				}
				var curve plotter.XYs
				for x := 0.0; x <= maxRTT*1.05; x += maxRTT * 1.05 / 200 {
					curve = append(curve, plotter.XY{X: x, Y: f.PredictedAt(roleRow, x) - f.PredictedAt(baseRow, x)})
				}
				ln, err := plotter.NewLine(curve)
				if err != nil {
					return nil, err
				}
				ln.LineStyle = draw.LineStyle{Color: st.Color, Width: vg.Points(1)}
				if chain != "leaf" {
					ln.LineStyle.Dashes = []vg.Length{vg.Points(4), vg.Points(2)}
				}
				p.Add(ln, sc)
				for _, pt := range obs {
					p.Y.Max = max(p.Y.Max, pt.Y*1.1)
					p.Y.Min = min(p.Y.Min, pt.Y*1.1)
				}
			}
		}
		return p, nil
	}
	var panels []*plot.Plot
	if len(groups) == 0 {
		p, err := panel("", nil)
		if err != nil {
			return render.Figure{}, err
		}
		p.Title.Text = "Emulated-path cells: " + notMeasured
		panels = append(panels, p)
	}
	for _, g := range groups {
		var rs []gapmodel.Row
		for _, row := range rows {
			if row.Groups == g {
				rs = append(rs, row)
			}
		}
		p, err := panel("Client groups: "+g, rs)
		if err != nil {
			return render.Figure{}, err
		}
		panels = append(panels, p)
	}
	if f != nil {
		key = append(key, render.KeyEntry{Name: "ours (filled: leaf, hollow: leaf + CA); lines: the second model (dashed: leaf + CA)",
			Thumb: render.Thumb{Line: draw.LineStyle{Color: render.Grey, Width: vg.Points(1)}}})
	}
	cols := 3
	return render.Figure{Base: Figure, Plot: render.Compose([][]*plot.Plot{panels}, key, cols),
		W: render.TextWidth, H: 2.8 * vg.Inch, Panels: panels}, nil
}

// increases returns one chain's observed increases of role over
// the baseline (x: RTT, y: median over rounds of the per-round
// difference) at every delay level of rs, and the role's and the
// baseline's typical cells (median round trips, HRR share, signing time
// and CPU over those levels) for the model's curve.
func increases(rs []gapmodel.Row, role, chain string) (obs plotter.XYs, roleRow, baseRow gapmodel.Row) {
	base := map[float64]*gapmodel.Row{}
	for i := range rs {
		if rs[i].Chain == chain && rs[i].Role == "baseline" {
			base[rs[i].OneWayDelayMs] = &rs[i]
		}
	}
	var rr, br []*gapmodel.Row
	for i := range rs {
		r := &rs[i]
		b := base[r.OneWayDelayMs]
		if r.Chain != chain || r.Role != role || b == nil {
			continue
		}
		d := make([]float64, len(r.RoundThsMs))
		for j := range d {
			d[j] = r.RoundThsMs[j] - b.RoundThsMs[j]
		}
		m, err := stats.Median(d)
		if err != nil {
			continue
		}
		obs = append(obs, plotter.XY{X: r.RTTMs, Y: m})
		rr, br = append(rr, r), append(br, b)
	}
	if len(obs) == 0 {
		return nil, gapmodel.Row{}, gapmodel.Row{}
	}
	slices.SortFunc(obs, func(a, b plotter.XY) int { return cmp.Compare(a.X, b.X) }) // finite RTTs
	return obs, typical(rr), typical(br)
}

// typical is the row of the medians of rs' round trips, HRR share,
// signing time and CPU.
func typical(rs []*gapmodel.Row) gapmodel.Row {
	med := func(get func(*gapmodel.Row) float64) float64 {
		v := make([]float64, len(rs))
		for i, r := range rs {
			v[i] = get(r)
		}
		m, _ := stats.Median(v)
		return m
	}
	return gapmodel.Row{RoundTrips: med(func(r *gapmodel.Row) float64 { return r.RoundTrips }), HRRShare: med(func(r *gapmodel.Row) float64 { return r.HRRShare }),
		SignMs: med(func(r *gapmodel.Row) float64 { return r.SignMs }), CPUMs: med(func(r *gapmodel.Row) float64 { return r.CPUMs })}
}

func passWord(f *gapmodel.Fit) string {
	if f.Pass {
		return "passes"
	}
	return "fails"
}

// numbers sets the gap model's macros: the registered bounds,
// whether the cells were measured, the fitted parameters and intervals,
// the held-out test, and the best combination with its RTT, CPU factor,
// RMS residual and what it says of the baseline.
func numbers(r *tlsstudy.Results, setOnce func(name, v string)) error {
	fs, err := fitsOf(r)
	if err != nil {
		return err
	}
	var f *gapmodel.Fit
	var e *gapmodel.Explanation
	if fs != nil {
		f, e = fs.first, fs.explain
	}
	vals := map[string]string{}
	set := func(name, v string) { vals[name] = v }
	defer func() {
		for _, k := range slices.Sorted(maps.Keys(vals)) {
			setOnce(k, vals[k])
		}
	}()
	if err := secondNumbers(r, fs, set); err != nil {
		return err
	}
	reg := gapmodel.Registered
	set("GapModelBoundMs", render.Fixed(reg.BoundMs, 2))
	set("GapModelExplainBoundMs", render.Fixed(reg.ExplainBoundMs, 2))
	set("GapModelResamples", fmt.Sprint(reg.Resamples))
	for _, k := range []string{"GapModelCZeroMs", "GapModelCZeroLowMs", "GapModelCZeroHighMs", "GapModelS", "GapModelSLow", "GapModelSHigh",
		"GapModelMaxErrMs", "GapModelPass", "GapModelOutcome", "GapModelBest", "GapModelBestRTTMs", "GapModelBestCPUFactor", "GapModelBestRMSMs", "GapModelBaselineNote", "GapModelRounds"} {
		set(k, "---")
	}
	if f == nil {
		set("GapModelStatus", notMeasured)
		return nil
	}
	set("GapModelStatus", "measured")
	set("GapModelCZeroMs", render.Fixed(f.C0.Est, 3))
	set("GapModelCZeroLowMs", render.Fixed(f.C0.Lower, 3))
	set("GapModelCZeroHighMs", render.Fixed(f.C0.Upper, 3))
	set("GapModelS", render.Fixed(f.S.Est, 2))
	set("GapModelSLow", render.Fixed(f.S.Lower, 2))
	set("GapModelSHigh", render.Fixed(f.S.Upper, 2))
	set("GapModelMaxErrMs", render.Fixed(f.MaxAbsErrMs, 3))
	set("GapModelPass", passWord(f))
	set("GapModelRounds", fmt.Sprint(f.Rounds))
	set("GapModelOutcome", outcome(f, e))
	if e == nil {
		return nil
	}
	set("GapModelBaselineNote", render.Escape(e.BaselineNote))
	if e.Best < 0 {
		set("GapModelBest", "none")
		return nil
	}
	b := e.Combos[e.Best]
	set("GapModelBest", render.Escape(b.Combo.String()))
	set("GapModelBestRTTMs", render.Fixed(b.RTTMs, 2))
	set("GapModelBestCPUFactor", render.Fixed(b.CPUFactor, 2))
	set("GapModelBestRMSMs", render.Fixed(b.RMSMs, 2))
	if math.IsNaN(b.RMSMs) {
		return fmt.Errorf("gap model: best combination %s with RMS NaN", b.Combo)
	}
	return nil
}

// outcome is the paper's sentence on what the model explains, in
// generated words: with a failed held-out test, that nothing was solved
// for, and the held-out cell the model missed most (the registration
// forbids explaining the published numbers with a model that fails it);
// with a passed one, the best combination or that none fits.
func outcome(f *gapmodel.Fit, e *gapmodel.Explanation) string {
	if !f.Pass {
		var worst *gapmodel.Prediction
		for i := range f.Predictions {
			if p := &f.Predictions[i]; worst == nil || math.Abs(p.ErrorMs) > math.Abs(worst.ErrorMs) {
				worst = p
			}
		}
		out := fmt.Sprintf("the held-out prediction fails its registered bound of %s~ms, so, as registered, no path RTT or CPU factor is solved for and the model explains none of the published numbers", render.Fixed(f.Reg.BoundMs, 2))
		if worst != nil {
			out += fmt.Sprintf("; it misses most in %s (RTT %s~ms, %s measured round trips: predicted %s~ms, observed %s~ms)",
				render.Escape(worst.Row.Label()), render.Fixed(worst.Row.RTTMs, 3), render.Fixed(worst.Row.RoundTrips, 1),
				render.Fixed(worst.PredictedMs, 2), render.Fixed(worst.ObservedMs, 2))
		}
		return out
	}
	if e == nil || e.Best < 0 {
		return fmt.Sprintf("the held-out prediction passes (every error within %s~ms), but no combination of client group list and chain fits the four published medians within %s~ms each", render.Fixed(f.Reg.BoundMs, 2), render.Fixed(f.Reg.ExplainBoundMs, 2))
	}
	b := e.Combos[e.Best]
	return fmt.Sprintf("the held-out prediction passes (every error within %s~ms); the best combination is %s, with a path RTT of %s~ms and a CPU factor of %s (root-mean-square residual %s~ms)",
		render.Fixed(f.Reg.BoundMs, 2), render.Escape(b.Combo.String()), render.Fixed(b.RTTMs, 2), render.Fixed(b.CPUFactor, 2), render.Fixed(b.RMSMs, 2))
}

// signed formats x with d decimals and an explicit sign, as Study A's
// other tables do.
func signed(x float64, d int) string {
	s := render.Fixed(x, d)
	if s != "---" && !strings.HasPrefix(s, "-") {
		s = "+" + s
	}
	return s
}
