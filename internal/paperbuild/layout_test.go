package paperbuild

import (
	"os/exec"
	"strings"
	"testing"
	"time"
)

// line is a row of words across the text block at y (top) on a page of
// PaperGeometry.
func line(y float64, words ...string) []pdfWord {
	var out []pdfWord
	x := PaperGeometry.Margin
	for _, w := range words {
		out = append(out, pdfWord{xMin: x, yMin: y, xMax: x + 30, yMax: y + 9, text: w})
		x += 35
	}
	return out
}

// fullPage is a page of running text from the top of the text block to
// its bottom, with its page number in the footer.
func fullPage(n string) []pdfWord {
	g := PaperGeometry
	var p []pdfWord
	for y := g.Margin; y < g.Height-g.Margin-10; y += 12 {
		p = append(p, line(y, "running", "text")...)
	}
	return append(p, pdfWord{xMin: g.Width/2 - 3, yMin: g.Height - g.Margin + 20, xMax: g.Width/2 + 3, yMax: g.Height - g.Margin + 28, text: n})
}

// TestCheckPages plants each defect a reader would see on otherwise clean
// pages and expects exactly its problem, naming the page.
func TestCheckPages(t *testing.T) {
	g := PaperGeometry
	clean := [][]pdfWord{fullPage("1"), fullPage("2"), append(line(g.Margin, "the", "end"), fullPage("3")[len(fullPage("3"))-1])}
	if p := checkPages(clean, 3, g); len(p) != 0 {
		t.Fatalf("clean pages: %q", p)
	}
	plant := func(page int, ws ...pdfWord) [][]pdfWord {
		out := [][]pdfWord{fullPage("1"), fullPage("2"), fullPage("3")}
		out[page-1] = append(out[page-1], ws...)
		return out
	}
	alone := [][]pdfWord{fullPage("1"), append(line(g.Margin, "Table", "26:", "caption"), fullPage("2")[len(fullPage("2"))-1]), fullPage("3")}
	for _, tc := range []struct {
		name  string
		pages [][]pdfWord
		body  int
		want  string
	}{
		{"a table over the page number", plant(2, line(g.Height-g.Margin+20, "C17", "row")...), 3, "page 2: text in the margin: \"C17 row\""},
		{"a line into the right margin", plant(1, pdfWord{xMin: g.Width - g.Margin - 10, yMin: 300, xMax: g.Width - 20, yMax: 309, text: "overlong"}), 3, "page 1: text in the margin: \"overlong\""},
		{"a float alone on a body page", alone, 3, "page 2: a body page spans"},
		{"LaTeX math source", plant(3, line(400, "reproduced", `$\to$`, "not")...), 3, `page 3: math source printed`},
		{"an escaped percent", plant(1, line(400, `12.3\%`)...), 3, "page 1: an escaped character's source printed"},
		{"a macro name", plant(1, line(400, `\TlsKemIncreaseMs`)...), 3, "page 1: a macro name printed"},
		{"p_Holm", plant(2, line(400, "p_Holm", "=", "0.85")...), 3, "page 2: an identifier (p_Holm) for a symbol printed"},
		{"a status word", plant(2, line(400, "cells:", "measured", "(Table", "7)")...), 3, "page 2: a generator's status word in prose printed"},
		{"a body over 16 pages", clean, 17, "the body (abstract to conclusion) takes 17 pages, more than 16"},
	} {
		p := checkPages(tc.pages, tc.body, g)
		if len(p) == 0 || !strings.Contains(strings.Join(p, "\n"), tc.want) {
			t.Errorf("%s: got %q, want a problem with %q", tc.name, p, tc.want)
		}
	}
	// A subscript on the last line dips below the block without being in
	// the margin, and does not take the page number's place; an empty
	// word (an invisible glyph) is no text.
	sub := fullPage("2")
	bottom := g.Height - g.Margin
	sub = append(sub, pdfWord{xMin: 200, yMin: bottom - 3.3, xMax: 204, yMax: bottom + 2.9, text: "0"}, pdfWord{xMin: 300, yMin: bottom + 23, xMax: 300, yMax: bottom + 32, text: ""})
	if p := checkPages([][]pdfWord{fullPage("1"), sub, fullPage("3")}, 3, g); len(p) != 0 {
		t.Errorf("a subscript on the last line: %q", p)
	}
	// A short last body page (the conclusion's end) and a short appendix
	// page are not floats alone.
	if p := checkPages(alone, 2, g); len(p) != 0 {
		t.Errorf("short last body page: %q", p)
	}
}

