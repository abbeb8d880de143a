// Package latex compiles a LaTeX document to PDF reproducibly: the same
// sources give the same PDF bytes, wherever and whenever they are built.
//
// pdfTeX writes the build time into the PDF's /CreationDate, /ModDate and
// /ID; with SOURCE_DATE_EPOCH and FORCE_SOURCE_DATE=1 it uses the given
// time instead (pdfTeX manual, "\pdfinfoomitdate" and the
// reproducible-builds.org SOURCE_DATE_EPOCH specification), and
// \pdftrailerid{} removes the /ID, which otherwise hashes the file path.
// Sources are copied into a fresh temporary folder of a fixed shape, so
// the build folder's path does not matter.
package latex

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Options control a build.
type Options struct {
	// Main is the main file's name inside Files, e.g. "main.tex".
	Main string
	// Files maps slash-separated relative paths to content; they are
	// laid out as given (for example "main.tex", "generated/x.tex",
	// "../figures/a.pdf" is not allowed: use "figures/a.pdf").
	Files map[string][]byte
	// Date is the date written into the PDF.
	Date time.Time
	// Passes is how many times pdflatex runs (2 resolves references);
	// 0 means 2.
	Passes int
	// Engine is the program; "" means pdflatex.
	Engine string
	// Log, when set, receives the last pass's log, for Problems.
	Log *[]byte
}

// Error is a failed LaTeX build. Excerpt holds the relevant lines of the
// log (the "!" error lines and what follows them), not the whole log.
type Error struct {
	Err     error
	Excerpt string
}

func (e *Error) Error() string {
	return fmt.Sprintf("LaTeX failed: %v\n%s", e.Err, e.Excerpt)
}

func (e *Error) Unwrap() error { return e.Err }

// ErrNoEngine means pdflatex is not installed.
var ErrNoEngine = errors.New("pdflatex not found: install it with `apt-get install texlive-latex-base texlive-latex-recommended texlive-fonts-recommended lmodern` (mage all does this)")

// Build compiles the document and returns the PDF.
func Build(ctx context.Context, opt Options) ([]byte, error) {
	engine := opt.Engine
	if engine == "" {
		engine = "pdflatex"
	}
	path, err := exec.LookPath(engine)
	if err != nil {
		return nil, ErrNoEngine
	}
	passes := opt.Passes
	if passes == 0 {
		passes = 2
	}
	if _, ok := opt.Files[opt.Main]; !ok || !strings.HasSuffix(opt.Main, ".tex") {
		return nil, fmt.Errorf("latex: main file %q is not among the sources", opt.Main)
	}
	dir, err := os.MkdirTemp("", "pqrepro-latex-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	src := filepath.Join(dir, "src")
	for name, b := range opt.Files {
		clean := filepath.Clean(filepath.FromSlash(name))
		if filepath.IsAbs(clean) || strings.HasPrefix(clean, "..") {
			return nil, fmt.Errorf("latex: source path %q leaves the build folder", name)
		}
		p := filepath.Join(src, clean)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return nil, err
		}
		if err := os.WriteFile(p, b, 0o644); err != nil {
			return nil, err
		}
	}
	job := strings.TrimSuffix(opt.Main, ".tex")
	env := append(os.Environ(),
		"SOURCE_DATE_EPOCH="+strconv.FormatInt(opt.Date.Unix(), 10),
		"FORCE_SOURCE_DATE=1",
		"TZ=UTC",
		"max_print_line=10000",
	)
	// With a bibliography database among the sources, BibTeX runs after
	// the first pass (which writes the citations into the .aux file), and
	// two more passes resolve the citations and the references to them.
	bib := false
	for name := range opt.Files {
		bib = bib || strings.HasSuffix(name, ".bib")
	}
	if bib {
		passes = max(passes, 3)
	}
	for i := range passes {
		if bib && i == 1 {
			if err := runBibtex(ctx, src, job, env); err != nil {
				return nil, err
			}
		}
		cmd := exec.CommandContext(ctx, path,
			"-interaction=nonstopmode", "-halt-on-error", "-file-line-error",
			`\pdftrailerid{}\input{`+opt.Main+`}`)
		cmd.Dir = src
		cmd.Env = env
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Run(); err != nil {
			log, _ := os.ReadFile(filepath.Join(src, job+".log"))
			if len(log) == 0 {
				log = out.Bytes()
			}
			return nil, &Error{Err: fmt.Errorf("pass %d of %s: %w", i+1, engine, err), Excerpt: Excerpt(log)}
		}
	}
	pdf, err := os.ReadFile(filepath.Join(src, job+".pdf"))
	if err != nil {
		return nil, fmt.Errorf("latex: no PDF produced: %w", err)
	}
	if opt.Log != nil {
		if *opt.Log, err = os.ReadFile(filepath.Join(src, job+".log")); err != nil {
			return nil, fmt.Errorf("latex: read the log: %w", err)
		}
	}
	return pdf, nil
}

