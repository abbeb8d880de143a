package pipeline

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"pqrepro/experiments/instruments/runlife"
	"pqrepro/internal/deps"
	"pqrepro/internal/repro"
	"pqrepro/internal/settings"
	"pqrepro/reproduce"
)

// All is `mage all` (and `mage quick`): reproduce.All at cfg.Profile
// (default full) over the registry, after the signals and the profile
// are set up.
func All(ctx context.Context, cfg Config) error {
	target := "all"
	if cfg.Profile == settings.Quick {
		target = "quick"
	}
	return reproduceTarget(ctx, cfg, func(ctx context.Context, rc reproduce.Config) error { return reproduce.All(ctx, rc, target) })
}

// Calibrate is `mage calibrate`: reproduce.Calibrate at cfg.Profile
// (default full) over the registry.
func Calibrate(ctx context.Context, cfg Config) error {
	return reproduceTarget(ctx, cfg, reproduce.Calibrate)
}

// reproduceTarget runs one of the reproduce side's targets, started
// (signals handled, the profile full unless set, validated).
func reproduceTarget(ctx context.Context, cfg Config, run func(context.Context, reproduce.Config) error) error {
	ctx, stop, cfg, err := started(ctx, cfg)
	defer stop()
	if err != nil {
		return err
	}
	return run(ctx, cfg.reproduceConfig())
}

// reproduceConfig is what the reproduce side gets of cfg. It holds the
// registry's studies bound to the tree, their claims, and the hooks that need
// the registry or the evidence checks. The hooks share one Config, to which
// WithGit adds the repository's state before the new runs.
func (c Config) reproduceConfig() reproduce.Config {
	cfg := &c
	var studies []reproduce.Study
	for _, s := range Studies() {
		studies = append(studies, cfg.reproduceStudy(s))
	}
	return reproduce.Config{
		Root: cfg.Root, Profile: cfg.Profile, Verbose: cfg.Verbose, Log: cfg.log(), Now: cfg.now,
		Settings: cfg.settings(), Store: cfg.store(),
		Studies: studies, Catalogues: catalogues(),
		Install: func(ctx context.Context, reqs []deps.Requirement) error { return cfg.installer().Ensure(ctx, reqs) },
		Latex:   reqLatex,
		Verify:  func(ctx context.Context, target string) error { return verifyCommitted(ctx, *cfg, target) },
		Stale:   func() map[string]bool { return staleStudies(*cfg) },
		WithGit: func(ctx context.Context) error {
			c, err := cfg.withGit(ctx)
			*cfg = c
			return err
		},
		Assemble: func(runFor func(study string) (string, string, error), paper bool) ([]*repro.Stage, error) {
			return assembleStages(cfg.Root, cfg.settings(), func(s Study) (string, string, error) { return runFor(s.Name) }, false, paper)
		},
		RunProblems: func(run string, now time.Time, meta bool) []repro.Problem {
			return runTimeProblems(cfg.Root, run, now, meta)
		},
	}
}

// reproduceStudy is s as the reproduce side sees it, its hooks bound to
// cfg (whose git state WithGit may fill in later).
func (cfg *Config) reproduceStudy(s Study) reproduce.Study {
	root := cfg.Root
	rs := reproduce.Study{Name: s.Name, Title: s.Title,
		Estimate:         func(profile string) time.Duration { return s.estimate(root, profile) },
		OneTime:          func() []OneTimeWork { return s.oneTimeWork(root) },
		Pinned:           func(profile string) (string, error) { return s.pinned(root, profile) },
		CommittedProfile: func() (string, error) { return (&Config{Root: root}).stageProfile(s) },
		Results:          s.Results, BetweenScale: s.BetweenScale, Normalised: s.Normalised, Plant: s.Plant, PlantName: s.PlantName,
	}
	if s.Requirements != nil {
		rs.Requirements = func() []deps.Requirement { return s.Requirements(root) }
	}
	if s.CannotRun != nil {
		rs.CannotRun = func() string { return s.CannotRun(root) }
	}
	if s.StagesFor != nil {
		rs.Stages = func(profile, run string) ([]*repro.Stage, error) {
			return s.stagesOver(root, profile, run, cfg.settings())
		}
	}
	if s.Run != nil {
		rs.Run = func(ctx context.Context, specPath, dataDir string) (string, error) {
			// A new run here is compared with the reference run, never
			// made one: a busy machine is recorded in its meta.json (and
			// the tree's paper), not a reason to drop it.
			ctx = runlife.WithPinBusy(ctx, "a new run of `mage all` in a scratch tree, compared with the reference run; not a reference run")
			return runExperiment(ctx, *cfg, s, specPath, dataDir)
		}
	}
	return rs
}

// staleStudies lists the studies whose stages in the committed tree are
// not up to date: code, parameters or inputs changed since the outputs
// were built. Their committed results are not what the current
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

// verifyCommitted is All's first step (reproduce.Config.Verify). It makes the first two checks of
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
// cache. It returns how many it checked and one problem per file that
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
