package render

import (
	"fmt"
	"image/color"
	"strconv"
	"strings"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// One style for every figure of the paper: the same fonts, sizes,
// palette, markers, ticks and key placement across the three studies.
//
// Colours are Okabe and Ito's palette ("Color Universal Design", 2008):
// distinguishable with the common colour-vision deficiencies. Series
// that must be told apart also differ by marker and line dash (see
// SeriesStyle), so that they survive greyscale printing.
var (
	Blue      = color.RGBA{0x00, 0x72, 0xB2, 0xff}
	Vermilion = color.RGBA{0xD5, 0x5E, 0x00, 0xff}
	Green     = color.RGBA{0x00, 0x9E, 0x73, 0xff}
	Purple    = color.RGBA{0xCC, 0x79, 0xA7, 0xff} // Okabe-Ito "reddish purple"
	SkyBlue   = color.RGBA{0x56, 0xB4, 0xE9, 0xff}
	Orange    = color.RGBA{0xE6, 0x9F, 0x00, 0xff}
	Grey      = color.RGBA{0x55, 0x55, 0x55, 0xff}
	LightGrey = color.RGBA{0x99, 0x99, 0x99, 0xff}
	GridGrey  = color.Gray{0xdd}
)

// Tint is c mixed with white: share 0 is c, share 1 white. Lighter bars
// of the same hue mark a second basis of one series.
func Tint(c color.RGBA, share float64) color.RGBA {
	mix := func(v uint8) uint8 { return uint8(float64(v) + share*(255-float64(v)) + 0.5) }
	return color.RGBA{mix(c.R), mix(c.G), mix(c.B), 0xff}
}

// A Series is how one data series of a figure is drawn. That is,
// colour, marker and line dash differ together, so no two series are
// told apart by colour alone.
type Series struct {
	Color color.RGBA
	// Shape is the filled marker, Hollow its outline (a published or
	// reference value of the same series).
	Shape, Hollow draw.GlyphDrawer
	Dashes        []vg.Length
}

// seriesStyles: blue, vermilion and reddish purple first, then bluish green
// and orange. The first three differ in hue and lightness for every common
// colour-vision deficiency, unlike blue and bluish green.
var seriesStyles = []Series{
	{Blue, draw.CircleGlyph{}, draw.RingGlyph{}, nil},
	{Vermilion, draw.BoxGlyph{}, draw.SquareGlyph{}, []vg.Length{vg.Points(5), vg.Points(2.5)}},
	{Purple, draw.PyramidGlyph{}, draw.TriangleGlyph{}, []vg.Length{vg.Points(1.5), vg.Points(1.8)}},
	{Green, draw.CircleGlyph{}, draw.RingGlyph{}, []vg.Length{vg.Points(5), vg.Points(2), vg.Points(1.5), vg.Points(2)}},
	{Orange, draw.BoxGlyph{}, draw.SquareGlyph{}, []vg.Length{vg.Points(8), vg.Points(3)}},
}

// SeriesStyle is the style of the i-th series of a figure.
func SeriesStyle(i int) Series { return seriesStyles[i%len(seriesStyles)] }

// Figure widths: the paper's text width (A4, 2.2 cm margins) and half of
// it. Figures are included in the paper at their natural size
// (\includegraphics without a width), so every font prints at the size
// set here; the layout tests read the paper's includes to check it.
const (
	TextWidth = 6.5 * vg.Inch
	HalfWidth = 3.2 * vg.Inch
)

// Font sizes in points at the printed size. MinFontSize is the smallest
// any figure may print (the layout tests enforce it).
const (
	TitleSize   = 9
	LabelSize   = 9
	TickSize    = 8
	LegendSize  = 8
	MinFontSize = 8
)

// NewPlot returns a plot in the paper's style. Figures carry no title:
// the caption says what the figure shows. A title is for the panels of
// a composite figure only (see Compose).
func NewPlot(title string) *plot.Plot {
	p := plot.New()
	Style(p)
	p.Title.Text = title
	return p
}

// Style applies the paper's fonts to p.
func Style(p *plot.Plot) {
	p.Title.TextStyle.Font.Size = vg.Points(TitleSize)
	p.Title.Padding = vg.Points(3)
	for _, a := range []*plot.Axis{&p.X, &p.Y} {
		a.Label.TextStyle.Font.Size = vg.Points(LabelSize)
		a.Tick.Label.Font.Size = vg.Points(TickSize)
	}
	p.Legend.TextStyle.Font.Size = vg.Points(LegendSize)
	p.Legend.Padding = vg.Points(2)
	p.Legend.ThumbnailWidth = vg.Points(14)
}

// A Figure is one plot with its output name (without extension) and page
// size. Panels, when set, are the sub-plots a composite figure draws (see
// Compose); the layout tests check each of them.
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
