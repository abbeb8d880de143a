package netstudy

import (
	"fmt"
	"image/color"
	"math"
	"strconv"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"pqrepro/internal/render"
)

// Colours: Okabe-Ito blue for the baseline group, vermilion for the
// hybrid (colour-blind safe), lighter tints for the payload basis.
var (
	baseColor   = render.Blue
	targetColor = render.Vermilion
	baseTint    = color.RGBA{R: 0x9e, G: 0xca, B: 0xe9, A: 0xff}
	targetTint  = color.RGBA{R: 0xf2, G: 0xbf, B: 0x99, A: 0xff}
	greyColor   = color.Gray{Y: 0x70}
)

const (
	figW = 5.5 * vg.Inch
	figH = 3.4 * vg.Inch
)

// dashes per scenario index: solid, dashed, dotted, dash-dot.
var dashes = [][]vg.Length{nil, {vg.Points(5), vg.Points(2.5)}, {vg.Points(1.2), vg.Points(1.8)}, {vg.Points(5), vg.Points(2), vg.Points(1.2), vg.Points(2)}}

// Figures renders the outputs of net:figures, keyed by output path. date
// is the PDF creation date (SOURCE_DATE_EPOCH).
func Figures(res *Results, date time.Time) (map[string][]byte, error) {
	figs, err := figureList(res)
	if err != nil {
		return nil, err
	}
	return render.Files(figs, date)
}

// figureList builds every figure of the study, in the paper's style.
func figureList(res *Results) ([]render.Figure, error) {
	var figs []render.Figure
	lat, panels, err := latencyPlot(res)
	if err != nil {
		return nil, fmt.Errorf("figure %s: %w", FigLatency, err)
	}
	figs = append(figs, render.Figure{Base: FigLatency, Plot: lat, W: render.TextWidth, H: 2.8 * vg.Inch, Panels: panels})
	for _, f := range []struct {
		base string
		make func(*Results) (*plot.Plot, error)
	}{{FigDiffVsRTT, diffPlot}, {FigBytes, bytesPlot}} {
		p, err := f.make(res)
		if err != nil {
			return nil, fmt.Errorf("figure %s: %w", f.base, err)
		}
		figs = append(figs, render.Figure{Base: f.base, Plot: p, W: figW, H: figH})
	}
	return figs, nil
}

func style(p *plot.Plot) { render.Style(p) }

func groupColor(res *Results, g string) color.Color {
	if g == res.Design.Groups[0] {
		return baseColor
	}
	return targetColor
}

func scenarioIndex(res *Results, name string) int {
	for i, s := range res.Design.Scenarios {
		if s.Name == name {
			return i
		}
	}
	return 0
}

// latencyPlot draws the handshake latency of both groups in the largest
// round, one column per scenario with its own axes (the scenarios differ
// by factors, the groups by a fraction of a millisecond to a few
// milliseconds). The top row is the body of the distribution, the
// empirical CDF from the 1st to the 95th percentile on a linear axis; the
// bottom row is its tail, the fraction of handshakes slower than x from
// the 90th to the 99th percentile on a log axis, where retransmissions
// after a loss show up. The key sits above the panels.
func latencyPlot(res *Results) (*plot.Plot, []*plot.Plot, error) {
	var body, tail []*plot.Plot
	var legend []legendEntry
	for si, sc := range res.Design.Scenarios {
		b, t := plot.New(), plot.New()
		render.Style(b)
		render.Style(t)
		b.Title.Text = fmt.Sprintf("%s (RTT %g ms)", sc.Name, sc.RTTms)
		b.X.Label.Text = "Ths (ms), p1 to p95"
		t.X.Label.Text = "Ths (ms), p90 to p99"
		b.X.Tick.Marker = plot.TickerFunc(thinTicks)
		t.X.Tick.Marker = plot.TickerFunc(thinTicks)
		if si == 0 {
			b.Y.Label.Text = "fraction <= x"
			t.Y.Label.Text = "fraction > x"
		}
		b.Y.Min, b.Y.Max = 0, 1
		t.Y.Scale = plot.LogScale{}
		t.Y.Min, t.Y.Max = 0.01, 0.1
		t.Y.Tick.Marker = plot.ConstantTicks{{Value: 0.01, Label: "0.01"}, {Value: 0.02}, {Value: 0.05, Label: "0.05"}, {Value: 0.1, Label: "0.1"}}
		for _, p := range []*plot.Plot{b, t} {
			g := plotter.NewGrid()
			g.Vertical.Color = nil
			p.Add(g)
		}
		bmin, bmax, tmin, tmax := math.Inf(1), math.Inf(-1), math.Inf(1), math.Inf(-1)
		for _, d := range res.Distributions {
			if d.Scenario != sc.Name {
				continue
			}
			var bodyXY, tailXY plotter.XYs
			for i, q := range d.QuantilesMs {
				f, pr := float64(q), d.Probs[i]
				if math.IsNaN(f) {
					continue
				}
				if pr <= 0.95+1e-9 {
					bodyXY = append(bodyXY, plotter.XY{X: f, Y: pr})
					bmin, bmax = math.Min(bmin, f), math.Max(bmax, f)
				}
				if pr >= 0.90-1e-9 && pr <= 0.99+1e-9 {
					tailXY = append(tailXY, plotter.XY{X: f, Y: 1 - pr})
					tmin, tmax = math.Min(tmin, f), math.Max(tmax, f)
				}
			}
			if len(bodyXY) == 0 || len(tailXY) == 0 {
				return nil, nil, fmt.Errorf("%s %s: no latency quantiles", d.Scenario, d.Group)
			}
			for _, part := range []struct {
				p  *plot.Plot
				xy plotter.XYs
			}{{b, bodyXY}, {t, tailXY}} {
				l, err := plotter.NewLine(part.xy)
				if err != nil {
					return nil, nil, err
				}
				l.Color = groupColor(res, d.Group)
				l.Width = vg.Points(1.4)
				if d.Group != res.Design.Groups[0] {
					l.Dashes = dashes[1]
				}
				part.p.Add(l)
				if si == 0 && part.p == b {
					legend = append(legend, legendEntry{d.Group, l})
				}
			}
		}
		pad := func(p *plot.Plot, lo, hi float64) {
			if hi > lo {
				d := (hi - lo) * 0.04
				p.X.Min, p.X.Max = lo-d, hi+d
			}
		}
		pad(b, bmin, bmax)
		pad(t, tmin, tmax)
		body, tail = append(body, b), append(tail, t)
	}
	outer := plot.New()
	outer.HideAxes()
	outer.Add(panelGrid{rows: [][]*plot.Plot{body, tail}, legend: legend})
	return outer, append(body, tail...), nil
}

