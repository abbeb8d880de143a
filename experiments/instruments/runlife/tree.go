package runlife

import (
	"context"
	"strings"

	"pqrepro/internal/provenance"
)

// TreeState is what a run keeps of its tree beyond meta.json's git.
//
// That is the patch of a dirty tree and the untracked files.
// meta.json records only the patch's SHA-256 (provenance.Git); with the
// patch in the run folder (runlist.DiffFile) the tree the run ran can be
// rebuilt from git.commit, and a reviewer can read what differed.
type TreeState struct {
	// Diff is `git diff HEAD --binary --no-ext-diff --no-color`, the
	// patch whose SHA-256 provenance.RepoGit records as git.diff_sha256;
	// empty for a clean tree.
	Diff []byte
	// Untracked lists the files git neither tracks nor ignores (`git
	// ls-files --others --exclude-standard`). They do not make a tree
	// dirty, but a new source file among them is built into the run.
	Untracked []string
}

// UntrackedFile is where a run keeps TreeState.Untracked, one path a
// line, when there are any.
const UntrackedFile = "git.untracked"

// ReadTree reads the TreeState of the git checkout at dir. Take it right
// after provenance.RepoGit: Commit keeps the diff only when its SHA-256
// is the one meta.json records.
func ReadTree(ctx context.Context, dir string) (TreeState, error) {
	git := func(args ...string) ([]byte, error) { return provenance.GitOutput(ctx, dir, args...) }
	var t TreeState
	var err error
	if t.Diff, err = git("diff", "HEAD", "--binary", "--no-ext-diff", "--no-color"); err != nil {
		return TreeState{}, err
	}
	others, err := git("ls-files", "-z", "--others", "--exclude-standard")
	if err != nil {
		return TreeState{}, err
	}
	for _, f := range strings.Split(string(others), "\x00") {
		if f != "" {
			t.Untracked = append(t.Untracked, f)
		}
	}
	return t, nil
}
