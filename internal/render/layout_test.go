package render

import (
	"strings"
	"testing"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

func TestLayoutFindsOverlapAndClipping(t *testing.T) {
	p := NewPlot("a title")
	p.X.Scale = plot.LogScale{}
	// LogTicks labels every decade: on a narrow axis the labels run into
	// each other ("10000100000").
	p.X.Tick.Marker = plot.LogTicks{Prec: -1}
	l, _ := plotter.NewLine(plotter.XYs{{X: 0.1, Y: 0}, {X: 1e6, Y: 1}})
	l.Color = Blue
	p.Add(l)
	got := strings.Join(LayoutOf(p, 1.2*vg.Inch, 1*vg.Inch).Problems(), "\n")
	if !strings.Contains(got, "overlap") {
		t.Errorf("colliding tick labels not found:\n%s", got)
	}
	// The same plot with room to breathe has no problem.
	if got := LayoutOf(p, 6*vg.Inch, 2*vg.Inch).Problems(); len(got) != 0 {
		t.Errorf("wide plot: %v", got)
	}
	// A string that starts left of the page is clipped.
	clipped := Layout{W: 100, H: 50, Texts: []TextBox{{Text: "y label", Min: vg.Point{X: -3, Y: 10}, Max: vg.Point{X: 6, Y: 40}}}}
	if got := strings.Join(clipped.Problems(), "\n"); !strings.Contains(got, "off the page") {
		t.Errorf("clipped label not found: %q", got)
	}
}

func TestInkFill(t *testing.T) {
	p := NewPlot("")
	l, _ := plotter.NewLine(plotter.XYs{{X: 0, Y: 0}, {X: 1, Y: 1}})
	l.Color = Vermilion
	p.Add(l)
	x, y := LayoutOf(p, 3*vg.Inch, 2*vg.Inch).InkFill()
	if x < 0.7 || y < 0.7 {
		t.Errorf("a diagonal across the axes fills %.2f x %.2f", x, y)
	}
	// The same data in a corner of wide axes.
	p.X.Max, p.Y.Max = 10, 10
	x, y = LayoutOf(p, 3*vg.Inch, 2*vg.Inch).InkFill()
	if x > 0.2 || y > 0.2 {
		t.Errorf("data in a corner fill %.2f x %.2f", x, y)
	}
	// Grey marks (axes, grids) are not data.
	g := NewPlot("")
	gl, _ := plotter.NewLine(plotter.XYs{{X: 0, Y: 0}, {X: 1, Y: 1}})
	gl.Color = Grey
	g.Add(gl)
	if x, y := LayoutOf(g, 3*vg.Inch, 2*vg.Inch).InkFill(); x != 0 || y != 0 {
		t.Errorf("grey only: %.2f x %.2f", x, y)
	}
}

func TestThousands(t *testing.T) {
	for in, want := range map[float64]string{0.01: "0.01", 1: "1", 1000: "1,000", 100000: "100,000", -2500: "-2,500", 1234.5: "1,234.5"} {
		if got := Thousands(in); got != want {
			t.Errorf("Thousands(%v) = %q, want %q", in, got, want)
		}
	}
}
