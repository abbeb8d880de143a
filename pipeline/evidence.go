package pipeline

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"pqrepro/experiments/instruments/runlife"
	"pqrepro/internal/atomicfile"
	"pqrepro/internal/provenance"
	"pqrepro/internal/repro"
	"pqrepro/internal/runlist"
	"pqrepro/internal/spec"
)

// ErrEvidence is returned when the raw data under data/ differs from its
// seals. That is when a run differs from its sealed manifest (or a pinned
// run's manifest from its pin), a run's ID disagrees with its meta.json or
// lies in the future, data/ holds an entry that is not a sealed run, or a
// run is not evidence: no run list (experiments/<study>.runs) names it at
// its manifest, it lies under another or no registered study, or it
// copies another run's captures or timings. Nothing is built from it.
var ErrEvidence = errors.New("the raw data under data/ does not match its seals")

// ErrSpec is returned when a study's spec (experiments/<study>.toml)
// does not load: no run of the study could start from it.
var ErrSpec = errors.New("a study's spec does not load")

// A pinnedRun is one run some study pins for some profile.
type pinnedRun struct {
	study, dir string
	// manifest is the SHA-256 the pin records for the run's manifest
	// ("" if none); pinnedBy says where (spec file and key), specFile is
	// the spec.
	manifest, pinnedBy, specFile string
}

// pinnedRuns lists every run that any study pins, for every profile.
func pinnedRuns(cfg Config) ([]pinnedRun, error) {
	var out []pinnedRun
	for _, s := range Studies() {
		for _, profile := range fullFirst {
			dir, m, err := spec.PinnedSeal(cfg.Root, s.Name, profile)
			if err != nil {
				return nil, fmt.Errorf("study %s: %w", s.Name, err)
			}
			if dir == "" {
				continue
			}
			out = append(out, pinnedRun{study: s.Name, dir: dir, manifest: m, specFile: spec.Path(s.Name), pinnedBy: spec.Path(s.Name) + " [runs] " + profile})
		}
	}
	return out, nil
}

// evidenceReport is what checkEvidence found.
type evidenceReport struct {
	// Runs counts the run folders checked, Pinned those a study pins.
	Runs, Pinned, Files, Blobs, BlobsAbsent, BlobsInRun int
	Problems                                            []repro.Problem
	// Strays counts the problems that are entries of data/ which are not
	// sealed runs (repro.StrayEntries), and Unlisted the sealed runs that
	// no run list names (experiments/<study>.runs), for status to name
	// the culprit.
	Strays, Unlisted int
}

