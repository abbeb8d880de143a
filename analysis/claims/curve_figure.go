package claims

import (
	"fmt"
	"image/color"
	"time"

	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"pqrepro/internal/render"
	"pqrepro/internal/repro"
)

// CurveFigure is the specification curve figure's path without extension.
const CurveFigure = "figures/claims-curve"

// curveFigureClaims are the curves the figure shows: the fragile ones.
func curveFigureClaims(rep CurveReport) []Curve {
	var out []Curve
	for _, c := range rep.Curves {
		if c.Label == Fragile {
			out = append(out, c)
		}
	}
	return out
}

// writeCurveFigure draws each fragile claim's specification curve: one
// row per claim, one mark per specification (the stated one first),
// a dot where the claim holds and a cross where it fails. Dated at the
// rules' registration, so that the PDF is deterministic.
func writeCurveFigure(env *repro.Env, rep CurveReport, date time.Time) error {
	cs := curveFigureClaims(rep)
	p := render.NewPlot("")
	p.X.Label.Text = "specification (1 = stated; then cells, Ths definitions, repeat runs, first rule)"
	p.Y.Label.Text = ""
	var names []string
	holds, fails := plotter.XYs{}, plotter.XYs{}
	maxN := 1
	for i, c := range cs {
		names = append(names, fmt.Sprintf("%s (%d of %d)", c.ID, c.K, c.N))
		y := float64(i)
		pt := func(x int, ok bool) {
			if ok {
				holds = append(holds, plotter.XY{X: float64(x), Y: y})
			} else {
				fails = append(fails, plotter.XY{X: float64(x), Y: y})
			}
		}
		pt(1, c.Stated == Reproduced)
		for j, s := range c.Alternatives {
			pt(j+2, s.Holds())
		}
		maxN = max(maxN, c.N)
	}
	if len(names) == 0 {
		names = []string{"no fragile claim"}
	}
	p.NominalY(names...)
	p.X.Min, p.X.Max = 0, float64(maxN)+1
	p.Y.Min, p.Y.Max = -0.7, float64(len(names))-0.3
	p.Add(plotter.NewGrid())
	if len(holds) > 0 {
		s, err := plotter.NewScatter(holds)
		if err != nil {
			return err
		}
		s.GlyphStyle = draw.GlyphStyle{Color: render.SeriesStyle(0).Color, Radius: vg.Points(3.5), Shape: draw.CircleGlyph{}}
		p.Add(s)
	}
	if len(fails) > 0 {
		s, err := plotter.NewScatter(fails)
		if err != nil {
			return err
		}
		s.GlyphStyle = draw.GlyphStyle{Color: color.RGBA{0xD5, 0x5E, 0x00, 0xff}, Radius: vg.Points(3.5), Shape: draw.CrossGlyph{}}
		p.Add(s)
	}
	w, h := vg.Points(420), vg.Points(60+22*float64(len(names)))
	pdf, err := render.PDF(p, w, h, date)
	if err != nil {
		return err
	}
	svg, err := render.SVG(p, w, h)
	if err != nil {
		return err
	}
	if err := env.WriteFile(CurveFigure+".pdf", pdf); err != nil {
		return err
	}
	return env.WriteFile(CurveFigure+".svg", svg)
}
