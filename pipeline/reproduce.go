package pipeline

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"pqrepro/analysis/claims"
	"pqrepro/experiments/instruments/runlife"
	"pqrepro/internal/deps"
	"pqrepro/internal/repro"
	"pqrepro/internal/spec"
)

// ErrNotReproduced is returned by All when a new run contradicts the
// reference run of the same profile: a claim's verdict differs, or an
// item of a study differs (see compareEffect and compareMedian). An
// inconclusive item does not count.
var ErrNotReproduced = errors.New("the new runs do not reproduce the reference runs")

// ReproduceDir is where All writes, relative to the root: one complete
// reproduction tree per profile, ReproduceDir/<profile>/, laid out like
// the repository (data/, results/, figures/, paper/main.pdf) with
// SUMMARY.txt, and the incomplete tree of a running `all` as
// ReproduceDir/.incomplete-<profile>-*.
const ReproduceDir = ".cache/reproduce"

// buildEstimate is the expected time of the analysis, render and paper
// stages when everything is stale, on the reference machine.
const buildEstimate = 30 * time.Second

// A studyPlan is what All does with one study, and what came of it.
type studyPlan struct {
	s Study
	// ref is the run pinned for the profile ("" when there is none);
	// committed is true when the committed results/<study>.json were
	// built from it, so that they are the reference results.
	ref       string
	committed bool
	// skip says why the experiment is not re-run here ("" when it is).
	skip     string
	estimate time.Duration

	newRun     string        // the new run folder, relative to the tree
	took       time.Duration // its wall time
	failed     error         // the run or its analysis failed
	refResults []byte
	newResults []byte
}

// All is `mage all` (and `mage quick`, `mage reproduce`): it reproduces
// every study at cfg.Profile (default full) without touching the
// committed tree, and says how the new runs compare with the committed
// ones. In order:
//
//  1. it prints its plan: per study what runs, its estimated time from
//     the study's cost model (Study.EstimateFor) and which reference run
//     it is compared with, and what cannot run here and why;
//  2. it verifies the committed data (verifyCommitted: every pinned run
//     against its sealed manifest and pin, every file of SHA256SUMS
//     re-hashed) and refuses to go on if anything differs;
//  3. it installs what the experiments and the paper need; a study
//     whose needs cannot be installed (or Study.CannotRun: not root) is
//     skipped with the reason, never failed;
//  4. it re-runs every other experiment at the profile into a new tree,
//     ReproduceDir/.incomplete-<profile>-*, with copies of the specs,
//     so that the committed data, specs, outputs, SHA256SUMS and
//     pqrepro.lock stay as they are;
//  5. it analyses the new runs there with the same stages, evaluates the
//     claims and builds the paper from them (studies not re-run enter the
//     paper with their reference run, and the summary says so);
//  6. it compares like with like: each new run with the reference run of
//     the same profile (the committed results when the committed outputs
//     come from that run, else that run analysed in the tree's
//     .reference/ folder), never with another profile's; a study without
//     a reference run of the profile is shown, not compared;
//  7. it renames the tree to ReproduceDir/<profile>/ (replacing the
//     previous one) only when all of this is done, writes SUMMARY.txt
//     there, and ends with one table: per claim the published value, the
//     reference run's value and verdict, this run's value and verdict and
//     whether they agree, then where the new paper is and one overall
//     line.
//
// PQREPRO_STUDIES=tls,net limits which studies are re-run. An
// interrupted All (Ctrl-C, SIGTERM) removes its incomplete tree: a tree
// under ReproduceDir/<profile>/ is always a complete one. It returns
// ErrNotReproduced when a comparison differs, and the error of any run
// that failed (after the table).
func All(ctx context.Context, cfg Config) error {
	target := "all"
	if cfg.Profile == Quick {
		target = "quick"
	}
	return reproduceAll(ctx, cfg, target)
}

// Reproduce is All under the name of the `mage reproduce` target (kept
// for scripts that call it): the same plan, verification, runs, paper
// and table.
func Reproduce(ctx context.Context, cfg Config) error {
	return reproduceAll(ctx, cfg, "reproduce")
}