// checkEvidence checks every run folder under data/, pinned or not, against
// its MANIFEST.sha256 (and a pinned run's manifest against its pin). It checks
// its ID against its meta.json and the clock, its place among the evidence
// (runIndex: its study's run list names it, its study is registered and is
// meta.json's, it copies no other run), the run lists against data/ and the
// pins, and names every entry of data/ that is not a sealed run. An unpinned
// run is evidence too: build lists it in SHA256SUMS, and the host reference
// and the between-run variance of `mage all` read it, so it enters only by a
// line in a run list. With h set (the builds' hash cache) every file of a run
// that SHA256SUMS lists is also compared with that list, so that editing the
// data, meta.json, the manifest and the pin together is caught too. With h nil
// (verify) every file is read again and the SHA256SUMS comparison is left to
// repro.Engine.Verify. Content-store blobs are checked when the store holds
// them.
func checkEvidence(cfg Config, h *repro.Hasher) (*evidenceReport, error) {
	runs, err := pinnedRuns(cfg)
	if err != nil {
		return nil, err
	}
	all, err := repro.RunFolders(cfg.Root, []string{"data"})
	if err != nil {
		return nil, err
	}
	var sums []repro.SumEntry
	if h != nil {
		b, err := os.ReadFile(filepath.Join(cfg.Root, repro.SumsFile))
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			return nil, err
		}
		if sums, err = repro.ParseSums(repro.SumsFile, b); err != nil {
			return nil, fmt.Errorf("%w: restore it with `git checkout -- %s`", err, repro.SumsFile)
		}
	}
	ix, err := readRunIndex(cfg.Root)
	if err != nil {
		return nil, err
	}
	rep := &evidenceReport{}
	store := cfg.store()
	now := cfg.now()
	checked := map[string]bool{}
	check := func(r pinnedRun) {
		rep.Runs++
		by := r.pinnedBy
		if r.pinnedBy != "" {
			rep.Pinned++
		}
		if r.pinnedBy != "" && r.manifest == "" {
			p, restore := r.specFile, "if the spec was edited, restore it with `git checkout -- "+r.specFile+"`; "
			if p == "" {
				p, restore = r.dir+"/"+repro.ManifestFile, ""
			}
			rep.Problems = append(rep.Problems, repro.Problem{Path: p, What: fmt.Sprintf(
				"%s names %s without the SHA-256 of its %s (a pin is <run-id>@sha256:<manifest SHA-256>); %sa run committed before manifests existed is sealed once with `go run ./cmd/pqrepro seal %s`",
				r.pinnedBy, r.dir, repro.ManifestFile, restore, r.dir)})
			by = "" // still check the folder against its own manifest
		}
		rc := repro.CheckRun(cfg.Root, r.dir, r.manifest, by, h, store)
		rep.Files += rc.Files
		rep.Blobs += rc.Blobs
		rep.BlobsAbsent += rc.BlobsAbsent
		rep.BlobsInRun += rc.BlobsInRun
		rep.Problems = append(rep.Problems, rc.Problems...)
		// A run whose files differ from its seal has them named
		// already: its meta.json's times are read from a sound one only.
		rep.Problems = append(rep.Problems, ix.runChecks(r.dir, now, len(rc.Problems) == 0)...)
		if !ix.listed(r.dir) {
			rep.Unlisted++
		}
		for _, ent := range sums {
			if !strings.HasPrefix(ent.Path, r.dir+"/") {
				continue
			}
			got, err := h.Hash(filepath.Join(cfg.Root, filepath.FromSlash(ent.Path)))
			switch {
			case errors.Is(err, os.ErrNotExist):
				rep.Problems = append(rep.Problems, repro.Problem{Path: ent.Path, What: fmt.Sprintf("missing (listed in %s line %d)", repro.SumsFile, ent.Line)})
			case err != nil:
				rep.Problems = append(rep.Problems, repro.Problem{Path: ent.Path, What: fmt.Sprintf("unreadable: %v", err)})
			case got != ent.SHA256:
				rep.Problems = append(rep.Problems, repro.Problem{Path: ent.Path, What: fmt.Sprintf("content differs from %s: listed sha256 %s, file has %s", repro.SumsFile, ent.SHA256[:12], got[:12])})
			}
		}
	}
	for _, r := range runs {
		if checked[r.dir] {
			continue
		}
		checked[r.dir] = true
		check(r)
	}
	// Every other sealed run, against its own manifest: no pin vouches
	// for it, so its manifest is taken as it is, but the files, the run
	// ID it names and meta.json must agree with it.
	for _, dir := range all {
		if checked[dir] {
			continue
		}
		checked[dir] = true
		check(pinnedRun{study: path.Base(path.Dir(dir)), dir: dir})
	}
	// Anything under data/ that is not a sealed run with a valid ID:
	// named, never listed in SHA256SUMS (repro.StrayEntries).
	stray, err := repro.StrayEntries(cfg.Root, []string{"data"})
	if err != nil {
		return nil, err
	}
	rep.Strays = len(stray)
	rep.Problems = append(rep.Problems, stray...)
	rep.Problems = append(rep.Problems, ix.listProblems(runs)...)
	// A list that does not parse, or an unknown study, is named once,
	// not once per run.
	seen := map[repro.Problem]bool{}
	rep.Problems = slices.DeleteFunc(rep.Problems, func(p repro.Problem) bool {
		dup := seen[p]
		seen[p] = true
		return dup
	})
	rep.Problems = repro.MergeProblems(rep.Problems)
	return rep, nil
}

// runIDLayout is the time part of a run ID (repro.NewRun): the UTC start
// time to the second.
const runIDLayout = "20060102T150405Z"

