package pipeline

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"go/parser"
	"go/token"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// The module's layers, bottom to top, as the folders show them:
//
//	internal/     the bottom: study-agnostic libraries (stages and hashing,
//	              atomic writes, specs, provenance, rendering, LaTeX,
//	              bundling, locks, remotes, installers)
//	datasets/     each study's dataset format, read by its experiment
//	              (writing) and its analysis (reading)
//	experiments/  how raw data is made        } siblings: neither
//	analysis/     raw data -> results, claims } imports the other
//	reproduce/    measuring again and judging: imports analysis/ and
//	              internal/, never experiments/, and no study's package
//	pipeline/, cmd/, the magefile   the composition root: imports anything
//
// A package may import its own layer and the layers below; experiments
// and analysis may not import each other. And only the composition root
// may import the packages of every registered study (Study.Packages);
// inside it, only a study's registration (pipeline/study_<name>.go and
// its tests) imports the study's packages (TestRegistrationImports).
// Outside it, a study's packages (studyOf) import no other study's, and
// the instruments (experiments/instruments/) import no study's: what two
// studies share is an instrument, and an instrument is passed what it
// needs of a study. The rules hold for a package's tests too.
type layer int

const (
	bottom layer = iota
	datasets
	experiments
	analysis
	reproduceLayer
	root
)

func (l layer) String() string {
	return [...]string{"internal/ (bottom)", "datasets/", "experiments/", "analysis/", "reproduce/", "the composition root"}[l]
}

// may lists, per layer, the layers its packages may import.
var may = map[layer][]layer{
	bottom:         {bottom},
	datasets:       {bottom, datasets},
	experiments:    {bottom, datasets, experiments},
	analysis:       {bottom, datasets, analysis},
	reproduceLayer: {bottom, analysis, reproduceLayer},
	root:           {bottom, datasets, experiments, analysis, reproduceLayer, root},
}

// layerOf is the layer of a package folder relative to the module root
// ("" is the root folder: the magefile's package main).
func layerOf(dir string) (layer, bool) {
	top, _, _ := strings.Cut(dir, "/")
	switch top {
	case "internal":
		return bottom, true
	case "datasets":
		return datasets, true
	case "experiments":
		return experiments, true
	case "analysis":
		return analysis, true
	case "reproduce":
		return reproduceLayer, true
	case "pipeline", "cmd", "":
		return root, true
	}
	return 0, false
}

// A goPackage is what the layering rules need of `go list -json`: the
// folder relative to the module root, the module's packages it imports
// directly, those its tests import (TestImports and XTestImports, the
// package itself left out) and all it depends on (tests not included).
type goPackage struct {
	Dir         string
	Imports     []string
	TestImports []string
	Deps        []string
}

// isInstrument reports whether dir is under experiments/instruments/.
func isInstrument(dir string) bool {
	return strings.HasPrefix(dir, "experiments/instruments/")
}

// checkLayers returns one message per violation, naming the importing
// package and the offending import ("in its tests" when only its tests
// import it).
func checkLayers(pkgs []goPackage, studyPackages map[string][]string) []string {
	var bad []string
	for _, p := range pkgs {
		from, ok := layerOf(p.Dir)
		if !ok {
			bad = append(bad, fmt.Sprintf("%s is in no layer: put it under internal/, datasets/, experiments/, analysis/, reproduce/ or pipeline/", p.Dir))
			continue
		}
		own := studyOf(p.Dir, studyPackages)
		check := func(imp, where string) {
			if to, ok := layerOf(imp); ok && !slices.Contains(may[from], to) {
				bad = append(bad, fmt.Sprintf("%s imports %s%s: %s may not import %s", p.Dir, imp, where, from, to))
				return
			}
			of := studyOf(imp, studyPackages)
			switch {
			case from == root || of == "" || of == own:
			case isInstrument(p.Dir):
				bad = append(bad, fmt.Sprintf("%s imports %s%s, a package of study %s: an instrument knows no study; pass in what it needs", p.Dir, imp, where, of))
			case from == reproduceLayer:
				bad = append(bad, fmt.Sprintf("%s imports %s%s, a package of study %s: the reproduce side knows no study; the registry passes it a reproduce.Study", p.Dir, imp, where, of))
			case own != "":
				bad = append(bad, fmt.Sprintf("%s imports %s%s, a package of study %s: a study's packages import no other study's; move what both use to experiments/instruments/ (or analysis/, internal/)", p.Dir, imp, where, of))
			}
		}
		for _, imp := range p.Imports {
			check(imp, "")
		}
		for _, imp := range p.TestImports {
			if !slices.Contains(p.Imports, imp) {
				check(imp, " in its tests")
			}
		}
		if from == root || len(studyPackages) < 2 {
			continue
		}
		var via []string
		for _, name := range slices.Sorted(maps.Keys(studyPackages)) {
			for _, sp := range studyPackages[name] {
				if p.Dir == sp || slices.Contains(p.Deps, sp) {
					via = append(via, name+" via "+sp)
					break
				}
			}
		}
		if len(via) == len(studyPackages) {
			bad = append(bad, fmt.Sprintf("%s depends on the packages of every study (%s): only the composition root (pipeline/, cmd/, the magefile) may", p.Dir, strings.Join(via, ", ")))
		}
	}
	return bad
}

