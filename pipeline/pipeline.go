// Package pipeline is the composition root: it assembles the studies
// into one build and implements the Mage targets. It is the only package
// (with the binaries that call it: cmd/pqrepro and the magefile) that
// knows every study. Each target of magefile.go calls one function here.
//
// A study is one registration (Study, in study_<name>.go): its name and
// label, the paper it reproduces, its requirements and estimate, its
// experiment, its stages, its claims and how to compare two of its runs.
// The targets, the claims stage, the artifact bundle and the README's
// target table are built from the registry; nothing outside the
// registration names a study.
//
// The module's layers, which layering_test.go enforces:
//
//	internal/     the bottom: libraries that know no study (repro,
//	              atomicfile, jsonnum, spec, provenance, treelock, remote,
//	              render, latex, paperbuild, bundle, deps, magemain)
//	datasets/     each study's dataset format (its experiment writes it,
//	              its analysis reads it)
//	experiments/  how raw data is made; imports no analysis
//	analysis/     raw data -> results and claims; imports no experiment
//	pipeline/     this package, with cmd/ and the magefile: imports anything
//
// The data flow is one way: a study's experiment writes a raw dataset
// (data/<study>/<run-id>/), its analysis stages turn the pinned dataset
// into results/<study>.json, and its render stages turn results into
// figures, tables and numbers for the paper.
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

	"pqrepro/internal/deps"
	"pqrepro/internal/paperbuild"
	"pqrepro/internal/provenance"
	"pqrepro/internal/repro"
	"pqrepro/internal/spec"
)

// Profile names: quick runs in minutes (CI), full uses the studies'
// published sample sizes.
const (
	Quick = "quick"
	Full  = "full"
)

// Config is what every target gets.
type Config struct {
	// Root is the repository root.
	Root string
	// Profile is Quick or Full for the experiments; for the analysis it
	// picks which pinned run of each study feeds the stages. Empty (the
	// default of build, status, verify and paper) means each study's full
	// run when one is pinned, else its quick run: the committed outputs
	// come from the full runs wherever they exist.
	Profile string
	// Verbose adds detail to the one-line-per-step output (mage -v).
	Verbose bool
	// Log receives the output; nil is os.Stdout.
	Log io.Writer
	// Installer installs missing requirements; nil uses the real one.
	Installer *deps.Installer
	// Now is the clock; nil is time.Now.
	Now func() time.Time
	// Git is the repository's state for the provenance of new runs,
	// taken at Root when an experiment target starts (withGit), so that
	// runs working in another tree (mage reproduce) record it too.
	Git *provenance.Git
}

func (c *Config) log() io.Writer {
	if c.Log == nil {
		return os.Stdout
	}
	return c.Log
}

func (c *Config) printf(format string, args ...any) { fmt.Fprintf(c.log(), format+"\n", args...) }

func (c *Config) now() time.Time {
	if c.Now != nil {
		return c.Now()
	}
	return time.Now()
}

// Validate checks the profile.
func (c *Config) Validate() error {
	if c.Profile != "" && c.Profile != Quick && c.Profile != Full {
		return fmt.Errorf("unknown profile %q: use %q or %q (PQREPRO_PROFILE)", c.Profile, Quick, Full)
	}
	if _, err := os.Stat(filepath.Join(c.Root, "go.mod")); err != nil {
		return fmt.Errorf("%s is not the repository root (no go.mod): run mage from the repository root", c.Root)
	}
	return nil
}

// Engine returns the stage engine over every study's stages for the
// profile. Studies without a pinned dataset contribute no stages.
func Engine(cfg Config) (*repro.Engine, error) {
	var stages []*repro.Stage
	for _, s := range Studies() {
		if s.StagesFor == nil {
			continue
		}
		profile, err := cfg.stageProfile(s)
		if err != nil {
			return nil, fmt.Errorf("study %s: %w", s.Name, err)
		}
		run, err := s.pinned(cfg.Root, profile)
		if err != nil {
			return nil, fmt.Errorf("study %s: %w", s.Name, err)
		}
		if run == "" {
			continue
		}
		st, err := s.StagesFor(cfg.Root, profile, run)
		if err != nil {
			return nil, fmt.Errorf("study %s: %w", s.Name, err)
		}
		stages = append(stages, st...)
		if s.Records == nil {
			continue
		}
		for _, other := range []string{Full, Quick} {
			if other == profile {
				continue
			}
			run, err := s.pinned(cfg.Root, other)
			if err != nil {
				return nil, fmt.Errorf("study %s: %w", s.Name, err)
			}
			if run != "" {
				stages = append(stages, s.Records(cfg.Root, other, run))
			}
		}
	}
	return &repro.Engine{
		Root:    cfg.Root,
		Stages:  finishStages(cfg.Root, stages, true),
		RawDirs: []string{"data"},
		// data/<study>/ holds sealed runs only: a stray folder is named
		// by checkEvidence and never enters SHA256SUMS.
		SealedRuns: true,
		Hasher:     repro.OpenHashCache(filepath.Join(cfg.Root, ".cache", "hashes.json")),
		Log:        cfg.log(),
		Verbose:    cfg.Verbose,
		Now:        cfg.Now,
	}, nil
}

