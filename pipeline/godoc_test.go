package pipeline

import (
	"bytes"
	"encoding/json"
	"errors"
	"go/ast"
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