func reproduceAll(ctx context.Context, cfg Config, target string) error {
	ctx, stop := withSignals(ctx)
	defer stop()
	if cfg.Profile == "" {
		cfg.Profile = Full
	}
	if err := cfg.Validate(); err != nil {
		return err
	}
	began := cfg.now()
	plans, err := planReproduction(cfg)
	if err != nil {
		return err
	}
	final := filepath.Join(cfg.Root, ReproduceDir, cfg.Profile)
	paperWhy := ""
	if _, err := os.Stat(filepath.Join(cfg.Root, "paper", "main.tex")); err != nil {
		paperWhy = "this tree has no paper/main.tex"
	}
	printPlan(cfg, target, plans, paperWhy)

	// 1. The committed data must be what was sealed before anything is
	// compared with it.
	if err := verifyCommitted(ctx, cfg, target); err != nil {
		return err
	}

	// 2. What the runs and the paper need; what cannot be installed
	// turns into a reason to skip.
	for i := range plans {
		p := &plans[i]
		if p.skip != "" || p.s.Requirements == nil {
			continue
		}
		if err := cfg.installer().Ensure(ctx, p.s.Requirements(cfg.Root)); err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			p.skip = "cannot install what it needs: " + err.Error()
			cfg.printf("%s: %s: not re-run: %s", target, p.s.Name, p.skip)
		}
	}
	if paperWhy == "" {
		if err := cfg.installer().Ensure(ctx, []deps.Requirement{reqLatex}); err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			paperWhy = "cannot install pdflatex: " + err.Error()
		}
	}

	// 3. The new runs, in a tree of their own that becomes final only
	// when complete.
	if err := os.MkdirAll(filepath.Dir(final), 0o755); err != nil {
		return fmt.Errorf("%s: %w", target, err)
	}
	work, err := os.MkdirTemp(filepath.Dir(final), ".incomplete-"+cfg.Profile+"-")
	if err != nil {
		return fmt.Errorf("%s: create the reproduction tree: %w", target, err)
	}
	complete := false
	defer func() {
		if !complete {
			os.RemoveAll(work)
		}
	}()
	runs := 0
	for _, p := range plans {
		if p.skip == "" {
			runs++
		}
	}
	if runs > 0 {
		// The new runs' provenance is the repository's state, taken at
		// the repository root, not the tree they are written in.
		if cfg, err = cfg.withGit(ctx); err != nil {
			return err
		}
	}
	n := 0
	for i := range plans {
		p := &plans[i]
		if p.skip != "" {
			continue
		}
		n++
		cfg.printf("%s [%d/%d]: %s: new %s run (about %v)", target, n, runs, p.s.Name, cfg.Profile, roundDuration(p.estimate))
		start := cfg.now()
		p.newRun, p.failed = newRun(ctx, cfg, p.s, work)
		p.took = cfg.now().Sub(start)
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("%s: interrupted during the %s run: %w; the incomplete reproduction tree was removed, nothing else was written", target, p.s.Name, err)
		}
		if p.failed != nil {
			cfg.printf("%s: %s: the run FAILED after %v: %v", target, p.s.Name, p.took.Round(time.Second), p.failed)
			continue
		}
		cfg.printf("%s: %s: new run %s in %v", target, p.s.Name, p.newRun, p.took.Round(time.Second))
	}

	// 4. Reference results of the same profile.
	if err := referenceResults(ctx, cfg, plans, filepath.Join(work, ".reference")); err != nil {
		return err
	}

	// 5. The new runs' results, claims and paper.
	paperErr, err := buildTree(ctx, cfg, target, plans, work, paperWhy == "")
	if err != nil {
		return err
	}
	if paperErr != nil {
		first, _, _ := strings.Cut(paperErr.Error(), "\n")
		paperWhy = "the paper stage failed (its error is above and at the end): " + first
	}

	// 6. Compare, write the summary, make the tree final.
	sum := summarize(cfg.Profile, plans)
	sum.took = cfg.now().Sub(began)
	pdf := ""
	if paperWhy == "" {
		pdf = filepath.Join(final, "paper", "main.pdf")
	}
	text := sum.text(cfg, target, final, pdf, paperWhy)
	if err := os.WriteFile(filepath.Join(work, "SUMMARY.txt"), []byte(text+"\n"+sum.itemTable()), 0o644); err != nil {
		return fmt.Errorf("%s: %w", target, err)
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("%s: interrupted: %w; the incomplete reproduction tree was removed", target, err)
	}
	if err := publishTree(work, final); err != nil {
		return fmt.Errorf("%s: %w", target, err)
	}
	complete = true
	if cfg.Verbose {
		fmt.Fprint(cfg.log(), sum.itemTable())
	}
	fmt.Fprint(cfg.log(), text)

	var errs []error
	for _, p := range plans {
		if p.failed != nil {
			errs = append(errs, fmt.Errorf("%s: %w", p.s.Name, p.failed))
		}
	}
	if paperErr != nil {
		errs = append(errs, fmt.Errorf("paper: %w", paperErr))
	}
	if sum.differs() {
		errs = append(errs, ErrNotReproduced)
	}
	return errors.Join(errs...)
}

