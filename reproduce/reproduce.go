// Package reproduce measures the studies again and judges the new runs: `mage all`, `mage calibrate`.
//
// It holds the reproduce side of the pipeline: All (plan, new runs in a
// scratch tree, reference results, the summary table), the judging of
// two runs (items in one Holm family, claim flips, the between-run
// variance, the host reference, the cross-host fit) and the calibration
// of that rule (Calibrate, the whole verdict line's flips). It knows no
// study: the composition root (pipeline/) passes each registered study
// as a Study, and what it needs of the tree (evidence checks, the stage
// assembly, installs, git state) as the hooks of Config. It imports
// analysis/ and internal/, never experiments/ nor pipeline/
// (pipeline/layering_test.go).
package reproduce

import (
	"context"
	"fmt"
	"io"
	"time"

	"pqrepro/analysis/agreement"
	"pqrepro/analysis/claims"
	"pqrepro/internal/deps"
	"pqrepro/internal/repro"
	"pqrepro/internal/settings"
)

// Config is what All and Calibrate get from the composition root. That
// is the tree, the profile and the output, the registered studies and
// their claims, and the hooks through which the root does what needs the
// registry or the evidence checks.
type Config struct {
	// Root is the repository root; Profile is Quick or Full (set).
	Root, Profile string
	// Verbose adds detail; Log receives the output and Now is the clock
	// (both set).
	Verbose bool
	Log     io.Writer
	Now     func() time.Time
	// Settings are the environment's settings (PQREPRO_STUDIES,
	// PQREPRO_CALIBRATE_K, ...); Store is the content store.
	Settings settings.Settings
	Store    *repro.Store
	// Studies are the registered studies, sorted by name; Catalogues
	// their claims in the paper's order.
	Studies    []Study
	Catalogues []claims.Catalogue
	// Install installs missing requirements; Latex is what the paper
	// needs.
	Install func(ctx context.Context, reqs []deps.Requirement) error
	Latex   deps.Requirement
	// Verify checks the committed data before anything is compared with
	// it (All's first step); an error stops All.
	Verify func(ctx context.Context, target string) error
	// Stale lists the studies whose committed stages are not up to date.
	Stale func() map[string]bool
	// WithGit takes the repository's state for the new runs' provenance,
	// before the first run.
	WithGit func(ctx context.Context) error
	// Assemble is the one stage assembly over the run that runFor picks
	// per study (no run: the study is left out), with the paper stage
	// when paper is set.
	Assemble func(runFor func(study string) (profile, run string, err error), paper bool) ([]*repro.Stage, error)
	// RunProblems checks a sealed run beyond its files and seal: its ID
	// against its meta.json and the clock, its place among the evidence.
	RunProblems func(run string, now time.Time, meta bool) []repro.Problem
}

func (c *Config) printf(format string, args ...any) { fmt.Fprintf(c.Log, format+"\n", args...) }

// A Study is what All and Calibrate need of one registered study, its
// hooks bound to the tree by the composition root. Only Name is
// required; a nil hook is a study without that part.
type Study struct {
	// Name is the study's short name (data/<Name>/, results/<Name>.json);
	// Title is one line for the plan.
	Name, Title string
	// Requirements lists what the experiment needs installed.
	Requirements func() []deps.Requirement
	// CannotRun says why the experiment cannot run here ("" when it can).
	CannotRun func() string
	// Run runs the experiment with the spec at specPath into a new run
	// folder under dataDir and returns its ID; nil: no experiment yet.
	Run func(ctx context.Context, specPath, dataDir string) (string, error)
	// Estimate is the experiment's expected time at a profile.
	Estimate func(profile string) time.Duration
	// OneTime is the work a first run does once on this machine.
	OneTime func() []OneTimeWork
	// Pinned is the run pinned for a profile ("" when none is);
	// CommittedProfile is the profile whose pinned run the committed
	// outputs come from.
	Pinned           func(profile string) (string, error)
	CommittedProfile func() (string, error)
	// Stages are the study's stages over a run folder (its records
	// stage first); nil: the study has no analysis and is left out.
	Stages func(profile, run string) ([]*repro.Stage, error)
	// Results decodes one run's results/<Name>.json (nil compares the
	// claims only); BetweenScale is how its between-run deviations
	// scale.
	Results      func(name string, b []byte) (Results, error)
	BetweenScale agreement.BetweenScale
	// Normalised is a run's items made comparable across hosts (nil:
	// none), judged on a host unlike the reference's (crosshost.go).
	Normalised func(name string, b []byte) ([]agreement.Normalised, error)
	// Plant is a run's results with the known change PlantName, whose
	// power the calibration of the whole verdict line measures
	// (flipcal.go).
	Plant     func(results []byte) ([]byte, error)
	PlantName string
}

// OneTimeWork is one piece of preparation a fresh machine needs before a
// study's first run and never after: a package install, a build.
type OneTimeWork struct {
	What     string
	Estimate time.Duration
}

func (s Study) estimate(profile string) time.Duration {
	if s.Estimate == nil {
		return 0
	}
	return s.Estimate(profile)
}

func (s Study) oneTimeWork() []OneTimeWork {
	if s.OneTime == nil {
		return nil
	}
	return s.OneTime()
}

func (s Study) pinned(profile string) (string, error) {
	if s.Pinned == nil {
		return "", nil
	}
	return s.Pinned(profile)
}

func (s Study) committedProfile() (string, error) {
	if s.CommittedProfile == nil {
		return settings.Full, nil
	}
	return s.CommittedProfile()
}

// RoundDuration rounds an estimate to what a person reads: seconds below
// an hour, minutes above.
func RoundDuration(d time.Duration) time.Duration {
	if d >= time.Hour {
		return d.Round(time.Minute)
	}
	return d.Round(time.Second)
}
