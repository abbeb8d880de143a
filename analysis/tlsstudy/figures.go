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

// Figure colours (render's Okabe-Ito palette): the paper's
// configurations blue, the others grey; client to server blue, server to
// client vermilion; the baseline's median a dashed black line.
var (
	paperLine   = render.Blue
	paperFill   = render.Tint(render.Blue, 0.6)
	otherFill   = color.RGBA{R: 0xdd, G: 0xdd, B: 0xdd, A: 0xff}
	otherLine   = render.Grey
	c2sColor    = render.Blue
	s2cColor    = render.Vermilion
	markerColor = color.Black
	gridStyle   = draw.LineStyle{Color: render.GridGrey, Width: vg.Points(0.5)}
)

const figureWidth = render.TextWidth

// figureHeight grows with the number of rows so that every row keeps a
// readable height; keyRows is the key's lines above the panel.
func figureHeight(rows, keyRows int) vg.Length {
	return max(2.4*vg.Inch, 0.75*vg.Inch+vg.Length(rows)*0.2*vg.Inch+vg.Length(keyRows)*0.17*vg.Inch)
}

// Figures renders the outputs of tls:figures from the results, keyed by
// output path. date is the PDF creation date (SOURCE_DATE_EPOCH); parts
// add their figures.
func Figures(r *Results, date time.Time, parts ...Part) (map[string][]byte, error) {
	figs, err := figureList(r, parts)
	if err != nil {
		return nil, err
	}
	return render.Files(figs, date)
}

// A keyed plot is one panel and the key drawn above it.
type keyed struct {
	p    *plot.Plot
	key  []render.KeyEntry
	cols int
	rows int // data rows, for the height
}

