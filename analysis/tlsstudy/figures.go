package tlsstudy

import (
	"fmt"
	"image/color"
	"math"
	"slices"
	"strconv"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"pqrepro/internal/render"
)

// Figure colours (colour-blind safe: Okabe-Ito blue and orange, greys).
var (
	paperFill   = color.RGBA{R: 0x9e, G: 0xca, B: 0xe9, A: 0xff}
	paperLine   = color.RGBA{R: 0x00, G: 0x52, B: 0x8a, A: 0xff}
	otherFill   = color.RGBA{R: 0xdd, G: 0xdd, B: 0xdd, A: 0xff}
	otherLine   = color.RGBA{R: 0x55, G: 0x55, B: 0x55, A: 0xff}
	c2sColor    = color.RGBA{R: 0x00, G: 0x72, B: 0xb2, A: 0xff}
	s2cColor    = color.RGBA{R: 0xe6, G: 0x9f, B: 0x00, A: 0xff}
	markerColor = color.RGBA{R: 0xcc, G: 0x33, B: 0x11, A: 0xff}
)

const figureWidth = render.TextWidth

// figureHeight grows with the number of configurations (plus the rows of
// headroom kept free for the legend) so that every row keeps a readable
// height.
func figureHeight(rows int, headroom float64) vg.Length {
	return max(2.4*vg.Inch, vg.Inch+(vg.Length(rows)+vg.Length(headroom))*0.24*vg.Inch)
}

// Rows of empty space above the first configuration, for the legend.
const (
	thsHeadroom   = 2.6
	bytesHeadroom = 1.4
)

// Figures renders the outputs of tls:figures from the results, keyed by
// output path. date is the PDF creation date (SOURCE_DATE_EPOCH).
func Figures(r *Results, date time.Time) (map[string][]byte, error) {
	figs, err := figureList(r)
	if err != nil {
		return nil, err
	}
	return render.Files(figs, date)
}

// figureList builds every figure of the study, in the paper's style.
func figureList(r *Results) ([]render.Figure, error) {
	var figs []render.Figure
	for _, f := range []struct {
		base     string
		make     func(*Results) (*plot.Plot, error)
		headroom float64
		rows     int
	}{{FigureThs, thsPlot, thsHeadroom, len(r.Configs)}, {FigureBytes, bytesPlot, bytesHeadroom, len(r.Configs)}, {FigureGap, gapPlot, gapHeadroom, len(r.Gap.Cells)}} {
		p, err := f.make(r)
		if err != nil {
			return nil, fmt.Errorf("figure %s: %w", f.base, err)
		}
		figs = append(figs, render.Figure{Base: f.base, Plot: p, W: figureWidth, H: figureHeight(f.rows, f.headroom)})
	}
	p, err := driftPlot(r)
	if err != nil {
		return nil, fmt.Errorf("figure %s: %w", FigureDrift, err)
	}
	figs = append(figs, render.Figure{Base: FigureDrift, Plot: p, W: figureWidth, H: 3 * vg.Inch})
	return figs, nil
}

// rowOrder lists the configurations from the top row down (table order)
// and returns, for each, its y position (NominalY puts index 0 at the
// bottom) and the names bottom-up.
func rowOrder(r *Results) (ys map[string]float64, names []string) {
	n := len(r.Configs)
	ys = map[string]float64{}
	names = make([]string, n)
	for i, c := range r.Configs {
		y := n - 1 - i
		ys[c.Config] = float64(y)
		names[y] = c.Label
	}
	return ys, names
}

func basePlot(r *Results, headroom float64) (*plot.Plot, map[string]float64) {
	p := plot.New()
	ys, names := rowOrder(r)
	rowStyle(p, names, headroom)
	// Thin lines between certificate keys group the rows.
	var sep []float64
	for i := 1; i < len(r.Configs); i++ {
		if r.Configs[i].CertKey != r.Configs[i-1].CertKey {
			sep = append(sep, ys[r.Configs[i].Config]+0.5)
		}
	}
	p.Add(hlines{Y: sep, Style: draw.LineStyle{Color: color.Gray{Y: 0xb0}, Width: vg.Points(0.4)}})
	return p, ys
}

