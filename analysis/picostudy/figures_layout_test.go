package picostudy

import (
	"path/filepath"
	"testing"

	"pqrepro/internal/render"
	"pqrepro/internal/render/rendertest"
)

// TestFigureLayout: see analysis/tlsstudy's.
func TestFigureLayout(t *testing.T) {
	rendertest.CheckLayouts(t, []string{filepath.Join("..", "..", "results", "pico.json"), filepath.Join("testdata", "golden", "results", "pico.json")},
		func(b []byte) ([]render.Figure, error) {
			r, err := DecodeResults(ResultsFile, b)
			if err != nil {
				return nil, err
			}
			return figureList(r)
		})
}
