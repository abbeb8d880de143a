package render

import (
	"fmt"
	"image"
	"image/color"
	"math"
	"path"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/vg"
)

// A TextBox is one string a figure draws, with the axis-aligned box it
// covers on the page (points, origin bottom left, after every transform).
type TextBox struct {
	Text string
	Min  vg.Point
	Max  vg.Point
	// Size is the font size in points at the figure's own size.
	Size float64
	// Key is set for the strings of the figure's key (Compose).
	Key bool
}

func (b TextBox) String() string {
	return fmt.Sprintf("%q at (%.1f,%.1f)-(%.1f,%.1f)", b.Text, b.Min.X.Points(), b.Min.Y.Points(), b.Max.X.Points(), b.Max.Y.Points())
}

// overlaps reports whether two boxes share more than slack on both axes.
func (b TextBox) overlaps(o TextBox, slack vg.Length) bool {
	return b.Min.X+slack < o.Max.X && o.Min.X+slack < b.Max.X &&
		b.Min.Y+slack < o.Max.Y && o.Min.Y+slack < b.Max.Y
}

// Layout is what a figure puts on its page: every string drawn and the
// page size.
type Layout struct {
	W, H  vg.Length
	Texts []TextBox
	// Ink is the box around every coloured mark (see InkFill).
	Ink vg.Rectangle
	// Key is the box around the key's marks and strings (Keyed tells
	// whether there is one); Marks the box of every other stroke and fill
	// that is not white (data, gridlines, axes).
	Key   vg.Rectangle
	Keyed bool
	Marks []vg.Rectangle
}

// LayoutOf draws p at the given size on a recording canvas and returns
// where every string landed. It is the figure as the PDF and SVG show it,
// without rasterising: tests use it to check legibility.
func LayoutOf(p *plot.Plot, w, h vg.Length) Layout {
	rec := &recorder{w: w, h: h, m: identity}
	p.Draw(drawCanvas(rec))
	return Layout{W: w, H: h, Texts: rec.texts, Ink: rec.ink, Key: rec.key, Keyed: rec.keyed, Marks: rec.marks}
}

// Problems lists what makes a figure hard to read. That is, two strings
// that overlap by more than half a point, a string that runs off the
// page or within half a point of its edge (a clipped label), a string
// smaller than MinFontSize once the figure is printed at scale (the
// paper's width over the figure's), and a key drawn over data, a
// gridline or an axis. Empty strings are ignored.
func (l Layout) Problems(scale float64) []string {
	const slack = 0.5
	var out []string
	if l.Keyed {
		for _, m := range l.Marks {
			if rectsOverlap(l.Key, m, slack) {
				out = append(out, fmt.Sprintf("key (%.1f,%.1f)-(%.1f,%.1f) drawn over a mark at (%.1f,%.1f)-(%.1f,%.1f)",
					l.Key.Min.X.Points(), l.Key.Min.Y.Points(), l.Key.Max.X.Points(), l.Key.Max.Y.Points(),
					m.Min.X.Points(), m.Min.Y.Points(), m.Max.X.Points(), m.Max.Y.Points()))
				break
			}
		}
	}
	for i, a := range l.Texts {
		if a.Size*scale < MinFontSize-1e-9 {
			out = append(out, fmt.Sprintf("font %.1f pt printed (under %d pt): %s", a.Size*scale, MinFontSize, a))
		}
		// Text must keep half a point from the edge: a glyph that touches
		// it is cut by rasterisers.
		if a.Min.X < slack || a.Min.Y < slack || a.Max.X > l.W-slack || a.Max.Y > l.H-slack {
			out = append(out, "off the page: "+a.String())
		}
		for _, b := range l.Texts[i+1:] {
			if a.overlaps(b, slack) {
				out = append(out, "overlap: "+a.String()+" and "+b.String())
			}
		}
	}
	return out
}

// InkFill returns the share of the page's width and height that the
// coloured marks span.
//
// The marks are data and keys; greys and black, which draw axes, grids
// and text, do not count. A figure whose data sit in a corner of the
// page wastes its space.
func (l Layout) InkFill() (x, y float64) {
	if l.Ink.Max.X <= l.Ink.Min.X || l.W <= 0 || l.H <= 0 {
		return 0, 0
	}
	return float64((l.Ink.Max.X - l.Ink.Min.X) / l.W), float64((l.Ink.Max.Y - l.Ink.Min.Y) / l.H)
}

func rectsOverlap(a, b vg.Rectangle, slack vg.Length) bool {
	return a.Min.X+slack < b.Max.X && b.Min.X+slack < a.Max.X &&
		a.Min.Y+slack < b.Max.Y && b.Min.Y+slack < a.Max.Y
}

// affine is a 2-D transform x' = a x + c y + e, y' = b x + d y + f.
type affine struct{ a, b, c, d, e, f float64 }

var identity = affine{a: 1, d: 1}

