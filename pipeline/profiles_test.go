package pipeline

import (
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"pqrepro/internal/repro"
	"pqrepro/internal/settings"
)

// TestPaperBuildsAtEveryProfile builds every stage, the paper included,
// from the committed runs of each profile in a scratch tree: the paper's
// text may only use what every profile's stages define (the quick profile
// once failed on a macro named after a full-profile scenario).
func TestPaperBuildsAtEveryProfile(t *testing.T) {
	if testing.Short() {
		t.Skip("skipped in -short: builds the whole paper twice (about a minute)")
	}
	if _, err := exec.LookPath("pdflatex"); err != nil {
		t.Skip("pdflatex is not installed: `go run mage.go test` installs it")
	}
	root := repoRoot(t)
	if _, err := os.Stat(filepath.Join(root, ".git")); err != nil {
		t.Skip("skipped: not in a checkout of the repository (its committed runs are the test data)")
	}
	for _, profile := range []string{"", settings.Quick, settings.Full} {
		t.Run("profile="+profile, func(t *testing.T) {
			e, err := Engine(Config{Root: root, Profile: profile})
			if err != nil {
				t.Fatal(err)
			}
			files, err := e.Sources(nil)
			if err != nil {
				t.Fatal(err)
			}
			tree := t.TempDir()
			if err := e.CopyFiles(tree, files); err != nil {
				t.Fatal(err)
			}
			fresh := &repro.Engine{Root: tree, CodeRoot: root, Stages: e.Stages, RawDirs: e.RawDirs, Log: io.Discard, Notices: io.Discard}
			if _, err := fresh.Build(context.Background()); err != nil {
				t.Fatalf("profile %q: %v", profile, err)
			}
			if _, err := os.Stat(filepath.Join(tree, "paper", "main.pdf")); err != nil {
				t.Errorf("profile %q: no paper: %v", profile, err)
			}
		})
	}
}