// runTimeProblems checks a sealed run beyond its files and their seal.
//
// That is its ID against its meta.json and the clock (idProblems), and
// its place among the evidence (runProblems: its study registered, its
// list naming it, no copy), beside repro.CheckRun. With meta false
// (a run whose files, meta.json perhaps among them, differ from its
// seal) meta.json is not read. The reproduce side calls it
// (reproduce.Config.RunProblems) for the runs the host reference, the
// between-run variance, the calibration and the cross-host fit draw on,
// so that none of them reads a run that build would refuse.
func runTimeProblems(root, runRel string, now time.Time, meta bool) []repro.Problem {
	ix, err := readRunIndex(root)
	if err != nil {
		return []repro.Problem{{Path: runRel, What: "the runs under data/ cannot be read: " + err.Error()}}
	}
	return ix.runChecks(runRel, now, meta)
}

// runChecks is runTimeProblems with the runs and lists read once.
func (ix *runIndex) runChecks(runRel string, now time.Time, meta bool) []repro.Problem {
	out, m := idProblems(ix.root, runRel, now, meta)
	return append(out, ix.runProblems(runRel, m)...)
}

// idProblems checks a sealed run's ID against its meta.json and the
// clock. The run_id of meta.json must be the folder's name, its start must
// fall in the second the ID names (repro.NewRun names a run after its
// start), its end must not precede its start, and neither the ID nor the
// end may lie after now. A run named for a later date would otherwise be
// "the newest" run of its design, and so the host reference of `mage
// all` (hostReference), whatever it holds. With meta false only the
// ID is checked against the clock. It returns meta.json as read, nil
// when it was not (meta false) or cannot be.
func idProblems(root, runRel string, now time.Time, meta bool) ([]repro.Problem, *provenance.Meta) {
	id := path.Base(runRel)
	var out []repro.Problem
	bad := func(p, format string, args ...any) {
		out = append(out, repro.Problem{Path: p, What: fmt.Sprintf(format, args...) +
			"; a run's ID is the UTC second it started (repro.NewRun) and is never renamed: restore the folder with `git checkout -- " + runRel + "`, or remove it if it was never committed"})
	}
	stamp, _, _ := strings.Cut(id, "-")
	named, err := time.Parse(runIDLayout, stamp)
	if err != nil {
		bad(runRel, "the run ID %s names no valid time (%v)", id, err)
		return out, nil
	}
	if named.After(now) {
		bad(runRel, "the run ID %s lies in the future (now is %s)", id, now.UTC().Format(time.RFC3339))
	}
	if !meta {
		return out, nil
	}
	mp := runRel + "/" + provenance.FileName
	m, err := provenance.Read(filepath.Join(root, filepath.FromSlash(runRel)))
	switch {
	case errors.Is(err, os.ErrNotExist):
		bad(mp, "missing: a run records its ID, start and end there")
		return out, nil
	case err != nil:
		bad(mp, "the run's start cannot be read: %s", strings.ReplaceAll(err.Error(), filepath.Join(root, filepath.FromSlash(runRel))+string(filepath.Separator), runRel+"/"))
		return out, nil
	}
	start, end := m.Start.UTC(), m.End.UTC()
	switch {
	case m.RunID != id:
		bad(mp, "run_id is %q, not the folder's name %s", m.RunID, id)
	case m.Start.IsZero() || m.End.IsZero():
		bad(mp, "start or end is missing, so the run ID %s cannot be checked against them", id)
	case !start.Truncate(time.Second).Equal(named):
		bad(mp, "start %s is not the second the run ID %s names", start.Format(time.RFC3339Nano), id)
	case end.Before(start):
		bad(mp, "end %s precedes start %s", end.Format(time.RFC3339Nano), start.Format(time.RFC3339Nano))
	case end.After(now):
		bad(mp, "end %s lies in the future (now is %s)", end.Format(time.RFC3339Nano), now.UTC().Format(time.RFC3339))
	}
	return out, &m
}

