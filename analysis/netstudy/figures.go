package netstudy

import (
	"fmt"
	"image/color"
	"math"
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
	baseColor   = color.RGBA{R: 0x00, G: 0x72, B: 0xb2, A: 0xff}
	targetColor = color.RGBA{R: 0xd5, G: 0x5e, B: 0x00, A: 0xff}
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
	out := map[string][]byte{}
	for _, f := range []struct {
		base string
		make func(*Results) (*plot.Plot, error)
		w, h vg.Length
	}{{FigLatency, latencyPlot, 6.5 * vg.Inch, 2.6 * vg.Inch}, {FigDiffVsRTT, diffPlot, figW, figH}, {FigBytes, bytesPlot, figW, figH}} {
		p, err := f.make(res)
		if err != nil {
			return nil, fmt.Errorf("figure %s: %w", f.base, err)
		}
		if out[f.base+".pdf"], err = render.PDF(p, f.w, f.h, date); err != nil {
			return nil, fmt.Errorf("figure %s: %w", f.base, err)
		}
		if out[f.base+".svg"], err = render.SVG(p, f.w, f.h); err != nil {
			return nil, fmt.Errorf("figure %s: %w", f.base, err)
		}
	}
	return out, nil
}

func style(p *plot.Plot) {
	for _, a := range []*plot.Axis{&p.X, &p.Y} {
		a.Tick.Label.Font.Size = vg.Points(8.5)
		a.Label.TextStyle.Font.Size = vg.Points(9.5)
	}
	p.Legend.TextStyle.Font.Size = vg.Points(8.5)
	p.Legend.Padding = vg.Points(2)
	p.Legend.ThumbnailWidth = vg.Points(18)
}

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

// latencyPlot draws the empirical CDF of the handshake latency of both
// groups (largest round, 1st to 99th percentile, axis to the 90th), one panel per scenario
// with its own linear axis: the scenarios differ by factors, the groups by
// a fraction of a millisecond to a few milliseconds.
func latencyPlot(res *Results) (*plot.Plot, error) {
	var panels []*plot.Plot
	for si, sc := range res.Design.Scenarios {
		p := plot.New()
		style(p)
		p.Title.Text = fmt.Sprintf("%s (RTT %g ms)", sc.Name, sc.RTTms)
		p.Title.TextStyle.Font.Size = vg.Points(9.5)
		p.X.Label.Text = "Ths (ms), to the 90th percentile"
		p.X.Tick.Marker = plot.TickerFunc(thinTicks)
		if si == 0 {
			p.Y.Label.Text = "Cumulative fraction"
		}
		p.Y.Min, p.Y.Max = 0, 1
		g := plotter.NewGrid()
		g.Vertical.Color = nil
		p.Add(g)
		p.Legend.Top, p.Legend.Left = false, false
		p.Legend.XOffs, p.Legend.YOffs = -vg.Points(2), vg.Points(2)
		p.Legend.TextStyle.Font.Size = vg.Points(7.5)
		p.Legend.ThumbnailWidth = vg.Points(12)
		xmin, xmax := math.Inf(1), math.Inf(-1)
		for _, d := range res.Distributions {
			if d.Scenario != sc.Name {
				continue
			}
			xmin = math.Min(xmin, float64(d.QuantilesMs[0]))
			xmax = math.Max(xmax, float64(d.QuantilesMs[89])) // p90
			xy := make(plotter.XYs, 0, len(d.Probs))
			for i, q := range d.QuantilesMs {
				if f := float64(q); !math.IsNaN(f) {
					xy = append(xy, plotter.XY{X: f, Y: d.Probs[i]})
				}
			}
			if len(xy) == 0 {
				return nil, fmt.Errorf("%s %s: no latency quantiles", d.Scenario, d.Group)
			}
			l, err := plotter.NewLine(xy)
			if err != nil {
				return nil, err
			}
			l.Color = groupColor(res, d.Group)
			l.Width = vg.Points(1.4)
			if d.Group != res.Design.Groups[0] {
				l.Dashes = dashes[1]
			}
			p.Add(l)
			if si == len(res.Design.Scenarios)-1 {
				p.Legend.Add(d.Group, l)
			}
		}
		if xmax > xmin {
			pad := (xmax - xmin) * 0.05
			p.X.Min, p.X.Max = xmin-pad, xmax+pad
		}
		panels = append(panels, p)
	}
	outer := plot.New()
	outer.HideAxes()
	outer.Add(panelRow{panels: panels})
	return outer, nil
}

// panelRow draws plots side by side in the outer plot's data area.
type panelRow struct{ panels []*plot.Plot }

func (r panelRow) Plot(c draw.Canvas, _ *plot.Plot) {
	tiles := plot.Align([][]*plot.Plot{r.panels}, draw.Tiles{Rows: 1, Cols: len(r.panels), PadX: vg.Points(6)}, c)
	for i, p := range r.panels {
		p.Draw(tiles[0][i])
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
// scenario's RTT, one series per round with its 95 % bootstrap interval,
// and the published range of the differences as a shaded band.
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
	p.Y.Label.Text = fmt.Sprintf("Median Ths difference, %s - %s (ms)", res.Design.Groups[1], res.Design.Groups[0])
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
	pub := res.Published
	band, err := plotter.NewPolygon(plotter.XYs{{X: lo, Y: pub.DiffMsMin}, {X: hi, Y: pub.DiffMsMin}, {X: hi, Y: pub.DiffMsMax}, {X: lo, Y: pub.DiffMsMax}})
	if err != nil {
		return nil, err
	}
	band.Color = color.Gray{Y: 0xec}
	band.LineStyle.Width = 0
	p.Add(band)
	p.Legend.Add(fmt.Sprintf("published range, round %s", intPlain(pub.Round)), band)
	zero, _ := plotter.NewLine(plotter.XYs{{X: lo, Y: 0}, {X: hi, Y: 0}})
	zero.Color, zero.Width = greyColor, vg.Points(0.6)
	p.Add(zero)
	p.X.Min, p.X.Max = lo, hi

	shapes := []draw.GlyphDrawer{draw.CircleGlyph{}, draw.SquareGlyph{}, draw.TriangleGlyph{}, draw.RingGlyph{}, draw.BoxGlyph{}}
	greys := []color.Color{color.Gray{Y: 0x9a}, color.Gray{Y: 0x55}, color.Black}
	for ri, rd := range res.Design.Rounds {
		var pts plotter.XYs
		var errs plotter.YErrors
		// Spread the rounds sideways a little so the intervals do not overlap.
		shift := float64(ri) - float64(len(res.Design.Rounds)-1)/2
		for _, c := range res.Comparisons {
			if c.Round != rd {
				continue
			}
			x := c.RTTms
			if logX {
				x *= math.Pow(1.07, shift)
			} else {
				x += shift * (hi - lo) / 60
			}
			pts = append(pts, plotter.XY{X: x, Y: float64(c.DiffMs)})
			errs = append(errs, struct{ Low, High float64 }{float64(c.DiffMs - c.DiffLowerMs), float64(c.DiffUpperMs - c.DiffMs)})
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
		p.Legend.Add(fmt.Sprintf("round %s (95 %% bootstrap CI)", intPlain(rd)), sc)
	}
	return p, nil
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

func intPlain(n int) string {
	s := fmt.Sprint(n)
	out := ""
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			out += ","
		}
		out += string(c)
	}
	return out
}
