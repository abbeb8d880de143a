package pico

import (
	"os"
	"path/filepath"
	"testing"

	"pqrepro/internal/render"
)

// TestFigureLayout renders every figure of the committed results and of
// the test results and fails on overlapping or clipped text and on data
// that fill too little of the page.
func TestFigureLayout(t *testing.T) {
	for _, path := range []string{filepath.Join("..", "..", "results", "pico.json"), filepath.Join("testdata", "golden", "results", "pico.json")} {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Logf("%s: %v (skipped: no results there)", path, err)
			continue
		}
		r, err := ParseResults(b)
		if err != nil {
			t.Fatal(err)
		}
		figs, err := figureList(r)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range render.CheckFigures(figs, 0.5) {
			t.Errorf("%s: %s", path, p)
		}
	}
}
