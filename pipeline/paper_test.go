package pipeline

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"pqrepro/internal/paperbuild"
	"pqrepro/internal/repro"
	"pqrepro/internal/settings"
)

// TestCommittedPaperSources runs the paper stage's source checks on the
// repository's paper with the registered studies' allowances: every
// float referenced, no measured number typed by hand. It lives here, not
// in internal/paperbuild, because the allowances are the studies'.
func TestCommittedPaperSources(t *testing.T) {
	files := committedPaperSources(t)
	for _, p := range paperbuild.CheckSources(files, handTyped()) {
		t.Error(p)
	}
	// Without the studies' allowances, their versions are typed by hand.
	if len(paperbuild.CheckSources(files, nil)) == 0 {
		t.Error("the paper passes without the studies' HandTyped: the allowances are not needed, or not the studies'")
	}
}

// committedPaperSources reads the repository's paper/**/*.tex, by path
// relative to paper/, skipping the test without a paper next to the module.
func committedPaperSources(t *testing.T) map[string][]byte {
	t.Helper()
	root := filepath.Join("..", "paper")
	files := map[string][]byte{}
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".tex") {
			return err
		}
		b, err := os.ReadFile(p)
		rel, _ := filepath.Rel(root, p)
		files[filepath.ToSlash(rel)] = b
		return err
	})
	if os.IsNotExist(err) {
		t.Skipf("no paper next to the module: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// TestStaleSignSentence: the sentence that said the per-fifth
// ML-KEM-1024 increases were "changing sign" after the data had made them
// all positive (testdata/stale-changing-sign.tex, issue 31) fails the
// paper's source check with today's generated numbers, in the paper as
// it is; the paper's own sentence, whose words are generated
// (\TlsFifthKemIncreaseSign), passes. If the committed run's increases
// change sign again, the old sentence becomes true and this test says so.
func TestStaleSignSentence(t *testing.T) {
	files := committedPaperSources(t)
	old, err := os.ReadFile(filepath.Join("testdata", "stale-changing-sign.tex"))
	if err != nil {
		t.Fatal(err)
	}
	files["sections/stale.tex"] = old
	var got []string
	for _, p := range paperbuild.CheckSources(files, handTyped()) {
		if strings.HasPrefix(p, "sections/stale.tex:") {
			got = append(got, p)
		}
	}
	if len(got) != 1 || !strings.Contains(got[0], `"changing sign" about \TlsFifthKemIncreaseMs`) {
		t.Errorf("the stale sentence is not rejected with today's data: problems %q", got)
	}
	if !bytes.Contains(files["sections/tls-appendix.tex"], []byte(`\TlsFifthKemIncreaseMs{}~ms, \TlsFifthKemIncreaseSign{}`)) {
		t.Error("sections/tls-appendix.tex no longer takes the words of the per-fifth increases from \\TlsFifthKemIncreaseSign")
	}
}

func TestPaperStage(t *testing.T) {
	if _, err := exec.LookPath("pdflatex"); err != nil {
		t.Skip("pdflatex is not installed: `go run mage.go test` installs it (texlive-latex-base); skipping the paper build test")
	}
	build := func() []byte {
		cfg, log, _ := fakeStudy(t)
		for _, d := range []string{"internal/paperbuild"} {
			os.MkdirAll(filepath.Join(cfg.Root, d), 0o755)
			os.WriteFile(filepath.Join(cfg.Root, d, "x.go"), []byte("package x\n"), 0o644)
		}
		os.MkdirAll(filepath.Join(cfg.Root, "paper"), 0o755)
		os.WriteFile(filepath.Join(cfg.Root, "paper", "main.tex"), []byte(`\documentclass{article}
\begin{document}
\IfFileExists{generated/fake.tex}{\input{generated/fake.tex}}{No data yet.}
\typeout{`+paperbuild.BodyEndMarker+`\thepage}
\end{document}
`), 0o644)
		// The fake study also writes a number for the paper.
		saved := studies[0].StagesFor
		studies[0].StagesFor = func(root, profile, run string, set settings.Settings) ([]*repro.Stage, error) {
			st, err := saved(root, profile, run, set)
			if err != nil {
				return st, err
			}
			st = append(st, &repro.Stage{Name: "fake:tables", Code: []string{"analysis"},
				Inputs: []string{"results/fake.txt"}, Outputs: []string{"paper/generated/fake.tex"},
				Run: func(ctx context.Context, env *repro.Env) error {
					b, err := env.ReadFile("results/fake.txt")
					if err != nil {
						return err
					}
					return env.WriteFile("paper/generated/fake.tex", append([]byte("The result is "), b...))
				}})
			return st, nil
		}
		if err := RunStudy(context.Background(), cfg, "fake"); err != nil {
			t.Fatalf("RunStudy: %v\n%s", err, log)
		}
		if err := Build(context.Background(), cfg); err != nil {
			t.Fatalf("Build: %v\n%s", err, log)
		}
		if !strings.Contains(log.String(), "build paper/main.pdf") {
			t.Errorf("the paper stage did not run:\n%s", log)
		}
		pdf, err := os.ReadFile(filepath.Join(cfg.Root, "paper", "main.pdf"))
		if err != nil {
			t.Fatal(err)
		}
		lock, _ := os.ReadFile(filepath.Join(cfg.Root, repro.LockFile))
		if !bytes.Contains(lock, []byte(`"paper/generated/fake.tex"`)) {
			t.Errorf("the paper does not depend on the generated table:\n%s", lock)
		}
		// And verify re-derives the PDF byte for byte.
		log.Reset()
		if err := Verify(context.Background(), cfg); err != nil {
			t.Errorf("verify: %v\n%s", err, log)
		}
		return pdf
	}
	a, b := build(), build()
	if !bytes.Equal(a, b) {
		t.Error("two builds of the paper differ")
	}
}
