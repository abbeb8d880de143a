package picostudy

import (
	"fmt"
	"image/color"
	"maps"
	"math"
	"slices"
	"strings"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"pqrepro/datasets/picodata"
	"pqrepro/internal/render"
)

// The paper's series (render): ML-KEM blue circles, ML-DSA vermilion
// squares, the classical baselines reddish-purple triangles; published
// values black.
var (
	kemSeries       = render.SeriesStyle(0)
	dsaSeries       = render.SeriesStyle(1)
	classicalSeries = render.SeriesStyle(2)
	// SPHINCS+ (our extension): orange crosses, a shape no other family
	// uses.
	sphincsSeries = render.Series{Color: render.Orange, Shape: draw.CrossGlyph{}, Hollow: draw.CrossGlyph{}}
	gridStyle     = draw.LineStyle{Color: render.GridGrey, Width: vg.Points(0.5)}
)

// publishedValue is the paper's value for a key of published.
func publishedValue(key string) (float64, bool) {
	for _, p := range published {
		if p.key == key {
			return p.paper, true
		}
	}
	return 0, false
}

// displayName is a scheme as the paper writes it.
func displayName(s string) string {
	switch s {
	case "ecdsa-p256":
		return "ECDSA P-256"
	case "ecdh-p256":
		return "ECDH P-256"
	}
	if rest, ok := strings.CutPrefix(s, "sphincs-"); ok {
		// SPHINCS+-SHA2-128f: the hash in capitals, the set's f or s not.
		h, size, _ := strings.Cut(rest, "-")
		return "SPHINCS+-" + strings.ToUpper(h) + "-" + size
	}
	return strings.ToUpper(s)
}