// A legendEntry is one line of a composite figure's key.
type legendEntry struct {
	name  string
	thumb plot.Thumbnailer
}

// panelGrid draws plots in a grid in the outer plot's data area, with a
// one-line key centred above them, outside every panel's data.
type panelGrid struct {
	rows   [][]*plot.Plot
	legend []legendEntry
}

func (g panelGrid) Plot(c draw.Canvas, _ *plot.Plot) {
	keyH := vg.Points(render.LegendSize + 6)
	grid := c
	grid.Max.Y -= keyH
	if len(g.legend) > 0 {
		key := plot.NewLegend()
		key.TextStyle.Font.Size = vg.Points(render.LegendSize)
		key.ThumbnailWidth = vg.Points(18)
		for _, e := range g.legend {
			key.Add(e.name, e.thumb)
		}
		// One entry per column of the key, side by side.
		w := (c.Max.X - c.Min.X) / vg.Length(len(g.legend)+2)
		for i := range g.legend {
			one := plot.NewLegend()
			one.TextStyle = key.TextStyle
			one.ThumbnailWidth = key.ThumbnailWidth
			one.Add(g.legend[i].name, g.legend[i].thumb)
			cell := c
			cell.Min.Y = c.Max.Y - keyH
			cell.Min.X = c.Min.X + w*vg.Length(i+1)
			cell.Max.X = cell.Min.X + w
			one.Left = true
			one.Draw(cell)
		}
	}
	cols := 0
	for _, r := range g.rows {
		cols = max(cols, len(r))
	}
	tiles := plot.Align(g.rows, draw.Tiles{Rows: len(g.rows), Cols: cols, PadX: vg.Points(8), PadY: vg.Points(6)}, grid)
	for i, r := range g.rows {
		for j, p := range r {
			p.Draw(tiles[i][j])
		}
	}
}

// thinTicks is gonum's default ticker with at most about four labels, so
// that narrow panels stay readable.
func thinTicks(min, max float64) []plot.Tick {
	ticks := plot.DefaultTicks{}.Ticks(min, max)
	var major int
	for _, t := range ticks {
		if t.Label != "" {
			major++
		}
	}
	if major <= 4 {
		return ticks
	}
	k := 0
	for i := range ticks {
		if ticks[i].Label != "" {
			if k%2 == 1 {
				ticks[i].Label = ""
			}
			k++
		}
	}
	return ticks
}

