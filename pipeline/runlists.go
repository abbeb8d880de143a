package pipeline

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"pqrepro/internal/provenance"
	"pqrepro/internal/repro"
	"pqrepro/internal/runlist"
	"pqrepro/internal/spec"
)

// diffsKeptSince is when runs began to keep the patch of a dirty tree
// (runlife: git.diff). A run recorded from a dirty tree without its
// patch since then lost it, and cannot be pinned; older pinned runs
// carry runlist.DirtyNoDiff in their list instead.
var diffsKeptSince = time.Date(2026, 12, 7, 0, 0, 0, 0, time.UTC)

// runIndex is what the evidence checks read once of data/ and of every
// registered study's run list (internal/runlist). It holds each sealed run
// folder with its manifest, and the lists. A run counts as evidence only when
// its study is registered, its list names it at its manifest's SHA-256, its
// meta.json names its study, and it shares no capture and no timings with
// another run (runProblems).
type runIndex struct {
	root    string
	studies map[string]Study
	lists   map[string]*studyList    // by registered study
	runs    map[string]*indexedRun   // by folder, data/<study>/<run-id>
	folders []string                 // the keys of runs, sorted
	byMark  map[string][]*indexedRun // runs by the SHA-256 of each mark
}

// A studyList is one study's run list as read.
type studyList struct {
	path    string // relative to the root
	exists  bool
	err     error // the list does not read or parse
	entries map[string]runlist.Entry
}

// An indexedRun is one sealed run folder as the index read it.
type indexedRun struct {
	dir, study, id string
	// manifest is the SHA-256 of the run's MANIFEST.sha256; "" when it
	// cannot be read (repro.CheckRun names why).
	manifest string
	// marks are what no other run may hold, by SHA-256: each
	// content-store blob it cites (a capture) and each of its study's
	// Timed files, with what it is in this run.
	marks map[string]string
}

// readRunIndex reads every sealed run under root/data and every
// registered study's list.
func readRunIndex(root string) (*runIndex, error) {
	dirs, err := repro.RunFolders(root, []string{"data"})
	if err != nil {
		return nil, err
	}
	ix := &runIndex{root: root, studies: map[string]Study{}, lists: map[string]*studyList{}, runs: map[string]*indexedRun{}, folders: dirs, byMark: map[string][]*indexedRun{}}
	for _, s := range Studies() {
		ix.studies[s.Name] = s
		l := &studyList{path: runlist.Path(s.Name), entries: map[string]runlist.Entry{}}
		es, err := runlist.Read(filepath.Join(root, filepath.FromSlash(l.path)))
		switch {
		case errors.Is(err, os.ErrNotExist):
		case err != nil:
			l.exists, l.err = true, errors.New(strings.ReplaceAll(err.Error(), filepath.ToSlash(root)+"/", ""))
		default:
			l.exists = true
			for _, e := range es {
				l.entries[e.ID] = e
			}
		}
		ix.lists[s.Name] = l
	}
	for _, dir := range dirs {
		r := &indexedRun{dir: dir, study: path.Base(path.Dir(dir)), id: path.Base(dir), marks: map[string]string{}}
		ix.runs[dir] = r
		b, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(dir), repro.ManifestFile))
		if err != nil {
			continue
		}
		r.manifest = repro.HashBytes(b)
		m, err := repro.ParseManifest(dir+"/"+repro.ManifestFile, b)
		if err != nil {
			continue
		}
		for _, name := range slices.Sorted(maps.Keys(m.Blobs)) {
			r.marks[m.Blobs[name]] = "content-store blob " + name
		}
		for _, f := range slices.Sorted(maps.Keys(m.Files)) {
			for _, pat := range ix.studies[r.study].Timed {
				if ok, _ := path.Match(pat, f); ok {
					r.marks[m.Files[f]] = f
				}
			}
		}
		for sum := range r.marks {
			ix.byMark[sum] = append(ix.byMark[sum], r)
		}
	}
	return ix, nil
}

// listed reports whether the run folder's study list names it.
func (ix *runIndex) listed(dir string) bool {
	l := ix.lists[path.Base(path.Dir(dir))]
	if l == nil {
		return false
	}
	_, ok := l.entries[path.Base(dir)]
	return ok
}

// registered lists the registered studies' names, for messages.
func (ix *runIndex) registered() string {
	return strings.Join(slices.Sorted(maps.Keys(ix.studies)), ", ")
}

