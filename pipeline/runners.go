package pipeline

import (
	"pqrepro/experiments/instruments/runlife"
	"pqrepro/internal/quiet"
)

// lifeConfig is the run lifecycle's settings of a study's Run hook. They are
// the pipeline's root, git state and tree (patch, untracked files), profile,
// log, clock and verbosity, the operator's PQREPRO_PIN and PQREPRO_PIN_BUSY,
// with the spec and data folder runExperiment gives. Every runner's RunConfig
// embeds it; the runner names its study.
func (c *Config) lifeConfig(specPath, dataDir string) runlife.Config {
	lc := runlife.Config{Root: c.Root, Git: c.Git, Tree: c.Tree, Profile: c.Profile, Log: c.log(), Now: c.Now, Verbose: c.Verbose,
		SpecPath: specPath, DataDir: dataDir, NoPin: c.settings().NoPin, PinBusy: c.settings().PinBusy}
	if d := c.settings().Settle; d > 0 {
		lc.Settle = quiet.Settler{Max: d}.Settle
	}
	return lc
}

// runID is a Run hook's answer from a runner's: the committed run's ID,
// "" when no run was committed.
func runID(res *runlife.Result, err error) (string, error) {
	if res == nil {
		return "", err
	}
	return res.RunID, err
}
