package repro

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"pqrepro/internal/treelock"
)

// verifyTreePrefix begins the name of Verify's scratch tree, made in the
// project's .cache as verify-<PID>-<random>. It is in the project (not
// the system's temporary directory) so that a verify killed by SIGKILL
// leaves its tree where status lists it and clean removes it, and on
// the tree's file system, so that the committed data is hard-linked
// rather than copied. The PID tells a killed verify's tree from that of
// a verify still running: verify takes no lock, and may run beside
// clean.
const verifyTreePrefix = "verify-"

// verifyTreeParent is the folder, relative to the root, of Verify's
// scratch trees.
const verifyTreeParent = ".cache"

// makeVerifyTree creates this process's scratch tree under root.
func makeVerifyTree(root string) (string, error) {
	parent := filepath.Join(root, verifyTreeParent)
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return "", err
	}
	return os.MkdirTemp(parent, verifyTreePrefix+strconv.Itoa(os.Getpid())+"-*")
}

// VerifyTreeOwner is the PID a scratch tree of Verify is named after, or
// 0 if p is not named like one.
func VerifyTreeOwner(p string) int {
	rest, ok := strings.CutPrefix(filepath.Base(p), verifyTreePrefix)
	if !ok {
		return 0
	}
	pidText, _, found := strings.Cut(rest, "-")
	pid, err := strconv.Atoi(pidText)
	if !found || err != nil || pid <= 0 {
		return 0
	}
	return pid
}

// VerifyLeftovers lists, relative to root, the scratch trees of killed
// verifies: those under root's .cache whose PID no longer runs.
func VerifyLeftovers(root string) []string {
	m, _ := filepath.Glob(filepath.Join(root, verifyTreeParent, verifyTreePrefix+"*"))
	var out []string
	for _, d := range m {
		if pid := VerifyTreeOwner(d); pid == 0 || treelock.ProcessAlive(pid) {
			continue
		}
		rel, _ := filepath.Rel(root, d)
		out = append(out, rel)
	}
	return out
}

// A Problem is one finding of Verify: a file and what is wrong with it.
type Problem struct {
	Path string
	What string
}

func (p Problem) String() string { return p.Path + ": " + p.What }

// VerifyReport lists everything Verify found; it is clean when Problems
// and StageErrors are empty.
type VerifyReport struct {
	Checked   int // files whose hash was checked against SHA256SUMS
	Rederived int // outputs re-derived and compared
	// Problems has one entry per file, sorted by path (MergeProblems).
	Problems []Problem
	// StageErrors are the stages that failed on the committed data; the
	// outputs they (and the stages after them) make are in Problems as
	// not re-derived.
	StageErrors []StageError
}

// MergeProblems returns one Problem per path, sorted by path, joining
// the findings about one file with "; " in the order given.
func MergeProblems(ps []Problem) []Problem {
	byPath := map[string]int{}
	var out []Problem
	for _, p := range ps {
		if i, ok := byPath[p.Path]; ok {
			out[i].What += "; " + p.What
			continue
		}
		byPath[p.Path] = len(out)
		out = append(out, p)
	}
	slices.SortStableFunc(out, func(a, b Problem) int { return strings.Compare(a.Path, b.Path) })
	return out
}