// goList runs `go list -deps -json` with args in the module root and
// returns the module's packages, folders relative to the root.
func goList(t *testing.T, modRoot string, args ...string) []goPackage {
	t.Helper()
	cmd := exec.Command("go", append([]string{"list", "-deps", "-json"}, args...)...)
	cmd.Dir = modRoot
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list %v: %v\n%s", args, err, stderr.String())
	}
	const module = "pqrepro"
	rel := func(path string) (string, bool) {
		if path == module {
			return "", true
		}
		r, ok := strings.CutPrefix(path, module+"/")
		return r, ok
	}
	var pkgs []goPackage
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p struct {
			ImportPath   string
			Module       *struct{ Path string }
			Imports      []string
			TestImports  []string
			XTestImports []string
			Deps         []string
		}
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("go list output: %v", err)
		}
		dir, ok := rel(p.ImportPath)
		if !ok || p.Module == nil || p.Module.Path != module {
			continue
		}
		gp := goPackage{Dir: dir}
		for _, i := range p.Imports {
			if r, ok := rel(i); ok {
				gp.Imports = append(gp.Imports, r)
			}
		}
		for _, i := range slices.Concat(p.TestImports, p.XTestImports) {
			if r, ok := rel(i); ok && r != dir && !slices.Contains(gp.TestImports, r) {
				gp.TestImports = append(gp.TestImports, r)
			}
		}
		for _, d := range p.Deps {
			if r, ok := rel(d); ok {
				gp.Deps = append(gp.Deps, r)
			}
		}
		pkgs = append(pkgs, gp)
	}
	return pkgs
}

// TestLayering checks every package of the module, the magefile's
// included, against the layering rules.
func TestLayering(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("the go command is not on PATH: the layering test runs go list")
	}
	modRoot, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	pkgs := goList(t, modRoot, "./...")
	seen := map[string]bool{}
	for _, p := range pkgs {
		seen[p.Dir] = true
	}
	for _, p := range goList(t, modRoot, "-tags", "mage", ".") {
		if !seen[p.Dir] {
			pkgs = append(pkgs, p)
		}
	}
	if !seen["pipeline"] || !seen["internal/repro"] {
		t.Fatalf("go list found %d packages, not this module's", len(pkgs))
	}
	studyPackages := map[string][]string{}
	for _, s := range Studies() {
		for _, sp := range s.Packages {
			if !seen[sp] {
				t.Errorf("study %s lists package %s, which does not exist", s.Name, sp)
			}
		}
		studyPackages[s.Name] = s.Packages
	}
	found := map[string]bool{}
	for _, msg := range checkLayers(pkgs, studyPackages) {
		edge, _, _ := strings.Cut(msg, ":")
		if pending[edge] != "" {
			found[edge] = true
			continue
		}
		t.Error(msg)
	}
	for edge, why := range pending {
		if !found[edge] {
			t.Errorf("%q is listed as pending (%s) but is no longer a violation: remove it from pending", edge, why)
		}
	}
}

// pending are the violations that a change under way removes, each as
// "<package> imports <import>" with the reason; the test fails when one is
// gone, so that the list only shrinks. Empty: the dataset packages
// (datasets/tlsdata, netdata, picodata) removed the last ones.
var pending = map[string]string{}

