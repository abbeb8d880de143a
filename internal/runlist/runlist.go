// Package runlist reads and writes experiments/<study>.runs, the
// committed list of every run of a study that counts as evidence.
//
// A run folder under data/<study>/ that its list does not name is not
// evidence: build, status, verify and all refuse it, and the host
// reference, the between-run variance, the calibration and the
// cross-host fit never read it. So adding a run to the evidence is a
// line in a reviewed diff, never a folder dropped into data/. Each line
// names a run by its ID and the SHA-256 of its MANIFEST.sha256, like a
// pin of the study's spec, with its role:
//
//	20261206T150521Z-quick@sha256:<64 hex digits> pinned
//	20261206T150621Z-quick@sha256:<64 hex digits> evidence,dirty-no-diff
//
// Lines starting with '#' and blank lines are comments.
package runlist

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"pqrepro/internal/atomicfile"
)

// The roles and the flag a line may give a run. Every line has exactly
// one role; the flag is either there or not.
const (
	// Pinned: experiments/<study>.toml [runs] pins the run, the paper's
	// reference run of its profile.
	Pinned = "pinned"
	// Evidence: a sealed run the study does not pin. The host reference,
	// the between-run variance, the calibration and the cross-host fit
	// draw on it where its profile, design, host and quiet check fit.
	Evidence = "evidence"
	// DirtyNoDiff: the run was recorded from a tree whose tracked files
	// differed from its commit (meta.json git.dirty) and its folder keeps
	// no DiffFile. The code it ran cannot then be rebuilt exactly. Runs
	// recorded before runs kept their diff carry it; a new run keeps its
	// diff and never needs it.
	DirtyNoDiff = "dirty-no-diff"
)

// DiffFile is where a run recorded from a dirty tree keeps its patch.
//
// The patch is `git diff HEAD --binary`, whose SHA-256 is meta.json's
// git.diff_sha256: applied to git.commit it gives the tree the run ran.
const DiffFile = "git.diff"

// Ext is the list file's extension: experiments/<study>.runs beside
// experiments/<study>.toml.
const Ext = ".runs"

// Path returns the list of a study, relative to the repository root.
func Path(study string) string { return "experiments/" + study + Ext }

// Beside returns the list that goes with the spec at specPath: the same
// path with Ext for ".toml". A run is listed beside the spec that pins
// it, also in `mage all`'s scratch copy.
func Beside(specPath string) string { return strings.TrimSuffix(specPath, ".toml") + Ext }

// An Entry is one line of a list.
type Entry struct {
	// ID is the run's ID, its folder's name under data/<study>/.
	ID string
	// Manifest is the SHA-256 of the run's MANIFEST.sha256.
	Manifest string
	// Role is Pinned or Evidence; DirtyNoDiff says the run carries that
	// flag.
	Role        string
	DirtyNoDiff bool
	// Line is the entry's line in the file it was read from (0 for an
	// entry not read from a file).
	Line int
}

// String is the entry as a line of the list, without the newline.
func (e Entry) String() string {
	s := e.ID + "@sha256:" + e.Manifest + " " + e.Role
	if e.DirtyNoDiff {
		s += "," + DirtyNoDiff
	}
	return s
}

// Profile is the profile the run ID names (its part after the time).
func (e Entry) Profile() string {
	_, p, _ := strings.Cut(e.ID, "-")
	return p
}

var (
	idPattern     = regexp.MustCompile(`^[0-9]{8}T[0-9]{6}Z-[a-z0-9][a-z0-9-]*$`)
	sha256Pattern = regexp.MustCompile(`^[0-9a-f]{64}$`)
)

// Parse reads a list, rejecting anything it does not understand and
// naming the line.
//
// It refuses a malformed line, a role that is not Pinned or Evidence, an
// unknown or repeated flag, and a run listed twice.
func Parse(name string, b []byte) ([]Entry, error) {
	var out []Entry
	seen := map[string]int{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		bad := func(format string, args ...any) error {
			return fmt.Errorf("%s:%d: %s; a line is `<run-id>@sha256:<SHA-256 of its MANIFEST.sha256> %s|%s[,%s]`",
				name, n, fmt.Sprintf(format, args...), Pinned, Evidence, DirtyNoDiff)
		}
		f := strings.Fields(line)
		if len(f) != 2 {
			return nil, bad("%d fields, want 2", len(f))
		}
		id, sum, ok := strings.Cut(f[0], "@sha256:")
		switch {
		case !idPattern.MatchString(id):
			return nil, bad("%q is not a run ID (like 20261130T120000Z-quick)", id)
		case !ok || !sha256Pattern.MatchString(sum):
			return nil, bad("%q does not end in @sha256:<64 lower-case hex digits>", f[0])
		}
		if first, dup := seen[id]; dup {
			return nil, fmt.Errorf("%s:%d: run %s is listed twice (also line %d): keep one line", name, n, id, first)
		}
		seen[id] = n
		e := Entry{ID: id, Manifest: sum, Line: n}
		roles := strings.Split(f[1], ",")
		e.Role = roles[0]
		if e.Role != Pinned && e.Role != Evidence {
			return nil, bad("role %q is neither %s nor %s", e.Role, Pinned, Evidence)
		}
		for _, r := range roles[1:] {
			if r != DirtyNoDiff || e.DirtyNoDiff {
				return nil, bad("flag %q is unknown or repeated (the one flag is %s)", r, DirtyNoDiff)
			}
			e.DirtyNoDiff = true
		}
		out = append(out, e)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read %s: %w", name, err)
	}
	return out, nil
}

