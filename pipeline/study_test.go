package pipeline

import (
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"maps"
	"os"
	"path/filepath"
	"pqrepro/analysis/claims"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/BurntSushi/toml"

	"pqrepro/internal/atomicfile"
)

var update = flag.Bool("update", false, "rewrite the study rows of docs/targets.md's target table from the registry and docs/timings.toml")

// TestRegistrations checks what every registration must hold: a unique
// name and label, the texts the appendix and docs/targets.md show, its run
// target first, its claims and its comparison of two runs.
func TestRegistrations(t *testing.T) {
	names, labels := map[string]bool{}, map[string]bool{}
	for _, s := range Studies() {
		if names[s.Name] || labels[s.Label] {
			t.Errorf("study %s (label %q): name or label registered twice", s.Name, s.Label)
		}
		names[s.Name], labels[s.Label] = true, true
		if s.Label == "" || s.Title == "" || s.Citation == "" {
			t.Errorf("study %s: Label, Title and Citation must be set", s.Name)
		}
		if len(s.Targets) == 0 || !slices.Contains(s.Targets[0].Names, s.Name+":run") {
			t.Errorf("study %s: its first row of docs/targets.md must be %s:run", s.Name, s.Name)
		}
		for _, td := range s.Targets {
			for _, n := range td.Names {
				if !strings.HasPrefix(n, s.Name+":") {
					t.Errorf("study %s: target %s is not in its namespace", s.Name, n)
				}
			}
			if td.Does == "" || strings.Contains(td.Does, "|") {
				t.Errorf("study %s: row %v needs Does, without a |", s.Name, td.Names)
			}
		}
		if s.Run == nil || s.StagesFor == nil || s.Claims == nil || s.Results == nil {
			t.Errorf("study %s: Run, StagesFor, Claims and Results must be set", s.Name)
		}
		if s.Claims != nil {
			cat := s.Claims()
			if cat.Study != s.Name {
				t.Errorf("study %s registers the claims of study %q", s.Name, cat.Study)
			}
			if len(cat.Claims) == 0 {
				t.Errorf("study %s has no claims", s.Name)
			}
			for _, c := range cat.Claims {
				if c.Study != s.Name {
					t.Errorf("study %s: claim %s belongs to study %q", s.Name, c.ID, c.Study)
				}
			}
		}
	}
	// Every kind of leftover names a target that removes it, and a study
	// that lists leftovers cleans them.
	targets := map[string]bool{"clean": true}
	for _, s := range Studies() {
		for _, td := range s.Targets {
			for _, n := range td.Names {
				targets[n] = true
			}
		}
	}
	for _, s := range Studies() {
		if s.Leftovers == nil {
			continue
		}
		if s.Clean == nil {
			t.Errorf("study %s lists leftovers but has no Clean", s.Name)
		}
		for _, k := range s.Leftovers() {
			if k.What == "" || !targets[k.RemovedBy] {
				t.Errorf("study %s: leftover %q is removed by %q, which is not clean or a registered study target", s.Name, k.What, k.RemovedBy)
			}
		}
	}
	if got := len(claims.All(catalogues())); got == 0 {
		t.Error("the registry's catalogues are empty")
	}
}

// targetsDoc is the document whose target table holds the study rows,
// and timingsFile the measured times of those rows (a row's first target
// -> its time), relative to the module root.
const (
	targetsDoc  = "docs/targets.md"
	timingsFile = "docs/timings.toml"
)

// readTimings reads the measured times of the study rows.
func readTimings(path string) (map[string]string, error) {
	var times map[string]string
	md, err := toml.DecodeFile(path, &times)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if und := md.Undecoded(); len(und) > 0 {
		return nil, fmt.Errorf("%s: unexpected keys %v: every value is a row's time as a string", path, und)
	}
	return times, nil
}