// planReproduction works out, per study, the reference run of the
// profile and whether the experiment can run here.
func planReproduction(cfg Config) ([]studyPlan, error) {
	only, err := studiesFromEnv()
	if err != nil {
		return nil, err
	}
	stale := staleStudies(cfg)
	var plans []studyPlan
	for _, s := range Studies() {
		if s.StagesFor == nil {
			continue
		}
		p := studyPlan{s: s, estimate: s.estimate(cfg.Root, cfg.Profile)}
		if p.ref, err = s.pinned(cfg.Root, cfg.Profile); err != nil {
			return nil, fmt.Errorf("study %s: %w", s.Name, err)
		}
		committedProfile, err := (&Config{Root: cfg.Root}).stageProfile(s)
		if err != nil {
			return nil, fmt.Errorf("study %s: %w", s.Name, err)
		}
		p.committed = p.ref != "" && committedProfile == cfg.Profile && !stale[s.Name]
		switch {
		case len(only) > 0 && !only[s.Name]:
			p.skip = "not in PQREPRO_STUDIES"
		case s.Run == nil:
			p.skip = "the study has no experiment yet"
		case s.CannotRun != nil:
			p.skip = s.CannotRun(cfg.Root)
		}
		plans = append(plans, p)
	}
	if len(plans) == 0 {
		return nil, errors.New("no study has analysis stages: nothing to reproduce")
	}
	return plans, nil
}

// staleStudies lists the studies whose stages in the committed tree are
// not up to date (code, parameters or inputs changed since the committed
// outputs were built): their committed results are not what the current
// code makes of the reference run, so All analyses the reference run
// again rather than compare new results made by one version of the
// analysis with reference results made by another. When the status
// cannot be computed, every study counts as stale.
func staleStudies(cfg Config) map[string]bool {
	stale := map[string]bool{}
	quiet := cfg
	quiet.Profile, quiet.Log = "", io.Discard
	st, err := func() ([]repro.StageStatus, error) {
		e, err := Engine(quiet)
		if err != nil {
			return nil, err
		}
		return e.Status(context.Background())
	}()
	for _, s := range Studies() {
		for _, ss := range st {
			if ss.Stale && strings.HasPrefix(ss.Name, s.Name+":") {
				stale[s.Name] = true
			}
		}
		if err != nil {
			stale[s.Name] = true
		}
	}
	return stale
}

// studiesFromEnv reads PQREPRO_STUDIES (comma-separated study names);
// an empty set means every study.
func studiesFromEnv() (map[string]bool, error) {
	only := map[string]bool{}
	known := map[string]bool{}
	for _, s := range Studies() {
		known[s.Name] = true
	}
	for _, s := range strings.Split(os.Getenv("PQREPRO_STUDIES"), ",") {
		if s = strings.TrimSpace(s); s == "" {
			continue
		}
		if !known[s] {
			return nil, fmt.Errorf("PQREPRO_STUDIES names %q, which is not a study (the studies: %s)", s, strings.Join(slices.Sorted(maps.Keys(known)), ", "))
		}
		only[s] = true
	}
	return only, nil
}

