package pipeline

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"pqrepro/internal/repro"
)

// Status prints every stage and, for stale ones, why, after the checks
// build makes before it builds. Those check every sealed run under data/
// against its manifest and its study's run list (checkEvidence) and every
// study's spec (specProblems). A run that differs from its seal, a run
// folder no run list names, an entry of data/ that is not a sealed run, a
// spec that does not load, an engine or lock that cannot be read are
// errors (ERROR lines, non-nil result), not reasons to rebuild. It lists
// the leftovers of killed commands whatever else it found.
func Status(ctx context.Context, cfg Config) error {
	if err := cfg.Validate(); err != nil {
		return err
	}
	for _, s := range Studies() {
		profile, err := cfg.stageProfile(s)
		pinned := "no dataset yet: run `mage " + s.Name + ":run`"
		if err != nil {
			pinned = "error: " + err.Error()
		} else if p, err := s.pinned(cfg.Root, profile); err != nil {
			pinned = "error: " + err.Error()
		} else if p != "" {
			pinned = p
		}
		cfg.printf("study %-5s %s [%s profile: %s]", s.Name, s.Title, profile, pinned)
	}
	printDataStatus(ctx, cfg)
	var errs []error
	h := &repro.Hasher{}
	e, err := Engine(cfg)
	if err != nil {
		cfg.printf("  ERROR  the stages cannot be assembled: %v", err)
		errs = append(errs, fmt.Errorf("the stages cannot be assembled: %w", err))
		e = nil
	} else {
		h = e.Hasher
	}
	ev, err := checkEvidence(cfg, h)
	if err != nil {
		cfg.printf("  ERROR  the runs under data/ cannot be checked: %v", err)
		errs = append(errs, fmt.Errorf("the runs under data/ cannot be checked: %w", err))
		ev = &evidenceReport{}
	}
	specs := specProblems(cfg)
	for _, p := range repro.MergeProblems(append(slices.Clone(ev.Problems), specs...)) {
		cfg.printf("  ERROR  %s", p)
	}
	var st []repro.StageStatus
	if e != nil {
		if st, err = e.Status(ctx); err != nil {
			cfg.printf("  ERROR  the stages' status cannot be computed: %v", err)
			errs = append(errs, fmt.Errorf("the stages' status cannot be computed: %w", err))
		}
	}
	stale := 0
	for _, s := range st {
		if !s.Stale {
			cfg.printf("  ok     %s", s.Name)
			continue
		}
		stale++
		cfg.printf("  stale  %s", s.Name)
		for _, r := range s.Reasons {
			cfg.printf("           %s", r)
		}
	}
	var culprits []string
	if n := len(ev.Problems) - ev.Strays - ev.Unlisted; n > 0 {
		culprits = append(culprits, fmt.Sprintf("%d problems in sealed runs or their lists (a file differs from its run's manifest, or a manifest from its pin or its run list, or a run's ID or study from its meta.json or the clock, or a run copies another)", n))
	}
	if ev.Unlisted > 0 {
		culprits = append(culprits, fmt.Sprintf("%d run folders that no run list names (experiments/<study>.runs): not evidence until a reviewed line adds them", ev.Unlisted))
	}
	if ev.Strays > 0 {
		culprits = append(culprits, fmt.Sprintf("%d entries under data/ that are not sealed runs", ev.Strays))
	}
	if len(specs) > 0 {
		culprits = append(culprits, fmt.Sprintf("%d specs that do not load", len(specs)))
	}
	switch {
	case len(culprits) > 0:
		cfg.printf("%d of %d stages are stale, but do NOT rebuild: %s (ERROR lines above)", stale, len(st), strings.Join(culprits, "; "))
		if len(ev.Problems) > 0 {
			errs = append(errs, fmt.Errorf("%w: %s; each ERROR line says what to do: restore a file with `git checkout -- <path>`, remove what is not a sealed run or not evidence, add a run you recorded to its run list (experiments/<study>.runs), or record a new run (`mage <study>:run`) and pin it", ErrEvidence, strings.Join(culprits, "; ")))
		} else {
			errs = append(errs, fmt.Errorf("%w: %d specs (ERROR lines above)", ErrSpec, len(specs)))
		}
	case e == nil || len(errs) > 0:
	case len(st) == 0:
		cfg.printf("no stages: no study has a pinned dataset yet")
	case stale == 0:
		cfg.printf("all %d stages are up to date", len(st))
	default:
		cfg.printf("%d of %d stages are stale: `mage build` rebuilds them", stale, len(st))
	}
	reportLeftovers(cfg)
	return errors.Join(errs...)
}
