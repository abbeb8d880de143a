// Package rendertest checks the figures of a study in its tests. Every
// results file given is turned into figures, and each figure's layout is
// checked (render.CheckFigures) at the size the paper prints it.
package rendertest

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"pqrepro/internal/render"
)

// MinFill is the share of a figure's page its data must span.
const MinFill = 0.5

// PaperSections is where the paper's sections are, seen from a study
// package's directory (analysis/<study>): their \includegraphics give
// the printed scale of each figure.
var PaperSections = filepath.Join("..", "..", "paper", "sections")

// CheckLayouts fails the test on a layout problem or an unstable render
// of any figure of a study.
//
// It builds the figures of every results file that exists (a missing one
// is logged, not an error: a clone without committed results has none)
// and fails the test on every layout problem and on a figure whose bytes
// differ between two renders.
func CheckLayouts(t *testing.T, paths []string, figures func(results []byte) ([]render.Figure, error)) {
	t.Helper()
	tex := paperTex(t)
	scale := func(f render.Figure) float64 { return render.PrintScale(tex, f.Base, f.W) }
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
		for _, p := range render.CheckFigures(figs, MinFill, scale) {
			t.Errorf("%s: %s", path, p)
		}
		// Byte-identical across renders (dates fixed, catalog sorted).
		date := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
		a, err := render.Files(figs, date)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		again, _ := figures(b)
		bb, err := render.Files(again, date)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		for name, v := range a {
			if !bytes.Equal(v, bb[name]) {
				t.Errorf("%s: %s differs between two renders of the same results", path, name)
			}
		}
		checked++
	}
	if checked == 0 {
		t.Fatalf("none of %v exists: no figure was checked", paths)
	}
}

// paperTex is the text of every section of the paper, concatenated.
func paperTex(t *testing.T) string {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(PaperSections, "*.tex"))
	if len(files) == 0 {
		t.Logf("no paper sections in %s: figures checked at their own size", PaperSections)
	}
	var b strings.Builder
	for _, f := range files {
		s, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		b.Write(s)
	}
	return b.String()
}
