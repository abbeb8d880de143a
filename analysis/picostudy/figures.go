package picostudy

import (
	"fmt"
	"image/color"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"pqrepro/datasets/picodata"
	"pqrepro/internal/render"
)

// The paper's palette (render): ML-KEM blue, ML-DSA vermilion, the
// classical baselines green.
var (
	colBlue   = render.Blue
	colOrange = render.Vermilion
	colGreen  = render.Green
	colGrey   = render.Grey
	colLight  = render.LightGrey
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
	return strings.ToUpper(s)
}

// schemeOrder lists the run's schemes: ML-KEM, ML-DSA, then classical.
func schemeOrder(r *Results) []string {
	var out []string
	for _, s := range slices.Concat(picodata.KEMSchemes, picodata.DSASchemes, picodata.ClassicalSchemes) {
		if r.Schemes[s] != nil {
			out = append(out, s)
		}
	}
	for _, s := range sortedKeys(r.Schemes) {
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
	for _, o := range sortedKeys(sc.Ops) {
		if !slices.Contains(out, o) {
			out = append(out, o)
		}
	}
	return out
}

// schemeColour: ML-KEM blue, ML-DSA orange, the classical baselines green.
func schemeColour(s string) color.Color {
	switch {
	case slices.Contains(picodata.KEMSchemes, s):
		return colBlue
	case slices.Contains(picodata.DSASchemes, s):
		return colOrange
	}
	return colGreen
}

func newPlot(title string) *plot.Plot { return render.NewPlot(title) }

// Figures draws the three figures as PDF (dated date) and SVG, keyed by
// their output paths.
func Figures(r *Results, date time.Time) (map[string][]byte, error) {
	figs, err := figureList(r)
	if err != nil {
		return nil, err
	}
	return render.Files(figs, date)
}

// figureList builds every figure of the study, in the paper's style.
func figureList(r *Results) ([]render.Figure, error) {
	sign, err := signFigure(r)
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
	rowsH := vg.Length(rows)*0.16*vg.Inch + 1.1*vg.Inch
	return []render.Figure{
		{Base: FigureSignBase, Plot: sign, W: render.TextWidth * 0.7, H: 2.9 * vg.Inch},
		{Base: FigureOpsBase, Plot: ops, W: render.TextWidth * 0.8, H: rowsH},
		{Base: FigureStackBase, Plot: stack, W: render.TextWidth * 0.8, H: rowsH},
	}, nil
}

func boardNote(r *Results) string {
	return fmt.Sprintf("RP2040 at %d MHz, %s", r.ClockHz/1000000, r.Board)
}

// signFigure shows each ML-DSA parameter set's signing times: every
// signature as a dot (spread sideways by a fixed pattern so equal times do
// not hide each other), the interquartile box with its median, the mean
// (triangle) and the p99 (bar). Rejection sampling makes the times
// heavy-tailed, so mean and median differ.
func signFigure(r *Results) (*plot.Plot, error) {
	p := newPlot("ML-DSA signing time\n" + boardNote(r))
	p.Y.Label.Text = "signing time (ms)"
	p.Add(&plotter.Grid{Horizontal: draw.LineStyle{Color: color.Gray{0xdd}, Width: vg.Points(0.4)}})
	var names []string
	top := 0.0
	pubMean, pubP99 := false, false
	const half = 0.22 // half width of a box, in category units
	for _, s := range picodata.DSASchemes {
		sc := r.Schemes[s]
		if sc == nil || sc.Ops["sign"] == nil || len(sc.Ops["sign"].SamplesMs) == 0 {
			continue
		}
		o := sc.Ops["sign"]
		x := float64(len(names))
		names = append(names, fmt.Sprintf("%s\nn = %d", displayName(s), o.N))
		c := colOrange
		var pts plotter.XYs
		for i, v := range o.SamplesMs {
			// Golden-ratio sequence: an even, deterministic spread.
			off := (math.Mod(float64(i)*0.6180339887, 1) - 0.5) * 1.6 * half
			pts = append(pts, plotter.XY{X: x + off, Y: v})
			top = max(top, v)
		}
		dots, err := plotter.NewScatter(pts)
		if err != nil {
			return nil, fmt.Errorf("sign figure: %w", err)
		}
		dots.GlyphStyle = draw.GlyphStyle{Color: color.RGBA{0x55, 0x55, 0x55, 0xa0}, Radius: vg.Points(1.4), Shape: draw.RingGlyph{}}
		q1, q3, med := deref(o.Q1Ms), deref(o.Q3Ms), deref(o.MedianMs)
		box, err := plotter.NewPolygon(plotter.XYs{{X: x - half, Y: q1}, {X: x + half, Y: q1}, {X: x + half, Y: q3}, {X: x - half, Y: q3}})
		if err != nil {
			return nil, fmt.Errorf("sign figure: %w", err)
		}
		box.Color = color.RGBA{0xD5, 0x5E, 0x00, 0x30}
		box.LineStyle = draw.LineStyle{Color: c, Width: vg.Points(1)}
		whisk, _ := plotter.NewLine(plotter.XYs{{X: x, Y: deref(o.MinMs)}, {X: x, Y: deref(o.MaxMs)}})
		whisk.Color, whisk.Width = c, vg.Points(0.8)
		medLine, _ := plotter.NewLine(plotter.XYs{{X: x - half, Y: med}, {X: x + half, Y: med}})
		medLine.Color, medLine.Width = c, vg.Points(2)
		p99 := deref(o.P99Ms)
		p99Line, _ := plotter.NewLine(plotter.XYs{{X: x - half/2, Y: p99}, {X: x + half/2, Y: p99}})
		p99Line.Color, p99Line.Width = colBlue, vg.Points(1.6)
		mean, _ := plotter.NewScatter(plotter.XYs{{X: x + half + 0.1, Y: deref(o.MeanMs)}})
		mean.GlyphStyle = draw.GlyphStyle{Color: colBlue, Radius: vg.Points(3), Shape: draw.PyramidGlyph{}}
		p.Add(whisk, box, medLine, p99Line, dots, mean)
		if len(names) == 1 {
			p.Legend.Add("one signature", dots)
			p.Legend.Add("median, quartiles, min-max", medLine)
			p.Legend.Add("mean", mean)
			p.Legend.Add("p99 (R type 7)", p99Line)
		}
		// The published mean and p99, where the paper gives them.
		key := strings.ReplaceAll(strings.TrimPrefix(s, "ml-dsa-"), "-", "")
		if pm, ok := publishedValue("mldsa" + key + "_sign_mean_ms"); ok {
			pub, _ := plotter.NewScatter(plotter.XYs{{X: x + half + 0.25, Y: pm}})
			pub.GlyphStyle = draw.GlyphStyle{Color: color.Black, Radius: vg.Points(3), Shape: draw.CrossGlyph{}}
			p.Add(pub)
			if !pubMean {
				p.Legend.Add("published mean", pub)
				pubMean = true
			}
			top = max(top, pm)
		}
		if pp, ok := publishedValue("mldsa" + key + "_sign_p99_ms"); ok {
			pl, _ := plotter.NewLine(plotter.XYs{{X: x - half/2, Y: pp}, {X: x + half/2, Y: pp}})
			pl.Color, pl.Width = color.Black, vg.Points(1.2)
			pl.Dashes = []vg.Length{vg.Points(2), vg.Points(1.5)}
			p.Add(pl)
			if !pubP99 {
				p.Legend.Add("published p99", pl)
				pubP99 = true
			}
			top = max(top, pp)
		}
	}
	if len(names) == 0 {
		return nil, fmt.Errorf("sign figure: no ML-DSA signing samples in the results")
	}
	p.NominalX(names...)
	// A column to the right of the data is kept free for the legend.
	p.X.Min, p.X.Max = -0.6, float64(len(names))+1.1
	p.Y.Min, p.Y.Max = 0, top*1.08
	p.Y.Tick.Marker = linearTicks(top * 1.08)
	p.Legend.Top, p.Legend.Left = true, false
	p.Legend.XOffs, p.Legend.YOffs = -vg.Points(2), -vg.Points(2)
	return p, nil
}

// linearTicks labels about five round values from 0 to hi (steps of 1, 2
// or 5 times a power of ten), with an unlabelled minor tick between.
func linearTicks(hi float64) plot.ConstantTicks {
	step := math.Pow(10, math.Floor(math.Log10(hi/5)))
	for _, m := range []float64{1, 2, 5, 10} {
		if hi/(m*step) <= 6 {
			step *= m
			break
		}
	}
	var t plot.ConstantTicks
	for v := 0.0; v <= hi+1e-9; v += step / 2 {
		lbl := ""
		if math.Mod(v+1e-9, step) < 1e-6 {
			lbl = strconv.FormatFloat(v, 'f', -1, 64)
		}
		t = append(t, plot.Tick{Value: v, Label: lbl})
	}
	return t
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

// opsFigure shows each operation's mean (dot) and range (min to max) on a
// log scale: the schemes span four orders of magnitude.
func opsFigure(r *Results) (*plot.Plot, int, error) {
	labels, keys := opRows(r)
	n := len(keys)
	p := newPlot("Time per operation\n" + boardNote(r))
	p.X.Label.Text = "time per operation (ms, log scale; dot = mean, bar = min to max)"
	p.X.Scale = plot.LogScale{}
	p.X.Tick.Marker = decadeTicks{}
	p.Add(&plotter.Grid{Vertical: draw.LineStyle{Color: color.Gray{0xdd}, Width: vg.Points(0.4)}})
	lo, hi := 0.0, 0.0
	for i, k := range keys {
		o := r.Schemes[k[0]].Ops[k[1]]
		y := float64(n - 1 - i)
		c := schemeColour(k[0])
		mn, mx, mean := deref(o.MinMs), deref(o.MaxMs), deref(o.MeanMs)
		if mn <= 0 || mean <= 0 {
			return nil, 0, fmt.Errorf("ops figure: %s %s has a non-positive time", k[0], k[1])
		}
		if mx > mn {
			l, err := plotter.NewLine(plotter.XYs{{X: mn, Y: y}, {X: mx, Y: y}})
			if err != nil {
				return nil, 0, err
			}
			l.Color, l.Width = c, vg.Points(2.5)
			p.Add(l)
		}
		sct, err := plotter.NewScatter(plotter.XYs{{X: mean, Y: y}})
		if err != nil {
			return nil, 0, err
		}
		sct.GlyphStyle = draw.GlyphStyle{Color: c, Radius: vg.Points(2.6), Shape: draw.CircleGlyph{}}
		p.Add(sct)
		outline, _ := plotter.NewScatter(plotter.XYs{{X: mean, Y: y}})
		outline.GlyphStyle = draw.GlyphStyle{Color: color.Black, Radius: vg.Points(2.6), Shape: draw.RingGlyph{}}
		p.Add(outline)
		if lo == 0 || mn < lo {
			lo = mn
		}
		hi = max(hi, mx)
	}
	p.X.Min, p.X.Max = lo/1.6, hi*1.6
	p.NominalY(reversed(labels)...)
	p.Y.Padding = vg.Points(6)
	// The fastest operations (ML-KEM) are the top rows, so the top right
	// is free for the colour key.
	for _, k := range []struct {
		name string
		c    color.Color
	}{{"ML-KEM (FIPS 203)", colBlue}, {"ML-DSA (FIPS 204)", colOrange}, {"classical (mbedTLS)", colGreen}} {
		g, _ := plotter.NewScatter(plotter.XYs{{}})
		g.GlyphStyle = draw.GlyphStyle{Color: k.c, Radius: vg.Points(2.6), Shape: draw.CircleGlyph{}}
		p.Legend.Add(k.name, g)
	}
	p.Legend.Top, p.Legend.Left = true, false
	return p, n, nil
}

// decadeTicks labels a log axis at every power of ten, written out
// (0.1, 1, 10, 1,000), with unlabelled ticks at 2 and 5 times each.
type decadeTicks struct{}

func (decadeTicks) Ticks(lo, hi float64) []plot.Tick {
	var out []plot.Tick
	for e := math.Floor(math.Log10(lo)); e <= math.Ceil(math.Log10(hi)); e++ {
		for _, m := range []float64{1, 2, 5} {
			v := m * math.Pow(10, e)
			if v < lo || v > hi {
				continue
			}
			t := plot.Tick{Value: v}
			if m == 1 {
				t.Label = render.Thousands(v)
			}
			out = append(out, t)
		}
	}
	return out
}

// stackFigure shows each operation's painted peak stack against the
// RP2040's 264 KB of SRAM.
func stackFigure(r *Results) (*plot.Plot, int, error) {
	labels, keys := opRows(r)
	n := len(keys)
	p := newPlot("Peak stack against the 264 KB SRAM\n" + boardNote(r))
	p.X.Label.Text = "peak stack (KB, 1 KB = 1024 bytes)"
	sram := float64(r.SRAMBytes) / 1024
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
		b.Color = schemeColour(k[0])
		b.LineStyle.Width = 0
		p.Add(b)
	}
	limit, err := plotter.NewLine(plotter.XYs{{X: sram, Y: -0.6}, {X: sram, Y: float64(n) - 0.4}})
	if err != nil {
		return nil, 0, err
	}
	limit.Color, limit.Width = colOrange, vg.Points(1)
	limit.Dashes = []vg.Length{vg.Points(3), vg.Points(2)}
	p.Add(limit)
	lbl, err := plotter.NewLabels(plotter.XYLabels{XYs: plotter.XYs{{X: sram, Y: float64(n) - 0.4}},
		Labels: []string{fmt.Sprintf("SRAM %.0f KB", sram)}})
	if err != nil {
		return nil, 0, err
	}
	lbl.TextStyle[0].Font.Size = vg.Points(7)
	lbl.TextStyle[0].XAlign = draw.XRight
	lbl.Offset = vg.Point{X: -vg.Points(2), Y: -vg.Points(8)}
	p.Add(lbl)
	half, _ := plotter.NewLine(plotter.XYs{{X: sram / 2, Y: -0.6}, {X: sram / 2, Y: float64(n) - 0.4}})
	half.Color, half.Width = colLight, vg.Points(0.6)
	half.Dashes = []vg.Length{vg.Points(1), vg.Points(2)}
	p.Add(half)
	hl, _ := plotter.NewLabels(plotter.XYLabels{XYs: plotter.XYs{{X: sram / 2, Y: float64(n) - 0.4}}, Labels: []string{"50 %"}})
	hl.TextStyle[0].Font.Size = vg.Points(7)
	hl.TextStyle[0].XAlign = draw.XRight
	hl.Offset = vg.Point{X: -vg.Points(2), Y: -vg.Points(8)}
	p.Add(hl)
	var vals plotter.XYLabels
	for i, k := range keys {
		o := r.Schemes[k[0]].Ops[k[1]]
		vals.XYs = append(vals.XYs, plotter.XY{X: float64(o.PeakStackBytes) / 1024, Y: float64(n - 1 - i)})
		vals.Labels = append(vals.Labels, render.Fixed(float64(o.PeakStackBytes)/1024, 1))
	}
	vl, err := plotter.NewLabels(vals)
	if err != nil {
		return nil, 0, err
	}
	for i := range vl.TextStyle {
		vl.TextStyle[i].Font.Size = vg.Points(6)
		vl.TextStyle[i].YAlign = draw.YCenter
	}
	vl.Offset = vg.Point{X: vg.Points(2)}
	p.Add(vl)
	var ticks plot.ConstantTicks
	for v := 0.0; v <= sram; v += 32 {
		lbl := ""
		if int(v)%64 == 0 {
			lbl = fmt.Sprint(v)
		}
		ticks = append(ticks, plot.Tick{Value: v, Label: lbl})
	}
	p.X.Tick.Marker = ticks
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