// runProblems checks that one sealed run folder is evidence.
//
// Its study is registered, its study's list names it at its manifest's
// SHA-256, its meta.json (meta, when its files match their seal; nil
// otherwise) names the study its folder does, a dirty tree's run keeps
// its patch or is flagged in the list, and no other run holds one of its
// captures or timings (a copy). Each problem says what to do.
func (ix *runIndex) runProblems(dir string, meta *provenance.Meta) (out []repro.Problem) {
	add := func(p, format string, args ...any) {
		out = append(out, repro.Problem{Path: p, What: fmt.Sprintf(format, args...)})
	}
	r := ix.runs[dir]
	if r == nil {
		r = &indexedRun{dir: dir, study: path.Base(path.Dir(dir)), id: path.Base(dir)}
	}
	defer func() { out = append(out, ix.copyProblems(r)...) }()
	if _, ok := ix.studies[r.study]; !ok {
		add("data/"+r.study, "%s is no registered study (%s): a run goes under data/<study>/ of the study that recorded it, and nothing under data/%s/ is evidence; remove it", r.study, ix.registered(), r.study)
		return out
	}
	l := ix.lists[r.study]
	if l.err != nil {
		add(l.path, "%v; no run of %s is evidence while it does not parse: restore it with `git checkout -- %s`, or fix the line", l.err, r.study, l.path)
		return out
	}
	dirty := meta != nil && meta.Git.Dirty
	_, diffErr := os.Stat(filepath.Join(ix.abs(dir), runlist.DiffFile))
	hasDiff := diffErr == nil
	e, ok := l.entries[r.id]
	if !ok {
		line := runlist.Entry{ID: r.id, Manifest: r.manifest, Role: runlist.Evidence, DirtyNoDiff: dirty && !hasDiff}
		add(dir, "no run list names it: %s has no line for %s, so it is not evidence, and build, verify and all refuse to run beside it; if you recorded it, add the line `%s` to %s (`pinned` for the run a [runs] pin of %s names) and commit it with the run; if not, remove the folder",
			l.path, r.id, line, l.path, spec.Path(r.study))
	} else if r.manifest != "" && e.Manifest != r.manifest {
		add(dir+"/"+repro.ManifestFile, "sha256 %s, but %s line %d lists %s: the manifest or the list was edited; restore both with `git checkout -- %s %s`, or record a new run",
			r.manifest[:12], l.path, e.Line, e.Manifest[:12], dir, l.path)
	}
	if meta == nil {
		return out
	}
	mp := dir + "/" + provenance.FileName
	if meta.Study != r.study {
		add(mp, "study is %q, but the run lies under data/%s/: a run is never moved between studies; move it back to data/%s/ (or restore it with `git checkout -- %s`), or remove it", meta.Study, r.study, orUnknown(meta.Study), dir)
	}
	if !ok {
		return out
	}
	where := fmt.Sprintf("%s line %d", l.path, e.Line)
	switch {
	case dirty && hasDiff:
		if got, err := repro.HashFile(filepath.Join(ix.abs(dir), runlist.DiffFile)); err == nil && got != meta.Git.DiffSHA256 {
			add(dir+"/"+runlist.DiffFile, "sha256 %s, but meta.json's git.diff_sha256 is %s: it is not the patch of the tree the run ran; restore the folder with `git checkout -- %s`", got[:12], orUnknown(meta.Git.DiffSHA256), dir)
		}
		if e.DirtyNoDiff {
			add(l.path, "%s flags %s %s, but its folder keeps the patch (%s): remove the flag", where, r.id, runlist.DirtyNoDiff, runlist.DiffFile)
		}
	case dirty && !e.DirtyNoDiff:
		add(l.path, "%s: %s was recorded from a dirty tree (meta.json git.dirty) and its folder keeps no %s, so the code it ran cannot be rebuilt: write `%s,%s` to say so, or remove the run", where, r.id, runlist.DiffFile, e.Role, runlist.DirtyNoDiff)
	case dirty && e.Role == runlist.Pinned && !r.startedBefore(diffsKeptSince):
		add(l.path, "%s pins %s, recorded from a dirty tree without its %s: runs since %s keep their patch, so a reference run without it cannot be pinned; record it again from a clean tree (commit or stash your changes, then `mage %s:run`)", where, r.id, runlist.DiffFile, diffsKeptSince.Format(time.DateOnly), r.study)
	case !dirty && e.DirtyNoDiff:
		add(l.path, "%s flags %s %s, but its meta.json says the tree was clean (git.dirty false): remove the flag", where, r.id, runlist.DirtyNoDiff)
	}
	return out
}

// startedBefore reports whether the run's ID names a time before t.
func (r *indexedRun) startedBefore(t time.Time) bool {
	stamp, _, _ := strings.Cut(r.id, "-")
	named, err := time.Parse(runIDLayout, stamp)
	return err == nil && named.Before(t)
}

