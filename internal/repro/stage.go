package repro

import (
	"context"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"pqrepro/internal/atomicfile"
)

// A Stage is one step of the pipeline: it reads its declared inputs and
// writes its declared outputs, and nothing else.
type Stage struct {
	// Name identifies the stage in the lock file and in messages,
	// for example "tls:analyze".
	Name string
	// Doc says in one line what the stage makes.
	Doc string
	// Code lists the directories of the Go packages that implement the
	// stage, relative to the repository root. The stage's code version is
	// the SHA-256 over their non-test Go files, the files of every package
	// of this module they import (transitively), go.mod and go.sum, so an
	// edit to the analysis or a dependency upgrade reruns the stage.
	Code []string
	// Inputs are files, directories (all regular files below them) or
	// glob patterns (path.Match syntax), slash-separated and relative to
	// the repository root. A pattern that matches nothing is an error.
	// A directory or glob leaves out hidden files and, in a sealed run
	// folder (one holding ManifestFile), the manifest and the README.md
	// notes: they describe the data and are checked before any build,
	// so sealing a run or adding a note does not change what stages read.
	Inputs []string
	// Params are the stage's parameters. A changed value reruns it.
	Params map[string]string
	// Outputs are the files the stage writes, relative to the root.
	Outputs []string
	// Confirms, when set, names the input file of which the stage's one
	// output is a byte-for-byte copy that the stage has confirmed (records
	// re-derived from packet captures must equal the recorded ones).
	// Provenance shown to readers, such as figure captions, names that
	// input instead of looking through the stage.
	Confirms string
	// Tools returns the versions of external tools the stage uses, to be
	// recorded in the lock file. It may be nil.
	Tools func(ctx context.Context) map[string]string
	// Run does the work. It must read inputs and write outputs only
	// through env, so that verification can run it in another tree and a
	// failure leaves no partial output behind.
	Run func(ctx context.Context, env *Env) error
}

// Env is what a running stage sees: its inputs for reading and a staging
// area for its outputs. Outputs become visible only after Run returns
// nil, all at once, atomically per file.
type Env struct {
	stage   *Stage
	root    string
	staging string
	inputs  map[string]bool
	written map[string]bool
	log     io.Writer
	notices io.Writer
	verbose bool
}

// Root is the directory the stage's paths are relative to.
func (e *Env) Root() string { return e.root }

// Param returns the value of a declared parameter; it panics on an
// undeclared one, which is a programming error.
func (e *Env) Param(name string) string {
	v, ok := e.stage.Params[name]
	if !ok {
		panic(fmt.Sprintf("stage %s: parameter %q is not declared", e.stage.Name, name))
	}
	return v
}

// Inputs returns the stage's input files, expanded and sorted.
func (e *Env) Inputs() []string {
	out := make([]string, 0, len(e.inputs))
	for f := range e.inputs {
		out = append(out, f)
	}
	slices.Sort(out)
	return out
}

// Open opens a declared input file for reading.
func (e *Env) Open(rel string) (*os.File, error) {
	rel = path.Clean(rel)
	if !e.inputs[rel] {
		return nil, fmt.Errorf("stage %s: %s is not a declared input; add it to the stage's Inputs", e.stage.Name, rel)
	}
	return os.Open(filepath.Join(e.root, filepath.FromSlash(rel)))
}

// ReadFile reads a declared input file.
func (e *Env) ReadFile(rel string) ([]byte, error) {
	f, err := e.Open(rel)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(f)
}

// Create starts writing a declared output. The file appears under its
// final name only if the whole stage succeeds.
func (e *Env) Create(rel string) (*atomicfile.File, error) {
	rel = path.Clean(rel)
	if !slices.Contains(e.stage.Outputs, rel) {
		return nil, fmt.Errorf("stage %s: %s is not a declared output; add it to the stage's Outputs", e.stage.Name, rel)
	}
	e.written[rel] = true
	return atomicfile.Create(filepath.Join(e.staging, filepath.FromSlash(rel)), 0o644)
}