func TestBodyPages(t *testing.T) {
	for _, tc := range []struct {
		log  string
		want int
		err  string
	}{
		{"x\n" + BodyEndMarker + "15\nmore", 15, ""},
		{BodyEndMarker + "3\n" + BodyEndMarker + "16\n", 16, ""},
		{"no marker", 0, "must \\typeout it"},
		{BodyEndMarker + "xii\n", 0, "does not end in a page number"},
		{BodyEndMarker + "0\n", 0, "does not end in a page number"},
	} {
		n, err := BodyPages([]byte(tc.log))
		if n != tc.want || (tc.err == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.err)) {
			t.Errorf("%q: %d, %v; want %d, %q", tc.log, n, err, tc.want, tc.err)
		}
	}
}

func TestParseBBoxRefusesNoPage(t *testing.T) {
	if _, err := parseBBox([]byte("<html></html>")); err == nil {
		t.Error("no page: no error")
	}
}

// TestBuildGates builds small papers with pdflatex, each with one defect
// planted, and expects Build to fail naming it, with no PDF; the clean
// paper builds.
func TestBuildGates(t *testing.T) {
	for _, tool := range []string{"pdflatex", "pdftotext"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed: `go run mage.go test` installs it (texlive-latex-base, poppler-utils); skipping the paper gate builds", tool)
		}
	}
	doc := func(body string) map[string][]byte {
		return map[string][]byte{"main.tex": []byte(`\documentclass[10pt,a4paper]{article}
\usepackage[margin=2.2cm]{geometry}
\newcommand{\para}{A paragraph of running text that fills the lines of the page as a study's prose would, with enough words to wrap over several lines of the text block and so take a share of its height.\par}
\newcount\n
\newcommand{\paras}[1]{\n=0 \loop\para\advance\n by 1 \ifnum\n<#1\repeat}
\begin{document}
` + body + `
\typeout{` + BodyEndMarker + `\thepage}
\end{document}
`)}
	}
	text := `\paras{12}`
	tall := `\begin{table}[h]\centering\caption{Too tall}\label{tab:x}\begin{tabular}{l}` + strings.Repeat(`row\\`, 80) + `\end{tabular}\end{table} See Table~\ref{tab:x}.`
	for _, tc := range []struct {
		name, body, want string
	}{
		{"clean", text, ""},
		{"a table into the bottom margin", text + tall, "Float too large for page"},
		{"an undefined reference", text + ` Table~\ref{tab:none}.`, "undefined"},
		{"LaTeX source printed", text + ` reproduced \texttt{\$\textbackslash to\$} not`, "math source printed"},
		{"a body over 16 pages", `\paras{600}`, "more than 16"},
		{"a float alone on a body page", text + `\clearpage\begin{figure}[p]\centering\rule{2cm}{2cm}\caption{Alone}\label{fig:a}\end{figure}\clearpage See Figure~\ref{fig:a}. ` + text, "a float alone on its page"},
	} {
		pdf, err := Build(t.Context(), doc(tc.body), nil, time.Unix(0, 0))
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: got %v, want an error with %q", tc.name, err, tc.want)
		case tc.want != "" && pdf != nil:
			t.Errorf("%s: a PDF with the defect was returned", tc.name)
		}
	}
	if _, err := Build(t.Context(), map[string][]byte{"main.tex": []byte(`\documentclass{article}\begin{document}x\end{document}`)}, nil, time.Unix(0, 0)); err == nil || !strings.Contains(err.Error(), "must \\typeout it") {
		t.Errorf("no body-end marker: %v", err)
	}
}
