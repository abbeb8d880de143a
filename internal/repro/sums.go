package repro

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"pqrepro/internal/atomicfile"
)

// rawFiles lists every regular, non-hidden file below the raw data
// directories that exist, sorted, but those of StrayEntries (a folder
// that is not a sealed run with a valid ID never enters SHA256SUMS).
func (e *Engine) rawFiles() ([]string, error) {
	stray, err := e.strayFolders()
	if err != nil {
		return nil, err
	}
	var files []string
	for _, d := range e.RawDirs {
		if _, err := os.Stat(e.abs(d)); errors.Is(err, os.ErrNotExist) {
			continue
		}
		fs, err := expandFiles(e.Root, []string{d}, true)
		if err != nil {
			return nil, err
		}
		for _, f := range fs {
			if folder, _ := e.runFolder(f); !stray[folder] && !stray[f] {
				files = append(files, f)
			}
		}
	}
	slices.Sort(files)
	return slices.Compact(files), nil
}

// sumsContent renders SHA256SUMS for the raw data and every output
// recorded in the lock, in the format `sha256sum -c` reads: the hex
// digest, two spaces, the path relative to the root; sorted by path.
func (e *Engine) sumsContent(lock *Lock, hash func(string) (string, error)) ([]byte, error) {
	entries := map[string]string{}
	raw, err := e.rawFiles()
	if err != nil {
		return nil, fmt.Errorf("list raw data: %w", err)
	}
	for _, f := range raw {
		sum, err := hash(e.abs(f))
		if err != nil {
			return nil, fmt.Errorf("hash raw data: %w", err)
		}
		entries[f] = sum
	}
	for _, st := range lock.Stages {
		for f, sum := range st.Outputs {
			entries[f] = sum
		}
	}
	var b bytes.Buffer
	for _, f := range slices.Sorted(maps.Keys(entries)) {
		fmt.Fprintf(&b, "%s  %s\n", entries[f], f)
	}
	return b.Bytes(), nil
}

// WriteSums rewrites SHA256SUMS from the raw data and the lock. Raw data
// is immutable: lines for new raw files are added, and the lines of a run
// folder that was removed as a whole are dropped, but a listed raw file
// whose content changed, or that disappeared from a run that is still
// there, makes WriteSums refuse, naming each file, so that a build never
// blesses altered evidence.
func (e *Engine) WriteSums(lock *Lock) error {
	b, err := e.sumsContent(lock, e.hasher().Hash)
	if err != nil {
		return err
	}
	if err := e.checkRawUnchanged(b); err != nil {
		return err
	}
	if _, err := atomicfile.WriteIfChanged(e.abs(SumsFile), b, 0o644); err != nil {
		return fmt.Errorf("write %s: %w", SumsFile, err)
	}
	return nil
}

// A SumEntry is one line of SHA256SUMS.
type SumEntry struct {
	Path, SHA256 string
	Line         int
}

// ParseSums parses the content of a SHA256SUMS file in the format
// sha256sum writes (text mode "  " or binary mode " *"). It rejects
// malformed lines, absolute paths and paths that leave the tree, naming
// the line.
func ParseSums(name string, b []byte) ([]SumEntry, error) {
	var out []SumEntry
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 0, 64*1024), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if line == "" {
			continue
		}
		if len(line) < 67 || (line[64:66] != "  " && line[64:66] != " *") {
			return nil, fmt.Errorf("%s:%d: not a `sha256sum` line (want 64 hex digits, two spaces, a path)", name, n)
		}
		sum, p := line[:64], line[66:]
		if strings.Trim(sum, "0123456789abcdef") != "" {
			return nil, fmt.Errorf("%s:%d: %q is not a lower-case hex SHA-256", name, n, sum)
		}
		if path.IsAbs(p) || p != path.Clean(p) || p == ".." || strings.HasPrefix(p, "../") {
			return nil, fmt.Errorf("%s:%d: path %q must be clean and relative to the repository root", name, n, p)
		}
		out = append(out, SumEntry{Path: p, SHA256: sum, Line: n})
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read %s: %w", name, err)
	}
	return out, nil
}

// checkRawUnchanged compares the raw data lines of the SHA256SUMS on disk
// with those of next, the content about to be written.
func (e *Engine) checkRawUnchanged(next []byte) error {
	old, err := os.ReadFile(e.abs(SumsFile))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("read %s: %w", SumsFile, err)
	}
	was, err := ParseSums(SumsFile, old)
	if err != nil {
		return fmt.Errorf("%w: restore it with `git checkout -- %s`", err, SumsFile)
	}
	nowList, err := ParseSums(SumsFile, next)
	if err != nil {
		return err
	}
	now := map[string]string{}
	for _, ent := range nowList {
		now[ent.Path] = ent.SHA256
	}
	var bad []string
	for _, ent := range was {
		folder, raw := e.runFolder(ent.Path)
		if !raw {
			continue
		}
		got, ok := now[ent.Path]
		switch {
		case ok && got != ent.SHA256:
			bad = append(bad, fmt.Sprintf("%s: content differs: %s lists sha256 %s, file has %s", ent.Path, SumsFile, short(ent.SHA256), short(got)))
		case !ok:
			if _, err := os.Stat(e.abs(folder)); err == nil {
				bad = append(bad, fmt.Sprintf("%s: missing (listed in %s line %d) from run %s", ent.Path, SumsFile, ent.Line, folder))
			}
		}
	}
	if len(bad) > 0 {
		return fmt.Errorf("refusing to rewrite %s over altered raw data (raw data is immutable; restore each file with `git checkout -- <path>`, or record a new run):\n  %s", SumsFile, strings.Join(bad, "\n  "))
	}
	return nil
}

// runFolder returns the run folder (<raw dir>/<study>/<run-id>) of a path
// under one of the raw data directories, and whether it is under one.
func (e *Engine) runFolder(p string) (string, bool) {
	for _, d := range e.RawDirs {
		d = path.Clean(d)
		rest, ok := strings.CutPrefix(p, d+"/")
		if !ok {
			continue
		}
		parts := strings.SplitN(rest, "/", 3)
		if len(parts) < 3 {
			return path.Dir(p), true
		}
		return d + "/" + parts[0] + "/" + parts[1], true
	}
	return "", false
}

// CheckListed re-hashes every file of entries and returns one problem
// per file that differs.
//
// It reads without the hash cache every file entries list (paths
// relative to root); a problem is a file that is missing, unreadable or
// differs from its line. It is the one SHA256SUMS check: `mage verify`
// (Engine.Verify) and `mage all`'s check of the committed data print its
// problems as FAIL lines. A cancelled ctx stops it with ctx's error.
func CheckListed(ctx context.Context, root string, entries []SumEntry) ([]Problem, error) {
	var problems []Problem
	for _, ent := range entries {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		got, err := HashFile(filepath.Join(root, filepath.FromSlash(ent.Path)))
		switch {
		case errors.Is(err, os.ErrNotExist):
			problems = append(problems, Problem{Path: ent.Path, What: fmt.Sprintf("missing (listed in %s line %d)", SumsFile, ent.Line)})
		case err != nil:
			problems = append(problems, Problem{Path: ent.Path, What: fmt.Sprintf("unreadable: %v", err)})
		case got != ent.SHA256:
			problems = append(problems, Problem{Path: ent.Path, What: fmt.Sprintf("content differs from %s: listed sha256 %s, file has %s", SumsFile, short(ent.SHA256), short(got))})
		}
	}
	return problems, nil
}
