package reproduce

import (
	"errors"
	"fmt"
	"maps"
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
	// once (Study.OneTime); empty when the study is skipped.
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
	only, err := studiesOf(cfg.Studies, cfg.Settings.Studies)
	if err != nil {
		return nil, err
	}
	stale := cfg.Stale()
	var plans []studyPlan
	for _, s := range cfg.Studies {
		if s.Stages == nil {
			continue
		}
		p := studyPlan{s: s, estimate: s.estimate(cfg.Profile)}
		if p.ref, err = s.pinned(cfg.Profile); err != nil {
			return nil, fmt.Errorf("study %s: %w", s.Name, err)
		}
		committedProfile, err := s.committedProfile()
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
			p.skip = s.CannotRun()
		}
		if p.skip == "" {
			p.oneTime = s.oneTimeWork()
		}
		plans = append(plans, p)
	}
	if len(plans) == 0 {
		return nil, errors.New("no study has analysis stages: nothing to reproduce")
	}
	return plans, nil
}

// studiesOf checks the study names of PQREPRO_STUDIES against the
// registry's studies; an empty set means every study.
func studiesOf(studies []Study, names []string) (map[string]bool, error) {
	only := map[string]bool{}
	known := map[string]bool{}
	for _, s := range studies {
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
				total[prof] += p.s.estimate(prof)
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
			est = "about " + RoundDuration(p.estimate).String()
		}
		cfg.printf("  %d. %s: re-run %s at the %s profile [%s]; %s", step, p.s.Name, p.s.Title, cfg.Profile, est, ref)
		for _, w := range p.oneTime {
			once += w.Estimate
			cfg.printf("     first, once on this machine: %s [about %v]", w.What, RoundDuration(w.Estimate))
		}
	}
	step++
	what := "analyse the new runs, evaluate the claims and build the paper in the tree"
	if paperWhy != "" {
		what = "analyse the new runs and evaluate the claims in the tree (no paper: " + paperWhy + ")"
	}
	cfg.printf("  %d. %s [about %v]", step, what, RoundDuration(buildEstimate))
	cfg.printf("  %d. print one table: per claim the published value, the reference run's and this run's value and verdict", step+1)
	oneTime := ""
	if once > 0 {
		oneTime = fmt.Sprintf(", of which about %v is one-time work on this machine that a second run skips", RoundDuration(once))
	}
	cfg.printf("%s: estimated time about %v%s (experiments at the quick profile: about %v; at the full profile: about %v)",
		target, RoundDuration(total[cfg.Profile]+once+buildEstimate), oneTime, RoundDuration(total[settings.Quick]), RoundDuration(total[settings.Full]))
}
