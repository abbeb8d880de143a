package netstudy

import (
	"encoding/json"
	"path/filepath"
	"testing"

	"pqrepro/internal/render"
	"pqrepro/internal/render/rendertest"
)

// TestFigureLayout: see analysis/tlsstudy's.
func TestFigureLayout(t *testing.T) {
	rendertest.CheckLayouts(t, []string{filepath.Join("..", "..", "results", "net.json"), filepath.Join("testdata", "net.json")},
		func(b []byte) ([]render.Figure, error) {
			var r *Results
			if err := json.Unmarshal(b, &r); err != nil {
				return nil, err
			}
			return figureList(r)
		})
}