// diffPlot draws the median difference (target - baseline) against the
// scenario's RTT, one series per round with its 95 % circular block
// bootstrap interval, each scenario over its rounds (mean and Student t
// interval over the rounds: the interval at the top level of the
// design), and the published values where they belong: the smallest difference at
// the fastest scenario, the largest at the slowest.
func diffPlot(res *Results) (*plot.Plot, error) {
	p := plot.New()
	style(p)
	logX := true
	for _, s := range res.Design.Scenarios {
		if s.RTTms <= 0 {
			logX = false
		}
	}
	p.X.Label.Text = "Emulated round-trip time (ms)"
	if logX {
		p.X.Label.Text += ", log scale"
		p.X.Scale = plot.LogScale{}
		p.X.Tick.Marker = rttTicks{res.Design.Scenarios}
	}
	p.Y.Label.Text = fmt.Sprintf("Median Ths difference (ms)\n%s - %s", res.Design.Groups[1], res.Design.Groups[0])
	grid := plotter.NewGrid()
	grid.Vertical.Color = nil
	p.Add(grid)
	p.Legend.Top, p.Legend.Left = true, true
	p.Legend.XOffs, p.Legend.YOffs = vg.Points(4), -vg.Points(2)

	lo, hi := math.Inf(1), math.Inf(-1)
	for _, s := range res.Design.Scenarios {
		lo, hi = math.Min(lo, s.RTTms), math.Max(hi, s.RTTms)
	}
	if logX {
		lo, hi = lo/1.6, hi*1.6
	} else {
		pad := math.Max(1, (hi-lo)*0.1)
		lo, hi = lo-pad, hi+pad
	}
	// The published smallest difference belongs to the fastest scenario
	// and the largest to the slowest: each is drawn at that scenario only.
	pub := res.Published
	fast, slow := res.Design.Scenarios[0], res.Design.Scenarios[0]
	for _, s := range res.Design.Scenarios {
		if s.RTTms < fast.RTTms {
			fast = s
		}
		if s.RTTms > slow.RTTms {
			slow = s
		}
	}
	pubPts := plotter.XYs{{X: fast.RTTms, Y: pub.DiffMsMin}, {X: slow.RTTms, Y: pub.DiffMsMax}}
	pubSc, err := plotter.NewScatter(pubPts)
	if err != nil {
		return nil, err
	}
	pubSc.GlyphStyle = draw.GlyphStyle{Color: targetColor, Radius: vg.Points(4), Shape: draw.CrossGlyph{}}
	p.Add(pubSc)
	p.Legend.Add(fmt.Sprintf("published, round %s (fastest: min, slowest: max)", intPlain(pub.Round)), pubSc)
	ymax := math.Max(pub.DiffMsMin, pub.DiffMsMax)
	for _, c := range res.Comparisons {
		ymax = math.Max(ymax, nanTo(float64(c.DiffUpperMs), 0))
	}
	for _, e := range res.Scenarios {
		ymax = math.Max(ymax, nanTo(float64(e.UpperMs), 0))
	}
	p.Y.Max = ymax * 1.45 // headroom for the key
	zero, _ := plotter.NewLine(plotter.XYs{{X: lo, Y: 0}, {X: hi, Y: 0}})
	zero.Color, zero.Width = greyColor, vg.Points(0.6)
	p.Add(zero)
	p.X.Min, p.X.Max = lo, hi

	// nudge spreads the points of one scenario sideways (shift positions)
	// so that their intervals do not overlap.
	nudge := func(x, shift float64) float64 {
		if logX {
			return x * math.Pow(1.07, shift)
		}
		return x + shift*(hi-lo)/60
	}
	shapes := []draw.GlyphDrawer{draw.CircleGlyph{}, draw.SquareGlyph{}, draw.TriangleGlyph{}, draw.RingGlyph{}, draw.BoxGlyph{}}
	greys := []color.Color{color.Gray{Y: 0x9a}, color.Gray{Y: 0x55}, color.Black}
	for ri, rd := range res.Design.Rounds {
		var pts plotter.XYs
		var errs plotter.YErrors
		// Spread the rounds sideways a little so the intervals do not overlap.
		shift := float64(ri) - float64(len(res.Design.Rounds))/2
		for _, c := range res.Comparisons {
			if c.Round != rd {
				continue
			}
			pts = append(pts, plotter.XY{X: nudge(c.RTTms, shift), Y: float64(c.DiffMs)})
			errs = append(errs, errBar(c.DiffMs, c.DiffLowerMs, c.DiffUpperMs))
		}
		col := greys[ri%len(greys)]
		if len(res.Design.Rounds) > len(greys) {
			col = color.Black
		}
		eb := &plotter.YErrorBars{XYs: pts, YErrors: errs, LineStyle: draw.LineStyle{Color: col, Width: vg.Points(0.8)}, CapWidth: vg.Points(4)}
		sc, err := plotter.NewScatter(pts)
		if err != nil {
			return nil, err
		}
		sc.GlyphStyle = draw.GlyphStyle{Color: col, Radius: vg.Points(2.6), Shape: shapes[ri%len(shapes)]}
		p.Add(eb, sc)
		p.Legend.Add(fmt.Sprintf("round %s (95 %% block bootstrap CI)", intPlain(rd)), sc)
	}
	// Each scenario over its rounds, right of the rounds.
	var pts plotter.XYs
	var errs plotter.YErrors
	shift := float64(len(res.Design.Rounds)) / 2
	for _, e := range res.Scenarios {
		if math.IsNaN(float64(e.MeanMs)) {
			continue
		}
		pts = append(pts, plotter.XY{X: nudge(e.RTTms, shift), Y: float64(e.MeanMs)})
		errs = append(errs, errBar(e.MeanMs, e.LowerMs, e.UpperMs))
	}
	if len(pts) > 0 {
		eb := &plotter.YErrorBars{XYs: pts, YErrors: errs, LineStyle: draw.LineStyle{Color: targetColor, Width: vg.Points(1.2)}, CapWidth: vg.Points(6)}
		sc, err := plotter.NewScatter(pts)
		if err != nil {
			return nil, err
		}
		sc.GlyphStyle = draw.GlyphStyle{Color: targetColor, Radius: vg.Points(3), Shape: draw.PyramidGlyph{}}
		p.Add(eb, sc)
		p.Legend.Add("scenario over its rounds (mean, 95 % t CI)", sc)
	}
	return p, nil
}