// TestCheckLayersCatches feeds the rules a synthetic module with one
// violation of each kind, and one that keeps every rule.
func TestCheckLayersCatches(t *testing.T) {
	studies := map[string][]string{"a": {"experiments/a", "analysis/a"}, "b": {"experiments/b", "analysis/b"}}
	for _, tc := range []struct {
		name string
		pkg  goPackage
		want string // "" is no violation
	}{
		{"analysis imports experiments", goPackage{Dir: "analysis/a", Imports: []string{"experiments/a"}, Deps: []string{"experiments/a"}},
			"analysis/a imports experiments/a: analysis/ may not import experiments/"},
		{"experiments import analysis", goPackage{Dir: "experiments/a", Imports: []string{"analysis/stats"}},
			"experiments/a imports analysis/stats: experiments/ may not import analysis/"},
		{"bottom imports analysis", goPackage{Dir: "internal/jsonnum", Imports: []string{"analysis/stats"}},
			"internal/jsonnum imports analysis/stats: internal/ (bottom) may not import analysis/"},
		{"bottom imports the root", goPackage{Dir: "internal/bundle", Imports: []string{"pipeline"}},
			"internal/bundle imports pipeline: internal/ (bottom) may not import the composition root"},
		{"bottom imports a dataset", goPackage{Dir: "internal/repro", Imports: []string{"datasets/adata"}},
			"internal/repro imports datasets/adata: internal/ (bottom) may not import datasets/"},
		{"dataset imports experiments", goPackage{Dir: "datasets/adata", Imports: []string{"experiments/instruments/capture"}},
			"datasets/adata imports experiments/instruments/capture: datasets/ may not import experiments/"},
		{"every study outside the root", goPackage{Dir: "analysis/claims", Imports: []string{"analysis/a", "analysis/b"}, Deps: []string{"analysis/a", "analysis/b", "internal/repro"}},
			"analysis/claims depends on the packages of every study (a via analysis/a, b via analysis/b): only the composition root"},
		{"no layer", goPackage{Dir: "tools/x"}, "tools/x is in no layer"},
		{"a test imports across layers", goPackage{Dir: "internal/magemain", TestImports: []string{"internal/treelock", "experiments/instruments/linkemu"}},
			"internal/magemain imports experiments/instruments/linkemu in its tests: internal/ (bottom) may not import experiments/"},
		{"an instrument imports a study", goPackage{Dir: "experiments/instruments/sshhost", Imports: []string{"experiments/instruments/handshake", "experiments/a/openssl"}},
			"experiments/instruments/sshhost imports experiments/a/openssl, a package of study a: an instrument knows no study"},
		{"an instrument's test imports a study", goPackage{Dir: "experiments/instruments/runlife", TestImports: []string{"experiments/b/btest"}},
			"experiments/instruments/runlife imports experiments/b/btest in its tests, a package of study b: an instrument knows no study"},
		{"an instrument imports a study's dataset", goPackage{Dir: "experiments/instruments/capture", Imports: []string{"datasets/adata"}},
			"experiments/instruments/capture imports datasets/adata, a package of study a: an instrument knows no study"},
		{"a study imports another's", goPackage{Dir: "experiments/a/arun", Imports: []string{"experiments/b/linkemu"}, Deps: []string{"experiments/b/linkemu"}},
			"experiments/a/arun imports experiments/b/linkemu, a package of study b: a study's packages import no other study's"},
		{"a study's test imports another's", goPackage{Dir: "analysis/astudy", TestImports: []string{"analysis/b"}},
			"analysis/astudy imports analysis/b in its tests, a package of study b: a study's packages import no other study's"},
		{"a study imports instruments", goPackage{Dir: "experiments/a/arun", Imports: []string{"experiments/instruments/linkemu", "experiments/a/helper"}, TestImports: []string{"experiments/instruments/readonly", "experiments/a/atest", "experiments/a/arun"}}, ""},
		{"an instrument imports an instrument", goPackage{Dir: "experiments/instruments/sshhost", Imports: []string{"experiments/instruments/handshake", "internal/treelock"}, TestImports: []string{"experiments/instruments/sshhost/sshtest"}}, ""},
		{"the root's tests import every study", goPackage{Dir: "pipeline", TestImports: []string{"experiments/a", "experiments/b", "analysis/b"}}, ""},
		{"the root imports every study", goPackage{Dir: "pipeline", Imports: []string{"analysis/a", "experiments/b"}, Deps: []string{"analysis/a", "experiments/b"}}, ""},
		{"one study's analysis", goPackage{Dir: "analysis/a", Imports: []string{"datasets/adata", "analysis/stats", "internal/repro"}, Deps: []string{"datasets/adata", "analysis/stats", "internal/repro"}}, ""},
		{"the magefile", goPackage{Dir: "", Imports: []string{"pipeline"}, Deps: []string{"pipeline", "analysis/a", "analysis/b"}}, ""},
		{"reproduce imports the root", goPackage{Dir: "reproduce", Imports: []string{"pipeline"}},
			"reproduce imports pipeline: reproduce/ may not import the composition root"},
		{"reproduce imports experiments", goPackage{Dir: "reproduce", Imports: []string{"experiments/instruments/runlife"}},
			"reproduce imports experiments/instruments/runlife: reproduce/ may not import experiments/"},
		{"reproduce imports a study", goPackage{Dir: "reproduce", Imports: []string{"analysis/a"}, Deps: []string{"analysis/a"}},
			"reproduce imports analysis/a, a package of study a: the reproduce side knows no study"},
		{"reproduce's test imports a study", goPackage{Dir: "reproduce", TestImports: []string{"analysis/b"}},
			"reproduce imports analysis/b in its tests, a package of study b: the reproduce side knows no study"},
		{"reproduce imports the analysis libraries", goPackage{Dir: "reproduce", Imports: []string{"analysis/agreement", "analysis/claims", "internal/repro"}, TestImports: []string{"internal/settings"}}, ""},
		{"the root imports reproduce", goPackage{Dir: "pipeline", Imports: []string{"reproduce", "analysis/a"}}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bad := checkLayers([]goPackage{tc.pkg}, studies)
			switch {
			case tc.want == "" && len(bad) > 0:
				t.Errorf("violations %q, want none", bad)
			case tc.want != "" && (len(bad) != 1 || !strings.HasPrefix(bad[0], tc.want)):
				t.Errorf("violations %q, want one starting %q", bad, tc.want)
			}
		})
	}
}

