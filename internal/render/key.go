package render

import (
	"image/color"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// A KeyEntry is one item of a figure's key: a sample of the mark and
// what it means. An entry without a sample is a note (for example how to
// read a box).
type KeyEntry struct {
	Name  string
	Thumb plot.Thumbnailer
}

// Key geometry, in points.
const (
	keyThumbW = 16
	keyGapX   = 4  // thumbnail to text
	keyColGap = 12 // between columns
	keyRowH   = LegendSize + 3.5
	keyBelow  = 5 // key to the panels
)

// Compose returns the plot of a figure. That is, its key in a strip above
// everything else, then the panels in a grid (rows of plots, aligned so
// that their data areas line up). The key is never drawn on data or on a
// gridline, whatever the data: it has its own part of the page. cols is
// the number of key columns (0: all entries on one line). A single plot
// is Compose([][]*plot.Plot{{p}}, key, cols).
func Compose(rows [][]*plot.Plot, key []KeyEntry, cols int) *plot.Plot {
	outer := plot.New()
	outer.HideAxes()
	outer.Add(composite{rows: rows, key: key, cols: cols})
	return outer
}

type composite struct {
	rows [][]*plot.Plot
	key  []KeyEntry
	cols int
}

func keyStyle() draw.TextStyle {
	p := plot.New()
	Style(p)
	return p.Legend.TextStyle
}

// Plot draws the key, then the panels below it.
func (g composite) Plot(c draw.Canvas, _ *plot.Plot) {
	grid := c
	if len(g.key) > 0 {
		h := drawKey(c, g.key, g.cols)
		grid.Max.Y -= h + vg.Points(keyBelow)
	}
	cols := 0
	for _, r := range g.rows {
		cols = max(cols, len(r))
	}
	if cols == 0 {
		return
	}
	tiles := plot.Align(g.rows, draw.Tiles{Rows: len(g.rows), Cols: cols, PadX: vg.Points(10), PadY: vg.Points(8)}, grid)
	for i, r := range g.rows {
		for j, p := range r {
			p.Draw(tiles[i][j])
		}
	}
}

// drawKey draws the entries with a sample centred at the top of c in
// cols columns. Then it draws each note (an entry without a
// sample) on a line of its own, and returns the strip's height.
func drawKey(c draw.Canvas, key []KeyEntry, cols int) vg.Length {
	var items, notes []KeyEntry
	for _, e := range key {
		if e.Thumb == nil {
			notes = append(notes, e)
		} else {
			items = append(items, e)
		}
	}
	if cols <= 0 || cols > len(items) {
		cols = max(1, len(items))
	}
	sty := keyStyle()
	colW := make([]vg.Length, cols) // each column as wide as its widest entry
	for i, e := range items {
		colW[i%cols] = max(colW[i%cols], entryWidth(sty, e))
	}
	width := vg.Length(cols-1) * vg.Points(keyColGap)
	for _, w := range colW {
		width += w
	}
	if width > c.Max.X-c.Min.X && cols > 1 { // too wide: one column fewer
		return drawKey(c, key, cols-1)
	}
	if r := recorderOf(c.Canvas); r != nil {
		r.inKey = true
		defer func() { r.inKey = false }()
	}
	rowH := vg.Points(keyRowH)
	ts := sty
	ts.YAlign = draw.YCenter
	for i, e := range items {
		col, row := i%cols, i/cols
		x := c.Min.X + (c.Max.X-c.Min.X-width)/2
		for _, w := range colW[:col] {
			x += w + vg.Points(keyColGap)
		}
		top := c.Max.Y - vg.Length(row)*rowH
		cell := draw.Canvas{Canvas: c.Canvas, Rectangle: vg.Rectangle{
			Min: vg.Point{X: x, Y: top - rowH + vg.Points(1.5)}, Max: vg.Point{X: x + vg.Points(keyThumbW), Y: top - vg.Points(1.5)}}}
		e.Thumb.Thumbnail(&cell)
		c.FillText(ts, vg.Point{X: x + vg.Points(keyThumbW+keyGapX), Y: top - rowH/2}, e.Name)
	}
	rows := (len(items) + cols - 1) / cols
	ns := ts
	ns.XAlign = draw.XCenter
	for i, e := range notes {
		top := c.Max.Y - vg.Length(rows+i)*rowH
		c.FillText(ns, vg.Point{X: (c.Min.X + c.Max.X) / 2, Y: top - rowH/2}, e.Name)
	}
	return vg.Length(rows+len(notes)) * rowH
}

// KeyRows is the number of lines drawKey takes for key in cols columns
// when it fits the width (figures size their page with it).
func KeyRows(key []KeyEntry, cols int) int {
	items := 0
	for _, e := range key {
		if e.Thumb != nil {
			items++
		}
	}
	if cols <= 0 || cols > items {
		cols = max(1, items)
	}
	return (items+cols-1)/cols + len(key) - items
}

func entryWidth(sty draw.TextStyle, e KeyEntry) vg.Length {
	w := sty.Width(e.Name)
	if e.Thumb != nil {
		w += vg.Points(keyThumbW + keyGapX)
	}
	return w
}

// A Thumb is a key sample drawn from parts: a line (optionally dashed),
// a marker on it, and a filled box behind them. Any part may be unset.
type Thumb struct {
	Line  draw.LineStyle
	Glyph draw.GlyphStyle
	Fill  color.Color
}

// Thumbnail implements plot.Thumbnailer.
func (t Thumb) Thumbnail(c *draw.Canvas) {
	ym := (c.Min.Y + c.Max.Y) / 2
	if t.Fill != nil {
		c.FillPolygon(t.Fill, []vg.Point{{X: c.Min.X, Y: c.Min.Y}, {X: c.Max.X, Y: c.Min.Y}, {X: c.Max.X, Y: c.Max.Y}, {X: c.Min.X, Y: c.Max.Y}})
	}
	if t.Line.Color != nil && t.Line.Width > 0 {
		c.StrokeLine2(t.Line, c.Min.X, ym, c.Max.X, ym)
	}
	if t.Glyph.Color != nil && t.Glyph.Shape != nil {
		c.DrawGlyph(t.Glyph, vg.Point{X: (c.Min.X + c.Max.X) / 2, Y: ym})
	}
}

// recorderOf is the layout recorder under a canvas (gonum nests
// draw.Canvas values), or nil when the figure is being rendered.
func recorderOf(c vg.Canvas) *recorder {
	for {
		switch v := c.(type) {
		case *recorder:
			return v
		case draw.Canvas:
			c = v.Canvas
		case *draw.Canvas:
			c = v.Canvas
		default:
			return nil
		}
	}
}