// figureList builds every figure of the study and its parts, in the
// paper's style.
func figureList(r *Results, parts []Part) ([]render.Figure, error) {
	var figs []render.Figure
	for _, f := range []struct {
		base string
		make func(*Results) (keyed, error)
	}{{FigureThs, thsPlot}, {FigureBytes, bytesPlot}, {FigureGap, gapPlot}, {FigureDrift, driftPlot}} {
		k, err := f.make(r)
		if err != nil {
			return nil, fmt.Errorf("figure %s: %w", f.base, err)
		}
		keyRows := render.KeyRows(k.key, k.cols)
		figs = append(figs, render.Figure{Base: f.base, Plot: render.Compose([][]*plot.Plot{{k.p}}, k.key, k.cols),
			W: figureWidth, H: figureHeight(k.rows, keyRows), Panels: []*plot.Plot{k.p}})
	}
	for _, pt := range parts {
		if pt.Figures == nil {
			continue
		}
		g, err := pt.Figures(r)
		if err != nil {
			return nil, fmt.Errorf("figures %v: %w", pt.FigureBases, err)
		}
		figs = append(figs, g...)
	}
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

func basePlot(r *Results) (*plot.Plot, map[string]float64) {
	p := render.NewPlot("")
	ys, names := rowOrder(r)
	rowStyle(p, names)
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

// rowStyle gives a plot of one row per name (bottom-up) its y range; the
// key is drawn above the panel (render.Compose), not in it.
func rowStyle(p *plot.Plot, names []string) {
	p.NominalY(names...)
	p.Y.Padding = 0
	p.Y.Min, p.Y.Max = -0.7, float64(len(names))-0.3
}

// verticalGrid is a grid of vertical lines at the x ticks, drawn first
// so that it lies below the data.
func verticalGrid() *plotter.Grid {
	g := plotter.NewGrid()
	g.Horizontal.Color = nil
	g.Vertical = gridStyle
	return g
}

func isPaper(r *Results, id string) bool {
	return slices.Contains(r.Families["paper"].Configs, id)
}

// thsPlot draws one horizontal box per configuration: the box spans the
// quartiles, the bar inside is the median, the whiskers reach the 5th and
// 95th percentiles (ecdf_ms[5], ecdf_ms[95]) and a dot marks the 99th.
// The x axis is logarithmic because the configurations differ by factors.
func thsPlot(r *Results) (keyed, error) {
	p, ys := basePlot(r)
	p.X.Label.Text = "Handshake time Ths, ClientHello to client Finished (ms, log scale)"
	p.X.Scale = plot.LogScale{}
	p.X.Tick.Marker = render.LogTicks{}
	p.Add(verticalGrid())
	lo, hi := math.Inf(1), math.Inf(-1)
	var paperBox, otherBox *quantileBox
	for _, c := range r.Configs {
		if len(c.ECDFMs) != 101 {
			return keyed{}, fmt.Errorf("config %s: %d ECDF points, want 101", c.Config, len(c.ECDFMs))
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
				return keyed{}, fmt.Errorf("config %s: Ths quantile %v ms cannot go on a log axis (want 0 < Ths < 1e9 ms)", c.Config, v)
			}
		}
		lo, hi = min(lo, b.P5), max(hi, b.P99)
		p.Add(b)
	}
	p.X.Min, p.X.Max = lo/1.15, hi*1.15
	base := r.config(r.Families["matrix"].Baseline)
	if m := float64(base.ThsMs.Median); !(m > 0 && m < 1e9) {
		return keyed{}, fmt.Errorf("baseline median %v ms cannot go on a log axis", m)
	}
	bl, err := plotter.NewLine(plotter.XYs{{X: float64(base.ThsMs.Median), Y: p.Y.Min}, {X: float64(base.ThsMs.Median), Y: p.Y.Max}})
	if err != nil {
		return keyed{}, err
	}
	bl.LineStyle = draw.LineStyle{Color: markerColor, Width: vg.Points(0.8), Dashes: []vg.Length{vg.Points(3), vg.Points(2)}}
	p.Add(bl)
	var key []render.KeyEntry
	if paperBox != nil {
		key = append(key, render.KeyEntry{Name: "paper's configurations", Thumb: paperBox})
	}
	if otherBox != nil {
		key = append(key, render.KeyEntry{Name: "other configurations", Thumb: otherBox})
	}
	key = append(key, render.KeyEntry{Name: "baseline median", Thumb: bl},
		render.KeyEntry{Name: "box: quartiles; bar: median; whiskers: 5th to 95th percentile; dot: 99th percentile"})
	return keyed{p: p, key: key, cols: 3, rows: len(r.Configs)}, nil
}

// bytesPlot draws stacked horizontal bars of the median frame bytes per
// connection, client to server and server to client, in kB (1000 bytes).
func bytesPlot(r *Results) (keyed, error) {
	p, ys := basePlot(r)
	p.X.Label.Text = "Bytes on the wire per connection, captured frames (median, kB)"
	n := len(r.Configs)
	c2s, s2c := make(plotter.Values, n), make(plotter.Values, n)
	labels := plotter.XYLabels{XYs: make(plotter.XYs, n), Labels: make([]string, n)}
	hi := 0.0
	for _, c := range r.Configs {
		i := int(ys[c.Config])
		for _, v := range []Num{c.Bytes.Frame.C2S, c.Bytes.Frame.S2C, c.Bytes.Frame.Total} {
			if !(v >= 0 && v < 1e15) { // also false for NaN
				return keyed{}, fmt.Errorf("config %s: frame bytes %v out of range", c.Config, v)
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
		return keyed{}, err
	}
	bs, err := plotter.NewBarChart(s2c, width)
	if err != nil {
		return keyed{}, err
	}
	for _, b := range []*plotter.BarChart{bc, bs} {
		b.Horizontal = true
		b.LineStyle.Width = 0
	}
	bc.Color, bs.Color = c2sColor, s2cColor
	bs.StackOn(bc)
	lb, err := plotter.NewLabels(labels)
	if err != nil {
		return keyed{}, err
	}
	lb.Offset = vg.Point{X: vg.Points(3)}
	for i := range lb.TextStyle {
		lb.TextStyle[i].Font.Size = vg.Points(render.TickSize)
		lb.TextStyle[i].YAlign = draw.YCenter
	}
	p.Add(verticalGrid(), bc, bs, lb)
	p.X.Min, p.X.Max = 0, hi*1.12
	p.X.Tick.Marker = render.LinearTicks{}
	return keyed{p: p, key: []render.KeyEntry{{Name: "client to server", Thumb: bc}, {Name: "server to client", Thumb: bs},
		{Name: "number: total kB"}}, rows: n}, nil
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

// Thumbnail draws the key's icon: a small box with its median bar.
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

// The gap figure's roles, in the order of Table 4's columns: each with
// its series style (colour, marker, dash).
func roleSeries(k int) render.Series { return render.SeriesStyle(k) }

// publishedRow is the label of the gap figure's first row, as in the
// gap table: the published increases.
const publishedRow = "Published (OpenSSL 3.5.2, Docker)"

// gapPlot draws, per row in Table 4's order (the published increases
// first, then every cell), each role's increase over the cell's baseline
// with its bootstrap interval; the published increases are hollow
// markers on the first row (their values in the key) and dashed
// reference lines in the role's style through the cells. The x axis is
// logarithmic: the increases span from hundredths of a millisecond (the
// PQ KEM) to the published 9 ms, and the comparison that matters is the
// factor between ours and the published. An interval whose lower end is
// below the axis (zero or negative) is drawn to the axis and ends in an
// arrow.
func gapPlot(r *Results) (keyed, error) {
	p := render.NewPlot("")
	cells := r.Gap.Cells
	n := len(cells) + 1
	names := make([]string, n)
	names[n-1] = publishedRow
	for i, c := range cells {
		l := cellLabel(c.Cell)
		if c.Primary {
			l += " (primary)"
		}
		names[n-2-i] = l
	}
	rowStyle(p, names)
	p.X.Label.Text = "Increase over the cell's baseline by round, 95 % interval over rounds (ms, log scale)"
	p.X.Scale = plot.LogScale{}
	p.X.Tick.Marker = render.LogTicks{Coarse: true}
	p.Add(verticalGrid())
	// The axis starts below the smallest positive value drawn.
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, c := range cells {
		for _, role := range Roles[1:] {
			if cmp := c.role(role); cmp != nil {
				x, l, u := roundInterval(cmp)
				for _, v := range []float64{x, l, u} {
					if math.IsNaN(v) || math.IsInf(v, 0) {
						return keyed{}, fmt.Errorf("cell %s, %s: increase %v ms is not finite", c.Cell, role, v)
					}
					if v > 0 {
						lo = min(lo, v)
					}
					hi = max(hi, v)
				}
			}
		}
	}
	for _, role := range Roles[1:] {
		if v := r.Published.Increases[role].IncreaseMs; v > 0 && v < 1e9 {
			lo, hi = min(lo, v), max(hi, v)
		}
	}
	if !(lo > 0 && hi >= lo && hi < 1e9) {
		return keyed{}, fmt.Errorf("no positive increase to draw on a log axis")
	}
	p.X.Min, p.X.Max = lo/1.5, hi*1.25
	var key []render.KeyEntry
	for k, role := range Roles[1:] {
		st := roleSeries(k)
		d := &intervalDots{Style: st, Floor: p.X.Min}
		dy := 0.25 * float64(1-k)
		for i, c := range cells {
			cmp := c.role(role)
			if cmp == nil {
				continue
			}
			x, l, u := roundInterval(cmp)
			d.Points = append(d.Points, intervalDot{Y: float64(n-2-i) + dy, X: x, Lo: l, Hi: u})
		}
		pub := r.Published.Increases[role].IncreaseMs
		line := draw.LineStyle{Color: st.Color, Width: vg.Points(0.8), Dashes: []vg.Length{vg.Points(3), vg.Points(2)}}
		if st.Dashes != nil {
			line.Dashes = st.Dashes
		}
		p.Add(d)
		if pub > 0 && pub < 1e9 {
			// Through the cells, up to the published row's marker.
			pl, err := plotter.NewLine(plotter.XYs{{X: pub, Y: p.Y.Min}, {X: pub, Y: float64(n-1) + dy}})
			if err != nil {
				return keyed{}, err
			}
			pl.LineStyle = line
			mark, err := plotter.NewScatter(plotter.XYs{{X: pub, Y: float64(n-1) + dy}})
			if err != nil {
				return keyed{}, err
			}
			mark.GlyphStyle = draw.GlyphStyle{Color: st.Color, Radius: vg.Points(3), Shape: st.Hollow}
			p.Add(pl, mark)
		}
		name := Published.Increases[role].Config
		// One key line per role: ours, then the published value.
		key = append(key, render.KeyEntry{Name: name + ": ours, 95 % bootstrap CI", Thumb: d},
			render.KeyEntry{Name: "published, " + render.Fixed(pub, 3) + " ms", Thumb: render.Thumb{Line: line,
				Glyph: draw.GlyphStyle{Color: st.Color, Radius: vg.Points(3), Shape: st.Hollow}}})
	}
	// Separate the published row from the cells.
	p.Add(hlines{Y: []float64{float64(n) - 1.5}, Style: draw.LineStyle{Color: color.Gray{Y: 0xb0}, Width: vg.Points(0.4)}})
	return keyed{p: p, key: key, cols: 2, rows: n}, nil
}

// intervalDot is one estimate with its interval at height Y.
type intervalDot struct{ Y, X, Lo, Hi float64 }

// intervalDots draws each point as a marker on a horizontal interval
// line with end caps. On a log axis an end at or below Floor (the axis
// minimum) is drawn at the axis and ends in an arrow: the interval goes
// on, to zero or below.
type intervalDots struct {
	Points []intervalDot
	Style  render.Series
	Floor  float64
}

func (d *intervalDots) Plot(c draw.Canvas, plt *plot.Plot) {
	trX, trY := plt.Transforms(&c)
	ls := draw.LineStyle{Color: d.Style.Color, Width: vg.Points(1)}
	cap := vg.Points(2.5)
	for _, pt := range d.Points {
		y := trY(pt.Y)
		x0 := c.Min.X
		clipped := !(pt.Lo > d.Floor)
		if !clipped {
			x0 = trX(pt.Lo)
		}
		// An interval (or, without one, an estimate) at or below the
		// floor of the log axis is drawn at the floor.
		x1 := trX(max(pt.Hi, d.Floor))
		c.StrokeLine2(ls, x0, y, x1, y)
		c.StrokeLine2(ls, x1, y-cap, x1, y+cap)
		if clipped {
			c.StrokeLines(ls, []vg.Point{{X: x0 + cap, Y: y + cap}, {X: x0, Y: y}, {X: x0 + cap, Y: y - cap}})
		} else {
			c.StrokeLine2(ls, x0, y-cap, x0, y+cap)
		}
		x := x0
		if pt.X > d.Floor {
			x = trX(pt.X)
		}
		c.DrawGlyph(draw.GlyphStyle{Color: d.Style.Color, Radius: vg.Points(2.4), Shape: d.Style.Shape}, vg.Point{X: x, Y: y})
	}
}

func (d *intervalDots) DataRange() (xmin, xmax, ymin, ymax float64) {
	xmin, xmax, ymin, ymax = math.Inf(1), math.Inf(-1), math.Inf(1), math.Inf(-1)
	for _, pt := range d.Points {
		xmin, xmax, ymin, ymax = min(xmin, max(pt.Lo, d.Floor)), max(xmax, max(pt.Hi, d.Floor)), min(ymin, pt.Y), max(ymax, pt.Y)
	}
	return
}

// Thumbnail draws the key's icon: the marker on its interval.
func (d *intervalDots) Thumbnail(c *draw.Canvas) {
	ym := (c.Min.Y + c.Max.Y) / 2
	ls := draw.LineStyle{Color: d.Style.Color, Width: vg.Points(1)}
	c.StrokeLine2(ls, c.Min.X, ym, c.Max.X, ym)
	c.StrokeLine2(ls, c.Min.X, ym-vg.Points(2.5), c.Min.X, ym+vg.Points(2.5))
	c.StrokeLine2(ls, c.Max.X, ym-vg.Points(2.5), c.Max.X, ym+vg.Points(2.5))
	c.DrawGlyph(draw.GlyphStyle{Color: d.Style.Color, Radius: vg.Points(2.4), Shape: d.Style.Shape}, vg.Point{X: (c.Min.X + c.Max.X) / 2, Y: ym})
}

// roundInterval is a comparison's round-level increase and its interval
// over rounds (the study's inference); a comparison with too few rounds
// for an interval is drawn as a dot.
func roundInterval(cmp *Comparison) (x, lo, hi float64) {
	x, lo, hi = float64(cmp.Rounds.IncreaseMs), float64(cmp.Rounds.Lower), float64(cmp.Rounds.Upper)
	if math.IsNaN(lo) || math.IsNaN(hi) {
		lo, hi = x, x
	}
	return x, lo, hi
}