// studyOf names the registered study a package of the module (a folder
// relative to the module root) belongs to, "" for none: one of its
// Packages, or a package under its experiment folder (experiments/<name>/),
// its dataset format (datasets/<name>data) or its analysis
// (analysis/<name>study). The instruments (experiments/instruments/) and
// the analysis libraries (agreement, claims, stats, ...) serve every
// study and belong to none.
func studyOf(pkg string, studyPackages map[string][]string) string {
	for _, name := range slices.Sorted(maps.Keys(studyPackages)) {
		if slices.Contains(studyPackages[name], pkg) {
			return name
		}
		for _, dir := range []string{"experiments/" + name, "datasets/" + name + "data", "analysis/" + name + "study"} {
			if pkg == dir || strings.HasPrefix(pkg, dir+"/") {
				return name
			}
		}
	}
	return ""
}

// registrationOf is the study whose registration file name is
// (study_<name>.go or study_<name>_test.go, for a registered name), or "".
func registrationOf(file string, studyPackages map[string][]string) string {
	name, ok := strings.CutPrefix(strings.TrimSuffix(strings.TrimSuffix(file, ".go"), "_test"), "study_")
	if _, registered := studyPackages[name]; ok && registered {
		return name
	}
	return ""
}

// checkRegistrationImports returns one message per import of a study's
// package (studyOf) from a file of package pipeline (file name -> the
// module's packages it imports) that is not that study's registration:
// nothing outside study_<name>.go and its tests names a study, so a
// study's leftovers, cleaning and results are hooks of its registration.
func checkRegistrationImports(files map[string][]string, studyPackages map[string][]string) []string {
	var bad []string
	for _, file := range slices.Sorted(maps.Keys(files)) {
		own := registrationOf(file, studyPackages)
		for _, imp := range files[file] {
			of := studyOf(imp, studyPackages)
			switch {
			case of == "" || of == own:
			case own == "":
				bad = append(bad, fmt.Sprintf("pipeline/%s imports %s, a package of study %s: only its registration (pipeline/study_%s.go and its tests) may; make what the file needs a hook of Study", file, imp, of, of))
			default:
				bad = append(bad, fmt.Sprintf("pipeline/%s imports %s, a package of study %s: a registration imports its own study's packages only", file, imp, of))
			}
		}
	}
	return bad
}

