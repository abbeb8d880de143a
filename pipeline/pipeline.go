// Package pipeline is the composition root: it assembles the studies
// into one build and implements the Mage targets. It is the only package
// (with the binaries that call it: cmd/pqrepro and the magefile) that
// knows every study. Each target of magefile.go calls one function here.
//
// A study is one registration (Study, in study_<name>.go): its name and
// label, the paper it reproduces, its requirements and estimate, its
// experiment, its stages, its claims, its results' decoder (with how to
// compare two runs and calibrate the comparison), and what its killed
// runs leave behind and how to remove it. The targets, the claims stage,
// clean, net:clean, status's leftovers, the artifact bundle and
// docs/targets.md's target table are built from the registry; nothing
// outside the registration names a study or imports its packages
// (layering_test.go's TestRegistrationImports).
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
//	reproduce/    `mage all` and `mage calibrate`: measuring again and
//	              judging; knows no study (All and Calibrate here pass it
//	              the registry's studies)
//	pipeline/     this package, with cmd/ and the magefile: imports anything
//
// The data flow is one way: a study's experiment writes a raw dataset
// (data/<study>/<run-id>/), its analysis stages turn the pinned dataset
// into results/<study>.json, and its render stages turn results into
// figures, tables and numbers for the paper.
package pipeline

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"time"

	"pqrepro/experiments/instruments/runlife"
	"pqrepro/internal/deps"
	"pqrepro/internal/paperbuild"
	"pqrepro/internal/provenance"
	"pqrepro/internal/repro"
	"pqrepro/internal/settings"
	"pqrepro/internal/spec"
)

// fullFirst are the profiles (settings.Profiles) with the published
// sample sizes first: the order a study's pinned run is looked for in.
var fullFirst = append([]string{settings.Full}, slices.DeleteFunc(slices.Clone(settings.Profiles), func(p string) bool { return p == settings.Full })...)

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
	// runs working in another tree (mage all) record it too.
	Git *provenance.Git
	// Tree is the patch and the untracked files of that state, taken
	// with Git (runlife.ReadTree): a run from a dirty tree keeps its
	// patch, and is pinned only then.
	Tree *runlife.TreeState
	// Settings are the environment's settings, read once by the entry
	// point (Configure); nil is an empty environment's (the defaults).
	Settings *settings.Settings
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
	if !settings.ValidProfile(c.Profile) {
		return fmt.Errorf("unknown profile %q: use %q or %q (PQREPRO_PROFILE)", c.Profile, settings.Quick, settings.Full)
	}
	if _, err := os.Stat(filepath.Join(c.Root, "go.mod")); err != nil {
		return fmt.Errorf("%s is not the repository root (no go.mod): run mage from the repository root", c.Root)
	}
	return nil
}

// Engine returns the stage engine over every study's stages for the
// profile. Studies without a pinned dataset contribute no stages.
func Engine(cfg Config) (*repro.Engine, error) {
	stages, err := assembleStages(cfg.Root, cfg.settings(), func(s Study) (string, string, error) {
		profile, err := cfg.stageProfile(s)
		if err != nil {
			return "", "", err
		}
		run, err := s.pinned(cfg.Root, profile)
		return profile, run, err
	}, true, true)
	if err != nil {
		return nil, err
	}
	return &repro.Engine{
		Root:    cfg.Root,
		Stages:  stages,
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

// assembleStages is the one stage assembly, of the Engine over the committed
// runs and of All's reproduction tree over the new ones. It assembles, per
// study with analysis stages, its stages over the run that runFor picks
// (profile and run folder; no run: the study is left out); with otherRecords,
// the records stages of the runs pinned for the other profiles too (so that
// verify re-derives them); then the stages over every study (finishStages).
func assembleStages(root string, set settings.Settings, runFor func(Study) (profile, run string, err error), otherRecords, paper bool) ([]*repro.Stage, error) {
	var stages []*repro.Stage
	for _, s := range Studies() {
		if s.StagesFor == nil {
			continue
		}
		profile, run, err := runFor(s)
		if err != nil {
			return nil, fmt.Errorf("study %s: %w", s.Name, err)
		}
		if run == "" {
			continue
		}
		st, err := s.stagesOver(root, profile, run, set)
		if err != nil {
			return nil, fmt.Errorf("study %s: %w", s.Name, err)
		}
		stages = append(stages, st...)
		if s.Records == nil || !otherRecords {
			continue
		}
		for _, other := range fullFirst {
			if other == profile {
				continue
			}
			run, err := s.pinned(root, other)
			if err != nil {
				return nil, fmt.Errorf("study %s: %w", s.Name, err)
			}
			if run != "" {
				stages = append(stages, s.Records(root, other, run, set))
			}
		}
	}
	return finishStages(root, set, stages, paper), nil
}

// finishStages appends to the studies' stages the ones over all of them.
// They are the claims, the figure-source captions, the pinned runs' machines
// (paperbuild.Machine) and, with paper set and
// paper/main.tex present under root, the paper.
func finishStages(root string, set settings.Settings, stages []*repro.Stage, paper bool) []*repro.Stage {
	if c := claimsStage(stages); c != nil && withClaims {
		stages = append(stages, c)
	}
	if f := paperbuild.FigureSources(stages); f != nil {
		stages = append(stages, f)
	}
	if m := paperbuild.Machine(root, stages); m != nil {
		stages = append(stages, m)
	}
	if !paper {
		return stages
	}
	if p := paperbuild.Stage(root, stages, handTyped(), set.SourceDateEpoch); p != nil {
		stages = append(stages, p)
	}
	return stages
}

// stageProfile is the profile whose pinned run feeds a study's stages.
// It is the configured one, or with none configured the full run when pinned,
// else the quick run.
func (c *Config) stageProfile(s Study) (string, error) {
	if c.Profile != "" {
		return c.Profile, nil
	}
	for _, p := range fullFirst {
		run, err := s.pinned(c.Root, p)
		if err != nil {
			return "", err
		}
		if run != "" {
			return p, nil
		}
	}
	return settings.Full, nil
}

// pinned is the run folder pinned for the profile in the [runs] table of
// experiments/<name>.toml ("" when none is).
func (s Study) pinned(root, profile string) (string, error) {
	return spec.PinnedRun(root, s.Name, profile)
}