func printPlan(cfg Config, target string, plans []studyPlan, paperWhy string) {
	rel := filepath.Join(ReproduceDir, cfg.Profile)
	cfg.printf("%s: plan (%s profile), into %s; the committed data, specs, outputs, %s and %s are not touched:", target, cfg.Profile, rel, repro.SumsFile, repro.LockFile)
	step := 1
	cfg.printf("  %d. verify the committed data: every pinned run against its sealed manifest and pin, every file in %s re-hashed [seconds]", step, repro.SumsFile)
	total := map[string]time.Duration{}
	for _, p := range plans {
		step++
		for _, prof := range []string{Quick, Full} {
			if p.skip == "" {
				total[prof] += p.s.estimate(cfg.Root, prof)
			}
		}
		ref := fmt.Sprintf("no %s reference run: its results are shown, not compared", cfg.Profile)
		if p.ref != "" {
			ref = "compare with the " + cfg.Profile + " reference run " + p.ref
		}
		if p.skip != "" {
			cfg.printf("  %d. %s: NOT re-run here: %s; %s", step, p.s.Name, p.skip, strings.Replace(ref, "compare with", "its claims are shown from", 1))
			continue
		}
		est := "unknown time"
		if p.estimate > 0 {
			est = "about " + roundDuration(p.estimate).String()
		}
		cfg.printf("  %d. %s: re-run %s at the %s profile [%s]; %s", step, p.s.Name, p.s.Title, cfg.Profile, est, ref)
	}
	step++
	what := "analyse the new runs, evaluate the claims and build the paper in the tree"
	if paperWhy != "" {
		what = "analyse the new runs and evaluate the claims in the tree (no paper: " + paperWhy + ")"
	}
	cfg.printf("  %d. %s [about %v]", step, what, roundDuration(buildEstimate))
	cfg.printf("  %d. print one table: per claim the published value, the reference run's and this run's value and verdict", step+1)
	cfg.printf("%s: estimated time about %v (experiments at the quick profile: about %v; at the full profile: about %v)",
		target, roundDuration(total[cfg.Profile]+buildEstimate), roundDuration(total[Quick]), roundDuration(total[Full]))
}

// verifyCommitted is All's first step. It makes the first two checks of
// `mage verify`, on the committed data the comparison reads: every
// pinned run against its sealed manifest and its pin, every file read
// again (checkEvidence with no hash cache), then every file SHA256SUMS
// lists re-hashed, the committed results the reference column is read
// from included (checkSums). It does not re-derive the outputs from the
// data: that is verify's third step, `mage verify`. Any difference is
// printed as a FAIL line and stops All before it installs or runs
// anything.
func verifyCommitted(ctx context.Context, cfg Config, target string) error {
	start := cfg.now()
	ev, err := checkEvidence(cfg, nil)
	if err != nil {
		return err
	}
	checked, problems, err := checkSums(ctx, cfg.Root)
	if err != nil {
		return err
	}
	if err := refuseAltered(cfg, repro.MergeProblems(append(ev.Problems, problems...)), target); err != nil {
		return err
	}
	cfg.printf("%s: verified the committed data: %d pinned runs against their manifests (%d files, %d content-store blobs; %d not in the local store), %d files of %s re-hashed (%v)",
		target, ev.Runs, ev.Files, ev.Blobs, ev.BlobsAbsent, checked, repro.SumsFile, cfg.now().Sub(start).Round(time.Millisecond))
	return nil
}

// checkSums re-hashes every file SHA256SUMS lists, without the hash
// cache, and returns how many it checked and one problem per file that
// is missing, unreadable or differs (the wording of `mage verify`).
func checkSums(ctx context.Context, root string) (int, []repro.Problem, error) {
	b, err := os.ReadFile(filepath.Join(root, repro.SumsFile))
	if errors.Is(err, os.ErrNotExist) {
		return 0, []repro.Problem{{Path: repro.SumsFile, What: "missing: restore it with `git checkout -- " + repro.SumsFile + "`"}}, nil
	}
	if err != nil {
		return 0, nil, err
	}
	ents, err := repro.ParseSums(repro.SumsFile, b)
	if err != nil {
		return 0, nil, fmt.Errorf("%w: restore it with `git checkout -- %s`", err, repro.SumsFile)
	}
	var problems []repro.Problem
	for _, ent := range ents {
		if err := ctx.Err(); err != nil {
			return 0, nil, err
		}
		got, err := repro.HashFile(filepath.Join(root, filepath.FromSlash(ent.Path)))
		switch {
		case errors.Is(err, os.ErrNotExist):
			problems = append(problems, repro.Problem{Path: ent.Path, What: fmt.Sprintf("missing (listed in %s line %d)", repro.SumsFile, ent.Line)})
		case err != nil:
			problems = append(problems, repro.Problem{Path: ent.Path, What: fmt.Sprintf("unreadable: %v", err)})
		case got != ent.SHA256:
			problems = append(problems, repro.Problem{Path: ent.Path, What: fmt.Sprintf("content differs from %s: listed sha256 %s, file has %s", repro.SumsFile, ent.SHA256[:12], got[:12])})
		}
	}
	return len(ents), problems, nil
}

