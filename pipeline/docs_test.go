package pipeline

import (
	"bufio"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode"
)

// docsIndex is the page that must reach every page under docs/.
const docsIndex = "docs/README.md"

// mdLink matches an inline Markdown link or image: [text](target).
var mdLink = regexp.MustCompile(`\]\(([^)\s]+)\)`)

// readDoc reads a file of the repository by its slash path, skipping the
// test when the package is not next to the repository (a copy of it).
func readDoc(t *testing.T, rel string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", filepath.FromSlash(rel)))
	if err != nil {
		if os.IsNotExist(err) && rel == "README.md" {
			t.Skipf("README.md is not next to the module: %v", err)
		}
		t.Fatal(err)
	}
	return string(b)
}

// notesIndex is the page that must reach every dated note under
// docs/notes/; docsIndex links it.
const notesIndex = "docs/notes/README.md"

// docPages lists the Markdown pages the link check reads: the README,
// every docs/*.md and every dated note docs/notes/*.md, as slash paths
// from the repository root.
func docPages(t *testing.T) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join("..", "docs", "*.md"))
	if err != nil || len(m) == 0 {
		t.Skipf("no docs/*.md next to the module: %v", err)
	}
	pages := []string{"README.md"}
	for _, p := range m {
		pages = append(pages, "docs/"+filepath.Base(p))
	}
	notes, err := filepath.Glob(filepath.Join("..", "docs", "notes", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range notes {
		pages = append(pages, "docs/notes/"+filepath.Base(p))
	}
	return pages
}

// isNote says whether a page is a dated note, kept as it was written.
func isNote(page string) bool {
	return strings.HasPrefix(page, "docs/notes/")
}

// outsideCode returns the lines of a Markdown page that are not inside a
// fenced code block, with inline code spans blanked out.
func outsideCode(text string) []string {
	var out []string
	fenced := false
	sc := bufio.NewScanner(strings.NewReader(text))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		l := sc.Text()
		if strings.HasPrefix(strings.TrimSpace(l), "```") {
			fenced = !fenced
			out = append(out, "")
			continue
		}
		if fenced {
			out = append(out, "")
			continue
		}
		out = append(out, l)
	}
	return out
}

// slug is the anchor GitHub gives a heading: lower case, punctuation
// other than '-' and '_' dropped, spaces turned into '-'.
func slug(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(heading)) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// anchors returns the heading anchors of a Markdown page.
func anchors(text string) map[string]bool {
	a := map[string]bool{}
	for _, l := range outsideCode(text) {
		if h, ok := strings.CutPrefix(l, "#"); ok {
			a[slug(strings.TrimLeft(h, "#"))] = true
		}
	}
	return a
}

// TestDocsIndexReachesEveryPage: docs/README.md links every page under
// docs/, and docs/notes/README.md every dated note, so that no page is
// reachable only by knowing its name.
func TestDocsIndexReachesEveryPage(t *testing.T) {
	linked := map[string]bool{}
	for _, index := range []string{docsIndex, notesIndex} {
		for _, m := range mdLink.FindAllStringSubmatch(readDoc(t, index), -1) {
			target, _, _ := strings.Cut(m[1], "#")
			linked[path.Join(path.Dir(index), target)] = true
		}
	}
	for _, p := range docPages(t) {
		if p == "README.md" || p == docsIndex {
			continue
		}
		index := docsIndex
		if isNote(p) && p != notesIndex {
			index = notesIndex
		}
		if !linked[p] {
			t.Errorf("%s is linked from nowhere in %s: add one line for it there", p, index)
		}
	}
	if !strings.Contains(readDoc(t, "README.md"), "](docs/README.md)") {
		t.Errorf("README.md does not link %s", docsIndex)
	}
}

// TestDocsRelativeLinks: every relative link of the README and of
// docs/*.md names a file of the repository, and an anchor on a Markdown
// page names one of its headings.
func TestDocsRelativeLinks(t *testing.T) {
	texts := map[string]string{}
	for _, p := range docPages(t) {
		texts[p] = readDoc(t, p)
	}
	for _, p := range docPages(t) {
		for i, l := range outsideCode(texts[p]) {
			l = regexp.MustCompile("`[^`]*`").ReplaceAllString(l, "")
			for _, m := range mdLink.FindAllStringSubmatch(l, -1) {
				target := m[1]
				if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
					continue
				}
				file, anchor, _ := strings.Cut(target, "#")
				rel := p
				if file != "" {
					rel = path.Join(path.Dir(p), file)
					if _, err := os.Stat(filepath.Join("..", filepath.FromSlash(rel))); err != nil {
						t.Errorf("%s:%d: link %s: %s does not exist", p, i+1, target, rel)
						continue
					}
				}
				if anchor == "" || !strings.HasSuffix(rel, ".md") {
					continue
				}
				text, ok := texts[rel]
				if !ok {
					text = readDoc(t, rel)
				}
				if !anchors(text)[anchor] {
					t.Errorf("%s:%d: link %s: %s has no heading with anchor #%s", p, i+1, target, rel, anchor)
				}
			}
		}
	}
}

