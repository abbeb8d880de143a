// Package pipeline assembles the studies into one build and implements
// the Mage targets: it is the only package that knows every study. Each
// target of magefile.go calls one function here.
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
	"slices"
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

// A Study is one reproduced paper, as the pipeline sees it.
type Study struct {
	// Name is the study's short name and Mage namespace (tls, net, pico).
	Name string
	// Title is one line for plans and status.
	Title string
	// Requirements lists what the study's experiment needs installed.
	Requirements func(root string) []deps.Requirement
	// EstimateFor is the expected wall time of the experiment for a
	// profile, from the study's cost model measured on the reference
	// machine (2 cores); nil or 0 means unknown.
	EstimateFor func(root, profile string) time.Duration
	// Pinned returns the run folder (relative to the root) that the
	// study's analysis uses for the profile, or "" if there is none yet;
	// nil means the [runs] table of experiments/<Name>.toml.
	Pinned func(root, profile string) (string, error)
	// Run runs the experiment with the spec at specPath into a new run
	// folder dataDir/<study>/<run-id>/ and pins it in that spec; empty
	// paths mean experiments/<Name>.toml and data/. `mage reproduce` passes
	// copies, so that it runs again without touching the committed data
	// or spec.
	Run func(ctx context.Context, cfg Config, specPath, dataDir string) error
	// Manifest returns the SHA-256 of the pinned run's MANIFEST.sha256
	// that the pin records ("" if it records none); nil means the [runs]
	// table of experiments/<Name>.toml (spec.PinnedSeal).
	Manifest func(root, profile string) (string, error)
	// StagesFor returns the study's analysis and render stages over a run
	// folder (relative to root): the pinned run for the build, a new run
	// for `mage reproduce`.
	StagesFor func(root, profile, run string) ([]*repro.Stage, error)
	// CannotRun, when set, says why the experiment cannot run on this
	// machine ("" when it can), for example "not root" for a study that
	// captures packets; `mage all` then skips it with that reason instead
	// of failing. Missing packages are not a reason: all installs them,
	// and skips the study only when it cannot.
	CannotRun func(root string) string
	// Records, when set, returns the stage that re-derives a run's records
	// from its packet captures (StagesFor includes it for its own run).
	// The engine adds it for the runs pinned for the other profiles too,
	// so that verify re-derives every pinned run whose captures are
	// present, the quick runs' committed ones included.
	Records func(root, profile, run string) *repro.Stage
}

// studies is the registry; studies.go fills it.
var studies []Study

// Studies returns the registered studies, sorted by name.
func Studies() []Study {
	out := slices.Clone(studies)
	slices.SortFunc(out, func(a, b Study) int { return strings.Compare(a.Name, b.Name) })
	return out
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
		Hasher:  repro.OpenHashCache(filepath.Join(cfg.Root, ".cache", "hashes.json")),
		Log:     cfg.log(),
		Verbose: cfg.Verbose,
		Now:     cfg.Now,
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
		cfg.printf("%d of %d stages are stale, but do NOT rebuild: the pinned raw data does not match its seal (ERROR lines above)", stale, len(st))
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