// studyRows renders the registered studies' rows of the target table,
// in the paper's order: what each row does from its registration, how
// long it takes from times. A row without a time, a time without a row
// and a time holding a | are errors.
func studyRows(times map[string]string) ([]string, error) {
	var rows []string
	used := map[string]bool{}
	for _, s := range paperOrder() {
		for _, td := range s.Targets {
			var names []string
			for _, n := range td.Names {
				names = append(names, "`"+n+"`")
			}
			key := td.Names[0]
			tm, ok := times[key]
			if !ok || tm == "" || strings.Contains(tm, "|") {
				return nil, fmt.Errorf("%s: %q needs its measured time (a string without a |)", timingsFile, key)
			}
			used[key] = true
			rows = append(rows, fmt.Sprintf("| %s | %s | %s |", strings.Join(names, ", "), td.Does, tm))
		}
	}
	for k := range times {
		if !used[k] {
			return nil, fmt.Errorf("%s: %q is the first target of no registered row (pipeline/study_<name>.go): remove it or fix its name", timingsFile, k)
		}
	}
	return rows, nil
}

// studyRowSpan finds the consecutive rows of the target table that
// belong to registered studies (their first target is <study>:...).
func studyRowSpan(lines []string) (first, last int, err error) {
	first, last = -1, -1
	for i, l := range lines {
		for _, s := range studies {
			if strings.HasPrefix(l, "| `"+s.Name+":") {
				if first < 0 {
					first = i
				}
				last = i
			}
		}
	}
	if first < 0 {
		return 0, 0, fmt.Errorf("%s's target table has no row of a study target (| `<study>:run` | ...): add one, then run this test with -update", targetsDoc)
	}
	for i := first; i <= last; i++ {
		if !strings.HasPrefix(lines[i], "| ") {
			return 0, 0, fmt.Errorf("%s line %d: the study rows of the target table must be consecutive, found %q", targetsDoc, i+1, lines[i])
		}
	}
	return first, last, nil
}

// TestTargetsStudyRows: the study rows of docs/targets.md's target table
// are the registrations' Targets with the measured times of
// docs/timings.toml. A test rather than a generator, so that `go test
// ./...` (CI) fails when someone edits one and not the other; `go test
// ./pipeline -run TestTargetsStudyRows -update` rewrites the rows.
func TestTargetsStudyRows(t *testing.T) {
	path := filepath.Join("..", filepath.FromSlash(targetsDoc))
	b, err := os.ReadFile(path)
	if err != nil {
		t.Skipf("%s is not next to the module (a copy of the package?): %v", targetsDoc, err)
	}
	times, err := readTimings(filepath.Join("..", filepath.FromSlash(timingsFile)))
	if err != nil {
		t.Fatal(err)
	}
	want, err := studyRows(times)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(b), "\n")
	first, last, err := studyRowSpan(lines)
	if err != nil {
		t.Fatal(err)
	}
	got := lines[first : last+1]
	if slices.Equal(got, want) {
		return
	}
	if *update {
		out := slices.Concat(lines[:first], want, lines[last+1:])
		if err := atomicfile.WriteFile(path, []byte(strings.Join(out, "\n")), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("rewrote %s lines %d-%d from the registry and %s", targetsDoc, first+1, last+1, timingsFile)
		return
	}
	t.Errorf("%s lines %d-%d (the study targets) differ from the registry (pipeline/study_<name>.go) and %s; run `go test ./pipeline -run TestTargetsStudyRows -update`\ndoc:\n%s\nregistry:\n%s",
		targetsDoc, first+1, last+1, timingsFile, strings.Join(got, "\n"), strings.Join(want, "\n"))
}

func TestStudyRowsTimings(t *testing.T) {
	all := map[string]string{}
	for _, s := range Studies() {
		for _, td := range s.Targets {
			all[td.Names[0]] = "1 s"
		}
	}
	if _, err := studyRows(all); err != nil {
		t.Fatalf("every row timed: %v", err)
	}
	missing := maps.Clone(all)
	delete(missing, "tls:run")
	if _, err := studyRows(missing); err == nil || !strings.Contains(err.Error(), `"tls:run"`) {
		t.Errorf("a row without a time: %v", err)
	}
	extra := maps.Clone(all)
	extra["tls:gone"] = "1 s"
	if _, err := studyRows(extra); err == nil || !strings.Contains(err.Error(), `"tls:gone"`) {
		t.Errorf("a time without a row: %v", err)
	}
	pipe := maps.Clone(all)
	pipe["net:run"] = "1 | 2"
	if _, err := studyRows(pipe); err == nil {
		t.Error("a time holding a | was accepted")
	}
}