// copyProblems names every other run that holds one of r's marks: a
// capture or a file of timings. Two recordings never share one, so one
// of the two is a copy; both are named, each from the other's side.
func (ix *runIndex) copyProblems(r *indexedRun) []repro.Problem {
	shared := map[string][]string{} // other run -> what it shares
	byWhat := slices.SortedFunc(maps.Keys(r.marks), func(a, b string) int { return strings.Compare(r.marks[a], r.marks[b]) })
	for _, sum := range byWhat {
		for _, o := range ix.byMark[sum] {
			if o.dir == r.dir {
				continue
			}
			what := r.marks[sum]
			if other := o.marks[sum]; other != what {
				what += " (its " + other + ")"
			}
			shared[o.dir] = append(shared[o.dir], fmt.Sprintf("%s %s", what, sum[:12]))
		}
	}
	var out []repro.Problem
	for _, o := range slices.Sorted(maps.Keys(shared)) {
		out = append(out, repro.Problem{Path: r.dir, What: fmt.Sprintf("a copy of %s, or it of this run: both hold %s, and two recordings never share a capture or identical timings; remove the copy (the run no list names, or that git log does not show being recorded)",
			o, strings.Join(shared[o], ", "))})
	}
	return out
}

// listProblems checks the lists themselves against data/ and the pins. It
// reports a list that does not parse, a line naming no sealed run, a run
// marked pinned that no [runs] pin names, a pinned run the list has as
// evidence. pins are every study's pinned runs (pinnedRuns).
func (ix *runIndex) listProblems(pins []pinnedRun) []repro.Problem {
	var out []repro.Problem
	add := func(p, format string, args ...any) {
		out = append(out, repro.Problem{Path: p, What: fmt.Sprintf(format, args...)})
	}
	pinned := map[string]pinnedRun{}
	for _, p := range pins {
		pinned[p.dir] = p
	}
	for _, name := range slices.Sorted(maps.Keys(ix.lists)) {
		l := ix.lists[name]
		if l.err != nil {
			add(l.path, "%v; no run of %s is evidence while it does not parse: restore it with `git checkout -- %s`, or fix the line", l.err, name, l.path)
			continue
		}
		es := slices.SortedFunc(maps.Values(l.entries), func(a, b runlist.Entry) int { return a.Line - b.Line })
		for _, e := range es {
			dir := "data/" + name + "/" + e.ID
			p, isPinned := pinned[dir]
			switch {
			case ix.runs[dir] == nil:
				add(l.path, "line %d names %s, but %s is not a sealed run (missing, or without its %s): restore it with `git checkout -- %s`, or remove the line if the run was removed on purpose", e.Line, e.ID, dir, repro.ManifestFile, dir)
			case e.Role == runlist.Pinned && !isPinned:
				add(l.path, "line %d marks %s %s, but no [runs] pin of %s names it: write `%s` (a profile's earlier reference run is evidence), or pin it", e.Line, e.ID, runlist.Pinned, spec.Path(name), runlist.Evidence)
			case e.Role != runlist.Pinned && isPinned:
				add(l.path, "line %d lists %s as %s, but %s pins it: write `%s`", e.Line, e.ID, e.Role, p.pinnedBy, runlist.Pinned)
			}
		}
	}
	return out
}

// abs is the absolute path of a run folder (relative to the root).
func (ix *runIndex) abs(dir string) string {
	return filepath.Join(ix.root, filepath.FromSlash(dir))
}

// sumsRuns counts, per run folder (data/<study>/<run-id>), the lines
// SHA256SUMS at root has for its files; nil when it cannot be read.
func sumsRuns(root string) map[string]int {
	b, err := os.ReadFile(filepath.Join(root, repro.SumsFile))
	if err != nil {
		return nil
	}
	ents, err := repro.ParseSums(repro.SumsFile, b)
	if err != nil {
		return nil
	}
	out := map[string]int{}
	for _, e := range ents {
		if parts := strings.SplitN(e.Path, "/", 4); len(parts) == 4 && parts[0] == "data" {
			out[strings.Join(parts[:3], "/")]++
		}
	}
	return out
}

// entryOf is the line of a run's list that names the run folder dir, if
// any.
func entryOf(root, dir string) (runlist.Entry, bool) {
	study := path.Base(path.Dir(dir))
	es, err := runlist.Read(filepath.Join(root, filepath.FromSlash(runlist.Path(study))))
	if err != nil {
		return runlist.Entry{}, false
	}
	for _, e := range es {
		if e.ID == path.Base(dir) {
			return e, true
		}
	}
	return runlist.Entry{}, false
}

// orUnknown is s, or "not recorded" when it is empty.
func orUnknown(s string) string {
	if s == "" {
		return "not recorded"
	}
	return s
}