// finishStages appends to the studies' stages the ones over all of them:
// the claims, the figure-source captions and, with paper set and
// paper/main.tex present under root, the paper.
func finishStages(root string, stages []*repro.Stage, paper bool) []*repro.Stage {
	if c := claimsStage(stages); c != nil && withClaims {
		stages = append(stages, c)
	}
	if f := paperbuild.FigureSources(stages); f != nil {
		stages = append(stages, f)
	}
	if !paper {
		return stages
	}
	if p := paperbuild.Stage(root, stages); p != nil {
		stages = append(stages, p)
	}
	return stages
}

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

// ErrVerify is returned by Verify when the artifact does not verify.
var ErrVerify = errors.New("verification failed")

// Verify checks every raw data hash and re-derives every output from the
// committed data, printing one line per differing or missing file.
func Verify(ctx context.Context, cfg Config) error {
	if err := cfg.Validate(); err != nil {
		return err
	}
	e, err := Engine(cfg)
	if err != nil {
		return err
	}
	for _, s := range e.Stages {
		if s.Name == "paper" && !reqLatex.Present() {
			return fmt.Errorf("verify re-builds paper/main.pdf and needs pdflatex: install it with `apt-get install %s` (or run `go run mage.go all`, which installs it)", strings.Join(reqLatex.Apt, " "))
		}
	}
	start := cfg.now()
	// 1. Every pinned run against its manifest, re-reading every file.
	ev, err := checkEvidence(cfg, nil)
	if err != nil {
		return err
	}
	cfg.printf("%s", ev.line(cfg.now().Sub(start)))
	// 2. SHA256SUMS and the re-derivation of every output.
	cfg.printf("verify: checking %s and re-deriving %d stages in a temporary tree", repro.SumsFile, len(e.Stages))
	rep, err := e.Verify(ctx)
	if err != nil {
		return err
	}
	// Every file-level finding first, one line per file, then the
	// stages that failed: a failing stage never hides a FAIL line.
	problems := repro.MergeProblems(append(ev.Problems, rep.Problems...))
	for _, p := range problems {
		cfg.printf("FAIL %s", p)
	}
	for _, se := range rep.StageErrors {
		cfg.printf("ERROR stage %s: %v", se.Stage, se.Err)
	}
	cfg.printf("verify: %d files hashed, %d outputs re-derived, %d problems, %d failed stages (%v)",
		rep.Checked, rep.Rederived, len(problems), len(rep.StageErrors), cfg.now().Sub(start).Round(time.Millisecond))
	if len(problems) > 0 || len(rep.StageErrors) > 0 {
		return fmt.Errorf("%w: %d problems and %d failed stages (listed above)", ErrVerify, len(problems), len(rep.StageErrors))
	}
	cfg.printf("verify: OK, every output follows byte for byte from the committed data")
	return nil
}

// Build brings every stage up to date (or the named ones and what they
// depend on), after checking every pinned run against its manifest
// (through the hash cache, whose key includes the status-change time, so
// an in-place edit with the modification time set back is seen).
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

// stageProfile is the profile whose pinned run feeds a study's stages:
// the configured one, or with none configured the full run when pinned,
// else the quick run.
func (c *Config) stageProfile(s Study) (string, error) {
	if c.Profile != "" {
		return c.Profile, nil
	}
	for _, p := range []string{Full, Quick} {
		run, err := s.pinned(c.Root, p)
		if err != nil {
			return "", err
		}
		if run != "" {
			return p, nil
		}
	}
	return Full, nil
}

// pinned is the run folder pinned for the profile: Pinned when the study
// sets it, else the [runs] table of experiments/<name>.toml.
func (s Study) pinned(root, profile string) (string, error) {
	if s.Pinned != nil {
		return s.Pinned(root, profile)
	}
	return spec.PinnedRun(root, s.Name, profile)
}
