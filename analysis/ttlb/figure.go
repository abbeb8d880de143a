package ttlb

import (
	"math"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"pqrepro/internal/jsonnum"
	"pqrepro/internal/render"
)

// Figure is the transfer block's figure (our extension): the hybrid's
// relative TTLB increase against the response size, one line per
// scenario.
const Figure = "figures/net-ttlb"

// figures renders Figure as PDF and SVG. The sizes are nominal
// categories in the order measured (0 is the handshake-only connection);
// each scenario is a line with its 95 % block bootstrap intervals. A run
// without the block draws an empty panel titled NotMeasuredPinned.
func figures(t *Results, date time.Time) (map[string][]byte, error) {
	title := "our extension: hybrid's TTLB increase by response size"
	if !t.Measured {
		title = NotMeasuredPinned
	}
	p := render.NewPlot(title)
	p.X.Label.Text = "response size (0: handshake only)"
	p.Y.Label.Text = "TTLB increase, hybrid over X25519 (%)"
	grid := plotter.NewGrid()
	grid.Vertical.Color = nil
	grid.Horizontal = draw.LineStyle{Color: render.GridGrey, Width: vg.Points(0.5)}
	p.Add(grid)
	var sizes []int
	for _, c := range t.Cells {
		if c.Scenario == t.Fastest {
			sizes = append(sizes, c.SizeBytes)
		}
	}
	var key []render.KeyEntry
	lo, hi := 0.0, 1.0
	for si, sc := range t.Scenarios {
		st := render.SeriesStyle(si)
		var pts plotter.XYs
		var errs plotter.YErrors
		for xi, size := range sizes {
			c := t.cell(sc, size)
			if c == nil || math.IsNaN(float64(c.RelPct)) {
				continue
			}
			v := float64(c.RelPct)
			pts = append(pts, plotter.XY{X: float64(xi), Y: v})
			errs = append(errs, errBar(c.RelPct, c.RelLowerPct, c.RelUpperPct))
			lo, hi = math.Min(lo, nanTo(float64(c.RelLowerPct), v)), math.Max(hi, nanTo(float64(c.RelUpperPct), v))
		}
		if len(pts) == 0 {
			continue
		}
		line := draw.LineStyle{Color: st.Color, Width: vg.Points(1.2), Dashes: st.Dashes}
		l, err := plotter.NewLine(pts)
		if err != nil {
			return nil, err
		}
		l.LineStyle = line
		eb := &plotter.YErrorBars{XYs: pts, YErrors: errs, LineStyle: draw.LineStyle{Color: st.Color, Width: vg.Points(1)}, CapWidth: vg.Points(6)}
		s, err := plotter.NewScatter(pts)
		if err != nil {
			return nil, err
		}
		s.GlyphStyle = draw.GlyphStyle{Color: st.Color, Radius: vg.Points(2.2), Shape: st.Shape}
		p.Add(l, eb, s)
		key = append(key, render.KeyEntry{Name: sc + ": median increase, 95 % block bootstrap CI", Thumb: render.Thumb{Line: line, Glyph: s.GlyphStyle}})
	}
	names := make([]string, len(sizes))
	for i, s := range sizes {
		names[i] = sizeLabel(s)
	}
	if len(names) == 0 {
		names = []string{"0"}
	}
	p.NominalX(names...)
	p.X.Min, p.X.Max = -0.5, float64(len(names))-0.5
	span := math.Max(hi-lo, 1)
	p.Y.Min, p.Y.Max = lo-0.05*span, hi+0.05*span
	p.Y.Tick.Marker = render.LinearTicks{}
	fig := render.Figure{Base: Figure, Plot: render.Compose([][]*plot.Plot{{p}}, key, 1), W: render.TextWidth, H: 2.8 * vg.Inch, Panels: []*plot.Plot{p}}
	return render.Files([]render.Figure{fig}, date)
}

// errBar is the error bar of estimate m with interval [lo, hi]; none
// (zero) where the interval is missing.
func errBar(m, lo, hi jsonnum.Num) struct{ Low, High float64 } {
	return struct{ Low, High float64 }{nanTo(float64(m-lo), 0), nanTo(float64(hi-m), 0)}
}

// nanTo returns v, or def when v is NaN.
func nanTo(v, def float64) float64 {
	if math.IsNaN(v) {
		return def
	}
	return v
}