// pipelineImports parses the imports of every Go file of the pipeline
// folder (tests included): file name -> the module's packages it imports.
func pipelineImports(t *testing.T) map[string][]string {
	t.Helper()
	entries, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]string{}
	fset := token.NewFileSet()
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".go") {
			continue
		}
		f, err := parser.ParseFile(fset, e.Name(), nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		out[e.Name()] = []string{}
		for _, is := range f.Imports {
			if rel, ok := strings.CutPrefix(strings.Trim(is.Path.Value, `"`), "pqrepro/"); ok {
				out[e.Name()] = append(out[e.Name()], rel)
			}
		}
	}
	return out
}

// TestRegistrationImports: no file of package pipeline but a study's
// registration imports one of the study's packages.
func TestRegistrationImports(t *testing.T) {
	studyPackages := map[string][]string{}
	for _, s := range Studies() {
		studyPackages[s.Name] = s.Packages
	}
	files := pipelineImports(t)
	for _, want := range []string{"clean.go", "leftovers.go", "study_tls.go"} {
		if _, ok := files[want]; !ok {
			t.Fatalf("no %s in the pipeline folder: the test reads the wrong folder", want)
		}
	}
	for _, msg := range checkRegistrationImports(files, studyPackages) {
		t.Error(msg)
	}
}

// TestCheckRegistrationImportsCatches feeds the rule synthetic files,
// one import each.
func TestCheckRegistrationImportsCatches(t *testing.T) {
	studies := map[string][]string{"a": {"experiments/a/arun", "datasets/adata", "analysis/astudy", "experiments/shared/aonly"}, "b": {"experiments/b/brun"}}
	for _, tc := range []struct {
		file, imp string
		want      string // "" is no violation
	}{
		{"clean.go", "experiments/a/arun", "pipeline/clean.go imports experiments/a/arun, a package of study a: only its registration"},
		{"clean.go", "experiments/a/helper", "pipeline/clean.go imports experiments/a/helper, a package of study a"},
		{"status.go", "datasets/adata", "pipeline/status.go imports datasets/adata, a package of study a"},
		{"compare.go", "analysis/astudy", "pipeline/compare.go imports analysis/astudy, a package of study a"},
		{"leftovers.go", "experiments/shared/aonly", "pipeline/leftovers.go imports experiments/shared/aonly, a package of study a"},
		{"lock_test.go", "experiments/b/linkemu", "pipeline/lock_test.go imports experiments/b/linkemu, a package of study b"},
		{"study_test.go", "analysis/astudy", "pipeline/study_test.go imports analysis/astudy"},
		{"study_a.go", "experiments/b/brun", "pipeline/study_a.go imports experiments/b/brun, a package of study b: a registration imports its own"},
		{"study_c.go", "experiments/a/arun", "pipeline/study_c.go imports experiments/a/arun"},
		{"study_a.go", "experiments/a/arun", ""},
		{"study_a_test.go", "analysis/astudy", ""},
		{"study_a.go", "experiments/instruments/capture", ""},
		{"records.go", "experiments/instruments/rederive", ""},
		{"compare.go", "analysis/agreement", ""},
		{"clean.go", "internal/treelock", ""},
		{"study_b.go", "experiments/bb/x", ""},
	} {
		t.Run(tc.file+" imports "+tc.imp, func(t *testing.T) {
			bad := checkRegistrationImports(map[string][]string{tc.file: {tc.imp}}, studies)
			switch {
			case tc.want == "" && len(bad) > 0:
				t.Errorf("violations %q, want none", bad)
			case tc.want != "" && (len(bad) != 1 || !strings.HasPrefix(bad[0], tc.want)):
				t.Errorf("violations %q, want one starting %q", bad, tc.want)
			}
		})
	}
}