func TestStudyRowSpan(t *testing.T) {
	for _, tc := range []struct {
		name        string
		readme      string
		first, last int
		bad         bool
	}{
		{"rows", "| `build` | b | t |\n| `tls:run` | r | t |\n| `pico:build`, `pico:read` | p | t |\n\ntext", 1, 2, false},
		{"no study row", "| `build` | b | t |\n", 0, 0, true},
		{"not consecutive", "| `tls:run` | r | t |\n\n| `pico:run` | p | t |", 0, 0, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			first, last, err := studyRowSpan(strings.Split(tc.readme, "\n"))
			if (err != nil) != tc.bad || first != tc.first || last != tc.last {
				t.Errorf("span %d-%d, %v", first, last, err)
			}
		})
	}
}

// TestMagefileNamespaces: every registered study has a Mage namespace
// whose Run target calls pipeline.RunTarget with the study's name, and
// every target a registration documents is a method of that namespace.
func TestMagefileNamespaces(t *testing.T) {
	path := filepath.Join("..", "magefile.go")
	f, err := parser.ParseFile(token.NewFileSet(), path, nil, 0)
	if err != nil {
		t.Skipf("magefile.go is not next to the module: %v", err)
	}
	methods := map[string]map[string]*ast.FuncDecl{} // namespace (lower case) -> method (lower case)
	for _, d := range f.Decls {
		fd, ok := d.(*ast.FuncDecl)
		if !ok || fd.Recv == nil || len(fd.Recv.List) != 1 {
			continue
		}
		id, ok := fd.Recv.List[0].Type.(*ast.Ident)
		if !ok {
			continue
		}
		ns := strings.ToLower(id.Name)
		if methods[ns] == nil {
			methods[ns] = map[string]*ast.FuncDecl{}
		}
		methods[ns][strings.ToLower(fd.Name.Name)] = fd
	}
	for _, s := range Studies() {
		ns := methods[s.Name]
		if ns == nil {
			t.Errorf("magefile.go has no namespace for study %s: add `type X mg.Namespace` and its Run", s.Name)
			continue
		}
		for _, td := range s.Targets {
			for _, n := range td.Names {
				if _, ok := ns[strings.TrimPrefix(n, s.Name+":")]; !ok {
					t.Errorf("%s documents %s, which magefile.go lacks", targetsDoc, n)
				}
			}
		}
		run := ns["run"]
		if run == nil {
			t.Errorf("magefile.go: study %s's namespace has no Run", s.Name)
			continue
		}
		found := false
		ast.Inspect(run, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			if sel, ok := call.Fun.(*ast.SelectorExpr); ok && sel.Sel.Name == "RunTarget" && len(call.Args) == 3 {
				if lit, ok := call.Args[2].(*ast.BasicLit); ok {
					found = found || lit.Value == strconv.Quote(s.Name)
				}
			}
			return true
		})
		if !found {
			t.Errorf("magefile.go: %s:run must call pipeline.RunTarget(ctx, cfg, %q)", s.Name, s.Name)
		}
	}
}

// TestBundleTargets: the artifact appendix describes each registered
// study's run target, in the paper's order, from its registration.
func TestBundleTargets(t *testing.T) {
	targets := bundleTargets(t.TempDir())
	var i int
	for _, s := range paperOrder() {
		tg := targets[i]
		i++
		if tg.Name != s.Name+":run" || tg.Study != s.Name || tg.StudyTitle != "Study "+s.Label+": "+s.Citation || tg.Doc != s.Targets[0].Does || tg.Root != s.NeedsRoot {
			t.Errorf("target %d = %+v, want study %s's run target", i, tg, s.Name)
		}
	}
	var rest []string
	for _, tg := range targets[i:] {
		rest = append(rest, tg.Name)
	}
	if !slices.Equal(rest, []string{"build", "verify", "paper", "test"}) {
		t.Errorf("the targets after the studies' = %v", rest)
	}
}
