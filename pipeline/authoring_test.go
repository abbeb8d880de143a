package pipeline

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// The example of docs/authoring.md: Study C's signing figure made wider.
const (
	authoringFile = "analysis/picostudy/figures.go"
	authoringOld  = "W: render.TextWidth, H: 3 * vg.Inch, Panels: []*plot.Plot{sign}}"
	authoringNew  = "W: render.TextWidth, H: 2.8 * vg.Inch, Panels: []*plot.Plot{sign}}"
)

// authoringChanged are the files the recipe changes, in `git status`'s
// order: the edited code, the golden file it updates, the figure, the
// caption macro that names the figure's hash, the paper that includes
// it, and the two files that record every output's hash.
var authoringChanged = []string{
	"SHA256SUMS",
	"analysis/picostudy/figures.go",
	"analysis/picostudy/testdata/golden/figures/pico-mldsa-sign.svg",
	"figures/pico-mldsa-sign.pdf",
	"figures/pico-mldsa-sign.svg",
	"paper/generated/figure-sources.tex",
	"paper/main.pdf",
	"pqrepro.lock",
}

// TestAuthoringRecipe follows docs/authoring.md on a clone of this
// repository's HEAD: change one figure's setting, run the build, update
// the golden file, and check that exactly the files the recipe names
// changed, that the commit it describes is complete (verify passes on
// it) and that nothing is left uncommitted. It runs the clone's own
// code (`go run mage.go`), as an author does: the test binary's
// compiled stages would not see the edit.
func TestAuthoringRecipe(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the recipe compiles the clone's magefile and rebuilds and verifies the paper (one to three minutes)")
	}
	for _, tool := range []string{"git", "go", "pdflatex"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed: the recipe needs git (to clone and commit), go and pdflatex (`go run mage.go test` installs it)", tool)
		}
	}
	src, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(src, ".git")); err != nil {
		t.Skipf("not in a git checkout (%v): nothing to clone", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	clone := filepath.Join(t.TempDir(), "pqrepro")
	run := func(dir string, argv ...string) string {
		t.Helper()
		cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
		cmd.Dir = dir
		// The clone's own settings: no profile, store or remote of the
		// caller's environment.
		for _, kv := range os.Environ() {
			if !strings.HasPrefix(kv, "PQREPRO_") {
				cmd.Env = append(cmd.Env, kv)
			}
		}
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s: %v\n%s", strings.Join(argv, " "), err, out)
		}
		return string(out)
	}
	run(src, "git", "clone", "-q", src, clone)

	// 1. Change the setting.
	path := filepath.Join(clone, filepath.FromSlash(authoringFile))
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), authoringOld) {
		t.Fatalf("%s no longer holds %q: update docs/authoring.md's example and this test", authoringFile, authoringOld)
	}
	if err := os.WriteFile(path, []byte(strings.Replace(string(b), authoringOld, authoringNew, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	// 2. Rebuild, 3. update the study's golden file.
	out := run(clone, "go", "run", "mage.go", "build")
	mustContain(t, out, "pico:figures", "paper")
	run(clone, "go", "test", "./analysis/picostudy", "-run", "TestStagesGolden", "-update")

	// Exactly the files the recipe names changed.
	var changed []string
	for _, l := range strings.Split(strings.TrimRight(run(clone, "git", "status", "--porcelain"), "\n"), "\n") {
		if len(l) > 3 {
			changed = append(changed, l[3:])
		}
	}
	slices.Sort(changed)
	if !slices.Equal(changed, authoringChanged) {
		t.Errorf("the recipe changed\n  %s\nwant\n  %s", strings.Join(changed, "\n  "), strings.Join(authoringChanged, "\n  "))
	}
	// 4. Commit them; the commit verifies and leaves nothing behind.
	run(clone, "git", "add", "--", ".")
	run(clone, "git", "-c", "user.name=authoring test", "-c", "user.email=test@example.invalid", "commit", "-q", "-m", "wider signing figure")
	mustContain(t, run(clone, "go", "run", "mage.go", "verify"), "verify: OK")
	if st := strings.TrimSpace(run(clone, "git", "status", "--porcelain")); st != "" {
		t.Errorf("verify left changes in the clone:\n%s", st)
	}
}