// WriteFile writes a declared output in one piece.
func (e *Env) WriteFile(rel string, data []byte) error {
	f, err := e.Create(rel)
	if err != nil {
		return err
	}
	defer f.Abort()
	if _, err := f.Write(data); err != nil {
		return fmt.Errorf("write %s: %w", rel, err)
	}
	return f.Commit()
}

// Logf prints a progress line when the build is verbose.
func (e *Env) Logf(format string, args ...any) {
	if e.verbose {
		fmt.Fprintf(e.log, "    "+format+"\n", args...)
	}
}

// Notef prints a line that the reader of a build or of verify must see
// whatever the verbosity. A fact about the outputs that is not visible in
// them (for example that records were taken as recorded because a capture
// is absent). It is prefixed with the stage's name.
func (e *Env) Notef(format string, args ...any) {
	fmt.Fprintf(e.notices, "  %s: "+format+"\n", append([]any{e.stage.Name}, args...)...)
}

// expandInputs resolves the stage's input patterns against root into a
// sorted list of slash-separated relative file paths.
func expandInputs(root string, patterns []string) ([]string, error) {
	return expandFiles(root, patterns, false)
}

// expandFiles is expandInputs; with seals, directories also yield the
// manifests and notes of sealed run folders (SHA256SUMS lists them).
func expandFiles(root string, patterns []string, seals bool) ([]string, error) {
	seen := map[string]bool{}
	var files []string
	add := func(rel string) {
		if !seen[rel] {
			seen[rel] = true
			files = append(files, rel)
		}
	}
	for _, p := range patterns {
		p = path.Clean(p)
		abs := filepath.Join(root, filepath.FromSlash(p))
		if strings.ContainsAny(p, "*?[") {
			matches, err := filepath.Glob(abs)
			if err != nil {
				return nil, fmt.Errorf("input pattern %q: %w", p, err)
			}
			if len(matches) == 0 {
				return nil, fmt.Errorf("input pattern %q matches no file", p)
			}
			for _, m := range matches {
				if err := addTree(root, m, seals, add); err != nil {
					return nil, err
				}
			}
			continue
		}
		if _, err := os.Stat(abs); err != nil {
			return nil, fmt.Errorf("input %s: %w", p, err)
		}
		if err := addTree(root, abs, seals, add); err != nil {
			return nil, err
		}
	}
	slices.Sort(files)
	return files, nil
}

// addTree adds the file at abs, or every regular file below it if it is a
// directory. Hidden entries (names starting with a dot, such as the
// temporary files of atomic writes) are skipped, and so, unless seals is
// set, are the manifest and notes of a sealed run folder below abs.
func addTree(root, abs string, seals bool, add func(string)) error {
	return filepath.WalkDir(abs, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p != abs && strings.HasPrefix(d.Name(), ".") {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() {
			return nil
		}
		if !seals && p != abs && (d.Name() == ManifestFile || d.Name() == NotesFile) {
			if _, err := os.Stat(filepath.Join(filepath.Dir(p), ManifestFile)); err == nil {
				return nil
			}
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		add(filepath.ToSlash(rel))
		return nil
	})
}

// covers reports whether the input pattern p refers to the file f: equal,
// a directory above it, or a glob that matches it or a directory above it.
func covers(p, f string) bool {
	p = path.Clean(p)
	if p == f || strings.HasPrefix(f, p+"/") {
		return true
	}
	if strings.ContainsAny(p, "*?[") {
		for dir := f; dir != "." && dir != "/"; dir = path.Dir(dir) {
			if ok, _ := path.Match(p, dir); ok {
				return true
			}
		}
	}
	return false
}

// Covers reports whether the input pattern p (a file, a directory or a
// glob, as in Stage.Inputs) refers to the file f.
func Covers(p, f string) bool { return covers(p, f) }
