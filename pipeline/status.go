package pipeline

import (
	"context"
	"fmt"
)

// Status prints every stage and, for stale ones, why. A pinned run that
// differs from its sealed manifest is an error (ERROR lines, non-nil
// result), not a reason to rebuild; otherwise it returns nil unless the
// status cannot be computed (a corrupt lock file).
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
	e, err := Engine(cfg)
	if err != nil {
		return err
	}
	ev, err := checkEvidence(cfg, e.Hasher)
	if err != nil {
		return err
	}
	for _, p := range ev.Problems {
		cfg.printf("  ERROR  %s", p)
	}
	st, err := e.Status(ctx)
	if err != nil {
		return err
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
	switch {
	case len(ev.Problems) > 0:
		cfg.printf("%d of %d stages are stale, but do NOT rebuild: the pinned raw data does not match its seal, or data/ holds entries that are not sealed runs (ERROR lines above)", stale, len(st))
		return fmt.Errorf("%w: %d problems; restore each file with `git checkout -- <path>`, or record a new run (`mage <study>:run`) and pin it", ErrEvidence, len(ev.Problems))
	case len(st) == 0:
		cfg.printf("no stages: no study has a pinned dataset yet")
	case stale == 0:
		cfg.printf("all %d stages are up to date", len(st))
	default:
		cfg.printf("%d of %d stages are stale: `mage build` rebuilds them", stale, len(st))
	}
	reportLeftovers(cfg)
	return nil
}