// schemeOrder lists the run's schemes: ML-KEM, ML-DSA, then classical.
func schemeOrder(r *Results) []string {
	var out []string
	for _, s := range slices.Concat(picodata.KEMSchemes, picodata.DSASchemes, picodata.ClassicalSchemes, picodata.SPHINCSSchemes) {
		if r.Schemes[s] != nil {
			out = append(out, s)
		}
	}
	for _, s := range slices.Sorted(maps.Keys(r.Schemes)) {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

// opOrder lists a scheme's operations in protocol order.
func opOrder(sc *Scheme) []string {
	pref := []string{"keygen", "encaps", "decaps", "sign", "verify", "shared", "exchange"}
	var out []string
	for _, o := range pref {
		if sc.Ops[o] != nil {
			out = append(out, o)
		}
	}
	for _, o := range slices.Sorted(maps.Keys(sc.Ops)) {
		if !slices.Contains(out, o) {
			out = append(out, o)
		}
	}
	return out
}

// schemeSeries: ML-KEM, ML-DSA, then the classical baselines.
func schemeSeries(s string) render.Series {
	switch {
	case slices.Contains(picodata.KEMSchemes, s):
		return kemSeries
	case slices.Contains(picodata.DSASchemes, s):
		return dsaSeries
	case slices.Contains(picodata.SPHINCSSchemes, s):
		return sphincsSeries
	}
	return classicalSeries
}

// familyKey is the key of the operation and stack figures: one entry
// per family of schemes, with its marker or bar.
func familyKey(r *Results, bars bool) []render.KeyEntry {
	var key []render.KeyEntry
	type family struct {
		name string
		st   render.Series
	}
	families := []family{{"ML-KEM (FIPS 203)", kemSeries}, {"ML-DSA (FIPS 204)", dsaSeries}, {"classical (mbedTLS)", classicalSeries}}
	if slices.ContainsFunc(picodata.SPHINCSSchemes, func(s string) bool { return r.Schemes[s] != nil }) {
		families = append(families, family{"SPHINCS+ 3.1 (ours; SLH-DSA's cost)", sphincsSeries})
	}
	for _, f := range families {
		th := render.Thumb{Glyph: draw.GlyphStyle{Color: f.st.Color, Radius: vg.Points(2.6), Shape: f.st.Shape}}
		if bars {
			th = render.Thumb{Fill: f.st.Color}
		}
		key = append(key, render.KeyEntry{Name: f.name, Thumb: th})
	}
	return key
}

// Figures draws the three figures as PDF (dated date) and SVG, keyed by
// their output paths.
func Figures(r *Results, date time.Time) (map[string][]byte, error) {
	figs, err := figureList(r)
	if err != nil {
		return nil, err
	}
	return render.Files(figs, date)
}

// figureList builds every figure of the study, in the paper's style:
// no titles (the captions say what a figure shows), the key above the
// data.
func figureList(r *Results) ([]render.Figure, error) {
	sign, signKey, err := signFigure(r)
	if err != nil {
		return nil, err
	}
	ops, rows, err := opsFigure(r)
	if err != nil {
		return nil, err
	}
	stack, _, err := stackFigure(r)
	if err != nil {
		return nil, err
	}
	deadline, deadlineKey, err := deadlineFigure(r)
	if err != nil {
		return nil, err
	}
	rowsH := vg.Length(rows)*0.15*vg.Inch + 0.95*vg.Inch
	return []render.Figure{
		{Base: FigureSign, Plot: render.Compose([][]*plot.Plot{{sign}}, signKey, 3), W: render.TextWidth, H: 3 * vg.Inch, Panels: []*plot.Plot{sign}},
		{Base: FigureOps, Plot: render.Compose([][]*plot.Plot{{ops}}, familyKey(r, false), 0), W: render.TextWidth, H: rowsH, Panels: []*plot.Plot{ops}},
		{Base: FigureStack, Plot: render.Compose([][]*plot.Plot{{stack}}, append(familyKey(r, true), render.KeyEntry{Name: fmt.Sprintf("RP2040 SRAM, %.0f KB", float64(r.SRAMBytes)/1024),
			Thumb: render.Thumb{Line: sramLine}}), 0), W: render.TextWidth, H: rowsH, Panels: []*plot.Plot{stack}},
		{Base: FigureDeadline, Plot: render.Compose([][]*plot.Plot{{deadline}}, deadlineKey, 3), W: render.TextWidth, H: 3.2 * vg.Inch, Panels: []*plot.Plot{deadline}},
	}, nil
}

// sramLine marks the RP2040's SRAM in the stack figure, in the one
// colour of the palette no family of schemes uses.
var sramLine = draw.LineStyle{Color: render.Green, Width: vg.Points(1.2), Dashes: []vg.Length{vg.Points(3), vg.Points(2)}}

func boardNote(r *Results) string {
	return fmt.Sprintf("RP2040 at %d MHz, %s", r.ClockHz/1000000, r.Board)
}

// signFigure shows each ML-DSA parameter set's signing times: every
// signature as a ring (spread sideways by a fixed pattern so equal times
// do not hide each other), the interquartile box with its median and a
// min-max whisker, the mean (triangle) and the p99 (bar) inside the box;
// the published mean (cross) and p99 (dash) stand right of the box, so
// that ours and theirs never share a place. Rejection sampling makes the
// times heavy-tailed, so mean and median differ.
func signFigure(r *Results) (*plot.Plot, []render.KeyEntry, error) {
	p := render.NewPlot("")
	p.Y.Label.Text = "signing time (ms)"
	p.X.Label.Text = boardNote(r)
	p.Add(&plotter.Grid{Horizontal: gridStyle})
	var names []string
	var key []render.KeyEntry
	top := 0.0
	pubMean, pubP99 := false, false
	const half = 0.2    // half width of a box, in category units
	const pubX = 0.36   // the published column, right of the box
	const pubHalf = 0.1 // half width of the published p99 dash
	c := dsaSeries.Color
	ours := render.SeriesStyle(0).Color // our mean and p99: blue on the vermilion box
	pubStyle := draw.LineStyle{Color: color.Black, Width: vg.Points(1.6)}
	for _, s := range picodata.DSASchemes {
		sc := r.Schemes[s]
		if sc == nil || sc.Ops["sign"] == nil || len(sc.Ops["sign"].SamplesMs) == 0 {
			continue
		}
		o := sc.Ops["sign"]
		x := float64(len(names))
		names = append(names, fmt.Sprintf("%s\nn = %d", displayName(s), o.N))
		dots, err := signatureRings(o.SamplesMs, x, half)
		if err != nil {
			return nil, nil, fmt.Errorf("sign figure: %w", err)
		}
		top = max(top, slices.Max(o.SamplesMs))
		q1, q3, med := deref(o.Q1Ms), deref(o.Q3Ms), deref(o.MedianMs)
		box, err := plotter.NewPolygon(plotter.XYs{{X: x - half, Y: q1}, {X: x + half, Y: q1}, {X: x + half, Y: q3}, {X: x - half, Y: q3}})
		if err != nil {
			return nil, nil, fmt.Errorf("sign figure: %w", err)
		}
		box.Color = color.RGBA{0xD5, 0x5E, 0x00, 0x30}
		box.LineStyle = draw.LineStyle{Color: c, Width: vg.Points(1)}
		whisk, _ := plotter.NewLine(plotter.XYs{{X: x, Y: deref(o.MinMs)}, {X: x, Y: deref(o.MaxMs)}})
		whisk.Color, whisk.Width = c, vg.Points(0.8)
		medLine, _ := plotter.NewLine(plotter.XYs{{X: x - half, Y: med}, {X: x + half, Y: med}})
		medLine.Color, medLine.Width = c, vg.Points(2)
		p99 := deref(o.P99Ms)
		p99Line, _ := plotter.NewLine(plotter.XYs{{X: x - half/2, Y: p99}, {X: x + half/2, Y: p99}})
		p99Line.Color, p99Line.Width = ours, vg.Points(1.6)
		mean, _ := plotter.NewScatter(plotter.XYs{{X: x + half/2, Y: deref(o.MeanMs)}})
		mean.GlyphStyle = draw.GlyphStyle{Color: ours, Radius: vg.Points(3), Shape: draw.PyramidGlyph{}}
		p.Add(whisk, box, medLine, dots, p99Line, mean)
		if len(names) == 1 {
			key = append(key, render.KeyEntry{Name: "one signature", Thumb: dots},
				render.KeyEntry{Name: "median, quartiles, min to max", Thumb: medLine},
				render.KeyEntry{Name: "mean", Thumb: mean},
				render.KeyEntry{Name: "p99 (R type 7)", Thumb: p99Line})
		}
		// The published mean and p99, where the paper gives them.
		k := strings.ReplaceAll(strings.TrimPrefix(s, "ml-dsa-"), "-", "")
		if pm, ok := publishedValue("mldsa" + k + "_sign_mean_ms"); ok {
			pub, _ := plotter.NewScatter(plotter.XYs{{X: x + pubX, Y: pm}})
			pub.GlyphStyle = draw.GlyphStyle{Color: color.Black, Radius: vg.Points(3.5), Shape: draw.CrossGlyph{}}
			p.Add(pub)
			if !pubMean {
				key = append(key, render.KeyEntry{Name: "published mean", Thumb: pub})
				pubMean = true
			}
			top = max(top, pm)
		}
		if pp, ok := publishedValue("mldsa" + k + "_sign_p99_ms"); ok {
			pl, _ := plotter.NewLine(plotter.XYs{{X: x + pubX - pubHalf, Y: pp}, {X: x + pubX + pubHalf, Y: pp}})
			pl.LineStyle = pubStyle
			p.Add(pl)
			if !pubP99 {
				key = append(key, render.KeyEntry{Name: "published p99", Thumb: pl})
				pubP99 = true
			}
			top = max(top, pp)
		}
	}
	if len(names) == 0 {
		return nil, nil, fmt.Errorf("sign figure: no ML-DSA signing samples in the results")
	}
	p.NominalX(names...)
	p.X.Min, p.X.Max = -0.5, float64(len(names))-0.5
	p.Y.Min, p.Y.Max = 0, top*1.05
	p.Y.Tick.Marker = render.LinearTicks{}
	return p, key, nil
}

// signatureRings draws every signature of a column centred on x as a grey
// ring, spread sideways within half by the golden-ratio sequence (an even,
// deterministic spread) so that equal times do not hide each other.
func signatureRings(samplesMs []float64, x, half float64) (*plotter.Scatter, error) {
	var pts plotter.XYs
	for i, v := range samplesMs {
		off := (math.Mod(float64(i)*0.6180339887, 1) - 0.5) * 1.6 * half
		pts = append(pts, plotter.XY{X: x + off, Y: v})
	}
	dots, err := plotter.NewScatter(pts)
	if err != nil {
		return nil, err
	}
	dots.GlyphStyle = draw.GlyphStyle{Color: color.RGBA{0x55, 0x55, 0x55, 0xa0}, Radius: vg.Points(1.4), Shape: draw.RingGlyph{}}
	return dots, nil
}

func deref(x *float64) float64 {
	if x == nil {
		return 0
	}
	return *x
}

// opRows lists every (scheme, op) row of the operation and stack figures,
// top to bottom.
func opRows(r *Results) (labels []string, keys [][2]string) {
	for _, s := range schemeOrder(r) {
		for _, op := range opOrder(r.Schemes[s]) {
			labels = append(labels, displayName(s)+" "+op)
			keys = append(keys, [2]string{s, op})
		}
	}
	return labels, keys
}

// opsFigure shows each operation's mean (marker) and range (min to max)
// on a log scale: the schemes span four orders of magnitude.
func opsFigure(r *Results) (*plot.Plot, int, error) {
	labels, keys := opRows(r)
	n := len(keys)
	p := render.NewPlot("")
	p.X.Label.Text = "time per operation (ms, log scale; marker: mean, bar: min to max)\n" + boardNote(r)
	p.X.Scale = plot.LogScale{}
	p.X.Tick.Marker = render.LogTicks{}
	p.Add(&plotter.Grid{Vertical: gridStyle})
	lo, hi := 0.0, 0.0
	for i, k := range keys {
		o := r.Schemes[k[0]].Ops[k[1]]
		y := float64(n - 1 - i)
		st := schemeSeries(k[0])
		mn, mx, mean := deref(o.MinMs), deref(o.MaxMs), deref(o.MeanMs)
		if mn <= 0 || mean <= 0 {
			return nil, 0, fmt.Errorf("ops figure: %s %s has a non-positive time", k[0], k[1])
		}
		if mx > mn {
			l, err := plotter.NewLine(plotter.XYs{{X: mn, Y: y}, {X: mx, Y: y}})
			if err != nil {
				return nil, 0, err
			}
			l.Color, l.Width = st.Color, vg.Points(2.5)
			p.Add(l)
		}
		sct, err := plotter.NewScatter(plotter.XYs{{X: mean, Y: y}})
		if err != nil {
			return nil, 0, err
		}
		sct.GlyphStyle = draw.GlyphStyle{Color: st.Color, Radius: vg.Points(2.8), Shape: st.Shape}
		p.Add(sct)
		if lo == 0 || mn < lo {
			lo = mn
		}
		hi = max(hi, mx)
	}
	p.X.Min, p.X.Max = lo/1.6, hi*1.6
	p.NominalY(reversed(labels)...)
	p.Y.Padding = vg.Points(6)
	return p, n, nil
}

// stackFigure shows each operation's painted peak stack against the
// RP2040's 264 KB of SRAM (the dashed line), each bar labelled with its
// KB and its share of the SRAM.
func stackFigure(r *Results) (*plot.Plot, int, error) {
	labels, keys := opRows(r)
	n := len(keys)
	p := render.NewPlot("")
	p.X.Label.Text = "peak stack (KB, 1 KB = 1024 bytes; number: KB and share of the SRAM)\n" + boardNote(r)
	sram := float64(r.SRAMBytes) / 1024
	if !(sram > 0) {
		return nil, 0, fmt.Errorf("stack figure: SRAM size %v bytes", r.SRAMBytes)
	}
	p.Add(&plotter.Grid{Vertical: gridStyle})
	var vals plotter.XYLabels
	for i, k := range keys {
		o := r.Schemes[k[0]].Ops[k[1]]
		kb := float64(o.PeakStackBytes) / 1024
		y := float64(n - 1 - i)
		b, err := plotter.NewBarChart(plotter.Values{kb}, vg.Points(7))
		if err != nil {
			return nil, 0, err
		}
		b.Horizontal = true
		b.XMin = y
		b.Color = schemeSeries(k[0]).Color
		b.LineStyle.Width = 0
		p.Add(b)
		vals.XYs = append(vals.XYs, plotter.XY{X: kb, Y: y})
		vals.Labels = append(vals.Labels, fmt.Sprintf("%s (%s %%)", render.Fixed(kb, 1), render.Fixed(100*kb/sram, 0)))
	}
	limit, err := plotter.NewLine(plotter.XYs{{X: sram, Y: -0.6}, {X: sram, Y: float64(n) - 0.4}})
	if err != nil {
		return nil, 0, err
	}
	limit.LineStyle = sramLine
	p.Add(limit)
	vl, err := plotter.NewLabels(vals)
	if err != nil {
		return nil, 0, err
	}
	for i := range vl.TextStyle {
		vl.TextStyle[i].Font.Size = vg.Points(render.TickSize)
		vl.TextStyle[i].YAlign = draw.YCenter
	}
	vl.Offset = vg.Point{X: vg.Points(3)}
	p.Add(vl)
	p.X.Tick.Marker = render.LinearTicks{}
	p.X.Min, p.X.Max = 0, sram*1.04
	p.Y.Min, p.Y.Max = -0.6, float64(n)-0.4
	p.NominalY(reversed(labels)...)
	return p, n, nil
}

func reversed(s []string) []string {
	out := slices.Clone(s)
	slices.Reverse(out)
	return out
}

// deadlineLine marks a signing deadline in the deadline figure.
var deadlineLine = draw.LineStyle{Color: color.Black, Width: vg.Points(0.8), Dashes: []vg.Length{vg.Points(4), vg.Points(2.5)}}

// deadlineFigure tests the original's advice (recommendation.go): every
// signature of each ML-DSA and SPHINCS+ set of the run as a ring (spread
// sideways as in the signing figure), its mean as the family's marker and
// a min-max whisker, on a log scale that holds both the ML-DSA tail and
// the SPHINCS+ minutes, with the 100 ms, 1 s and 10 s deadlines as dashed
// lines. A scheme whose column stays below a line always meets it.
func deadlineFigure(r *Results) (*plot.Plot, []render.KeyEntry, error) {
	rec := r.Recommendation
	if rec == nil || len(rec.Rows) == 0 {
		return nil, nil, fmt.Errorf("deadline figure: the results have no signing comparison (no ML-DSA signing): rerun pico:analyze")
	}
	p := render.NewPlot("")
	p.Y.Label.Text = "signing time (ms, log scale)"
	p.X.Label.Text = boardNote(r)
	if len(rec.NotMeasured) > 0 {
		p.X.Label.Text += "; not in this run: " + strings.Join(rec.NotMeasured, ", ")
	}
	p.Y.Scale = plot.LogScale{}
	p.Y.Tick.Marker = render.LogTicks{}
	p.Add(&plotter.Grid{Horizontal: gridStyle})
	const half = 0.2
	var names []string
	lo, hi := math.Inf(1), 0.0
	var key []render.KeyEntry
	keyed := map[string]bool{}
	for _, row := range rec.Rows {
		o := r.Schemes[row.Scheme].Ops["sign"]
		x := float64(len(names))
		// Two lines for a SPHINCS+ name, which is too long for a column.
		names = append(names, fmt.Sprintf("%s\nn = %d", strings.Replace(displayName(row.Scheme), "+-", "+\n", 1), row.N))
		st := schemeSeries(row.Scheme)
		dots, err := signatureRings(o.SamplesMs, x, half)
		if err != nil {
			return nil, nil, fmt.Errorf("deadline figure: %w", err)
		}
		whisk, err := plotter.NewLine(plotter.XYs{{X: x, Y: row.MinMs}, {X: x, Y: row.MaxMs}})
		if err != nil {
			return nil, nil, fmt.Errorf("deadline figure: %w", err)
		}
		whisk.Color, whisk.Width = st.Color, vg.Points(0.8)
		mean, err := plotter.NewScatter(plotter.XYs{{X: x + half, Y: row.MeanMs}})
		if err != nil {
			return nil, nil, fmt.Errorf("deadline figure: %w", err)
		}
		mean.GlyphStyle = draw.GlyphStyle{Color: st.Color, Radius: vg.Points(3), Shape: st.Shape}
		p.Add(whisk, dots, mean)
		if len(names) == 1 {
			key = append(key, render.KeyEntry{Name: "one signature", Thumb: dots},
				render.KeyEntry{Name: "min to max", Thumb: whisk})
		}
		if !keyed[row.Family] {
			name := "mean, ML-DSA (FIPS 204)"
			if row.Family == "sphincs+" {
				name = "mean, SPHINCS+ 3.1 (ours)"
			}
			key = append(key, render.KeyEntry{Name: name, Thumb: mean})
			keyed[row.Family] = true
		}
		lo, hi = min(lo, row.MinMs), max(hi, row.MaxMs)
	}
	right := float64(len(names)) - 0.5
	var labels plotter.XYLabels
	for _, d := range rec.DeadlinesMs {
		l, err := plotter.NewLine(plotter.XYs{{X: -0.5, Y: d}, {X: right, Y: d}})
		if err != nil {
			return nil, nil, fmt.Errorf("deadline figure: %w", err)
		}
		l.LineStyle = deadlineLine
		p.Add(l)
		// At the right end: the SPHINCS+ columns are seconds above or
		// below every line there, so the label covers no signature.
		labels.XYs = append(labels.XYs, plotter.XY{X: right - 0.05, Y: d})
		labels.Labels = append(labels.Labels, "deadline "+deadlineName(d))
		lo, hi = min(lo, d), max(hi, d)
	}
	lb, err := plotter.NewLabels(labels)
	if err != nil {
		return nil, nil, fmt.Errorf("deadline figure: %w", err)
	}
	for i := range lb.TextStyle {
		lb.TextStyle[i].Font.Size = vg.Points(render.TickSize)
		lb.TextStyle[i].XAlign = draw.XRight
	}
	lb.Offset = vg.Point{Y: vg.Points(2)}
	p.Add(lb)
	key = append(key, render.KeyEntry{Name: "deadline", Thumb: render.Thumb{Line: deadlineLine}})
	p.NominalX(names...)
	p.X.Min, p.X.Max = -0.5, right
	p.Y.Min, p.Y.Max = lo/1.6, hi*1.6
	return p, key, nil
}

// deadlineName writes a deadline in ms as the text does: 100 ms, 1 s, 10 s.
func deadlineName(ms float64) string {
	if ms >= 1000 && math.Mod(ms, 1000) == 0 {
		return fmt.Sprintf("%.0f s", ms/1000)
	}
	return render.Fixed(ms, 0) + " ms"
}
