package pipeline

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// templateDoc holds the analysis file template, between templateBegin and
// templateEnd, as a table: file, what it holds, the names it declares.
const (
	templateDoc   = "docs/authoring.md"
	templateBegin = "<!-- analysis template -->"
	templateEnd   = "<!-- end analysis template -->"
)

// templateExtra are the production files of an analysis package beyond
// the template, each with its reason: a study's own analysis and its
// renderings, which the other studies do not have. A file in neither the
// template nor this list fails TestAnalysisTemplate. The renderings of a
// file <concern>.go are <concern>_tables.go (tables, numbers and
// figures), and a reason says what the file holds, not which issue
// brought it (TestTemplateExtraNames).
var templateExtra = map[string]string{
	"tlsstudy/alternatives.go":           "Study A under other cells, Ths definitions and repeat runs: the specification curve's alternatives, a stage of their own over the same records",
	"tlsstudy/dependence.go":             "Study A's checks of serial dependence and drift, computed in Analyze from the per-connection samples, which results/tls.json does not hold",
	"tlsstudy/dependence_tables.go":      "the renderings of the drift and dependence checks",
	"tlsstudy/gap.go":                    "Study A's gap analysis: the paper's configurations in every cell of the run, which the host account reads",
	"tlsstudy/gap_tables.go":             "the renderings of the gap analysis",
	"tlsstudy/stalls_tables.go":          "the renderings of the stall account, in one table and macro set with the host's account (analysis/tlshost) of the same cells",
	"tlsstudy/stalls.go":                 "the Nagle and delayed-ACK stall account, computed in Analyze from the per-connection samples, which results/tls.json does not hold",
	"netstudy/direction.go":              "the direction of every comparison in generated words, for the prose",
	"netstudy/hygiene.go":                "Study B's measurement hygiene: late packets and serial controls",
	"netstudy/hygiene_tables.go":         "the rendering of the hygiene checks",
	"netstudy/inference.go":              "inference for dependent, drifting series: the block bootstrap",
	"netstudy/normalised.go":             "each difference beside the host's own prediction from its probe, for the comparison across hosts",
	"netstudy/normalised_tables.go":      "the rendering of the model's table and sentence",
	"netstudy/read.go":                   "reading Study B's design and rows from the dataset",
	"netstudy/toolchain.go":              "the toolchain factor",
	"netstudy/views.go":                  "the claim views: results without the handshakes a late packet touched",
	"picostudy/boards.go":                "the boards a run's images ran on (emulator or Pico)",
	"picostudy/configurations.go":        "the run's configurations: each image's factors, grouped, each summarised at its own clock and set beside the primary",
	"picostudy/configurations_tables.go": "the rendering of what each configuration's factors moved",
	"picostudy/recommendation.go":        "the original's deployment advice tested against signing deadlines",
	"picostudy/signing.go":               "ML-DSA signing split by its rejection loop: the single-iteration minimum and each step's cost",
	"picostudy/signing_tables.go":        "the rendering of the signing split",
	"picostudy/recommendation_tables.go": "the rendering of the recommendation",
}

// A templateFile is one row of the template.
type templateFile struct {
	name     string
	optional bool
	declares []string
}

var codeSpan = regexp.MustCompile("`([^`]+)`")

// parseTemplate reads the template's rows from the document's text.
func parseTemplate(doc string) ([]templateFile, error) {
	_, rest, ok := strings.Cut(doc, templateBegin)
	body, _, ok2 := strings.Cut(rest, templateEnd)
	if !ok || !ok2 {
		return nil, fmt.Errorf("%s has no %s ... %s block: restore the analysis file template", templateDoc, templateBegin, templateEnd)
	}
	var out []templateFile
	for _, line := range strings.Split(body, "\n") {
		cells := strings.Split(strings.Trim(strings.TrimSpace(line), "|"), "|")
		if len(cells) != 3 || strings.HasPrefix(strings.TrimSpace(cells[0]), "---") || strings.TrimSpace(cells[0]) == "file" {
			continue
		}
		m := codeSpan.FindStringSubmatch(cells[0])
		if m == nil || !strings.HasSuffix(m[1], ".go") {
			return nil, fmt.Errorf("%s: template row %q names no `<file>.go`", templateDoc, line)
		}
		f := templateFile{name: m[1], optional: strings.Contains(cells[0], "(optional)")}
		for _, d := range codeSpan.FindAllStringSubmatch(cells[2], -1) {
			f.declares = append(f.declares, d[1])
		}
		out = append(out, f)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: the analysis file template has no rows", templateDoc)
	}
	return out, nil
}

