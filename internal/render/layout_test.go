package render

import (
	"image/color"
	"math"
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
	got := strings.Join(LayoutOf(p, 1.2*vg.Inch, 1*vg.Inch).Problems(1), "\n")
	if !strings.Contains(got, "overlap") {
		t.Errorf("colliding tick labels not found:\n%s", got)
	}
	// The same plot with room to breathe has no problem.
	if got := LayoutOf(p, 6*vg.Inch, 2*vg.Inch).Problems(1); len(got) != 0 {
		t.Errorf("wide plot: %v", got)
	}
	// A string that starts left of the page is clipped.
	clipped := Layout{W: 100, H: 50, Texts: []TextBox{{Text: "y label", Min: vg.Point{X: -3, Y: 10}, Max: vg.Point{X: 6, Y: 40}}}}
	if got := strings.Join(clipped.Problems(1), "\n"); !strings.Contains(got, "off the page") {
		t.Errorf("clipped label not found: %q", got)
	}
}

// diagonal is a plot of one line from (0, 0) to (1, 1) in colour c.
func diagonal(c color.Color) (*plot.Plot, *plotter.Line) {
	p := NewPlot("")
	l, _ := plotter.NewLine(plotter.XYs{{X: 0, Y: 0}, {X: 1, Y: 1}})
	l.Color = c
	p.Add(l)
	return p, l
}

func TestInkFill(t *testing.T) {
	p, _ := diagonal(Vermilion)
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

func TestPrintScale(t *testing.T) {
	tex := `\includegraphics[width=0.6\linewidth]{figures/net-diff.pdf}
\includegraphics{figures/tls-gap.pdf}
\includegraphics[width=\linewidth]{figures/pico-ops}`
	for _, tc := range []struct {
		base string
		w    vg.Length
		want float64
	}{
		{"figures/net-diff", TextWidth, 0.6},
		{"figures/tls-gap", TextWidth, 1},
		{"pico-ops", TextWidth / 2, 2},
		{"figures/absent", TextWidth, 1},
	} {
		if got := PrintScale(tex, tc.base, tc.w); math.Abs(got-tc.want) > 1e-9 {
			t.Errorf("%s: scale %v, want %v", tc.base, got, tc.want)
		}
	}
	// A figure printed at 0.6 of its size has 8 pt fonts at 4.8 pt.
	p, _ := diagonal(Blue)
	if got := strings.Join(LayoutOf(p, 3*vg.Inch, 2*vg.Inch).Problems(0.6), "\n"); !strings.Contains(got, "font 4.8 pt printed") {
		t.Errorf("small print not found: %q", got)
	}
}

func TestKeyNeverOnData(t *testing.T) {
	p, l := diagonal(Blue)
	p.Add(plotter.NewGrid())
	f := Compose([][]*plot.Plot{{p}}, []KeyEntry{{Name: "ours", Thumb: l}, {Name: "a note"}}, 0)
	lay := LayoutOf(f, 4*vg.Inch, 3*vg.Inch)
	if !lay.Keyed {
		t.Fatal("the key was not recorded")
	}
	if got := lay.Problems(1); len(got) != 0 {
		t.Errorf("composed figure: %v", got)
	}
	// gonum's own legend, in the data area, sits on the gridlines: a key
	// recorded there is flagged.
	bad := lay
	bad.Key = vg.Rectangle{Min: vg.Point{X: 100, Y: 100}, Max: vg.Point{X: 160, Y: 120}}
	if got := strings.Join(bad.Problems(1), "\n"); !strings.Contains(got, "key") {
		t.Errorf("key on the data not found: %q", got)
	}
}

func TestAxisTicksChecked(t *testing.T) {
	p, _ := diagonal(Blue)
	p.Y.Tick.Marker = plot.ConstantTicks{{Value: 0, Label: "0"}, {Value: 0.5, Label: "0.5"}, {Value: 1, Label: "1"}}
	p.X.Tick.Marker = LinearTicks{}
	got := strings.Join(CheckFigures([]Figure{{Base: "f", Plot: p, W: 4 * vg.Inch, H: 3 * vg.Inch}}, 0, func(Figure) float64 { return 1 }), "\n")
	if !strings.Contains(got, "y axis has 3 labelled ticks") || strings.Contains(got, "x axis") {
		t.Errorf("tick check: %q", got)
	}
	// gonum's own legend is drawn in the data area: refused.
	q, l := diagonal(Blue)
	q.X.Tick.Marker, q.Y.Tick.Marker = LinearTicks{}, LinearTicks{}
	q.Legend.Add("ours", l)
	if got := strings.Join(CheckFigures([]Figure{{Base: "f", Plot: q, W: 4 * vg.Inch, H: 3 * vg.Inch}}, 0, func(Figure) float64 { return 1 }), "\n"); !strings.Contains(got, "gonum's legend") {
		t.Errorf("in-plot legend not found: %q", got)
	}
	// A categorical axis (NominalX) is not counted.
	p.NominalX("a", "b")
	p.Y.Tick.Marker = LinearTicks{}
	if got := CheckFigures([]Figure{{Base: "f", Plot: p, W: 4 * vg.Inch, H: 3 * vg.Inch}}, 0, func(Figure) float64 { return 1 }); len(got) != 0 {
		t.Errorf("nominal axis: %v", got)
	}
}