// Read reads and parses the list at path. A list that does not exist is
// an error wrapping os.ErrNotExist.
func Read(path string) ([]Entry, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return Parse(filepath.ToSlash(path), b)
}

// header is the comment a new list starts with.
func header(study string) string {
	return "# The runs of study " + study + " that count as evidence: a run folder under\n" +
		"# data/" + study + "/ that no line names is refused by build, status, verify\n" +
		"# and all, and never read. Runs are added by `mage " + study + ":run`, which\n" +
		"# records them; see docs/verify.md, \"Run lists\". One line per run:\n" +
		"#   <run-id>@sha256:<SHA-256 of its MANIFEST.sha256> <role>[,dirty-no-diff]\n" +
		"# role pinned: experiments/" + study + ".toml [runs] pins it (the paper's run);\n" +
		"# role evidence: not pinned; the host reference, the between-run variance,\n" +
		"#   the calibration and the cross-host fit draw on it where its profile,\n" +
		"#   design, host and quiet check fit;\n" +
		"# flag dirty-no-diff: recorded from a tree whose tracked files differed from\n" +
		"#   its commit (meta.json git.dirty), and the diff was not kept.\n"
}

// ErrOtherManifest is returned by Add for a run the list names with
// another manifest: a sealed run is never sealed again.
var ErrOtherManifest = errors.New("the list names the run with another manifest")

// Add writes e into the list at path (of study, for a new list's
// header), keeping every comment, before the runs.
//
// A run the list names already keeps its line, with e's role and flag;
// with another manifest it is refused (ErrOtherManifest). When e is
// Pinned, any other run of e's profile the list has as Pinned becomes
// Evidence: a profile has one pinned run. The lines of runs are kept
// sorted by ID. The file is written atomically.
func Add(path, study string, e Entry) error {
	if !idPattern.MatchString(e.ID) || !sha256Pattern.MatchString(e.Manifest) || (e.Role != Pinned && e.Role != Evidence) {
		return fmt.Errorf("list %s: %q is not a run ID, a manifest SHA-256 and a role", path, e.String())
	}
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		b, err = []byte(header(study)), nil
	}
	if err != nil {
		return fmt.Errorf("list %s: %w", path, err)
	}
	entries, err := Parse(filepath.ToSlash(path), b)
	if err != nil {
		return err
	}
	var keep []string // the comments, in their order
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		if t := strings.TrimSpace(sc.Text()); t == "" || strings.HasPrefix(t, "#") {
			keep = append(keep, sc.Text())
		}
	}
	found := false
	for i := range entries {
		old := &entries[i]
		if old.ID == e.ID {
			if old.Manifest != e.Manifest {
				return fmt.Errorf("list %s: line %d names %s with manifest %s, not %s: %w; a run is sealed once", path, old.Line, e.ID, old.Manifest[:12], e.Manifest[:12], ErrOtherManifest)
			}
			old.Role, old.DirtyNoDiff = e.Role, e.DirtyNoDiff
			found = true
			continue
		}
		if e.Role == Pinned && old.Role == Pinned && old.Profile() == e.Profile() {
			old.Role = Evidence
		}
	}
	if !found {
		entries = append(entries, e)
	}
	slices.SortFunc(entries, func(a, b Entry) int { return strings.Compare(a.ID, b.ID) })
	for len(keep) > 0 && strings.TrimSpace(keep[len(keep)-1]) == "" {
		keep = keep[:len(keep)-1]
	}
	var out strings.Builder
	for _, c := range keep {
		out.WriteString(c + "\n")
	}
	for _, en := range entries {
		out.WriteString(en.String() + "\n")
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("list %s: %w", path, err)
	}
	return atomicfile.WriteFile(path, []byte(out.String()), 0o644)
}