// checkTemplate returns one message per way the package pkg (its Go files,
// each with the top-level names it declares) departs from the template.
func checkTemplate(pkg string, files map[string][]string, tmpl []templateFile, extra map[string]string) []string {
	var bad []string
	inTemplate := map[string]bool{}
	for _, f := range tmpl {
		inTemplate[f.name] = true
		names, ok := files[f.name]
		if !ok {
			if !f.optional {
				bad = append(bad, fmt.Sprintf("analysis/%s has no %s (%s's template)", pkg, f.name, templateDoc))
			}
			continue
		}
		for _, d := range f.declares {
			if !slices.Contains(names, d) {
				bad = append(bad, fmt.Sprintf("analysis/%s/%s does not declare %s (%s's template)", pkg, f.name, d, templateDoc))
			}
		}
	}
	for _, name := range slices.Sorted(maps.Keys(files)) {
		if inTemplate[name] || strings.HasSuffix(name, "_test.go") || extra[pkg+"/"+name] != "" {
			continue
		}
		bad = append(bad, fmt.Sprintf("analysis/%s/%s is neither in %s's template nor in templateExtra with its reason", pkg, name, templateDoc))
	}
	return bad
}

// declared lists the Go files of dir with the top-level names each
// declares (functions, types, variables, constants; no methods).
func declared(t *testing.T, dir string) map[string][]string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]string{}
	fset := token.NewFileSet()
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".go") {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(dir, e.Name()), nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		names := []string{}
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				if d.Recv == nil {
					names = append(names, d.Name.Name)
				}
			case *ast.GenDecl:
				for _, sp := range d.Specs {
					switch sp := sp.(type) {
					case *ast.TypeSpec:
						names = append(names, sp.Name.Name)
					case *ast.ValueSpec:
						for _, n := range sp.Names {
							names = append(names, n.Name)
						}
					}
				}
			}
		}
		out[e.Name()] = names
	}
	return out
}

// TestAnalysisTemplate: every registered study has its analysis package
// analysis/<name>study, every analysis/*study package is a registered
// study's, and each follows docs/authoring.md's analysis file template.
func TestAnalysisTemplate(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", filepath.FromSlash(templateDoc)))
	if err != nil {
		t.Skipf("%s is not next to the module (a copy of the package?): %v", templateDoc, err)
	}
	tmpl, err := parseTemplate(string(b))
	if err != nil {
		t.Fatal(err)
	}
	dirs, err := filepath.Glob(filepath.Join("..", "analysis", "*study"))
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, d := range dirs {
		seen[filepath.Base(d)] = true
	}
	for _, s := range Studies() {
		if !seen[s.Name+"study"] {
			t.Errorf("study %s has no analysis/%sstudy", s.Name, s.Name)
		}
		delete(seen, s.Name+"study")
	}
	for pkg := range seen {
		t.Errorf("analysis/%s is no registered study's analysis", pkg)
	}
	used := map[string]bool{}
	for _, d := range dirs {
		pkg := filepath.Base(d)
		files := declared(t, d)
		for name := range files {
			used[pkg+"/"+name] = true
		}
		for _, msg := range checkTemplate(pkg, files, tmpl, templateExtra) {
			t.Error(msg)
		}
	}
	for f := range templateExtra {
		if !used[f] {
			t.Errorf("templateExtra lists analysis/%s, which does not exist: remove it", f)
		}
	}
}

// TestCheckTemplateCatches feeds the check a template and packages that
// depart from it in each way.
func TestCheckTemplateCatches(t *testing.T) {
	tmpl, err := parseTemplate("text\n" + templateBegin + "\n| file | holds | declares |\n|---|---|---|\n" +
		"| `results.go` | the results | `Results`, `DecodeResults` |\n| `doc.go` (optional) | the comment | |\n| `x_test.go` | a test | |\n" + templateEnd + "\n")
	if err != nil {
		t.Fatal(err)
	}
	if len(tmpl) != 3 || !tmpl[1].optional || !slices.Equal(tmpl[0].declares, []string{"Results", "DecodeResults"}) {
		t.Fatalf("parsed %+v", tmpl)
	}
	extra := map[string]string{"astudy/gap.go": "the gap analysis"}
	for _, tc := range []struct {
		name  string
		files map[string][]string
		want  []string
	}{
		{"complete", map[string][]string{"results.go": {"Results", "DecodeResults"}, "x_test.go": nil, "gap.go": nil, "y_test.go": nil}, nil},
		{"a file missing", map[string][]string{"results.go": {"Results", "DecodeResults"}}, []string{"analysis/astudy has no x_test.go"}},
		{"a name missing", map[string][]string{"results.go": {"Results"}, "x_test.go": nil}, []string{"analysis/astudy/results.go does not declare DecodeResults"}},
		{"an unexpected file", map[string][]string{"results.go": {"Results", "DecodeResults"}, "x_test.go": nil, "misc.go": nil}, []string{"analysis/astudy/misc.go is neither in"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bad := checkTemplate("astudy", tc.files, tmpl, extra)
			if len(bad) != len(tc.want) {
				t.Fatalf("violations %q, want %q", bad, tc.want)
			}
			for i := range bad {
				if !strings.HasPrefix(bad[i], tc.want[i]) {
					t.Errorf("violation %q, want one starting %q", bad[i], tc.want[i])
				}
			}
		})
	}
	if _, err := parseTemplate("no block"); err == nil {
		t.Error("a document without the template was accepted")
	}
	if _, err := parseTemplate(templateBegin + "\n| results | x | |\n" + templateEnd); err == nil {
		t.Error("a row naming no Go file was accepted")
	}
}

