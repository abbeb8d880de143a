package render

import (
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

func drawCanvas(c vg.CanvasSizer) draw.Canvas { return draw.New(c) }