// specProblems loads and validates every study's spec (Study.CheckSpec),
// one problem per spec that does not load, named by its path.
func specProblems(cfg Config) []repro.Problem {
	var out []repro.Problem
	for _, s := range Studies() {
		if s.CheckSpec == nil {
			continue
		}
		if err := s.CheckSpec(cfg.Root); err != nil {
			p := spec.Path(s.Name)
			what := strings.TrimPrefix(err.Error(), "spec "+filepath.Join(cfg.Root, filepath.FromSlash(p))+": ")
			out = append(out, repro.Problem{Path: p, What: strings.ReplaceAll(what, "\n", "; ") +
				"; no " + s.Name + " run can start from it: fix it, or restore it with `git checkout -- " + p + "`"})
		}
	}
	return out
}

// requireEvidence runs checkEvidence and specProblems before a target
// does anything else. It refuses, printing one FAIL line per altered,
// missing or extra file, stray entry of data/ or spec that does not
// load.
func requireEvidence(cfg Config, h *repro.Hasher, target string) error {
	rep, err := checkEvidence(cfg, h)
	if err != nil {
		return err
	}
	specs := specProblems(cfg)
	if len(rep.Problems) == 0 && len(specs) > 0 {
		for _, p := range specs {
			cfg.printf("FAIL %s", p)
		}
		return fmt.Errorf("%w: %d specs (listed above), so %s did nothing", ErrSpec, len(specs), target)
	}
	return refuseAltered(cfg, repro.MergeProblems(append(rep.Problems, specs...)), target)
}

// refuseAltered prints one FAIL line per problem and returns ErrEvidence
// saying that target did nothing; nil when there is no problem.
func refuseAltered(cfg Config, problems []repro.Problem, target string) error {
	if len(problems) == 0 {
		return nil
	}
	for _, p := range problems {
		cfg.printf("FAIL %s", p)
	}
	return fmt.Errorf("%w: %d problems (listed above), so %s did nothing: sealed runs are immutable, and outputs are never built from data that differs from its seals. Each line says what to do: restore a file with `git checkout -- <path>`, remove what is not a sealed run or not evidence, add a run you recorded to its run list (experiments/<study>.runs), or record a new run (`mage <study>:run` seals, lists and pins it)",
		ErrEvidence, len(problems), target)
}

// withGit fills cfg.Git with the state of the repository at cfg.Root,
// for the provenance of the runs the target is about to start. It
// fills cfg.Tree with its patch and untracked files, which a run keeps. A tree
// that is a git checkout must say its commit: if git cannot, the target
// stops rather than record "unknown". A tree that is not a checkout (an
// unpacked artifact bundle) records "unknown" with the reason.
func (c Config) withGit(ctx context.Context) (Config, error) {
	if c.Git != nil {
		return c, nil
	}
	g, err := provenance.RepoGit(ctx, c.Root)
	if err != nil {
		if _, serr := os.Stat(filepath.Join(c.Root, ".git")); serr == nil {
			return c, fmt.Errorf("provenance: %w: a run must record the commit it was made from; fix the checkout (`git status`) and start again", err)
		}
		g = provenance.Git{Commit: "unknown", WhyUnknown: fmt.Sprintf("%s is not a git checkout: %v", c.Root, err)}
	} else {
		t, err := runlife.ReadTree(ctx, c.Root)
		if err != nil {
			return c, fmt.Errorf("provenance: %w: a run from a dirty tree keeps its patch; fix the checkout (`git status`) and start again", err)
		}
		c.Tree = &t
	}
	c.Git = &g
	return c, nil
}

// Seal writes the MANIFEST.sha256 of a run committed before runs were
// sealed at commit time, once.
//
// It pins the manifest's SHA-256 wherever the run is pinned and lists the
// run in its study's run list (experiments/<study>.runs). It refuses a run that is sealed already, and a run any file of
// which differs from what the run's own meta.json ("files") and
// SHA256SUMS (the working copy and, in a git checkout, the committed one)
// say, or that holds a file neither lists: the manifest must seal the
// data as it was recorded, not as it is. The folder's README.md (notes
// for people, listed nowhere) is allowed; Seal appends a note saying when
// and why the manifest was added, and seals it with the rest.
func Seal(ctx context.Context, cfg Config, dirs ...string) error {
	if err := cfg.Validate(); err != nil {
		return err
	}
	if len(dirs) == 0 {
		return errors.New("name the run folders to seal (data/<study>/<run-id>)")
	}
	lists, from, err := committedSums(ctx, cfg.Root)
	if err != nil {
		return err
	}
	for _, d := range dirs {
		if err := sealOne(cfg, d, lists, from); err != nil {
			return err
		}
	}
	return nil
}