// TestTemplateExtraNames holds the exceptions to one naming scheme: a
// file of renderings is <concern>_tables.go beside its <concern>.go, and
// no reason cites an issue number.
func TestTemplateExtraNames(t *testing.T) {
	issueRef := regexp.MustCompile(`(?i)\bissues? \d+`)
	for file, why := range templateExtra {
		if issueRef.MatchString(why) {
			t.Errorf("%s: the reason %q cites an issue: say what the file holds", file, why)
		}
		if base, ok := strings.CutSuffix(file, "_tables.go"); ok {
			if _, err := os.Stat(filepath.Join("..", "analysis", base+".go")); err != nil {
				t.Errorf("%s renders a %s.go that does not exist", file, base)
			}
		}
		if strings.HasSuffix(file, "out.go") {
			t.Errorf("%s: renderings are named <concern>_tables.go", file)
		}
	}
}

// outputNames are the one naming scheme of a study's output paths and
// stage names, by what the constant's value starts (or is) with: a
// figure's base is Figure<X>, a table Table<X>, the macros NumbersFile, a
// results file <X>File, and a stage name an unexported stage<X> (nothing
// outside the package needs it, the crypto/tls way).
var outputNames = []struct {
	value, name *regexp.Regexp
	want        string
}{
	{regexp.MustCompile(`^[a-z]+:[a-z-]+$`), regexp.MustCompile(`^stage[A-Z]\w*$`), "stage<Name>, unexported"},
	{regexp.MustCompile(`^figures/`), regexp.MustCompile(`^Figure(?:[A-Z]\w*)?$`), "Figure<Name>"},
	{regexp.MustCompile(`^paper/generated/.*-numbers\.tex$`), regexp.MustCompile(`^NumbersFile$`), "NumbersFile"},
	{regexp.MustCompile(`^paper/generated/`), regexp.MustCompile(`^Table(?:[A-Z]\w*)?$`), "Table<Name>"},
	{regexp.MustCompile(`^results/`), regexp.MustCompile(`^(?:[A-Z]\w*)?File$`), "<Name>File"},
}

// checkOutputNames returns one message per constant of src that breaks
// outputNames, and per stage whose Name is not such a constant.
func checkOutputNames(name, src string) ([]string, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, name, src, parser.SkipObjectResolution)
	if err != nil {
		return nil, err
	}
	var bad []string
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.ValueSpec:
			for i, id := range n.Names {
				if i >= len(n.Values) {
					continue
				}
				lit, ok := n.Values[i].(*ast.BasicLit)
				if !ok || lit.Kind != token.STRING {
					continue
				}
				v, _ := strconv.Unquote(lit.Value)
				for _, r := range outputNames {
					if r.value.MatchString(v) {
						if !r.name.MatchString(id.Name) {
							bad = append(bad, fmt.Sprintf("%s: %s = %q: name it %s", fset.Position(id.Pos()), id.Name, v, r.want))
						}
						break
					}
				}
			}
		case *ast.CompositeLit:
			if sel, ok := n.Type.(*ast.SelectorExpr); !ok || sel.Sel.Name != "Stage" {
				return true
			}
			for _, e := range n.Elts {
				if kv, ok := e.(*ast.KeyValueExpr); ok && fmt.Sprint(kv.Key) == "Name" {
					if id, ok := kv.Value.(*ast.Ident); !ok || !strings.HasPrefix(id.Name, "stage") {
						bad = append(bad, fmt.Sprintf("%s: a stage's Name is a constant stage<Name>", fset.Position(kv.Pos())))
					}
				}
			}
		}
		return true
	})
	return bad, nil
}

// TestOutputNames holds every registered study's analysis packages to
// outputNames, so the studies name their stages and files alike.
func TestOutputNames(t *testing.T) {
	for _, s := range Studies() {
		for _, pkg := range s.Packages {
			if !strings.HasPrefix(pkg, "analysis/") {
				continue
			}
			files, err := filepath.Glob(filepath.Join("..", filepath.FromSlash(pkg), "*.go"))
			if err != nil {
				t.Fatal(err)
			}
			for _, f := range files {
				if strings.HasSuffix(f, "_test.go") {
					continue
				}
				b, err := os.ReadFile(f)
				if err != nil {
					t.Fatal(err)
				}
				bad, err := checkOutputNames(f, string(b))
				if err != nil {
					t.Fatal(err)
				}
				for _, msg := range bad {
					t.Error(msg)
				}
			}
		}
	}
	bad, err := checkOutputNames("x.go", "package x\nconst (\n\tStageAnalyze = \"x:analyze\"\n\tFigLatency = \"figures/x-latency\"\n\tTexNumbers = \"paper/generated/x-numbers.tex\"\n)\nvar s = repro.Stage{Name: \"x:tables\"}\n")
	if err != nil || len(bad) != 4 {
		t.Errorf("the check found %q (%v) in a file breaking the scheme four times, want four", bad, err)
	}
}
