package render

import (
	"fmt"
	"image/color"
	"strconv"
	"strings"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
)

// One style for every figure of the paper: the same fonts, sizes and
// palette across the three studies.
//
// Colours are Okabe and Ito's palette ("Color Universal Design", 2008):
// distinguishable with the common colour-vision deficiencies and, by
// their lightness, in greyscale.
var (
	Blue      = color.RGBA{0x00, 0x72, 0xB2, 0xff}
	Vermilion = color.RGBA{0xD5, 0x5E, 0x00, 0xff}
	Green     = color.RGBA{0x00, 0x9E, 0x73, 0xff}
	SkyBlue   = color.RGBA{0x56, 0xB4, 0xE9, 0xff}
	Orange    = color.RGBA{0xE6, 0x9F, 0x00, 0xff}
	Grey      = color.RGBA{0x55, 0x55, 0x55, 0xff}
	LightGrey = color.RGBA{0x99, 0x99, 0x99, 0xff}
	GridGrey  = color.Gray{0xdd}
)

// Figure widths: the paper's text width (A4, 2.2 cm margins) and half of
// it, so that a figure is printed at its natural size and every font is
// the size set here.
const (
	TextWidth = 6.5 * vg.Inch
	HalfWidth = 3.2 * vg.Inch
)

// Font sizes in points.
const (
	TitleSize  = 9
	LabelSize  = 8.5
	TickSize   = 7.5
	LegendSize = 7.5
)

// NewPlot returns a plot in the paper's style.
func NewPlot(title string) *plot.Plot {
	p := plot.New()
	Style(p)
	p.Title.Text = title
	return p
}

// Style applies the paper's fonts to p.
func Style(p *plot.Plot) {
	p.Title.TextStyle.Font.Size = vg.Points(TitleSize)
	for _, a := range []*plot.Axis{&p.X, &p.Y} {
		a.Label.TextStyle.Font.Size = vg.Points(LabelSize)
		a.Tick.Label.Font.Size = vg.Points(TickSize)
	}
	p.Legend.TextStyle.Font.Size = vg.Points(LegendSize)
	p.Legend.Padding = vg.Points(2)
	p.Legend.ThumbnailWidth = vg.Points(14)
}

// A Figure is one plot with its output name (without extension) and page
// size. Panels, when set, are the sub-plots a composite figure draws; the
// layout tests check each of them.
type Figure struct {
	Base   string
	Plot   *plot.Plot
	W, H   vg.Length
	Panels []*plot.Plot
}

// Files renders every figure as PDF (dated date) and SVG, keyed by output
// path (Base + ".pdf", Base + ".svg").
func Files(figs []Figure, date time.Time) (map[string][]byte, error) {
	out := map[string][]byte{}
	for _, f := range figs {
		pdf, err := PDF(f.Plot, f.W, f.H, date)
		if err != nil {
			return nil, fmt.Errorf("figure %s: %w", f.Base, err)
		}
		svg, err := SVG(f.Plot, f.W, f.H)
		if err != nil {
			return nil, fmt.Errorf("figure %s: %w", f.Base, err)
		}
		out[f.Base+".pdf"], out[f.Base+".svg"] = pdf, svg
	}
	return out, nil
}

// Thousands formats a tick value with the fewest digits it needs and a
// comma between thousands: 0.01, 1, 1,000, 100,000.
func Thousands(v float64) string {
	intPart, frac, hasFrac := strings.Cut(strconv.FormatFloat(v, 'f', -1, 64), ".")
	out := GroupDigits(intPart, ",")
	if hasFrac {
		out += "." + frac
	}
	return out
}

// GroupDigits puts sep between every three digits of an integer written
// in decimal ("-12345", ",") -> "-12,345"; LaTeX tables pass "{,}".
func GroupDigits(s, sep string) string {
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	if neg {
		b.WriteByte('-')
	}
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteString(sep)
		}
		b.WriteRune(c)
	}
	return b.String()
}
