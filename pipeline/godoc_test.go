package pipeline

import (
	"bytes"
	"encoding/json"
	"errors"
	"go/ast"
	"go/doc"
	"go/parser"
	"go/token"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// A listedPackage is what the Go doc tests need of `go list -json`.
type listedPackage struct {
	ImportPath     string
	Dir            string
	Name           string
	GoFiles        []string
	CgoFiles       []string
	IgnoredGoFiles []string
}

// sources returns the package's non-test Go files, those of every
// platform and build tag included, as absolute paths.
func (p listedPackage) sources() []string {
	var out []string
	for _, f := range slices.Concat(p.GoFiles, p.CgoFiles, p.IgnoredGoFiles) {
		if !strings.HasSuffix(f, "_test.go") {
			out = append(out, filepath.Join(p.Dir, f))
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// modulePackages lists the Go packages of the repository: `go list ./...`
// in every module (pqrepro and the modules nested in it, such as
// experiments/net/endpoint) and the magefile's package at the root.
func modulePackages(t *testing.T) []listedPackage {
	t.Helper()
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("the go command is not on PATH: this test runs go list")
	}
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	mods := repoModules(t, false)
	seen := map[string]bool{}
	var pkgs []listedPackage
	list := func(dir string, args ...string) {
		cmd := exec.Command("go", append([]string{"list", "-e", "-json"}, args...)...)
		cmd.Dir = dir
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("go list %v in %s: %v\n%s", args, dir, err, stderr.String())
		}
		dec := json.NewDecoder(bytes.NewReader(out))
		for {
			var p listedPackage
			if err := dec.Decode(&p); errors.Is(err, io.EOF) {
				break
			} else if err != nil {
				t.Fatalf("go list output: %v", err)
			}
			if !seen[p.Dir] {
				seen[p.Dir] = true
				pkgs = append(pkgs, p)
			}
		}
	}
	list(root, "-tags", "mage", ".")
	for _, m := range mods {
		list(m, "./...")
	}
	if !seen[filepath.Join(root, "pipeline")] {
		t.Fatalf("go list found %d packages, not this module's", len(pkgs))
	}
	return pkgs
}

// repoModules returns the folders of the repository's Go modules: its
// root and every folder below with a go.mod, but in node_modules and in
// folders `go list ./...` skips (dot and underscore folders, and testdata
// unless withTestdata).
func repoModules(t *testing.T, withTestdata bool) []string {
	t.Helper()
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	var mods []string
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() && path != root && ((name == "testdata" && !withTestdata) || name == "node_modules" ||
			strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")) {
			return filepath.SkipDir
		}
		if name == "go.mod" {
			mods = append(mods, filepath.Dir(path))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return mods
}

// relPath is a file or folder of the repository as a slash path from
// its root, for messages.
func relPath(path string) string {
	root, _ := filepath.Abs("..")
	if r, err := filepath.Rel(root, path); err == nil {
		return filepath.ToSlash(r)
	}
	return path
}

// parseSources parses the package's non-test files with their comments.
func parseSources(t *testing.T, fset *token.FileSet, p listedPackage) []*ast.File {
	t.Helper()
	var files []*ast.File
	for _, path := range p.sources() {
		f, err := parser.ParseFile(fset, path, nil, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	return files
}

// TestPackageComments: every package of the repository has a package
// comment in a non-test file, so that `go doc` and the package list say
// what each holds. A library's starts "Package <name> "; a command's
// (package main) names the command in its own words.
func TestPackageComments(t *testing.T) {
	for _, p := range modulePackages(t) {
		fset := token.NewFileSet()
		var found bool
		for _, f := range parseSources(t, fset, p) {
			if f.Doc == nil || f.Name.Name != p.Name {
				continue
			}
			found = true
			if text := f.Doc.Text(); p.Name != "main" && !strings.HasPrefix(text, "Package "+p.Name+" ") {
				t.Errorf("%s: the package comment of %s starts %q, not \"Package %s \"",
					relPath(fset.Position(f.Doc.Pos()).Filename), p.ImportPath, firstLine(text), p.Name)
			}
		}
		if !found {
			t.Errorf("%s (%s) has no package comment: add one, in doc.go or its main file, saying what the package holds and why",
				p.ImportPath, relPath(p.Dir))
		}
	}
}

// firstLine is the first line of text.
func firstLine(text string) string {
	line, _, _ := strings.Cut(text, "\n")
	return line
}

// maxFirstWords is the most words the first sentence of a doc comment
// may have: the sentence `go doc` shows alone in package lists.
const maxFirstWords = 25

// A docComment is one doc comment of an exported name or a package, with
// where it starts.
type docComment struct {
	pos  token.Position
	name string
	text string
}

// exportedDocs returns the package comment and the doc comments of the
// exported names of a package's non-test files, as go/doc gathers them.
func exportedDocs(t *testing.T, p listedPackage) []docComment {
	t.Helper()
	return packageDocs(t, p, 0)
}

// packageDocs returns the doc comments go/doc gathers from a package's
// non-test files with mode (doc.AllDecls: the unexported names' too).
func packageDocs(t *testing.T, p listedPackage, mode doc.Mode) []docComment {
	t.Helper()
	fset := token.NewFileSet()
	byName := map[string][]*ast.File{}
	for _, f := range parseSources(t, fset, p) {
		byName[f.Name.Name] = append(byName[f.Name.Name], f)
	}
	var out []docComment
	for _, files := range byName {
		dp, err := doc.NewFromFiles(fset, files, p.ImportPath, mode)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			if f.Doc != nil {
				out = append(out, docComment{fset.Position(f.Doc.Pos()), "package " + f.Name.Name, f.Doc.Text()})
			}
		}
		add := func(name, text string, decl ast.Node) {
			if text != "" {
				out = append(out, docComment{fset.Position(decl.Pos()), name, text})
			}
		}
		values := func(vs []*doc.Value) {
			for _, v := range vs {
				add(strings.Join(v.Names, ", "), v.Doc, v.Decl)
			}
		}
		funcs := func(fs []*doc.Func) {
			for _, f := range fs {
				name := f.Name
				if f.Recv != "" {
					name = f.Recv + "." + name
				}
				add(name, f.Doc, f.Decl)
			}
		}
		values(dp.Consts)
		values(dp.Vars)
		funcs(dp.Funcs)
		// go/doc keeps a grouped declaration's doc only: the comment of
		// each name inside the group (a ValueSpec's or TypeSpec's Doc)
		// is read here.
		for _, f := range files {
			for _, d := range f.Decls {
				if g, ok := d.(*ast.GenDecl); ok && g.Lparen.IsValid() {
					for _, spec := range g.Specs {
						name, cg := specDoc(spec)
						if cg != nil && (mode&doc.AllDecls != 0 || token.IsExported(name)) {
							add(name, cg.Text(), spec)
						}
					}
				}
			}
		}
		for _, ty := range dp.Types {
			add(ty.Name, ty.Doc, ty.Decl)
			values(ty.Consts)
			values(ty.Vars)
			funcs(ty.Funcs)
			funcs(ty.Methods)
		}
	}
	return out
}

// longFirstSentences lists the names whose doc comment's first sentence
// is over maxFirstWords words, one "<file> <name>" a line: those written
// before the limit covered unexported names and the names inside grouped
// declarations, left for now in files whose edit has a cost (analysis/:
// the calibration digests and the rules files) or another branch edits.
// The list may only shrink; an entry that is short now, or gone, must be
// removed.
const longFirstSentences = "testdata/long-first-sentences.txt"

// TestDocFirstSentences: the first sentence of every package comment and
// of every doc comment, exported or not, a name's inside a grouped
// declaration included, as go/doc's Synopsis cuts it, has at most
// maxFirstWords words. It says what; the sentences after it say why.
// Names listed in longFirstSentences are let through until shortened;
// -update rewrites the list from what is over now.
func TestDocFirstSentences(t *testing.T) {
	allowed := map[string]bool{}
	if b, err := os.ReadFile(longFirstSentences); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
				allowed[l] = true
			}
		}
	} else if !os.IsNotExist(err) {
		t.Fatal(err)
	}
	var long []string
	used := map[string]bool{}
	for _, p := range modulePackages(t) {
		var dp doc.Package
		for _, c := range packageDocs(t, p, doc.AllDecls) {
			first := dp.Synopsis(c.text)
			n := len(strings.Fields(first))
			if n <= maxFirstWords {
				continue
			}
			key := relPath(c.pos.Filename) + " " + c.name
			long = append(long, key)
			if allowed[key] || *update {
				used[key] = true
				continue
			}
			t.Errorf("%s:%d: %s: the first sentence has %d words, more than %d: %q",
				relPath(c.pos.Filename), c.pos.Line, c.name, n, maxFirstWords, first)
		}
	}
	slices.Sort(long)
	long = slices.Compact(long)
	if *update {
		text := "# Names whose doc comment's first sentence is over 25 words\n" +
			"# (pipeline/godoc_test.go, TestDocFirstSentences): shorten one, then\n" +
			"# remove its line. Rewritten by go test ./pipeline -run TestDocFirstSentences -update.\n" +
			strings.Join(long, "\n") + "\n"
		if err := os.WriteFile(longFirstSentences, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("rewrote %s: %d names", longFirstSentences, len(long))
		return
	}
	for key := range allowed {
		if !used[key] {
			t.Errorf("%s lists %q, whose first sentence is no longer over %d words (or which is gone): remove the line", longFirstSentences, key, maxFirstWords)
		}
	}
	if len(long) > 0 {
		t.Logf("%d first sentences over %d words, all listed in %s", len(long), maxFirstWords, longFirstSentences)
	}
}

// architectureDoc is the page whose layout names every package and
// module dependency.
const architectureDoc = "docs/architecture.md"

// layoutEntries returns the paths the first fenced block under the
// "## Layout" heading of text names, as slash paths from the repository
// root. The block is a tree: an entry's name is its line's first column
// (up to two spaces), one or more names; a name indented under a folder
// is inside it. Lines indented further than entryIndent continue a
// description and name nothing.
func layoutEntries(text string) []string {
	const entryIndent = 16
	_, after, ok := strings.Cut(text, "\n## Layout\n")
	if !ok {
		return nil
	}
	_, block, _ := strings.Cut(after, "```\n")
	block, _, _ = strings.Cut(block, "```")
	type open struct {
		indent int
		path   string
	}
	var stack []open
	var out []string
	for _, l := range strings.Split(block, "\n") {
		name := strings.TrimLeft(l, " ")
		indent := len(l) - len(name)
		if name == "" || indent > entryIndent {
			continue
		}
		name, _, _ = strings.Cut(name, "  ")
		for len(stack) > 0 && stack[len(stack)-1].indent >= indent {
			stack = stack[:len(stack)-1]
		}
		parent := ""
		if len(stack) > 0 {
			parent = stack[len(stack)-1].path + "/"
		}
		for i, n := range strings.Fields(name) {
			n = strings.TrimSuffix(n, ",")
			p := parent + strings.TrimSuffix(n, "/")
			out = append(out, p)
			if i == 0 && strings.HasSuffix(n, "/") {
				stack = append(stack, open{indent, p})
			}
		}
	}
	return out
}

// goModRequires returns the modules a go.mod names in require (direct
// ones only, unless indirect) and tool directives.
func goModRequires(gomod string, indirect bool) []string {
	var out []string
	block := ""
	for _, l := range strings.Split(gomod, "\n") {
		l = strings.TrimSpace(l)
		switch {
		case l == ")":
			block = ""
			continue
		case strings.HasSuffix(l, "("):
			block = strings.TrimSpace(strings.TrimSuffix(l, "("))
			continue
		}
		verb := block
		if verb == "" {
			verb, l, _ = strings.Cut(l, " ")
		}
		f := strings.Fields(l)
		if len(f) == 0 || (verb != "require" && verb != "tool") {
			continue
		}
		if !indirect && strings.Contains(l, "// indirect") {
			continue
		}
		mod := f[0]
		if verb == "tool" {
			// a tool is a package: name the module by its repository
			if parts := strings.Split(mod, "/"); len(parts) > 3 {
				mod = strings.Join(parts[:3], "/")
			}
		}
		out = append(out, mod)
	}
	return out
}

// TestArchitectureNamesPackages: docs/architecture.md's layout names
// every Go package of the repository and nothing that does not exist, and
// its table of module dependencies names every direct requirement of
// go.mod and no module that no go.mod of the repository requires.
func TestArchitectureNamesPackages(t *testing.T) {
	doc := readDoc(t, architectureDoc)
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	entries := layoutEntries(doc)
	if len(entries) == 0 {
		t.Fatalf("%s has no layout block under \"## Layout\"", architectureDoc)
	}
	named := map[string]bool{}
	for _, e := range entries {
		named[e] = true
		if strings.ContainsAny(e, "<*") {
			continue
		}
		if _, err := os.Stat(filepath.Join(root, filepath.FromSlash(e))); err != nil {
			t.Errorf("%s's layout names %s, which does not exist", architectureDoc, e)
		}
	}
	for _, p := range modulePackages(t) {
		dir := relPath(p.Dir)
		if dir == "." {
			continue // the magefile: named by its file
		}
		if !named[dir] {
			t.Errorf("%s's layout does not name package %s (%s): add a line for it", architectureDoc, p.ImportPath, dir)
		}
	}

	_, table, ok := strings.Cut(doc, "\n## Go module dependencies\n")
	if !ok {
		t.Fatalf("%s has no section \"## Go module dependencies\"", architectureDoc)
	}
	inTable := map[string]bool{}
	for _, l := range strings.Split(table, "\n") {
		if !strings.HasPrefix(l, "| ") || strings.HasPrefix(l, "| module ") {
			continue
		}
		first := strings.SplitN(l, "|", 3)[1]
		for _, m := range strings.Split(first, ",") {
			m, _, _ = strings.Cut(strings.TrimSpace(m), " ")
			inTable[m] = true
		}
	}
	var known []string
	for _, dir := range repoModules(t, true) {
		b, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err != nil {
			t.Fatal(err)
		}
		known = append(known, goModRequires(string(b), true)...)
	}
	for _, m := range goModRequires(readDoc(t, "go.mod"), false) {
		if !inTable[m] {
			t.Errorf("%s's module table does not name %s, a direct requirement of go.mod", architectureDoc, m)
		}
	}
	for m := range inTable {
		if !slices.Contains(known, m) {
			t.Errorf("%s's module table names %s, which no go.mod of the repository requires", architectureDoc, m)
		}
	}
}

// specDoc returns the first name a spec of a grouped declaration
// declares and its own doc comment.
func specDoc(spec ast.Spec) (string, *ast.CommentGroup) {
	switch sp := spec.(type) {
	case *ast.ValueSpec:
		return sp.Names[0].Name, sp.Doc
	case *ast.TypeSpec:
		return sp.Name.Name, sp.Doc
	}
	return "", nil
}
