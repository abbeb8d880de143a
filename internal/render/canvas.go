package render

import (
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// pageMargin is kept free around every figure: gonum lays labels out
// flush with the page edge, where rasterisers cut the glyph that touches
// it.
const pageMargin = vg.Length(2)

func drawCanvas(c vg.CanvasSizer) draw.Canvas {
	return draw.Crop(draw.New(c), pageMargin, -pageMargin, pageMargin, -pageMargin)
}