// readmeFigures are the tokens with a digit that README.md may state:
// names (of schemes, standards, files, hardware), not measured or
// computed figures. A figure the README states must be checked against
// what the code computes by a test here, like the Go version below.
var readmeFigures = map[string]bool{
	"1.27.3": true, "go1.27.3": true, // checked against go.mod below
	"1": true, "2": true, "3": true, "4": true, // the steps
	"1.3":         true, // TLS 1.3
	"ML-KEM-1024": true, "ML-KEM": true, "ML-DSA": true, "SLH-DSA": true,
	"RP2040": true, "x86-64": true, "arm64": true,
	"SHA256SUMS": true, "SHA-256": true, "CITATION.cff": true,
	"3-Clause": true, "4.0": true, // the licences: BSD 3-Clause, CC BY 4.0
	"AF_PACKET": true, "sha256sum": true,
}

// TestReadmeStatesNoUncheckedFigure: the README states no measured or
// computed figure (file counts, claim counts, times, rates) that no test
// checks, since nothing would notice it going stale; and the Go version it
// names is the one go.mod requires.
func TestReadmeStatesNoUncheckedFigure(t *testing.T) {
	readme := readDoc(t, "README.md")
	token := regexp.MustCompile("[^\\s()\\[\\]{},;:\"'*|<>=`]*\\d[^\\s()\\[\\]{},;:\"'*|<>=`]*")
	seen := map[string]bool{}
	for i, l := range strings.Split(readme, "\n") {
		for _, tok := range token.FindAllString(l, -1) {
			tok = strings.Trim(tok, "`.")
			if tok == "" || readmeFigures[tok] || seen[tok] {
				continue
			}
			seen[tok] = true
			t.Errorf("README.md:%d states %q: a figure there must be generated or checked by a test (pipeline/docs_test.go), or left to the docs page it belongs to", i+1, tok)
		}
	}

	gomod := readDoc(t, "go.mod")
	want := regexp.MustCompile(`(?m)^go (\S+)$`).FindStringSubmatch(gomod)
	if want == nil {
		t.Fatal("go.mod has no go line")
	}
	for _, m := range regexp.MustCompile(`GOTOOLCHAIN=go([0-9.]*[0-9])|Go ([0-9]+\.[0-9]+\.[0-9]+)`).FindAllStringSubmatch(readme, -1) {
		if v := m[1] + m[2]; v != want[1] {
			t.Errorf("README.md names Go %s, go.mod requires go %s", v, want[1])
		}
	}
}

// mageTargets returns the targets magefile.go defines, as `mage -l`
// names them but in lower case: each exported function, and each
// method of a namespace as <namespace>:<method>.
func mageTargets(t *testing.T) []string {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), filepath.Join("..", "magefile.go"), nil, 0)
	if err != nil {
		t.Skipf("magefile.go is not next to the module: %v", err)
	}
	var out []string
	for _, d := range f.Decls {
		fn, ok := d.(*ast.FuncDecl)
		if !ok || !fn.Name.IsExported() {
			continue
		}
		name := strings.ToLower(fn.Name.Name)
		if fn.Recv != nil {
			if id, ok := fn.Recv.List[0].Type.(*ast.Ident); ok {
				name = strings.ToLower(id.Name) + ":" + name
			}
		}
		out = append(out, name)
	}
	slices.Sort(out)
	return out
}