// Verify proves that the committed outputs follow from the committed raw
// data, without modifying the working tree:
//
//  1. every file listed in SHA256SUMS is read again (no hash cache) and
//     its SHA-256 compared, and every raw data file must be listed;
//  2. every stage is run from scratch in a scratch tree that holds only
//     the pipeline's source inputs (files no stage produces), and each
//     re-derived output is compared byte for byte with the working tree
//     (the tree is .cache/verify-<PID>-*, removed when Verify returns;
//     see verifyTreePrefix);
//  3. the SHA256SUMS the re-derived tree would have is compared with the
//     committed one.
//
// It returns a report naming each differing or missing file, one entry
// per file, and the stages that failed on the committed data: a failing
// stage does not stop the others (Engine.KeepGoing), and its outputs are
// reported as not re-derived. The error is for failures to verify at all
// (an unreadable SHA256SUMS, a scratch tree that cannot be made).
func (e *Engine) Verify(ctx context.Context) (*VerifyReport, error) {
	rep := &VerifyReport{}
	problem := func(p, format string, args ...any) {
		rep.Problems = append(rep.Problems, Problem{Path: p, What: fmt.Sprintf(format, args...)})
	}

	// 1. Hashes of everything listed, and completeness of the list.
	sumsBytes, err := os.ReadFile(e.abs(SumsFile))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w (run `mage build` to create it, or restore it with git checkout)", SumsFile, err)
	}
	entries, err := ParseSums(SumsFile, sumsBytes)
	if err != nil {
		return nil, err
	}
	listed := map[string]bool{}
	for _, ent := range entries {
		listed[ent.Path] = true
	}
	sumProblems, err := CheckListed(ctx, e.Root, entries)
	if err != nil {
		return nil, err
	}
	rep.Checked = len(entries)
	rep.Problems = append(rep.Problems, sumProblems...)
	raw, err := e.rawFiles()
	if err != nil {
		return nil, err
	}
	for _, f := range raw {
		if !listed[f] {
			problem(f, "raw data file not listed in %s", SumsFile)
		}
	}

	// 2. Re-derive every output in a scratch tree.
	stages, _, err := e.order()
	if err != nil {
		return nil, err
	}
	tmp, err := makeVerifyTree(e.Root)
	if err != nil {
		return nil, fmt.Errorf("create the verification tree under %s: %w (is the tree writable? `go run mage.go clean` removes what killed verifies left)", verifyTreeParent, err)
	}
	defer os.RemoveAll(tmp)
	sources, err := e.Sources(nil)
	if err != nil {
		return nil, err
	}
	sources = append(sources, raw...)
	slices.Sort(sources)
	if err := e.CopyFiles(tmp, slices.Compact(sources)); err != nil {
		return nil, fmt.Errorf("build the verification tree: %w", err)
	}
	// Code versions are computed from the real tree (CodeRoot): the code
	// that runs is the code compiled into this binary.
	fresh := &Engine{
		Root:       tmp,
		CodeRoot:   e.codeRoot(),
		Stages:     e.Stages,
		RawDirs:    e.RawDirs,
		SealedRuns: e.SealedRuns,
		Log:        io.Discard,
		Notices:    e.notices(),
		Now:        e.Now,
		KeepGoing:  true,
	}
	if e.Verbose {
		fresh.Log, fresh.Verbose = e.Log, true
	}
	built, err := fresh.Build(ctx)
	if err != nil && (built == nil || len(built.Failed) == 0 || ctx.Err() != nil) {
		return nil, fmt.Errorf("re-derive outputs from the committed data: %w", err)
	}
	notBuilt := map[string]string{}
	for _, f := range built.Failed {
		notBuilt[f.Stage] = "stage " + f.Stage + " failed on the committed data (its error is below)"
		rep.StageErrors = append(rep.StageErrors, f)
	}
	for _, name := range built.Skipped {
		notBuilt[name] = "stage " + name + " did not run: a stage it depends on failed (below)"
	}
	for _, s := range stages {
		for _, o := range s.Outputs {
			if why, ok := notBuilt[s.Name]; ok {
				problem(o, "not re-derived: %s", why)
				continue
			}
			rep.Rederived++
			want, err := os.ReadFile(filepath.Join(tmp, filepath.FromSlash(o)))
			if err != nil {
				return nil, fmt.Errorf("read re-derived %s: %w", o, err)
			}
			got, err := os.ReadFile(e.abs(o))
			switch {
			case errors.Is(err, os.ErrNotExist):
				problem(o, "missing from the working tree (stage %s makes it)", s.Name)
			case err != nil:
				problem(o, "unreadable: %v", err)
			case !bytes.Equal(got, want):
				problem(o, "differs from what stage %s re-derives from the committed data (sha256 %s on disk, %s re-derived, first difference at byte %d)",
					s.Name, short(HashBytes(got)), short(HashBytes(want)), firstDiff(got, want))
			}
		}
	}

	// 3. The checksum list itself (only a complete build writes it).
	if len(built.Failed) == 0 {
		wantSums, err := os.ReadFile(filepath.Join(tmp, SumsFile))
		if err != nil {
			return nil, fmt.Errorf("read re-derived %s: %w", SumsFile, err)
		}
		if !bytes.Equal(wantSums, sumsBytes) {
			problem(SumsFile, "out of date: it is not the list the re-derived tree has (if it is the only FAIL line, `mage build` rewrites it: commit that)")
		}
	}
	rep.Problems = MergeProblems(rep.Problems)
	return rep, nil
}

func firstDiff(a, b []byte) int {
	n := min(len(a), len(b))
	for i := range n {
		if a[i] != b[i] {
			return i
		}
	}
	return n
}

// Sources returns the pipeline's source files: every file a stage reads
// that no stage writes, expanded against Root, sorted. Input patterns for
// which skip returns true are left out (skip may be nil).
func (e *Engine) Sources(skip func(pattern string) bool) ([]string, error) {
	stages, _, err := e.order()
	if err != nil {
		return nil, err
	}
	produced := map[string]bool{}
	for _, s := range stages {
		for _, o := range s.Outputs {
			produced[o] = true
		}
	}
	sources := map[string]bool{}
	for _, s := range stages {
		var own []string
		for _, p := range s.Inputs {
			if skip != nil && skip(p) {
				continue
			}
			if !slices.ContainsFunc(s.Outputs, func(o string) bool { return covers(p, o) }) {
				own = append(own, p)
			}
		}
		files, err := expandInputs(e.Root, own)
		if err != nil {
			return nil, fmt.Errorf("stage %s: %w", s.Name, err)
		}
		for _, f := range files {
			if !produced[f] {
				sources[f] = true
			}
		}
	}
	return slices.Sorted(maps.Keys(sources)), nil
}

// CopyFiles copies the given files (slash-separated, relative to Root) to
// the same relative paths below dst, hard-linking where it can.
func (e *Engine) CopyFiles(dst string, files []string) error {
	for _, f := range files {
		if err := copyFile(e.abs(f), filepath.Join(dst, filepath.FromSlash(f))); err != nil {
			return fmt.Errorf("copy %s: %w", f, err)
		}
	}
	return nil
}

// copyFile copies src to dst (creating parent directories), preferring a
// hard link when both are on one file system. A hard link is safe: stages
// replace outputs by rename, never writing into an existing file.
func copyFile(src, dst string) error {
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	if err := os.Link(src, dst); err == nil {
		return nil
	}
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