// rowStyle gives a plot of one row per name (bottom-up) the study's
// fonts, the legend in the headroom above the rows, and the y range.
func rowStyle(p *plot.Plot, names []string, headroom float64) {
	p.NominalY(names...)
	p.Y.Tick.Label.Font.Size = vg.Points(8.5)
	p.X.Tick.Label.Font.Size = vg.Points(8.5)
	p.X.Label.TextStyle.Font.Size = vg.Points(9.5)
	p.Legend.TextStyle.Font.Size = vg.Points(8.5)
	p.Y.Padding = 0
	p.Y.Min, p.Y.Max = -0.7, float64(len(names))-0.3+headroom
	p.Legend.Top = true
	p.Legend.Padding = vg.Points(2.5)
	p.Legend.XOffs, p.Legend.YOffs = -vg.Points(4), -vg.Points(2)
	p.Legend.ThumbnailWidth = vg.Points(14)
}

func isPaper(r *Results, id string) bool {
	return slices.Contains(r.Families["paper"].Configs, id)
}

// thsPlot draws one horizontal box per configuration: the box spans the
// quartiles, the bar inside is the median, the whiskers reach the 5th and
// 95th percentiles (ecdf_ms[5], ecdf_ms[95]) and a dot marks the 99th.
// The x axis is logarithmic because the configurations differ by factors.
func thsPlot(r *Results) (*plot.Plot, error) {
	p, ys := basePlot(r, thsHeadroom)
	p.X.Label.Text = "Handshake time Ths, ClientHello to client Finished (ms, log scale)"
	p.X.Scale = plot.LogScale{}
	p.X.Tick.Marker = logTicks{}
	grid := plotter.NewGrid()
	grid.Horizontal.Color = nil
	grid.Vertical.Color = color.Gray{Y: 0xe4}
	p.Add(grid) // first, so it is drawn below the boxes
	lo, hi := math.Inf(1), math.Inf(-1)
	var paperBox, otherBox *quantileBox
	for _, c := range r.Configs {
		if len(c.ECDFMs) != 101 {
			return nil, fmt.Errorf("config %s: %d ECDF points, want 101", c.Config, len(c.ECDFMs))
		}
		b := &quantileBox{Y: ys[c.Config], P5: float64(c.ECDFMs[5]), Q1: float64(c.ThsMs.Q1), Median: float64(c.ThsMs.Median),
			Q3: float64(c.ThsMs.Q3), P95: float64(c.ECDFMs[95]), P99: float64(c.ThsMs.P99), Fill: otherFill, Line: otherLine}
		if isPaper(r, c.Config) {
			b.Fill, b.Line = paperFill, paperLine
			paperBox = b
		} else {
			otherBox = b
		}
		for _, v := range []float64{b.P5, b.Q1, b.Median, b.Q3, b.P95, b.P99} {
			if !(v > 0 && v < 1e9) { // also false for NaN
				return nil, fmt.Errorf("config %s: Ths quantile %v ms cannot go on a log axis (want 0 < Ths < 1e9 ms)", c.Config, v)
			}
		}
		lo, hi = min(lo, b.P5), max(hi, b.P99)
		p.Add(b)
	}
	p.X.Min, p.X.Max = lo/1.15, hi*1.15
	base := r.config(r.Families["matrix"].Baseline)
	if m := float64(base.ThsMs.Median); !(m > 0 && m < 1e9) {
		return nil, fmt.Errorf("baseline median %v ms cannot go on a log axis", m)
	}
	bl, err := plotter.NewLine(plotter.XYs{{X: float64(base.ThsMs.Median), Y: p.Y.Min}, {X: float64(base.ThsMs.Median), Y: p.Y.Max}})
	if err != nil {
		return nil, err
	}
	bl.LineStyle = draw.LineStyle{Color: markerColor, Width: vg.Points(0.8), Dashes: []vg.Length{vg.Points(3), vg.Points(2)}}
	p.Add(bl)
	if paperBox != nil {
		p.Legend.Add("paper's configurations", paperBox)
	}
	if otherBox != nil {
		p.Legend.Add("other configurations", otherBox)
	}
	p.Legend.Add("baseline median", bl)
	p.Legend.Add("box: quartiles, bar: median, whiskers: 5th-95th pct., dot: 99th pct.")
	return p, nil
}

