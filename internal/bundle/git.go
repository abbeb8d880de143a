package bundle

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
)

// gitFile is one entry of the index (git ls-files -s): its path
// (slash-separated, relative to the top level) and its mode as Git
// records it. Git keeps only three modes for content, 100644, 100755 and
// 120000 (symbolic link); 160000 is a submodule (gitlink).
type gitFile struct {
	Path string
	Mode string
}

// gitTree is what the bundle needs to know about the repository.
type gitTree struct {
	Commit  string
	Dirty   []string // tracked paths that differ from the commit, sorted
	Files   []gitFile
	Version string // git describe, without -dirty
}

// git runs git in root and returns its standard output. The global
// --no-optional-locks keeps `git status` from rewriting the index, which
// other people may be committing to in the same checkout.
func git(ctx context.Context, root string, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, "git", append([]string{"--no-optional-locks", "-C", root}, args...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		msg := strings.TrimSpace(stderr.String())
		if msg == "" {
			msg = err.Error()
		}
		return nil, fmt.Errorf("git %s: %s", strings.Join(args, " "), msg)
	}
	return out, nil
}

// readTree asks Git for the commit, the dirty state and the tracked files
// of the repository whose top level is root.
func readTree(ctx context.Context, root string) (*gitTree, error) {
	top, err := git(ctx, root, "rev-parse", "--show-toplevel")
	if err != nil {
		return nil, fmt.Errorf("%s is not a Git checkout (%w): a bundle says which commit it holds, so it is made from a clone", root, err)
	}
	if !samePath(strings.TrimSpace(string(top)), root) {
		return nil, fmt.Errorf("%s is not the top level of its Git checkout (%s is): run from the repository root", root, strings.TrimSpace(string(top)))
	}
	head, err := git(ctx, root, "rev-parse", "--verify", "HEAD^{commit}")
	if err != nil {
		return nil, fmt.Errorf("the repository has no commit yet (%w): commit first", err)
	}
	t := &gitTree{Commit: strings.TrimSpace(string(head))}

	// Tracked files only: an untracked file does not go into the bundle,
	// so it does not make the bundle differ from the commit.
	st, err := git(ctx, root, "status", "--porcelain=v1", "-z", "--untracked-files=no", "--ignore-submodules=none")
	if err != nil {
		return nil, err
	}
	// Records are "XY path"; a rename or copy is followed by one more
	// record holding the source path ("R  new\x00old\x00").
	recs := strings.Split(string(st), "\x00")
	for i := 0; i < len(recs); i++ {
		rec := recs[i]
		if len(rec) < 4 {
			continue
		}
		t.Dirty = append(t.Dirty, rec[3:])
		if strings.ContainsAny(rec[:2], "RC") && i+1 < len(recs) {
			i++
			t.Dirty = append(t.Dirty, recs[i])
		}
	}
	slices.Sort(t.Dirty)
	t.Dirty = slices.Compact(t.Dirty)

	ls, err := git(ctx, root, "ls-files", "-z", "-s", "--full-name")
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	for rec := range strings.SplitSeq(string(ls), "\x00") {
		if rec == "" {
			continue
		}
		// "<mode> <object> <stage>\t<path>"
		meta, path, ok := strings.Cut(rec, "\t")
		f := strings.Fields(meta)
		if !ok || len(f) != 3 {
			return nil, fmt.Errorf("git ls-files: cannot parse %q", rec)
		}
		if seen[path] { // unmerged paths appear once per stage
			return nil, fmt.Errorf("git ls-files: %s has merge conflicts: resolve them and commit", path)
		}
		seen[path] = true
		t.Files = append(t.Files, gitFile{Path: path, Mode: f[0]})
	}
	slices.SortFunc(t.Files, func(a, b gitFile) int { return strings.Compare(a.Path, b.Path) })

	d, err := git(ctx, root, "describe", "--tags", "--always", "--abbrev=12")
	if err != nil {
		return nil, err
	}
	t.Version = strings.TrimSpace(string(d))
	return t, nil
}

// gitVersion returns the first line of `git --version`, for the record.
func gitVersion(ctx context.Context) string {
	out, err := exec.CommandContext(ctx, "git", "--version").Output()
	if err != nil {
		return "unknown"
	}
	return strings.TrimSpace(strings.SplitN(string(out), "\n", 2)[0])
}

// samePath reports whether two paths name the same directory, following
// symbolic links (a temporary directory is often reached through one).
func samePath(a, b string) bool {
	ea, err1 := filepath.EvalSymlinks(a)
	eb, err2 := filepath.EvalSymlinks(b)
	if err1 != nil || err2 != nil {
		return filepath.Clean(a) == filepath.Clean(b)
	}
	return ea == eb
}
