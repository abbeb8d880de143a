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
	var mods []string
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() && path != root && (name == "testdata" || name == "node_modules" ||
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
	fset := token.NewFileSet()
	byName := map[string][]*ast.File{}
	for _, f := range parseSources(t, fset, p) {
		byName[f.Name.Name] = append(byName[f.Name.Name], f)
	}
	var out []docComment
	for _, files := range byName {
		dp, err := doc.NewFromFiles(fset, files, p.ImportPath)
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

// TestDocFirstSentences: the first sentence of every package comment and
// of every exported name's doc comment, as go/doc's Synopsis cuts it, has
// at most maxFirstWords words. It says what; the sentences after it say why.
func TestDocFirstSentences(t *testing.T) {
	var long int
	for _, p := range modulePackages(t) {
		var dp doc.Package
		for _, c := range exportedDocs(t, p) {
			first := dp.Synopsis(c.text)
			if n := len(strings.Fields(first)); n > maxFirstWords {
				long++
				t.Errorf("%s:%d: %s: the first sentence has %d words, more than %d: %q",
					relPath(c.pos.Filename), c.pos.Line, c.name, n, maxFirstWords, first)
			}
		}
	}
	if long > 0 {
		t.Logf("%d first sentences over %d words", long, maxFirstWords)
	}
}