// tableTargets returns the targets named in the first column of a
// Markdown table whose header starts with "| target |".
func tableTargets(text string) []string {
	var out []string
	in := false
	for _, l := range strings.Split(text, "\n") {
		switch {
		case strings.HasPrefix(l, "| target |"):
			in = true
		case in && strings.HasPrefix(l, "|---"):
		case in && strings.HasPrefix(l, "|"):
			first := strings.SplitN(l, "|", 3)[1]
			for _, m := range regexp.MustCompile("`([a-zA-Z:]+)`").FindAllStringSubmatch(first, -1) {
				out = append(out, strings.ToLower(m[1]))
			}
		default:
			in = false
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// TestTargetTables: docs/targets.md's table has a row for every target
// of magefile.go and no other; the README's shorter table names only
// real targets.
func TestTargetTables(t *testing.T) {
	targets := mageTargets(t)
	doc := tableTargets(readDoc(t, "docs/targets.md"))
	if !slices.Equal(doc, targets) {
		t.Errorf("docs/targets.md's table lists %v,\nmagefile.go defines %v", doc, targets)
	}
	for _, name := range tableTargets(readDoc(t, "README.md")) {
		if !slices.Contains(targets, name) {
			t.Errorf("README.md's target table names %s, which magefile.go does not define", name)
		}
	}
}

// duration matches a wall time as the docs write one: "58 s", "1 min 31 s",
// "70 min 17 s", "3.3 min", "36 minutes", "1 h 6 min"; not a name such as
// SHA2-128s.
var duration = regexp.MustCompile(`(^|[^\w-])(\d[\d.,]*\s?(h|min|minutes|m|s)\b(\s\d+\s?(min|s)\b)*)`)

// studyRun matches what names a whole study run or `all`'s, whose wall
// time docs/timings.toml holds.
var studyRun = regexp.MustCompile(`(?i)\b(full|quick) (run|profile)|whole command`)

// listItem matches the start of a Markdown list item, which starts a new
// block of prose.
var listItem = regexp.MustCompile(`^\s*([-*]|\d+\.)\s`)

// sentenceEnd matches the end of a sentence inside a block of prose.
var sentenceEnd = regexp.MustCompile("[.;]\\s+([A-Z(`*])")

// A statement is a sentence of prose or a table row, with the index of
// the line it starts on.
type statement struct {
	line int
	text string
}

// statements splits a page's lines into sentences of prose (a block ends
// at a blank line, a list item or a table) and table rows, each row
// followed by its table's header, so that a row is read with what its
// columns are.
func statements(lines []string) []statement {
	var out []statement
	var block []string
	start, header := 0, ""
	flush := func() {
		text := strings.Join(strings.Fields(strings.Join(block, " ")), " ")
		for text != "" {
			end := len(text)
			if loc := sentenceEnd.FindStringSubmatchIndex(text); loc != nil {
				end = loc[2]
			}
			out = append(out, statement{start, text[:end]})
			text = text[end:]
		}
		block = nil
	}
	for i, l := range lines {
		switch {
		case strings.HasPrefix(l, "|"):
			flush()
			if header == "" {
				header = l
			}
			out = append(out, statement{i, l + " " + header})
			continue
		case strings.TrimSpace(l) == "" || listItem.MatchString(l):
			flush()
		}
		header = ""
		if strings.TrimSpace(l) != "" {
			if block == nil {
				start = i
			}
			block = append(block, l)
		}
	}
	flush()
	return out
}

// runTimeLines returns the indexes of the lines where a statement of a
// study run's time starts: a sentence or a table row (with its header)
// naming a study run and stating a wall time.
func runTimeLines(lines []string) []int {
	var out []int
	for _, st := range statements(lines) {
		if duration.MatchString(st.text) && studyRun.MatchString(st.text) {
			out = append(out, st.line)
		}
	}
	return slices.Compact(out)
}

// TestDocsRunTimesFromTimings: a study run's measured wall time is stated
// once, in docs/timings.toml, and shown by docs/targets.md's generated
// rows. Any other page that states one (a line naming a study run and a
// wall time, or a table row with a wall time under a header naming one)
// repeats it and would go stale: link to the table instead. Dated notes
// (docs/notes/) keep what was measured then and are not checked.
func TestDocsRunTimesFromTimings(t *testing.T) {
	for _, p := range docPages(t) {
		if isNote(p) {
			continue
		}
		lines := outsideCode(readDoc(t, p))
		generated := func(int) bool { return false }
		if p == targetsDoc {
			first, last, err := studyRowSpan(lines)
			if err != nil {
				t.Fatal(err)
			}
			generated = func(i int) bool { return i >= first && i <= last }
		}
		for _, i := range runTimeLines(lines) {
			if !generated(i) {
				t.Errorf("%s:%d states a study run's time: link to docs/targets.md's table, which shows docs/timings.toml, instead",
					p, i+1)
			}
		}
	}
}

// TestRunTimeLines feeds runTimeLines a page with each kind of
// statement of a study run's time, and statements that are not one.
func TestRunTimeLines(t *testing.T) {
	page := strings.Split(`Study B's full run took 70 min 17 s.

A no-op build takes 0.3 s.

| study | quick profile | full profile |
|---|---|---|
| C `+"`pico`"+` | 1 min 17 s (5 images) | 15.5 min |

| what | figure |
|---|---|
| the whole command | 1 h 10 min |
| verify | 20 s |

- A build of the full profile's outputs
  is quick. The quick profile's three controls add
  about 8 min.
- The quick run signs with SHA2-128s in 2 s.
- The quick run signs with SHA2-128s.`, "\n")
	if got, want := runTimeLines(page), []int{0, 6, 10, 13, 16}; !slices.Equal(got, want) {
		t.Errorf("runTimeLines = %v, want %v", got, want)
	}
}
