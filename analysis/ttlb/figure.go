package ttlb

import (
	"math"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"pqrepro/internal/render"
)

// Figure is the transfer block's figure (our extension): the hybrid's
// relative TTLB increase against the response size, one line per
// scenario.
const Figure = "figures/net-ttlb"

// figures renders Figure as PDF and SVG. The sizes are nominal
// categories in the order measured (0 is the handshake-only connection);
// each scenario is a line through the means over its replicates, with
// each replicate's (toolchain's) estimate as a point. The t intervals
// over two replicates (t = 12.71) would hide the figure's scale; the
// table has them. A run without the block draws an empty panel titled
// NotMeasuredPinned.
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
		var pts, reps plotter.XYs
		for xi, size := range sizes {
			c := t.cell(sc, size)
			if c == nil || math.IsNaN(float64(c.RelPct)) {
				continue
			}
			v := float64(c.RelPct)
			pts = append(pts, plotter.XY{X: float64(xi), Y: v})
			lo, hi = math.Min(lo, v), math.Max(hi, v)
			for _, r := range c.Replicates {
				if rv := float64(r.RelPct); !math.IsNaN(rv) {
					reps = append(reps, plotter.XY{X: float64(xi), Y: rv})
					lo, hi = math.Min(lo, rv), math.Max(hi, rv)
				}
			}
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
		s, err := plotter.NewScatter(reps)
		if err != nil {
			return nil, err
		}
		s.GlyphStyle = draw.GlyphStyle{Color: st.Color, Radius: vg.Points(2.2), Shape: st.Shape}
		p.Add(l, s)
		key = append(key, render.KeyEntry{Name: sc + ": mean over the toolchains (line), each toolchain (points)", Thumb: render.Thumb{Line: line, Glyph: s.GlyphStyle}})
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
