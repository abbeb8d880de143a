package pipeline

import (
	"context"
	"maps"
	"path"
	"slices"
	"time"

	"pqrepro/internal/repro"
	"pqrepro/internal/runlist"
)

// Build brings every stage up to date, or the named ones and what they
// depend on.
//
// It first checks every run under data/ against its manifest (through
// the hash cache, whose key includes the status-change time, so an
// in-place edit with the modification time set back is seen) and its
// study's run list, and refuses if one differs or is not listed. It
// prints one line per run it adds to SHA256SUMS.
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
	before := sumsRuns(cfg.Root)
	rep, err := e.Build(ctx, names...)
	if err != nil {
		return err
	}
	// A run enters SHA256SUMS once, with the build after it was listed:
	// said, so that new evidence is never added silently.
	after := sumsRuns(cfg.Root)
	for _, dir := range slices.Sorted(maps.Keys(after)) {
		if _, ok := before[dir]; ok {
			continue
		}
		e, _ := entryOf(cfg.Root, dir)
		cfg.printf("build: sealed %s into %s (%d files; %s line %d: %s)", dir, repro.SumsFile, after[dir], runlist.Path(path.Base(path.Dir(dir))), e.Line, e)
	}
	cfg.printf("build: %d stages ran, %d up to date (%v)", len(rep.Ran), len(rep.UpToDate), cfg.now().Sub(start).Round(time.Millisecond))
	return nil
}
