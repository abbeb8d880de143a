// Package rendertest checks the figures of a study in its tests: every
// results file given is turned into figures, and each figure's layout is
// checked (render.CheckFigures).
package rendertest

import (
	"os"
	"testing"

	"pqrepro/internal/render"
)

// MinFill is the share of a figure's page its data must span.
const MinFill = 0.5

// CheckLayouts builds the figures of every results file that exists (a
// missing one is logged, not an error: a clone without committed results
// has none) and fails the test on every layout problem.
func CheckLayouts(t *testing.T, paths []string, figures func(results []byte) ([]render.Figure, error)) {
	t.Helper()
	checked := 0
	for _, path := range paths {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Logf("%s: %v (skipped: no results there)", path, err)
			continue
		}
		figs, err := figures(b)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		for _, p := range render.CheckFigures(figs, MinFill) {
			t.Errorf("%s: %s", path, p)
		}
		checked++
	}
	if checked == 0 {
		t.Fatalf("none of %v exists: no figure was checked", paths)
	}
}
