package tlsstudy

import (
	"path/filepath"
	"testing"

	"pqrepro/internal/render"
	"pqrepro/internal/render/rendertest"
)

// TestFigureLayout renders every figure of the committed results and of
// the test results and fails on overlapping or clipped text and on data
// that fill too little of the page.
func TestFigureLayout(t *testing.T) {
	rendertest.CheckLayouts(t, []string{filepath.Join("..", "..", "results", "tls.json"), filepath.Join("testdata", "tls.json")},
		func(b []byte) ([]render.Figure, error) {
			r, err := DecodeResults("tls.json", b)
			if err != nil {
				return nil, err
			}
			return figureList(r, nil)
		})
}