// bytesPlot draws stacked horizontal bars of the median frame bytes per
// connection, client to server and server to client, in kB (1000 bytes).
func bytesPlot(r *Results) (*plot.Plot, error) {
	p, ys := basePlot(r, bytesHeadroom)
	p.X.Label.Text = "Bytes on the wire per connection, captured frames (median, kB)"
	n := len(r.Configs)
	c2s, s2c := make(plotter.Values, n), make(plotter.Values, n)
	labels := plotter.XYLabels{XYs: make(plotter.XYs, n), Labels: make([]string, n)}
	hi := 0.0
	for _, c := range r.Configs {
		i := int(ys[c.Config])
		for _, v := range []Num{c.Bytes.Frame.C2S, c.Bytes.Frame.S2C, c.Bytes.Frame.Total} {
			if !(v >= 0 && v < 1e15) { // also false for NaN
				return nil, fmt.Errorf("config %s: frame bytes %v out of range", c.Config, v)
			}
		}
		c2s[i] = float64(c.Bytes.Frame.C2S) / 1000
		s2c[i] = float64(c.Bytes.Frame.S2C) / 1000
		tot := float64(c.Bytes.Frame.Total) / 1000
		labels.XYs[i] = plotter.XY{X: c2s[i] + s2c[i], Y: float64(i)}
		labels.Labels[i] = strconv.FormatFloat(tot, 'f', 1, 64)
		hi = max(hi, c2s[i]+s2c[i])
	}
	width := vg.Points(11)
	bc, err := plotter.NewBarChart(c2s, width)
	if err != nil {
		return nil, err
	}
	bs, err := plotter.NewBarChart(s2c, width)
	if err != nil {
		return nil, err
	}
	for _, b := range []*plotter.BarChart{bc, bs} {
		b.Horizontal = true
		b.LineStyle.Width = 0
	}
	bc.Color, bs.Color = c2sColor, s2cColor
	bs.StackOn(bc)
	lb, err := plotter.NewLabels(labels)
	if err != nil {
		return nil, err
	}
	lb.Offset = vg.Point{X: vg.Points(3), Y: -vg.Points(3)}
	for i := range lb.TextStyle {
		lb.TextStyle[i].Font.Size = vg.Points(7.5)
	}
	grid := plotter.NewGrid()
	grid.Horizontal.Color = nil
	grid.Vertical.Color = color.Gray{Y: 0xe4}
	p.Add(grid, bc, bs, lb)
	p.X.Min, p.X.Max = 0, hi*1.12
	p.X.Tick.Marker = linearTicks{}
	p.Legend.Add("client to server", bc)
	p.Legend.Add("server to client", bs)
	return p, nil
}

// quantileBox is a horizontal box of precomputed quantiles (gonum's
// BoxPlot needs the raw sample, which the figure stage does not read).
type quantileBox struct {
	Y                            float64
	P5, Q1, Median, Q3, P95, P99 float64
	Fill, Line                   color.Color
}

const boxHeight = vg.Length(9) // points

func (b *quantileBox) Plot(c draw.Canvas, plt *plot.Plot) {
	trX, trY := plt.Transforms(&c)
	y := trY(b.Y)
	h := boxHeight / 2
	ls := draw.LineStyle{Color: b.Line, Width: vg.Points(0.7)}
	x := func(v float64) vg.Length { return trX(v) }
	// Whiskers with caps.
	c.StrokeLine2(ls, x(b.P5), y, x(b.Q1), y)
	c.StrokeLine2(ls, x(b.Q3), y, x(b.P95), y)
	c.StrokeLine2(ls, x(b.P5), y-h/2, x(b.P5), y+h/2)
	c.StrokeLine2(ls, x(b.P95), y-h/2, x(b.P95), y+h/2)
	box := []vg.Point{{X: x(b.Q1), Y: y - h}, {X: x(b.Q3), Y: y - h}, {X: x(b.Q3), Y: y + h}, {X: x(b.Q1), Y: y + h}}
	c.FillPolygon(b.Fill, box)
	c.StrokeLines(ls, append(box, box[0]))
	c.StrokeLine2(draw.LineStyle{Color: b.Line, Width: vg.Points(1.6)}, x(b.Median), y-h, x(b.Median), y+h)
	c.DrawGlyph(draw.GlyphStyle{Color: b.Line, Radius: vg.Points(1.3), Shape: draw.CircleGlyph{}}, vg.Point{X: x(b.P99), Y: y})
}