// newRun runs one study's experiment into tree/data/ with a copy of its
// spec under tree/.pins/ (where the runner pins the new run) and returns
// the new run folder, relative to the tree.
func newRun(ctx context.Context, cfg Config, s Study, tree string) (string, error) {
	specCopy := filepath.Join(tree, ".pins", s.Name+".toml")
	b, err := os.ReadFile(filepath.Join(cfg.Root, spec.Path(s.Name)))
	if err != nil {
		return "", fmt.Errorf("read the spec: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(specCopy), 0o755); err != nil {
		return "", err
	}
	if err := os.WriteFile(specCopy, b, 0o644); err != nil {
		return "", err
	}
	// A new run here is compared with the reference run, never made one:
	// a busy machine is recorded in its meta.json (and the tree's paper),
	// not a reason to drop it.
	ctx = runlife.WithPinBusy(ctx, "a new run of `mage all` in a scratch tree, compared with the reference run; not a reference run")
	if err := s.Run(ctx, cfg, specCopy, filepath.Join(tree, "data")); err != nil {
		return "", err
	}
	id, err := spec.PinnedIn(specCopy, cfg.Profile)
	if err != nil {
		return "", fmt.Errorf("the new run was not pinned in the spec's copy: %w", err)
	}
	rel := "data/" + s.Name + "/" + id
	if _, err := os.Stat(filepath.Join(tree, filepath.FromSlash(rel))); id == "" || err != nil {
		return "", fmt.Errorf("the runner pinned no new run in the spec's copy (found %q)", id)
	}
	return rel, nil
}

// analyseIn builds the given stages in tree, after copying from the
// repository every source file they read but the runs already in the
// tree (fresh, relative paths). Stages keep going after a failure; the
// report lists the failures.
func analyseIn(ctx context.Context, cfg Config, tree string, stages []*repro.Stage, fresh []string) (*repro.BuildReport, error) {
	repo := &repro.Engine{Root: cfg.Root, Stages: stages}
	sources, err := repo.Sources(func(p string) bool {
		for _, run := range fresh {
			if repro.Covers(run, p) || repro.Covers(p, run) {
				return true
			}
		}
		return false
	})
	if err != nil {
		return nil, err
	}
	if err := repo.CopyFiles(tree, sources); err != nil {
		return nil, fmt.Errorf("copy the sources into %s: %w", tree, err)
	}
	e := &repro.Engine{Root: tree, CodeRoot: cfg.Root, Stages: stages, Log: cfg.log(), Verbose: cfg.Verbose, Now: cfg.Now, KeepGoing: true}
	if !cfg.Verbose {
		e.Log = io.Discard
	}
	rep, err := e.Build(ctx)
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	if err != nil && (rep == nil || len(rep.Failed) == 0) {
		return nil, err
	}
	return rep, nil
}

// referenceResults fills refResults: the committed results/<study>.json
// where the committed outputs come from the reference run of the
// profile, else that run analysed in tree (so that a quick run is
// compared with the quick reference run, never with the full one).
func referenceResults(ctx context.Context, cfg Config, plans []studyPlan, tree string) error {
	var stages []*repro.Stage
	var analysed []*studyPlan
	for i := range plans {
		p := &plans[i]
		switch {
		case p.ref == "":
		case p.committed:
			b, err := os.ReadFile(filepath.Join(cfg.Root, "results", p.s.Name+".json"))
			if err != nil {
				return fmt.Errorf("the committed results of %s: %w (restore them with `git checkout -- results/`)", p.s.Name, err)
			}
			p.refResults = b
		default:
			st, err := p.s.StagesFor(cfg.Root, cfg.Profile, p.ref)
			if err != nil {
				return fmt.Errorf("study %s: %w", p.s.Name, err)
			}
			stages = append(stages, st...)
			analysed = append(analysed, p)
		}
	}
	if len(stages) == 0 {
		return nil
	}
	names := make([]string, len(analysed))
	for i, p := range analysed {
		names[i] = p.s.Name + " " + p.ref
	}
	cfg.printf("reference: analysing the %s reference runs that the committed outputs are not built from, or not with the current code (%s), in %s", cfg.Profile, strings.Join(names, ", "), filepath.Join(ReproduceDir, cfg.Profile, ".reference"))
	start := cfg.now()
	rep, err := analyseIn(ctx, cfg, tree, stages, nil)
	if err != nil {
		return fmt.Errorf("analyse the reference runs: %w", err)
	}
	for _, f := range rep.Failed {
		cfg.printf("reference: stage %s FAILED: %v", f.Stage, f.Err)
	}
	cfg.printf("reference: %d stages ran, %d failed (%v)", len(rep.Ran), len(rep.Failed), cfg.now().Sub(start).Round(time.Millisecond))
	for _, p := range analysed {
		if b, err := os.ReadFile(filepath.Join(tree, "results", p.s.Name+".json")); err == nil {
			p.refResults = b
		}
	}
	return nil
}

// buildTree analyses the new runs in the tree, evaluates the claims and
// builds the paper there. A study not re-run enters with its reference
// run of the profile, or else the run behind the committed outputs, so
// that the paper is whole. It returns the paper stage's failure apart
// from the error of the build itself.
func buildTree(ctx context.Context, cfg Config, target string, plans []studyPlan, tree string, paper bool) (paperErr, err error) {
	var stages []*repro.Stage
	var fresh []string
	for _, p := range plans {
		run, profile := p.newRun, cfg.Profile
		if run != "" {
			fresh = append(fresh, run)
		} else if run = p.ref; run == "" {
			if profile, err = (&Config{Root: cfg.Root}).stageProfile(p.s); err != nil {
				return nil, err
			}
			if run, err = p.s.pinned(cfg.Root, profile); err != nil {
				return nil, err
			}
		}
		if run == "" {
			continue
		}
		if p.newRun == "" {
			cfg.printf("%s: %s enters the tree's paper with its committed %s run %s (not re-run here)", target, p.s.Name, profile, run)
		}
		st, err := p.s.StagesFor(cfg.Root, profile, run)
		if err != nil {
			return nil, fmt.Errorf("study %s: %w", p.s.Name, err)
		}
		stages = append(stages, st...)
	}
	stages = finishStages(cfg.Root, stages, paper)
	cfg.printf("%s: analysing the new runs in the tree: %d stages", target, len(stages))
	start := cfg.now()
	rep, err := analyseIn(ctx, cfg, tree, stages, fresh)
	if err != nil {
		return nil, fmt.Errorf("analyse the new runs: %w", err)
	}
	for _, f := range rep.Failed {
		cfg.printf("%s: stage %s FAILED: %v", target, f.Stage, f.Err)
		if f.Stage == "paper" {
			paperErr = f.Err
		}
	}
	if paper && paperErr == nil && !slices.Contains(rep.Ran, "paper") && !slices.Contains(rep.UpToDate, "paper") {
		paperErr = errors.New("not built: a stage it depends on failed (listed above)")
	}
	cfg.printf("%s: %d stages ran, %d failed (%v)", target, len(rep.Ran), len(rep.Failed), cfg.now().Sub(start).Round(time.Millisecond))
	for i := range plans {
		p := &plans[i]
		if p.newRun == "" {
			continue
		}
		b, err := os.ReadFile(filepath.Join(tree, "results", p.s.Name+".json"))
		if err != nil {
			p.failed = fmt.Errorf("the analysis of the new run %s made no results (its failed stages are listed above)", p.newRun)
			continue
		}
		p.newResults = b
	}
	return paperErr, nil
}

// publishTree makes work the complete tree final, replacing the
// previous one: the old tree is moved aside first and removed after, so
// that final is at every moment either the previous complete tree, absent
// or the new complete tree.
func publishTree(work, final string) error {
	old := ""
	if _, err := os.Lstat(final); err == nil {
		old = work + ".old"
		if err := os.Rename(final, old); err != nil {
			return fmt.Errorf("move the previous reproduction tree aside: %w", err)
		}
	}
	if err := os.Rename(work, final); err != nil {
		if old != "" {
			os.Rename(old, final)
		}
		return fmt.Errorf("publish the reproduction tree: %w", err)
	}
	if old != "" {
		return os.RemoveAll(old)
	}
	return nil
}

// A claimRow is one line of the summary table.
type claimRow struct {
	claims.Evaluated // the reference run's evaluation
	now              claims.Evaluated
	refNote, nowNote string // why a side is absent ("" when present)
	comparison       string
}

// A summary is what All found.
type summary struct {
	profile string
	plans   []studyPlan
	claims  []claimRow
	items   []itemRow
	took    time.Duration // wall time of the whole command
}

// summarize compares the plans' reference and new results: every study's
// items (compareStudy) and every claim's verdict.
func summarize(profile string, plans []studyPlan) *summary {
	sum := &summary{profile: profile, plans: plans}
	ref, now := map[string][]byte{}, map[string][]byte{}
	refMissing, nowMissing := map[string]string{}, map[string]string{}
	byStudy := map[string]*studyPlan{}
	for i := range plans {
		p := &plans[i]
		byStudy[p.s.Name] = p
		if p.refResults != nil {
			ref[p.s.Name] = p.refResults
		} else {
			refMissing[p.s.Name] = "no " + profile + " reference run"
		}
		switch {
		case p.newResults != nil:
			now[p.s.Name] = p.newResults
		case p.failed != nil:
			nowMissing[p.s.Name] = "the run failed: " + p.failed.Error()
		default:
			nowMissing[p.s.Name] = "not re-run here: " + p.skip
		}
		if p.refResults != nil && p.newResults != nil {
			rows, err := compareStudy(p.s, p.refResults, p.newResults)
			if err != nil {
				rows = []itemRow{{study: p.s.Name, item: "results", outcome: differs, why: err.Error()}}
			}
			sum.items = append(sum.items, rows...)
		}
	}
	evaluate := func(files map[string][]byte, missing map[string]string) []claims.Evaluated {
		r, err := claims.NewResults(files, missing)
		if err != nil {
			r, _ = claims.NewResults(nil, missing)
		}
		return claims.Run(r, claims.All(catalogues())).Claims
	}
	a, b := evaluate(ref, refMissing), evaluate(now, nowMissing)
	for i, c := range a {
		row := claimRow{Evaluated: c, now: b[i], refNote: refMissing[c.Study], nowNote: nowMissing[c.Study]}
		switch {
		case byStudy[c.Study] == nil:
			row.comparison = "not compared: the study is not reproduced here"
			row.refNote, row.nowNote = "no analysis", "no analysis"
		case row.nowNote != "":
			row.comparison = "not compared: " + row.nowNote
		case row.refNote != "":
			row.comparison = "not compared: " + row.refNote + " (never compared with another profile)"
		case c.Verdict == b[i].Verdict:
			row.comparison = "same verdict"
		default:
			row.comparison = "VERDICT DIFFERS"
		}
		sum.claims = append(sum.claims, row)
	}
	return sum
}

// differs reports whether any claim's verdict or any item differs.
func (s *summary) differs() bool {
	for _, c := range s.claims {
		if c.comparison == "VERDICT DIFFERS" {
			return true
		}
	}
	for _, it := range s.items {
		if it.outcome == differs {
			return true
		}
	}
	return false
}

// cell is one side of a claim in the table.
func cell(e claims.Evaluated, note string) (string, string) {
	if note != "" {
		return "-", "(" + note + ")"
	}
	return e.Ours, string(e.Verdict)
}

// text renders the end of All's output: the studies, the items that did
// not agree, the claims table, the paper and one overall line.
func (s *summary) text(cfg Config, target, final, pdf, paperWhy string) string {
	var b strings.Builder
	rel := func(p string) string {
		if r, err := filepath.Rel(cfg.Root, p); err == nil {
			return r
		}
		return p
	}
	fmt.Fprintf(&b, "\n%s: %s profile, reproduction tree %s\n", target, s.profile, rel(final))
	var rerun, skipped, failed []string
	for _, p := range s.plans {
		ref := "no " + s.profile + " reference run"
		if p.ref != "" {
			ref = "reference " + p.ref
			if p.committed {
				ref += " (the committed results/" + p.s.Name + ".json)"
			} else {
				ref += " (analysed in " + rel(filepath.Join(final, ".reference")) + ")"
			}
		}
		switch {
		case p.failed != nil:
			failed = append(failed, p.s.Name)
			fmt.Fprintf(&b, "  %-5s FAILED after %v: %v; %s\n", p.s.Name, p.took.Round(time.Second), p.failed, ref)
		case p.newRun != "":
			rerun = append(rerun, fmt.Sprintf("%s %v", p.s.Name, p.took.Round(time.Second)))
			fmt.Fprintf(&b, "  %-5s new run %s in %v; %s\n", p.s.Name, p.newRun, p.took.Round(time.Second), ref)
		default:
			skipped = append(skipped, p.s.Name)
			fmt.Fprintf(&b, "  %-5s not re-run here: %s; %s\n", p.s.Name, p.skip, ref)
		}
	}
	counts := map[outcome]int{}
	for _, it := range s.items {
		counts[it.outcome]++
		if it.outcome != agrees {
			fmt.Fprintf(&b, "  %s %s: reference %s, new %s: %s (%s)\n", it.study, it.item, it.reference, it.now, it.outcome, it.why)
		}
	}
	b.WriteString("\n")
	w := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintf(w, "claim\tstudy\tpublished\treference run (%s)\tverdict\tthis run (%s)\tverdict\tcomparison\n", s.profile, s.profile)
	same, diff, notCompared, derived := 0, 0, 0, 0
	for _, c := range s.claims {
		ro, rv := cell(c.Evaluated, c.refNote)
		no, nv := cell(c.now, c.nowNote)
		id := c.ID
		if c.Derived() {
			id += " (derived)"
			derived++
		} else {
			switch c.comparison {
			case "same verdict":
				same++
			case "VERDICT DIFFERS":
				diff++
			default:
				notCompared++
			}
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", id, c.Study, c.Published, ro, rv, no, nv, c.comparison)
	}
	w.Flush()
	if pdf != "" {
		fmt.Fprintf(&b, "paper built from the new runs: %s\n", rel(pdf))
	} else {
		fmt.Fprintf(&b, "paper: not built: %s\n", paperWhy)
	}
	verdict := "REPRODUCED"
	switch {
	case s.differs():
		verdict = "NOT REPRODUCED"
	case len(rerun) == 0:
		verdict = "NOTHING RE-RUN"
	case len(skipped)+len(failed) > 0 || notCompared > 0:
		verdict = "REPRODUCED WHERE COMPARED"
	}
	fmt.Fprintf(&b, "%s: %s: re-run %s; skipped %s; failed %s; claims: %d same verdict, %d differ, %d not compared (%d derived, not counted); study items: %d agree, %d inconclusive, %d differ (all in %s); %v in all\n",
		target, verdict, listOrNone(rerun), listOrNone(skipped), listOrNone(failed), same, diff, notCompared, derived,
		counts[agrees], counts[inconclusive], counts[differs], rel(filepath.Join(final, "SUMMARY.txt")), s.took.Round(time.Second))
	return b.String()
}

// itemTable is every compared item of every study, for SUMMARY.txt and -v.
func (s *summary) itemTable() string {
	var b strings.Builder
	w := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "\nstudy\titem\treference\tnew run\toutcome\twhy")
	for _, it := range s.items {
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\n", it.study, it.item, it.reference, it.now, it.outcome, it.why)
	}
	w.Flush()
	return b.String()
}

func listOrNone(l []string) string {
	if len(l) == 0 {
		return "none"
	}
	return strings.Join(l, ", ")
}
