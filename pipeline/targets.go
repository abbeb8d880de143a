package pipeline

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"pqrepro/internal/deps"
	"pqrepro/internal/settings"
	"pqrepro/internal/spec"
	"pqrepro/reproduce"
)

func (c *Config) installer() *deps.Installer {
	if c.Installer != nil {
		return c.Installer
	}
	return &deps.Installer{Root: c.Root, Log: c.log(), LogDir: filepath.Join(c.Root, InstallLogDir), Verbose: c.Verbose}
}

// InstallLogDir is where each package install's whole output goes
// (deps.Installer.LogDir), relative to the repository root. The terminal
// shows one line per install, -v the output too.
const InstallLogDir = ".cache/logs"

// RunTarget is a study's <name>:run target: it takes the tree's write
// lock (refusing to start while another command writes), then RunStudy.
// Each study's Mage namespace calls it with the study's name.
func RunTarget(ctx context.Context, cfg Config, name string) error {
	return Locked(ctx, cfg, name+":run", func(ctx context.Context, cfg Config) error { return RunStudy(ctx, cfg, name) })
}

// RunStudy runs one study's experiment into a new run folder.
func RunStudy(ctx context.Context, cfg Config, name string) error {
	ctx, stop, cfg, err := started(ctx, cfg)
	defer stop()
	if err != nil {
		return err
	}
	for _, s := range Studies() {
		if s.Name != name {
			continue
		}
		if s.Run == nil {
			return fmt.Errorf("study %s has no experiment yet", name)
		}
		if s.Requirements != nil {
			if err := cfg.installer().Ensure(ctx, s.Requirements(cfg.Root)); err != nil {
				return err
			}
		}
		cfg, err := cfg.withGit(ctx)
		if err != nil {
			return err
		}
		cfg.printf("%s:run: %s (%s profile, about %v)", name, s.Title, cfg.Profile, reproduce.RoundDuration(s.estimate(cfg.Root, cfg.Profile)))
		_, err = runExperiment(ctx, cfg, s, filepath.Join(cfg.Root, spec.Path(s.Name)), filepath.Join(cfg.Root, "data"))
		return err
	}
	var known []string
	for _, s := range Studies() {
		known = append(known, fmt.Sprintf("%s (Study %s)", s.Name, s.Label))
	}
	return fmt.Errorf("study %q is not registered: the studies are %s", name, strings.Join(known, ", "))
}

// started is the start of a target that measures or judges. Its ctx is
// cancelled on SIGINT and SIGTERM (withSignals; call stop when done), the
// profile is full unless set, and the error is the configuration's.
func started(ctx context.Context, cfg Config) (context.Context, context.CancelFunc, Config, error) {
	ctx, stop := withSignals(ctx)
	if cfg.Profile == "" {
		cfg.Profile = settings.Full
	}
	return ctx, stop, cfg, cfg.Validate()
}

// runExperiment is the one way a study's experiment is run, by RunStudy into
// the repository and by All into its reproduction tree. It calls s.Run with
// the spec at specPath into dataDir, then checks that the run folder
// dataDir/<study>/<id> it returns exists. It returns the run's ID. The runner
// gets the operator's PQREPRO_PIN and PQREPRO_PIN_BUSY in its runlife.Config
// (Config.lifeConfig).
func runExperiment(ctx context.Context, cfg Config, s Study, specPath, dataDir string) (string, error) {
	id, err := s.Run(ctx, cfg, specPath, dataDir)
	if err != nil {
		return "", err
	}
	if _, err := os.Stat(filepath.Join(dataDir, s.Name, id)); id == "" || err != nil {
		return "", fmt.Errorf("the runner returned run %q, which is not a run folder under %s", id, filepath.Join(dataDir, s.Name))
	}
	return id, nil
}
