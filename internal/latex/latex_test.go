package latex

import (
	"bytes"
	"context"
	"errors"
	"os/exec"
	"strings"
	"testing"
	"time"
)

func needPdflatex(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("pdflatex"); err != nil {
		t.Skip("pdflatex is not installed: `go run mage.go test` installs it (texlive-latex-base); skipping the LaTeX build tests")
	}
}

var doc = map[string][]byte{
	"main.tex": []byte(`\documentclass{article}
\usepackage{booktabs}
\input{generated/numbers.tex}
\begin{document}
The baseline median is \Baseline{} ms (Table~\ref{tab:x}).
\input{generated/table.tex}
\end{document}
`),
	"generated/numbers.tex": []byte(`\newcommand{\Baseline}{3.90}` + "\n"),
	"generated/table.tex": []byte(`\begin{table}[h]\centering\caption{x}\label{tab:x}
\begin{tabular}{lr}\toprule a & 1 \\ \bottomrule\end{tabular}\end{table}` + "\n"),
}

func TestBuildIsReproducible(t *testing.T) {
	needPdflatex(t)
	date := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	a, err := Build(context.Background(), Options{Main: "main.tex", Files: doc, Date: date})
	if err != nil {
		t.Fatal(err)
	}
	b, err := Build(context.Background(), Options{Main: "main.tex", Files: doc, Date: date})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(a, []byte("%PDF")) {
		t.Fatal("not a PDF")
	}
	if !bytes.Equal(a, b) {
		t.Error("two builds of the same sources differ")
	}
	if !bytes.Contains(a, []byte("D:20260101000000")) {
		t.Error("the PDF does not carry the fixed date")
	}
	c, _ := Build(context.Background(), Options{Main: "main.tex", Files: doc, Date: date.Add(24 * time.Hour)})
	if bytes.Equal(a, c) {
		t.Error("the date does not reach the PDF")
	}
}

func TestBuildErrorShowsTheRelevantLines(t *testing.T) {
	needPdflatex(t)
	bad := map[string][]byte{"main.tex": []byte("\\documentclass{article}\n\\begin{document}\n\\undefinedmacro\n\\end{document}\n")}
	_, err := Build(context.Background(), Options{Main: "main.tex", Files: bad, Date: time.Unix(0, 0)})
	var le *Error
	if !errors.As(err, &le) {
		t.Fatalf("err = %v, want *Error", err)
	}
	if !strings.Contains(le.Excerpt, "Undefined control sequence") || strings.Count(le.Excerpt, "\n") > 40 {
		t.Errorf("excerpt:\n%s", le.Excerpt)
	}
	if strings.Contains(le.Excerpt, "This is pdfTeX") {
		t.Error("the excerpt is the whole log, not the relevant lines")
	}
}

func TestBadOptions(t *testing.T) {
	needPdflatex(t)
	if _, err := Build(context.Background(), Options{Main: "none.tex", Files: doc}); err == nil {
		t.Error("missing main accepted")
	}
	if _, err := Build(context.Background(), Options{Main: "main.tex", Files: map[string][]byte{"main.tex": nil, "../x.tex": nil}}); err == nil {
		t.Error("a path leaving the build folder was accepted")
	}
}

func TestNoEngine(t *testing.T) {
	_, err := Build(context.Background(), Options{Main: "main.tex", Files: doc, Engine: "pqrepro-no-such-tex"})
	if !errors.Is(err, ErrNoEngine) {
		t.Errorf("err = %v", err)
	}
}

func TestExcerpt(t *testing.T) {
	log := []byte("This is pdfTeX\nlots\nof\nnoise\n./main.tex:3: Undefined control sequence.\nl.3 \\undefinedmacro\n\nmore\n")
	got := Excerpt(log)
	if !strings.HasPrefix(got, "./main.tex:3: Undefined control sequence.") || strings.Contains(got, "noise") {
		t.Errorf("Excerpt = %q", got)
	}
	if got := Excerpt([]byte("a\nb\n")); got != "a\nb" {
		t.Errorf("no error lines: %q", got)
	}
}

func TestProblems(t *testing.T) {
	log := []byte(`LaTeX Warning: Reference ` + "`fig:x'" + ` on page 1 undefined on input line 5.
Overfull \hbox (0.4pt too wide) in paragraph at lines 3--4
Overfull \hbox (12.5pt too wide) in paragraph at lines 7--9
LaTeX Warning: Citation ` + "`nope'" + ` on page 2 undefined on input line 9.
LaTeX Warning: Label ` + "`a'" + ` multiply defined.
`)
	got := strings.Join(Problems(log), "\n")
	for _, want := range []string{"fig:x", "12.5pt", "nope", "multiply defined"} {
		if !strings.Contains(got, want) {
			t.Errorf("Problems misses %s:\n%s", want, got)
		}
	}
	if strings.Contains(got, "0.4pt") {
		t.Errorf("an overfull box under 1 pt is a problem:\n%s", got)
	}
}

func TestBuildReportsUndefinedReferenceAndRunsBibtex(t *testing.T) {
	if _, err := exec.LookPath("pdflatex"); err != nil {
		t.Skip("pdflatex is not installed: `go run mage.go test` installs it")
	}
	var log []byte
	_, err := Build(context.Background(), Options{Main: "main.tex", Date: time.Unix(0, 0).UTC(), Log: &log, Files: map[string][]byte{
		"main.tex": []byte(`\documentclass{article}\begin{document}See \ref{nope} and \cite{k}.\bibliographystyle{plain}\bibliography{refs}\end{document}`),
		"refs.bib": []byte(`@misc{k, author={A. Author}, title={T}, year={2020}}`),
	}})
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Join(Problems(log), "\n")
	if !strings.Contains(got, "nope") {
		t.Errorf("undefined reference not reported:\n%s", got)
	}
	if strings.Contains(got, "Citation") {
		t.Errorf("the citation was not resolved by BibTeX:\n%s", got)
	}
}