// committedSums reads SHA256SUMS from the working tree and, in a git
// checkout, from HEAD; it says where the lists came from.
func committedSums(ctx context.Context, root string) ([]map[string]string, string, error) {
	read := func(name string, b []byte) (map[string]string, error) {
		ents, err := repro.ParseSums(name, b)
		if err != nil {
			return nil, err
		}
		m := map[string]string{}
		for _, e := range ents {
			m[e.Path] = e.SHA256
		}
		return m, nil
	}
	b, err := os.ReadFile(filepath.Join(root, repro.SumsFile))
	if err != nil {
		return nil, "", fmt.Errorf("%w: the runs are checked against it", err)
	}
	work, err := read(repro.SumsFile, b)
	if err != nil {
		return nil, "", err
	}
	lists, from := []map[string]string{work}, repro.SumsFile
	head, err := exec.CommandContext(ctx, "git", "-C", root, "show", "HEAD:"+repro.SumsFile).Output()
	if err == nil {
		committed, err := read("HEAD:"+repro.SumsFile, head)
		if err != nil {
			return nil, "", err
		}
		commit, _ := exec.CommandContext(ctx, "git", "-C", root, "rev-parse", "--short=12", "HEAD").Output()
		lists = append(lists, committed)
		from = fmt.Sprintf("%s (in the working tree and\nas committed at %s)", repro.SumsFile, bytes.TrimSpace(commit))
	}
	return lists, from, nil
}