// runBibtex runs BibTeX on the job's .aux file. Its output (.bbl) depends
// only on the .aux and the .bib, so it is as reproducible as the rest.
func runBibtex(ctx context.Context, dir, job string, env []string) error {
	path, err := exec.LookPath("bibtex")
	if err != nil {
		return errors.New("bibtex not found: install it with `apt-get install texlive-binaries` (texlive-latex-base brings it)")
	}
	cmd := exec.CommandContext(ctx, path, job)
	cmd.Dir = dir
	cmd.Env = env
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return &Error{Err: fmt.Errorf("bibtex: %w", err), Excerpt: out.String()}
	}
	if bytes.Contains(out.Bytes(), []byte("Warning--")) {
		return &Error{Err: errors.New("bibtex warned (a missing field or an undefined citation): fix the entry in the .bib file"), Excerpt: out.String()}
	}
	return nil
}

// Problems lists what a finished build's log says is wrong with the
// document although a PDF was produced. That is, undefined references
// and citations, multiply defined labels, and overfull boxes wider than
// 1 pt (text running into the margin). A paper with any of these is not
// finished.
func Problems(log []byte) []string {
	var out []string
	sc := bufio.NewScanner(bytes.NewReader(log))
	sc.Buffer(make([]byte, 0, 64*1024), 1<<20)
	for sc.Scan() {
		l := sc.Text()
		switch {
		case strings.Contains(l, "LaTeX Warning: Reference") && strings.Contains(l, "undefined"),
			strings.Contains(l, "LaTeX Warning: Citation") && strings.Contains(l, "undefined"),
			strings.Contains(l, "multiply defined"),
			strings.Contains(l, "There were undefined references"),
			strings.Contains(l, "Float too large for page"):
			out = append(out, strings.TrimSpace(l))
		case strings.HasPrefix(l, "Overfull \\hbox") || strings.HasPrefix(l, "Overfull \\vbox"):
			if overfullPoints(l) > 1 {
				out = append(out, strings.TrimSpace(l))
			}
		}
	}
	return out
}

// overfullPoints reads "Overfull \hbox (12.3pt too wide) in paragraph".
func overfullPoints(l string) float64 {
	_, rest, ok := strings.Cut(l, "(")
	if !ok {
		return 0
	}
	num, _, _ := strings.Cut(rest, "pt")
	v, err := strconv.ParseFloat(num, 64)
	if err != nil {
		return 0
	}
	return v
}

// Excerpt returns the lines of a LaTeX log that explain a failure. That
// is, every error line (starting with "!" or in file:line: form) with the
// few lines after it, at most 40 lines in all.
func Excerpt(log []byte) string {
	var lines []string
	sc := bufio.NewScanner(bytes.NewReader(log))
	sc.Buffer(make([]byte, 0, 64*1024), 1<<20)
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	var out []string
	for i := 0; i < len(lines) && len(out) < 40; i++ {
		l := lines[i]
		if strings.HasPrefix(l, "!") || isFileLineError(l) {
			end := min(i+6, len(lines))
			out = append(out, lines[i:end]...)
			i = end - 1
		}
	}
	if len(out) == 0 {
		start := max(0, len(lines)-15)
		out = lines[start:]
	}
	if len(out) > 40 {
		out = out[:40]
	}
	return strings.Join(out, "\n")
}

// isFileLineError matches "./main.tex:12: Undefined control sequence."
func isFileLineError(l string) bool {
	parts := strings.SplitN(l, ":", 3)
	if len(parts) < 3 || !strings.HasSuffix(parts[0], ".tex") {
		return false
	}
	_, err := strconv.Atoi(parts[1])
	return err == nil
}