func (m affine) then(n affine) affine { // first n, then m
	return affine{
		a: m.a*n.a + m.c*n.b, b: m.b*n.a + m.d*n.b,
		c: m.a*n.c + m.c*n.d, d: m.b*n.c + m.d*n.d,
		e: m.a*n.e + m.c*n.f + m.e, f: m.b*n.e + m.d*n.f + m.f,
	}
}

func (m affine) apply(x, y float64) (float64, float64) {
	return m.a*x + m.c*y + m.e, m.b*x + m.d*y + m.f
}

// recorder is a vg.Canvas that draws nothing and records every string.
type recorder struct {
	w, h    vg.Length
	m       affine
	stack   []affine
	texts   []TextBox
	colored bool
	white   bool
	ink     vg.Rectangle
	inked   bool
	// inKey is set while the key is drawn (drawKey).
	inKey bool
	key   vg.Rectangle
	keyed bool
	marks []vg.Rectangle
}

func (r *recorder) Size() (vg.Length, vg.Length)        { return r.w, r.h }
func (r *recorder) SetLineWidth(vg.Length)              {}
func (r *recorder) SetLineDash([]vg.Length, vg.Length)  {}
func (r *recorder) Stroke(p vg.Path)                    { r.mark(p) }
func (r *recorder) Fill(p vg.Path)                      { r.mark(p) }
func (r *recorder) DrawImage(vg.Rectangle, image.Image) {}
func (r *recorder) Push()                               { r.stack = append(r.stack, r.m) }
func (r *recorder) Pop() {
	if n := len(r.stack); n > 0 {
		r.m, r.stack = r.stack[n-1], r.stack[:n-1]
	}
}
func (r *recorder) Rotate(rad float64) {
	s, c := math.Sincos(rad)
	r.m = r.m.then(affine{a: c, b: s, c: -s, d: c})
}
func (r *recorder) Translate(pt vg.Point) {
	r.m = r.m.then(affine{a: 1, d: 1, e: pt.X.Points(), f: pt.Y.Points()})
}
func (r *recorder) Scale(x, y float64) { r.m = r.m.then(affine{a: x, d: y}) }

func (r *recorder) FillString(f font.Face, pt vg.Point, text string) {
	if strings.TrimSpace(text) == "" {
		return
	}
	// The box covers the ink of Latin text: descenders to 0.22 em below
	// the baseline, capitals and ascenders to 0.75 em above it. The font's
	// own ascent and descent add accent room and sum to more than the
	// 1 em gonum leaves between lines, so they would flag every stacked
	// label.
	size := f.Font.Size.Points()
	x0, x1 := pt.X.Points(), (pt.X + f.Width(text)).Points()
	y0, y1 := pt.Y.Points()-0.22*size, pt.Y.Points()+0.75*size
	xs, ys := make([]float64, 0, 4), make([]float64, 0, 4)
	for _, c := range [][2]float64{{x0, y0}, {x1, y0}, {x0, y1}, {x1, y1}} {
		x, y := r.m.apply(c[0], c[1])
		xs, ys = append(xs, x), append(ys, y)
	}
	b := TextBox{Text: text, Size: size, Key: r.inKey,
		Min: vg.Point{X: vg.Length(slices.Min(xs)), Y: vg.Length(slices.Min(ys))},
		Max: vg.Point{X: vg.Length(slices.Max(xs)), Y: vg.Length(slices.Max(ys))}}
	r.texts = append(r.texts, b)
	if r.inKey {
		r.addKey(vg.Rectangle{Min: b.Min, Max: b.Max})
	}
}

func (r *recorder) addKey(b vg.Rectangle) {
	if !r.keyed {
		r.key, r.keyed = b, true
		return
	}
	r.key.Min.X, r.key.Min.Y = min(r.key.Min.X, b.Min.X), min(r.key.Min.Y, b.Min.Y)
	r.key.Max.X, r.key.Max.Y = max(r.key.Max.X, b.Max.X), max(r.key.Max.Y, b.Max.Y)
}

// CheckFigures reports every layout problem of each figure and each of its
// panels.
//
// That is: the problems Problems finds at the printed scale that scale
// returns for the figure, a panel that uses gonum's own legend (drawn in the
// data area, over data and gridlines), a numeric axis with fewer than
// MinTicks labels, and a page the coloured marks fill less than minFill of
// in either direction. Tests of the study packages call it on their figures.
func CheckFigures(figs []Figure, minFill float64, scale func(Figure) float64) []string {
	var out []string
	for _, f := range figs {
		l := LayoutOf(f.Plot, f.W, f.H)
		for _, p := range l.Problems(scale(f)) {
			out = append(out, f.Base+": "+p)
		}
		if x, y := l.InkFill(); x < minFill || y < minFill {
			out = append(out, fmt.Sprintf("%s: data fill only %.0f %% x %.0f %% of the page (want %.0f %%)", f.Base, 100*x, 100*y, 100*minFill))
		}
		plots := f.Panels
		if len(plots) == 0 {
			plots = []*plot.Plot{f.Plot}
		}
		for i, p := range plots {
			if n := legendEntries(p); n > 0 {
				out = append(out, fmt.Sprintf("%s: panel %d: %d entries in gonum's legend, drawn in the data area (use Compose's key)", f.Base, i+1, n))
			}
			for _, ax := range []struct {
				name string
				a    *plot.Axis
			}{{"x", &p.X}, {"y", &p.Y}} {
				if n, numeric := labelledTicks(ax.a); numeric && n < MinTicks {
					out = append(out, fmt.Sprintf("%s: panel %d: %s axis has %d labelled ticks (want %d)", f.Base, i+1, ax.name, n, MinTicks))
				}
			}
		}
	}
	return out
}