func (b *quantileBox) DataRange() (xmin, xmax, ymin, ymax float64) {
	return b.P5, b.P99, b.Y, b.Y
}

// Thumbnail draws the legend icon: a small box with its median bar.
func (b *quantileBox) Thumbnail(c *draw.Canvas) {
	ls := draw.LineStyle{Color: b.Line, Width: vg.Points(0.7)}
	x0, x1 := c.Min.X, c.Max.X
	ym := (c.Min.Y + c.Max.Y) / 2
	h := min(boxHeight/2, (c.Max.Y-c.Min.Y)/2)
	box := []vg.Point{{X: x0, Y: ym - h}, {X: x1, Y: ym - h}, {X: x1, Y: ym + h}, {X: x0, Y: ym + h}}
	c.FillPolygon(b.Fill, box)
	c.StrokeLines(ls, append(box, box[0]))
	xm := (x0 + x1) / 2
	c.StrokeLine2(draw.LineStyle{Color: b.Line, Width: vg.Points(1.6)}, xm, ym-h, xm, ym+h)
}

// logTicks labels 1, 2, 3 and 5 times each power of ten and puts unlabelled
// minor ticks at the other integers, so a log axis spanning less than two
// decades still reads well.
type logTicks struct{}

func (logTicks) Ticks(lo, hi float64) []plot.Tick {
	if !(lo > 0 && hi >= lo && hi/lo < 1e30) { // also false for NaN and Inf
		return nil
	}
	var ts []plot.Tick
	for e := int(math.Floor(math.Log10(lo))); math.Pow(10, float64(e)) <= hi; e++ {
		for m := 1; m <= 9; m++ {
			// Parsing "me" gives the double nearest to m*10^e, so 0.3 is 0.3.
			v, _ := strconv.ParseFloat(fmt.Sprintf("%de%d", m, e), 64)
			if v < lo || v > hi {
				continue
			}
			t := plot.Tick{Value: v}
			if m == 1 || m == 2 || m == 3 || m == 5 {
				t.Label = strconv.FormatFloat(v, 'g', -1, 64)
			}
			ts = append(ts, t)
		}
	}
	return ts
}

// linearTicks puts labelled ticks every 1, 2 or 5 times a power of ten,
// whichever gives 5 to 10 of them, with an unlabelled tick halfway.
type linearTicks struct{}

func (linearTicks) Ticks(lo, hi float64) []plot.Tick {
	if !(hi > lo) || math.IsInf(hi-lo, 0) || (hi-lo) < 1e-12*max(math.Abs(lo), math.Abs(hi)) {
		return nil // empty, not finite, or too narrow to step through
	}
	e := math.Floor(math.Log10((hi - lo) / 10))
	var step float64
	for _, m := range []float64{1, 2, 5, 10, 20, 50} {
		step, _ = strconv.ParseFloat(fmt.Sprintf("%ge%d", m, int(e)), 64)
		if (hi-lo)/step <= 10 {
			break
		}
	}
	var ts []plot.Tick
	for i := math.Ceil(lo / step * 2); i/2*step <= hi; i++ {
		v, _ := strconv.ParseFloat(strconv.FormatFloat(i/2*step, 'g', 12, 64), 64)
		if v == 0 {
			v = 0 // not -0, which would be labelled "-0"
		}
		t := plot.Tick{Value: v}
		if math.Mod(i, 2) == 0 {
			t.Label = strconv.FormatFloat(v, 'g', -1, 64)
		}
		ts = append(ts, t)
	}
	return ts
}

// hlines draws horizontal lines across the whole data area.
type hlines struct {
	Y     []float64
	Style draw.LineStyle
}

func (h hlines) Plot(c draw.Canvas, plt *plot.Plot) {
	_, trY := plt.Transforms(&c)
	for _, y := range h.Y {
		c.StrokeLine2(h.Style, c.Min.X, trY(y), c.Max.X, trY(y))
	}
}
