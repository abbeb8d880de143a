package pipeline

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"pqrepro/internal/settings"
	"slices"
	"strings"
	"time"

	"pqrepro/analysis/agreement"
	"pqrepro/internal/repro"
)

// A studyPlan is what All does with one study, and what came of it.
type studyPlan struct {
	s Study
	// ref is the run pinned for the profile ("" when there is none);
	// committed is true when the committed results/<study>.json were
	// built from it, so that they are the reference results.
	ref       string
	committed bool
	// pinned is the pinned run when ref is the reference of the new
	// run's host instead (hostReference), and hostWhy says why; both ""
	// otherwise.
	pinned, hostWhy string
	// skip says why the experiment is not re-run here ("" when it is).
	skip     string
	estimate time.Duration
	// oneTime is what this machine must install or build before the run,
	// once (Study.oneTimeWork); empty when the study is skipped.
	oneTime []OneTimeWork

	newRun     string        // the new run folder, relative to the tree
	took       time.Duration // its wall time
	failed     error         // the run or its analysis failed
	refResults []byte
	newResults []byte
	// between is the between-run variance of the study's host-dependent
	// estimates (betweenRuns), applied to its items before they are
	// judged.
	between agreement.BetweenRun
}

// planAll works out, per study, the reference run of the
// profile and whether the experiment can run here.
func planAll(cfg Config) ([]studyPlan, error) {
	only, err := studiesOf(cfg.settings().Studies)
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
		if p.skip == "" {
			p.oneTime = s.oneTimeWork(cfg.Root)
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

// studiesOf checks the study names of PQREPRO_STUDIES against the
// registry; an empty set means every study.
func studiesOf(names []string) (map[string]bool, error) {
	only := map[string]bool{}
	known := map[string]bool{}
	for _, s := range Studies() {
		known[s.Name] = true
	}
	for _, s := range names {
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
	cfg.printf("  %d. verify the committed data: every run under data/ against its sealed manifest (and a pinned one against its pin), every file in %s re-hashed [seconds]", step, repro.SumsFile)
	total := map[string]time.Duration{}
	var once time.Duration
	for _, p := range plans {
		step++
		for _, prof := range settings.Profiles {
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
		for _, w := range p.oneTime {
			once += w.Estimate
			cfg.printf("     first, once on this machine: %s [about %v]", w.What, roundDuration(w.Estimate))
		}
	}
	step++
	what := "analyse the new runs, evaluate the claims and build the paper in the tree"
	if paperWhy != "" {
		what = "analyse the new runs and evaluate the claims in the tree (no paper: " + paperWhy + ")"
	}
	cfg.printf("  %d. %s [about %v]", step, what, roundDuration(buildEstimate))
	cfg.printf("  %d. print one table: per claim the published value, the reference run's and this run's value and verdict", step+1)
	oneTime := ""
	if once > 0 {
		oneTime = fmt.Sprintf(", of which about %v is one-time work on this machine that a second run skips", roundDuration(once))
	}
	cfg.printf("%s: estimated time about %v%s (experiments at the quick profile: about %v; at the full profile: about %v)",
		target, roundDuration(total[cfg.Profile]+once+buildEstimate), oneTime, roundDuration(total[Quick]), roundDuration(total[Full]))
}

// verifyCommitted is All's first step. It makes the first two checks of
// `mage verify`, on the committed data the comparison reads: every run
// against its sealed manifest and a pinned one against its pin, every
// run's ID against its meta.json and the clock, every file read
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
	cfg.printf("%s: verified the committed data: %d runs (%d pinned) against their manifests (%d files, %d content-store blobs; %d not in the local store), %d files of %s re-hashed (%v)",
		target, ev.Runs, ev.Pinned, ev.Files, ev.Blobs, ev.BlobsAbsent, checked, repro.SumsFile, cfg.now().Sub(start).Round(time.Millisecond))
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
	problems, err := repro.CheckListed(ctx, root, ents)
	if err != nil {
		return 0, nil, err
	}
	return len(ents), problems, nil
}
