package pipeline

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"time"

	"pqrepro/internal/bundle"
	"pqrepro/internal/deps"
	"pqrepro/internal/provenance"
)

// Bundle writes the artifact bundle of the current commit to
// .cache/dist/pqrepro-<version>.tar.gz (see internal/bundle) and prints
// its SHA-256 and size. A tree whose tracked files differ from the commit
// is refused unless PQREPRO_BUNDLE_DIRTY=1, which makes a bundle marked
// dirty.
//
// With PQREPRO_BUNDLE_MEASURE=1 it instead times verify, paper and build
// on this machine and writes bundle.DefaultTimingsFile, to be committed:
// the bundle's appendix reads those times from the commit, so that
// bundling stays byte-reproducible.
func Bundle(ctx context.Context, cfg Config) error {
	if err := cfg.Validate(); err != nil {
		return err
	}
	// The targets as the registered studies describe them.
	targets := bundle.DefaultTargets(bundleClaims())
	byName := map[string]Study{}
	for _, s := range Studies() {
		byName[s.Name] = s
	}
	fill := func(t *bundle.Target, reqs []deps.Requirement) {
		for _, r := range reqs {
			t.Apt = append(t.Apt, r.Apt...)
			if r.NpmDir != "" {
				t.Npm = append(t.Npm, r.NpmDir)
			}
		}
		slices.Sort(t.Apt)
		t.Apt = slices.Compact(t.Apt)
		slices.Sort(t.Npm)
		t.Npm = slices.Compact(t.Npm)
	}
	for i := range targets {
		t := &targets[i]
		if s, ok := byName[t.Study]; ok {
			if s.Requirements != nil {
				fill(t, s.Requirements(cfg.Root))
			}
			t.Estimate = map[string]time.Duration{Quick: s.estimate(cfg.Root, Quick), Full: s.estimate(cfg.Root, Full)}
		}
		if t.Name == "paper" || t.Name == "build" || t.Name == "verify" {
			fill(t, []deps.Requirement{reqLatex})
		}
	}
	test := bundle.Target{Name: "test", Doc: "go vet and go test ./... (what CI runs)", Root: true,
		Claims: []string{"none: it tests the code"}}
	if testRequirements != nil {
		fill(&test, testRequirements(cfg.Root))
	}
	targets = append(targets, test)

	if os.Getenv("PQREPRO_BUNDLE_MEASURE") == "1" {
		return measureTargets(ctx, cfg)
	}

	start := cfg.now()
	rep, err := bundle.Write(ctx, bundle.Options{
		Root:       cfg.Root,
		AllowDirty: os.Getenv("PQREPRO_BUNDLE_DIRTY") == "1",
		Targets:    targets,
		Log:        cfg.log(),
	})
	if err != nil {
		return err
	}
	dirty := ""
	if rep.Dirty {
		dirty = " (DIRTY: not a clean checkout of the commit)"
	}
	cfg.printf("bundle: %s%s\nbundle: commit %s, %d files, %d store blobs, %d absent (listed in its %s), %d warnings, %v",
		rep.Path, dirty, rep.Commit, rep.Files, rep.Blobs, rep.Absent, bundle.ArtifactFile, len(rep.Warnings), cfg.now().Sub(start).Round(time.Millisecond))
	cfg.printf("%s  %s\nsize %d bytes", rep.SHA256, filepath.Base(rep.Path), rep.Size)
	return nil
}

// measureTargets times verify, paper and build and writes the timings
// file. Verify goes first: it re-derives every stage from scratch in a
// temporary tree, so its time is that of a full build whatever state the
// working tree is in; paper and build then time what the tree needs.
func measureTargets(ctx context.Context, cfg Config) error {
	e, err := Engine(cfg)
	if err != nil {
		return err
	}
	stale := func() string {
		st, err := e.Status(ctx)
		if err != nil {
			return "status unknown: " + err.Error()
		}
		n := 0
		for _, s := range st {
			if s.Stale {
				n++
			}
		}
		return fmt.Sprintf("%d of %d stages stale before it ran", n, len(st))
	}
	steps := []bundle.Step{
		{Name: "verify", Note: fmt.Sprintf("re-derives all %d stages in a temporary tree", len(e.Stages)), Run: func(ctx context.Context) error { return Verify(ctx, cfg) }},
		{Name: "paper", State: stale, Run: func(ctx context.Context) error { return Paper(ctx, cfg) }},
		{Name: "build", State: stale, Run: func(ctx context.Context) error { return Build(ctx, cfg) }},
	}
	host := provenance.Collect(ctx, provenance.Options{Root: cfg.Root}).Host
	t, err := bundle.Measure(ctx, fmt.Sprintf("%s, %d cores", host.CPUModel, host.Cores), runtime.Version(), steps, cfg.Now, cfg.log())
	if err != nil {
		return err
	}
	path := filepath.Join(cfg.Root, filepath.FromSlash(bundle.DefaultTimingsFile))
	if err := t.Write(path); err != nil {
		return err
	}
	cfg.printf("bundle: wrote %s: commit it, then run mage bundle (the appendix reads the committed times)", bundle.DefaultTimingsFile)
	return nil
}
