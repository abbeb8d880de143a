package netstudy

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

// The two groups are render's first two series (blue solid circles for
// the baseline, vermilion dashed squares for the hybrid); the rounds of
// the difference figure are its series in order.
var (
	gridStyle  = draw.LineStyle{Color: render.GridGrey, Width: vg.Points(0.5)}
	greyColor  = color.Gray{Y: 0x70}
	pubColor   = color.Black
	pubDashes  = []vg.Length{vg.Points(4), vg.Points(2)}
	directions = [2]string{"client to server", "server to client"}
)

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
	lat, panels, err := latencyPlot(res)
	if err != nil {
		return nil, fmt.Errorf("figure %s: %w", FigureLatency, err)
	}
	diff, dpanels, err := diffPlot(res)
	if err != nil {
		return nil, fmt.Errorf("figure %s: %w", FigureDiffVsRTT, err)
	}
	bytes, bpanels, err := bytesPlot(res)
	if err != nil {
		return nil, fmt.Errorf("figure %s: %w", FigureBytes, err)
	}
	return []render.Figure{
		{Base: FigureLatency, Plot: lat, W: render.TextWidth, H: 3.6 * vg.Inch, Panels: panels},
		{Base: FigureDiffVsRTT, Plot: diff, W: render.TextWidth, H: 2.6 * vg.Inch, Panels: dpanels},
		{Base: FigureBytes, Plot: bytes, W: render.TextWidth, H: 2.3 * vg.Inch, Panels: bpanels},
	}, nil
}

func groupSeries(res *Results, g string) render.Series {
	if g == res.Design.Groups[0] {
		return render.SeriesStyle(0)
	}
	return render.SeriesStyle(1)
}

func horizontalGrid() *plotter.Grid {
	g := plotter.NewGrid()
	g.Vertical.Color = nil
	g.Horizontal = gridStyle
	return g
}

