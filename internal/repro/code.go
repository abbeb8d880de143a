package repro

import (
	"bufio"
	"fmt"
	"go/parser"
	"go/token"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// codeHasher computes code versions: the SHA-256 over the Go source of a
// set of package directories and every package of this module they import,
// plus go.mod and go.sum. Parsing only the import clauses keeps this in
// the milliseconds, so it runs on every build.
type codeHasher struct {
	root   string
	module string
	hasher *Hasher
	memo   map[string]string
}

func newCodeHasher(root string, h *Hasher) (*codeHasher, error) {
	mod, err := modulePath(filepath.Join(root, "go.mod"))
	if err != nil {
		return nil, err
	}
	return &codeHasher{root: root, module: mod, hasher: h, memo: map[string]string{}}, nil
}

func modulePath(gomod string) (string, error) {
	f, err := os.Open(gomod)
	if err != nil {
		return "", fmt.Errorf("read module path: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if rest, ok := strings.CutPrefix(line, "module "); ok {
			return strings.Trim(strings.TrimSpace(rest), `"`), nil
		}
	}
	return "", fmt.Errorf("%s has no module line", gomod)
}

// files returns the sorted, slash-separated relative paths of every file
// that makes up the code of the given package directories.
func (c *codeHasher) files(dirs []string) ([]string, error) {
	seen := map[string]bool{}
	var out []string
	var visit func(dir string) error
	visit = func(dir string) error {
		dir = path.Clean(dir)
		if seen[dir] {
			return nil
		}
		seen[dir] = true
		abs := filepath.Join(c.root, filepath.FromSlash(dir))
		entries, err := os.ReadDir(abs)
		if err != nil {
			return fmt.Errorf("code of stage: %w", err)
		}
		fset := token.NewFileSet()
		for _, e := range entries {
			name := e.Name()
			if e.IsDir() || !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
				continue
			}
			rel := path.Join(dir, name)
			out = append(out, rel)
			f, err := parser.ParseFile(fset, filepath.Join(abs, name), nil, parser.ImportsOnly)
			if err != nil {
				return fmt.Errorf("parse imports of %s: %w", rel, err)
			}
			for _, imp := range f.Imports {
				p, _ := strconv.Unquote(imp.Path.Value)
				if sub, ok := strings.CutPrefix(p, c.module+"/"); ok {
					if err := visit(sub); err != nil {
						return err
					}
				}
			}
		}
		return nil
	}
	for _, d := range dirs {
		if err := visit(d); err != nil {
			return nil, err
		}
	}
	out = append(out, "go.mod")
	if _, err := os.Stat(filepath.Join(c.root, "go.sum")); err == nil {
		out = append(out, "go.sum")
	}
	slices.Sort(out)
	return out, nil
}

// version returns the code version of the given package directories.
func (c *codeHasher) version(dirs []string) (string, error) {
	key := strings.Join(dirs, "\x00")
	if v, ok := c.memo[key]; ok {
		return v, nil
	}
	files, err := c.files(dirs)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	for _, f := range files {
		sum, err := c.hasher.Hash(filepath.Join(c.root, filepath.FromSlash(f)))
		if err != nil {
			return "", fmt.Errorf("hash code file: %w", err)
		}
		fmt.Fprintf(&b, "%s  %s\n", sum, f)
	}
	v := HashBytes([]byte(b.String()))
	c.memo[key] = v
	return v, nil
}