// legendEntries is the number of entries of p's own legend (gonum keeps
// them unexported; reflection reads the length only).
func legendEntries(p *plot.Plot) int {
	v := reflect.ValueOf(p.Legend).FieldByName("entries")
	if !v.IsValid() || v.Kind() != reflect.Slice {
		return 0
	}
	return v.Len()
}

// labelledTicks counts an axis's labelled ticks. numeric is false for a
// hidden axis (no ticks) and a categorical one (plot.NominalX/Y: ticks at
// 0, 1, 2, ...).
func labelledTicks(a *plot.Axis) (n int, numeric bool) {
	ticks := a.Tick.Marker.Ticks(a.Min, a.Max)
	if len(ticks) == 0 {
		return 0, false
	}
	if ct, ok := a.Tick.Marker.(plot.ConstantTicks); ok {
		nominal := true
		for i, t := range ct {
			if t.Value != float64(i) {
				nominal = false
			}
		}
		if nominal {
			return len(ct), false
		}
	}
	for _, t := range ticks {
		if t.Value >= a.Min && t.Value <= a.Max && strings.TrimSpace(t.Label) != "" {
			n++
		}
	}
	return n, true
}

// PrintScale is how much the paper scales a figure of width w that it
// includes with \includegraphics[opts]{figures/<name>.pdf}, name the
// last element of base,. That is, 1 without a width, F TextWidth / w
// with width=F\linewidth (or \textwidth), and 1 when tex does not
// include the figure.
func PrintScale(tex, base string, w vg.Length) float64 {
	re := regexp.MustCompile(`\\includegraphics(?:\[([^\]]*)\])?\{(?:[^{}]*/)?` + regexp.QuoteMeta(path.Base(base)) + `(?:\.pdf)?\}`)
	m := re.FindStringSubmatch(tex)
	if m == nil {
		return 1
	}
	wm := regexp.MustCompile(`width\s*=\s*([0-9.]*)\s*\\(?:linewidth|textwidth)`).FindStringSubmatch(m[1])
	if wm == nil {
		return 1
	}
	f := 1.0
	if wm[1] != "" {
		v, err := strconv.ParseFloat(wm[1], 64)
		if err != nil {
			return 1
		}
		f = v
	}
	return f * float64(TextWidth/w)
}

// SetColor notes whether marks are coloured (not grey, black or white)
// and whether they are white or transparent (the page's background).
func (r *recorder) SetColor(c color.Color) {
	if c == nil {
		r.colored, r.white = false, true
		return
	}
	R, G, B, A := c.RGBA()
	r.colored = A > 0 && !(R == G && G == B)
	r.white = A == 0 || (R == 0xffff && G == 0xffff && B == 0xffff)
}

func (r *recorder) mark(p vg.Path) {
	if !r.white {
		var box vg.Rectangle
		first := true
		for _, c := range p {
			if c.Type == vg.CloseComp {
				continue
			}
			x, y := r.m.apply(c.Pos.X.Points(), c.Pos.Y.Points())
			pt := vg.Point{X: vg.Length(x), Y: vg.Length(y)}
			if first {
				box, first = vg.Rectangle{Min: pt, Max: pt}, false
				continue
			}
			box.Min.X, box.Min.Y = min(box.Min.X, pt.X), min(box.Min.Y, pt.Y)
			box.Max.X, box.Max.Y = max(box.Max.X, pt.X), max(box.Max.Y, pt.Y)
		}
		if !first {
			if r.inKey {
				r.addKey(box)
			} else {
				r.marks = append(r.marks, box)
			}
		}
	}
	if !r.colored {
		return
	}
	for _, c := range p {
		if c.Type == vg.CloseComp {
			continue
		}
		x, y := r.m.apply(c.Pos.X.Points(), c.Pos.Y.Points())
		pt := vg.Point{X: vg.Length(x), Y: vg.Length(y)}
		if !r.inked {
			r.ink, r.inked = vg.Rectangle{Min: pt, Max: pt}, true
			continue
		}
		r.ink.Min.X, r.ink.Min.Y = min(r.ink.Min.X, pt.X), min(r.ink.Min.Y, pt.Y)
		r.ink.Max.X, r.ink.Max.Y = max(r.ink.Max.X, pt.X), max(r.ink.Max.Y, pt.Y)
	}
}