// errBar is the error bar of estimate m with interval [lo, hi]; none
// (zero) where the interval is missing.
func errBar(m, lo, hi Num) struct{ Low, High float64 } {
	return struct{ Low, High float64 }{nanTo(float64(m-lo), 0), nanTo(float64(hi-m), 0)}
}

// nanTo returns v, or def when v is NaN.
func nanTo(v, def float64) float64 {
	if math.IsNaN(v) {
		return def
	}
	return v
}

// rttTicks labels the log axis at the scenarios' RTTs.
type rttTicks struct{ s []Scenario }

func (t rttTicks) Ticks(min, max float64) []plot.Tick {
	var out []plot.Tick
	for _, s := range t.s {
		out = append(out, plot.Tick{Value: s.RTTms, Label: fmt.Sprintf("%g\n%s", s.RTTms, s.Name)})
	}
	return out
}

// bytesPlot draws the median bytes per connection (largest round) per
// scenario: for each group one bar on the frame basis and one, lighter, on
// the TCP payload basis.
func bytesPlot(res *Results) (*plot.Plot, error) {
	p := plot.New()
	style(p)
	p.Y.Label.Text = fmt.Sprintf("Bytes per connection, median (round %s)", intPlain(res.Reproduced.Round))
	p.Y.Min = 0
	names := make([]string, len(res.Design.Scenarios))
	for i, s := range res.Design.Scenarios {
		names[i] = fmt.Sprintf("%s (%g ms)", s.Name, s.RTTms)
	}
	p.NominalX(names...)
	bgrid := plotter.NewGrid()
	bgrid.Vertical.Color = nil
	p.Add(bgrid)
	p.Legend.Top, p.Legend.Left = true, true
	p.Legend.XOffs, p.Legend.YOffs = vg.Points(4), -vg.Points(2)
	var vals [4]plotter.Values
	ymax := 0.0
	for _, s := range res.Design.Scenarios {
		for _, c := range res.Comparisons {
			if c.Scenario != s.Name || c.Round != res.Reproduced.Round {
				continue
			}
			v := []float64{float64(c.BaseFrame), float64(c.TargetFrame), float64(c.BasePayload), float64(c.TargetPayload)}
			for i := range vals {
				vals[i] = append(vals[i], v[i])
				ymax = math.Max(ymax, v[i])
			}
		}
	}
	g0, g1 := res.Design.Groups[0], res.Design.Groups[1]
	labels := []string{g0 + ", IP (frame)", g1 + ", IP (frame)", g0 + ", TCP payload", g1 + ", TCP payload"}
	fills := []color.Color{baseColor, targetColor, baseTint, targetTint}
	order := []int{0, 2, 1, 3} // left to right: base frame, base payload, target frame, target payload
	w := vg.Points(15)
	for pos, i := range order {
		bc, err := plotter.NewBarChart(vals[i], w)
		if err != nil {
			return nil, err
		}
		bc.Color = fills[i]
		bc.LineStyle.Width = vg.Points(0.4)
		bc.Offset = (vg.Length(pos) - 1.5) * (w + vg.Points(1))
		p.Add(bc)
	}
	for _, i := range []int{0, 1, 2, 3} {
		bc, _ := plotter.NewBarChart(plotter.Values{0}, w)
		bc.Color = fills[i]
		bc.LineStyle.Width = vg.Points(0.4)
		p.Legend.Add(labels[i], bc)
	}
	p.Y.Max = ymax * 1.45 // room for the legend
	return p, nil
}

func intPlain(n int) string { return render.GroupDigits(strconv.Itoa(n), ",") }
