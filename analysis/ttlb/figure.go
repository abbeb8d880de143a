package ttlb

import (
	"math"
	"strings"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"pqrepro/internal/render"
)

// Figure is the transfer block's figure (our extension): the hybrid's
// relative TTLB increase against the response size, one line per
// scenario and congestion control.
const Figure = "figures/net-ttlb"

// figures renders Figure as PDF and SVG. The sizes are nominal
// categories in the order measured (0 is the handshake-only connection).
// A run that set congestion controls draws one line per scenario and
// control (Results.ByCC: colour and glyph by scenario, solid for the
// first control in name order, dashed for the others) through the means
// over its toolchains, each toolchain's estimate a point; a run without
// draws one line per scenario (Results.Cells). The t intervals over two
// replicates (t = 12.71) would hide the figure's scale; the table has
// them. A run without the block draws an empty panel titled
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
	ccs := t.ccs()
	if len(ccs) == 0 {
		ccs = []string{""}
	}
	var key []render.KeyEntry
	lo, hi := 0.0, 1.0
	for si, sc := range t.Scenarios {
		st := render.SeriesStyle(si)
		for ci, cc := range ccs {
			var pts, reps plotter.XYs
			for xi, size := range sizes {
				c := t.cell(sc, size)
				if cc != "" {
					c = t.ccCell(sc, size, cc)
				}
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
			name := sc
			if cc != "" {
				line.Dashes = nil
				if ci > 0 {
					line.Dashes = []vg.Length{vg.Points(5), vg.Points(2.5)}
				}
				name = sc + ", " + ccLabel(cc)
			}
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
			key = append(key, render.KeyEntry{Name: name, Thumb: render.Thumb{Line: line, Glyph: s.GlyphStyle}})
		}
	}
	names := make([]string, len(sizes))
	for i, s := range sizes {
		names[i] = SizeLabel(s)
	}
	if len(names) == 0 {
		names = []string{"0"}
	}
	p.NominalX(names...)
	p.X.Min, p.X.Max = -0.5, float64(len(names))-0.5
	span := math.Max(hi-lo, 1)
	p.Y.Min, p.Y.Max = lo-0.05*span, hi+0.05*span
	p.Y.Tick.Marker = render.LinearTicks{}
	cols := 1
	if len(key) > 3 {
		cols = 3
	}
	fig := render.Figure{Base: Figure, Plot: render.Compose([][]*plot.Plot{{p}}, key, cols), W: render.TextWidth, H: 3.3 * vg.Inch, Panels: []*plot.Plot{p}}
	return render.Files([]render.Figure{fig}, date)
}

// ccLabel is a congestion control's name as the paper writes it: CUBIC,
// BBR, or the kernel's name for another.
func ccLabel(cc string) string {
	switch cc {
	case "cubic", "bbr", "reno":
		return strings.ToUpper(cc)
	}
	return cc
}
