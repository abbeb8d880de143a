package paperbuild

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCommittedPaperSources runs the source checks on the repository's
// paper: every float referenced, no measured number typed by hand.
func TestCommittedPaperSources(t *testing.T) {
	root := filepath.Join("..", "..", "paper")
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
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range CheckSources(files) {
		t.Error(p)
	}
}

func TestCheckSources(t *testing.T) {
	files := map[string][]byte{
		"main.tex": []byte(`TLS~1.3 is fast. See Figure~\ref{fig:a}.
We measured 3.9~ms and 120\,\% by hand. % 5.5 in a comment is fine
\cite{x2020} and \texttt{v1.2.3} are names.`),
		"generated/t.tex": []byte(`\label{tab:never}\label{fig:a} 12.5 ms`),
	}
	got := strings.Join(CheckSources(files), "\n")
	for _, want := range []string{`"3.9~ms"`, `"120\\,\\%"`, "tab:never is never referenced"} {
		if !strings.Contains(got, want) {
			t.Errorf("missing %s in:\n%s", want, got)
		}
	}
	for _, not := range []string{"1.3", "5.5", "1.2.3", "fig:a", "12.5"} {
		if strings.Contains(got, `"`+not) || strings.Contains(got, not+" is never") {
			t.Errorf("flagged %s:\n%s", not, got)
		}
	}
}
