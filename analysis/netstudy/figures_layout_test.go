package netstudy

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"pqrepro/internal/render"
)

// TestFigureLayout renders every figure of the committed results and of
// the test results and fails on overlapping or clipped text and on data
// that fill too little of the page.
func TestFigureLayout(t *testing.T) {
	for _, path := range []string{filepath.Join("..", "..", "results", "net.json"), filepath.Join("testdata", "net.json")} {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Logf("%s: %v (skipped: no results there)", path, err)
			continue
		}
		var r *Results
		if err := json.Unmarshal(b, &r); err != nil {
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