// latencyPlot draws the handshake latency of both groups in the largest
// round, one column per scenario with its own axes (the scenarios differ
// by factors, the groups by a fraction of a millisecond to a few
// milliseconds). The top row is the body of the distribution, the
// empirical CDF from the 1st to the 95th percentile on a linear axis; the
// bottom row is its tail, the fraction of handshakes slower than x from
// the 90th to the 99th percentile on a log axis, where retransmissions
// after a loss show up. One key above all panels.
func latencyPlot(res *Results) (*plot.Plot, []*plot.Plot, error) {
	var body, tail []*plot.Plot
	var key []render.KeyEntry
	for si, sc := range res.Design.Scenarios {
		b, t := render.NewPlot(fmt.Sprintf("%s (RTT %g ms)", sc.Name, sc.RTTms)), render.NewPlot("")
		b.X.Label.Text = "Ths (ms), p1 to p95"
		t.X.Label.Text = "Ths (ms), p90 to p99"
		b.X.Tick.Marker = render.LinearTicks{}
		t.X.Tick.Marker = render.LinearTicks{}
		if si == 0 {
			b.Y.Label.Text = "fraction <= x"
			t.Y.Label.Text = "fraction > x (log)"
		}
		b.Y.Min, b.Y.Max = 0, 1
		b.Y.Tick.Marker = render.LinearTicks{}
		t.Y.Scale = plot.LogScale{}
		t.Y.Min, t.Y.Max = 0.01, 0.1
		t.Y.Tick.Marker = render.LogTicks{}
		b.Add(horizontalGrid())
		t.Add(horizontalGrid())
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
			st := groupSeries(res, d.Group)
			for _, part := range []struct {
				p  *plot.Plot
				xy plotter.XYs
			}{{b, bodyXY}, {t, tailXY}} {
				l, err := plotter.NewLine(part.xy)
				if err != nil {
					return nil, nil, err
				}
				l.Color, l.Width, l.Dashes = st.Color, vg.Points(1.4), st.Dashes
				part.p.Add(l)
				if si == 0 && part.p == b {
					key = append(key, render.KeyEntry{Name: d.Group, Thumb: l})
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
	return render.Compose([][]*plot.Plot{body, tail}, key, 0), append(body, tail...), nil
}

// diffPlot draws, for each scenario in a panel of its own (their
// differences are a few hundredths of a millisecond apart within a
// scenario and milliseconds apart between them, so a common axis would
// hide every interval), the median difference (target - baseline) of
// each round with its 95 % bootstrap interval, and the published values
// where they belong: the smallest difference at the fastest scenario, the
// largest at the slowest, both in the published round.
func diffPlot(res *Results) (*plot.Plot, []*plot.Plot, error) {
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
	rounds := make([]string, len(res.Design.Rounds))
	for i, rd := range res.Design.Rounds {
		rounds[i] = intPlain(rd)
	}
	var panels []*plot.Plot
	var key []render.KeyEntry
	pubThumb := render.Thumb{Line: draw.LineStyle{Color: pubColor, Width: vg.Points(1), Dashes: pubDashes}}
	for si, sc := range res.Design.Scenarios {
		p := render.NewPlot(fmt.Sprintf("%s (RTT %g ms)", sc.Name, sc.RTTms))
		p.X.Label.Text = "round (handshakes per group)"
		if si == 0 {
			p.Y.Label.Text = "median Ths difference (ms)"
		}
		p.Add(horizontalGrid())
		lo, hi := math.Inf(1), math.Inf(-1)
		var pts plotter.XYs
		var errs plotter.YErrors
		for ri, rd := range res.Design.Rounds {
			for _, c := range res.Comparisons {
				if c.Round != rd || c.Scenario != sc.Name {
					continue
				}
				d := float64(c.DiffMs)
				pts = append(pts, plotter.XY{X: float64(ri), Y: d})
				errs = append(errs, errBar(c.DiffMs, c.DiffLowerMs, c.DiffUpperMs))
				lo, hi = math.Min(lo, nanTo(float64(c.DiffLowerMs), d)), math.Max(hi, nanTo(float64(c.DiffUpperMs), d))
			}
		}
		if len(pts) == 0 {
			return nil, nil, fmt.Errorf("scenario %s: no comparisons", sc.Name)
		}
		st := render.SeriesStyle(1)
		eb := &plotter.YErrorBars{XYs: pts, YErrors: errs, LineStyle: draw.LineStyle{Color: st.Color, Width: vg.Points(1.2)}, CapWidth: vg.Points(8)}
		sc2, err := plotter.NewScatter(pts)
		if err != nil {
			return nil, nil, err
		}
		sc2.GlyphStyle = draw.GlyphStyle{Color: st.Color, Radius: vg.Points(2.2), Shape: st.Shape}
		p.Add(eb, sc2)
		// The scenario over its rounds (mean and Student t interval over
		// the series: the interval at the top level of the design), right
		// of the rounds.
		top := render.SeriesStyle(0)
		topGlyph := draw.GlyphStyle{Color: top.Color, Radius: vg.Points(2.6), Shape: top.Shape}
		for _, e := range res.Scenarios {
			if e.Scenario != sc.Name || math.IsNaN(float64(e.MeanMs)) {
				continue
			}
			m := float64(e.MeanMs)
			tp := plotter.XYs{{X: float64(len(rounds)), Y: m}}
			teb := &plotter.YErrorBars{XYs: tp, YErrors: plotter.YErrors{errBar(e.MeanMs, e.LowerMs, e.UpperMs)},
				LineStyle: draw.LineStyle{Color: top.Color, Width: vg.Points(1.2)}, CapWidth: vg.Points(8)}
			tsc, err := plotter.NewScatter(tp)
			if err != nil {
				return nil, nil, err
			}
			tsc.GlyphStyle = topGlyph
			p.Add(teb, tsc)
			lo, hi = math.Min(lo, nanTo(float64(e.LowerMs), m)), math.Max(hi, nanTo(float64(e.UpperMs), m))
		}
		if si == 0 {
			key = append(key, render.KeyEntry{Name: fmt.Sprintf("ours: median difference %s - %s per round, 95 %% block bootstrap CI", res.Design.Groups[1], res.Design.Groups[0]), Thumb: render.Thumb{
				Line: draw.LineStyle{Color: st.Color, Width: vg.Points(1.2)}, Glyph: sc2.GlyphStyle}})
			key = append(key, render.KeyEntry{Name: "the scenario over its rounds: mean, 95 % t CI", Thumb: render.Thumb{
				Line: draw.LineStyle{Color: top.Color, Width: vg.Points(1.2)}, Glyph: topGlyph}})
		}
		var pv float64
		hasPub := false
		switch sc.Name {
		case fast.Name:
			pv, hasPub = pub.DiffMsMin, true
		case slow.Name:
			pv, hasPub = pub.DiffMsMax, true
		}
		if hasPub && !math.IsNaN(pv) {
			l, err := plotter.NewLine(plotter.XYs{{X: -0.5, Y: pv}, {X: float64(len(rounds)) + 0.5, Y: pv}})
			if err != nil {
				return nil, nil, err
			}
			l.LineStyle = pubThumb.Line
			p.Add(l)
			lo, hi = math.Min(lo, pv), math.Max(hi, pv)
		}
		span := math.Max(hi-lo, 1e-3)
		p.Y.Min, p.Y.Max = lo-0.1*span, hi+0.1*span
		p.Y.Tick.Marker = render.LinearTicks{}
		p.NominalX(append(slices.Clone(rounds), "all")...)
		p.X.Min, p.X.Max = -0.5, float64(len(rounds))+0.5
		panels = append(panels, p)
	}
	key = append(key, render.KeyEntry{Name: fmt.Sprintf("published, round %s: smallest %s ms (at %s), largest %s ms (at %s)",
		intPlain(pub.Round), render.Fixed(pub.DiffMsMin, 3), fast.Name, render.Fixed(pub.DiffMsMax, 3), slow.Name), Thumb: pubThumb})
	return render.Compose([][]*plot.Plot{panels}, key, 0), panels, nil
}

// bytesPlot draws what Table 7 does not: where the bytes of a
// connection go. For each group and byte basis (IP frame, TCP payload),
// a bar split into client-to-server and server-to-client medians, in
// the fastest scenario of the largest round (bytes do not depend on the
// scenario: Table 7); the published growth (+min to +max %), applied to
// our baseline's total, is the grey band on each hybrid bar.
func bytesPlot(res *Results) (*plot.Plot, []*plot.Plot, error) {
	fast := res.Design.Scenarios[0]
	for _, s := range res.Design.Scenarios {
		if s.RTTms < fast.RTTms {
			fast = s
		}
	}
	round := res.Reproduced.Round
	find := func(g string) *Series {
		for i := range res.Series {
			s := &res.Series[i]
			if s.Scenario == fast.Name && s.Round == round && s.Group == g {
				return s
			}
		}
		return nil
	}
	g0, g1 := res.Design.Groups[0], res.Design.Groups[1]
	base, target := find(g0), find(g1)
	if base == nil || target == nil {
		return nil, nil, fmt.Errorf("no %s series of round %d for both groups", fast.Name, round)
	}
	// Rows top to bottom: frame base, frame target, payload base, payload target.
	type row struct {
		label    string
		c2s, s2c float64
		band     [2]float64 // published growth on the baseline's total; zero: none
	}
	pubBand := func(b *Series, payload bool) [2]float64 {
		t := float64(b.FrameC2S + b.FrameS2C)
		if payload {
			t = float64(b.PayloadC2S + b.PayloadS2C)
		}
		return [2]float64{t * (1 + res.Published.VolumeGrowthMinPct/100), t * (1 + res.Published.VolumeGrowthMaxPct/100)}
	}
	rows := []row{
		{g0 + ", IP frame", float64(base.FrameC2S), float64(base.FrameS2C), [2]float64{}},
		{g1 + ", IP frame", float64(target.FrameC2S), float64(target.FrameS2C), pubBand(base, false)},
		{g0 + ", TCP payload", float64(base.PayloadC2S), float64(base.PayloadS2C), [2]float64{}},
		{g1 + ", TCP payload", float64(target.PayloadC2S), float64(target.PayloadS2C), pubBand(base, true)},
	}
	p := render.NewPlot("")
	p.X.Label.Text = fmt.Sprintf("bytes per connection (medians per direction; %s, round %s)", fast.Name, intPlain(round))
	n := len(rows)
	names := make([]string, n)
	c2s, s2c := make(plotter.Values, n), make(plotter.Values, n)
	var labels plotter.XYLabels
	hi := 0.0
	bandFill := color.Gray{Y: 0xc8}
	var bands []plot.Plotter
	for i, r := range rows {
		y := n - 1 - i
		for _, v := range []float64{r.c2s, r.s2c} {
			if !(v >= 0 && v < 1e12) {
				return nil, nil, fmt.Errorf("%s: median bytes %v out of range", r.label, v)
			}
		}
		names[y] = r.label
		c2s[y], s2c[y] = r.c2s, r.s2c
		tot := r.c2s + r.s2c
		labels.XYs = append(labels.XYs, plotter.XY{X: math.Max(tot, r.band[1]), Y: float64(y)})
		labels.Labels = append(labels.Labels, strconv.FormatFloat(tot, 'f', 0, 64))
		hi = math.Max(hi, math.Max(tot, r.band[1]))
		if r.band[1] > 0 {
			b, err := plotter.NewPolygon(plotter.XYs{{X: r.band[0], Y: float64(y) - 0.38}, {X: r.band[1], Y: float64(y) - 0.38},
				{X: r.band[1], Y: float64(y) + 0.38}, {X: r.band[0], Y: float64(y) + 0.38}})
			if err != nil {
				return nil, nil, err
			}
			b.Color = bandFill
			b.LineStyle = draw.LineStyle{Color: color.Black, Width: vg.Points(0.6)}
			bands = append(bands, b)
		}
	}
	width := vg.Points(14)
	bc, err := plotter.NewBarChart(c2s, width)
	if err != nil {
		return nil, nil, err
	}
	bs, err := plotter.NewBarChart(s2c, width)
	if err != nil {
		return nil, nil, err
	}
	for _, b := range []*plotter.BarChart{bc, bs} {
		b.Horizontal = true
		b.LineStyle.Width = 0
	}
	bc.Color, bs.Color = render.Blue, render.Vermilion
	bs.StackOn(bc)
	lb, err := plotter.NewLabels(labels)
	if err != nil {
		return nil, nil, err
	}
	for i := range lb.TextStyle {
		lb.TextStyle[i].Font.Size = vg.Points(render.TickSize)
		lb.TextStyle[i].YAlign = draw.YCenter
	}
	lb.Offset = vg.Point{X: vg.Points(4)}
	vg0 := plotter.NewGrid()
	vg0.Horizontal.Color = nil
	vg0.Vertical = gridStyle
	p.Add(vg0)
	p.Add(bands...)
	p.Add(bc, bs, lb)
	// The bars over the band's fill, the band's outline over the bars.
	for _, b := range bands {
		pg := *b.(*plotter.Polygon)
		pg.Color = nil
		p.Add(&pg)
	}
	p.NominalY(names...)
	p.Y.Min, p.Y.Max = -0.6, float64(n)-0.4
	p.X.Min, p.X.Max = 0, hi*1.1
	p.X.Tick.Marker = render.LinearTicks{}
	key := []render.KeyEntry{{Name: directions[0], Thumb: bc}, {Name: directions[1], Thumb: bs},
		{Name: fmt.Sprintf("published growth, +%g to +%g %%, on our %s", res.Published.VolumeGrowthMinPct, res.Published.VolumeGrowthMaxPct, g0),
			Thumb: render.Thumb{Fill: bandFill, Line: draw.LineStyle{Color: color.Black, Width: vg.Points(0.6)}}},
		{Name: "number: total bytes (sum of the direction medians)"}}
	return render.Compose([][]*plot.Plot{{p}}, key, 2), []*plot.Plot{p}, nil
}

func intPlain(n int) string { return render.GroupDigits(strconv.Itoa(n), ",") }

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
