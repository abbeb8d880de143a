package pipeline

import (
	"context"
	"fmt"
	"path/filepath"
	"runtime"
	"slices"
	"time"

	"pqrepro/internal/bundle"
	"pqrepro/internal/deps"
	"pqrepro/internal/provenance"
	"pqrepro/internal/settings"
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
	targets := bundleTargets(cfg.Root)

	if cfg.settings().BundleMeasure {
		return measureTargets(ctx, cfg)
	}

	start := cfg.now()
	rep, err := bundle.Write(ctx, bundle.Options{
		Root:       cfg.Root,
		AllowDirty: cfg.settings().BundleDirty,
		Epoch:      cfg.settings().SourceDateEpoch,
		Store:      cfg.store(),
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

// bundleTargets describes the targets for the artifact appendix. They are each
// registered study's run target in the paper's order, with what it needs
// installed and its estimate, then the targets over every study and test.
func bundleTargets(root string) []bundle.Target {
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
	var targets []bundle.Target
	for _, s := range paperOrder() {
		t := bundle.Target{Name: s.Name + ":run", Study: s.Name, StudyTitle: "Study " + s.Label + ": " + s.Citation,
			Doc: s.runDoc(), Root: s.NeedsRoot, Hardware: s.Hardware,
			// The study's claims under the paper's IDs, from its catalogue.
			Claims:   bundle.ClaimLines(bundleClaims(), s.Name),
			Estimate: map[string]time.Duration{settings.Quick: s.estimate(root, settings.Quick), settings.Full: s.estimate(root, settings.Full)}}
		if s.Requirements != nil {
			fill(&t, s.Requirements(root))
		}
		targets = append(targets, t)
	}
	for _, t := range bundle.CommonTargets() {
		fill(&t, []deps.Requirement{reqLatex})
		targets = append(targets, t)
	}
	test := bundle.Target{Name: "test", Doc: "go vet and go test ./... (what CI runs)", Root: true,
		Claims: []string{"none: it tests the code"}}
	if testRequirements != nil {
		fill(&test, testRequirements(root))
	}
	return append(targets, test)
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
