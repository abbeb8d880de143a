package pipeline

import (
	"context"
	"time"
)

// Build brings every stage up to date, or the named ones and what they
// depend on.
//
// It first checks every pinned run against its manifest (through the
// hash cache, whose key includes the status-change time, so an in-place
// edit with the modification time set back is seen).
func Build(ctx context.Context, cfg Config, names ...string) error {
	if err := cfg.Validate(); err != nil {
		return err
	}
	e, err := Engine(cfg)
	if err != nil {
		return err
	}
	if err := requireEvidence(cfg, e.Hasher, "build"); err != nil {
		e.Hasher.Save()
		return err
	}
	start := cfg.now()
	rep, err := e.Build(ctx, names...)
	if err != nil {
		return err
	}
	cfg.printf("build: %d stages ran, %d up to date (%v)", len(rep.Ran), len(rep.UpToDate), cfg.now().Sub(start).Round(time.Millisecond))
	return nil
}