func sealOne(cfg Config, dir string, lists []map[string]string, from string) error {
	dir = path.Clean(filepath.ToSlash(dir))
	parts := strings.Split(dir, "/")
	if len(parts) != 3 || parts[0] != "data" {
		return fmt.Errorf("%q is not a run folder (data/<study>/<run-id>)", dir)
	}
	abs := filepath.Join(cfg.Root, filepath.FromSlash(dir))
	name := parts[1] + "/" + parts[2]
	if _, err := os.Lstat(filepath.Join(abs, repro.ManifestFile)); err == nil {
		return fmt.Errorf("%s is sealed already (%s exists); a manifest is written once", dir, repro.ManifestFile)
	}
	m, err := repro.NewManifestStore(abs, name, cfg.store()) // also checks meta.json against the files
	if err != nil {
		return err
	}
	meta, err := provenance.Read(abs)
	if err != nil {
		return fmt.Errorf("seal %s: %w", dir, err)
	}
	var bad []string
	for _, f := range slices.Sorted(maps.Keys(m.Files)) {
		if f == repro.NotesFile {
			continue
		}
		p := dir + "/" + f
		for _, l := range lists {
			want, ok := l[p]
			switch {
			case !ok:
				bad = append(bad, p+": not listed in "+repro.SumsFile+" (added after the run was committed?)")
			case want != m.Files[f]:
				bad = append(bad, fmt.Sprintf("%s: sha256 %s, but %s lists %s", p, m.Files[f][:12], repro.SumsFile, want[:12]))
			}
		}
	}
	for _, l := range lists {
		for p := range l {
			if rest, ok := strings.CutPrefix(p, dir+"/"); ok && m.Files[rest] == "" {
				bad = append(bad, p+": listed in "+repro.SumsFile+" but missing")
			}
		}
	}
	if _, ok := meta.Files[provenance.FileName]; ok {
		bad = append(bad, dir+"/meta.json lists itself")
	}
	if len(bad) > 0 {
		slices.Sort(bad)
		return fmt.Errorf("%s does not match what was recorded, so it is not sealed; restore it with `git checkout -- %s`:\n  %s", dir, dir, strings.Join(slices.Compact(bad), "\n  "))
	}
	date := cfg.now().UTC().Format("2006-01-02")
	note := fmt.Sprintf("## %s (added %s)\n\n", repro.ManifestFile, date) +
		"This run was committed before runs were sealed when committed\n" +
		"(repro.Run.Commit now writes the manifest). `pqrepro seal` added\n" +
		repro.ManifestFile + " on " + date + ", after checking every file of\n" +
		"this folder against the SHA-256 that the run's meta.json (\"files\") and\n" +
		from + " give it.\n" +
		"No data file was changed. The manifest lists every file of the folder\n" +
		fmt.Sprintf("(this README.md included) and the %d content-store blob(s) that\n", len(m.Blobs)) +
		"meta.json refers to; experiments/" + parts[1] + ".toml pins the manifest's own\n" +
		"SHA-256. build, all, quick, paper and verify refuse to run when any\n" +
		"file here differs from it.\n"
	notes := filepath.Join(abs, repro.NotesFile)
	old, err := os.ReadFile(notes)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("seal %s: %w", dir, err)
	}
	if len(old) > 0 {
		note = strings.TrimRight(string(old), "\n") + "\n\n" + note
	} else {
		note = "# Run " + name + "\n\n" + note
	}
	if err := atomicfile.WriteFile(notes, []byte(note), 0o644); err != nil {
		return fmt.Errorf("seal %s: %w", dir, err)
	}
	sum, err := repro.WriteManifestStore(abs, name, cfg.store())
	if err != nil {
		return err
	}
	specPath := filepath.Join(cfg.Root, spec.Path(parts[1]))
	var pinned []string
	for _, profile := range fullFirst {
		id, err := spec.PinnedIn(specPath, profile)
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("seal %s: %w", dir, err)
		}
		if id != parts[2] {
			continue
		}
		if err := spec.Pin(specPath, profile, spec.Sealed(id, sum)); err != nil {
			return fmt.Errorf("seal %s: sealed, but could not pin the manifest: %w", dir, err)
		}
		pinned = append(pinned, spec.Path(parts[1])+" [runs] "+profile)
	}
	where := "not pinned anywhere"
	if len(pinned) > 0 {
		where = "pinned in " + strings.Join(pinned, ", ")
	}
	_, diffErr := os.Stat(filepath.Join(abs, runlist.DiffFile))
	entry := runlist.Entry{ID: parts[2], Manifest: sum, Role: runlist.Evidence, DirtyNoDiff: meta.Git.Dirty && diffErr != nil}
	if len(pinned) > 0 {
		entry.Role = runlist.Pinned
	}
	list := runlist.Path(parts[1])
	if err := runlist.Add(filepath.Join(cfg.Root, filepath.FromSlash(list)), parts[1], entry); err != nil {
		return fmt.Errorf("seal %s: sealed, but not listed: %w; add the line `%s` to %s by hand", dir, err, entry, list)
	}
	where += ", listed in " + list + " as " + strings.TrimPrefix(entry.String(), entry.ID+"@sha256:"+sum+" ")
	checked := len(m.Files)
	if _, ok := m.Files[repro.NotesFile]; ok {
		checked--
	}
	cfg.printf("seal: %s: %d files checked against meta.json and %s; %s sha256 %s, %s", dir, checked, strings.ReplaceAll(from, "\n", " "), repro.ManifestFile, sum, where)
	return nil
}

// evidenceLine is the one-line summary of a check, for verify's output.
func (r *evidenceReport) line(d time.Duration) string {
	blobs := fmt.Sprintf("%d content-store blobs re-hashed", r.Blobs)
	if r.BlobsInRun > 0 {
		blobs += fmt.Sprintf(", %d committed gzip'd in their run (content re-hashed when the records are re-derived)", r.BlobsInRun)
	}
	if r.BlobsAbsent > 0 {
		blobs += fmt.Sprintf(", %d not in the local store (not checked)", r.BlobsAbsent)
	}
	return fmt.Sprintf("verify: %d runs (%d pinned) checked against their manifests: %d files, %s (%v)", r.Runs, r.Pinned, r.Files, blobs, d.Round(time.Millisecond))
}
