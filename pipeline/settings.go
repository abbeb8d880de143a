package pipeline

import (
	"fmt"

	"pqrepro/experiments/instruments/runlife"
	"pqrepro/internal/remote"
	"pqrepro/internal/repro"
	"pqrepro/internal/settings"
)

// TargetProfile is how a Mage target picks its profile. Fixed, when set,
// is the only one it runs (quick); else PQREPRO_PROFILE, else Default
// ("" is each study's full run if pinned, else its quick run).
type TargetProfile struct{ Fixed, Default string }

// Configure is a Mage target's configuration: the settings read once
// through getenv (os.Getenv in the magefile) and the target's profile.
// The magefile stays thin so that this logic is tested here. A bad value
// (PQREPRO_PIN_BUSY included, held to the paper's rules) is an error
// before the target does anything.
func Configure(root, target string, tp TargetProfile, getenv func(string) string, verbose bool) (Config, error) {
	s, err := settings.Load(getenv)
	if err != nil {
		return Config{}, fmt.Errorf("%s: %w", target, err)
	}
	if err := checkPinBusy(s); err != nil {
		return Config{}, fmt.Errorf("%s: %w", target, err)
	}
	profile, err := s.ProfileFor(target, tp.Fixed, tp.Default)
	if err != nil {
		return Config{}, err
	}
	return Config{Root: root, Profile: profile, Verbose: verbose, Settings: &s}, nil
}

// checkPinBusy holds PQREPRO_PIN_BUSY to the rules of the paper's text
// (runlife.CheckReason) where the environment is read. A value the paper
// cannot print then stops the target before it installs or runs
// anything; runlife.New checks it again for callers that set it
// directly.
func checkPinBusy(s settings.Settings) error {
	if s.PinBusy == "" {
		return nil
	}
	if err := runlife.CheckReason(settings.PinBusy, s.PinBusy); err != nil {
		return fmt.Errorf("settings: %w; or unset it (docs/config.md)", err)
	}
	return nil
}

// settings are the configured settings; nil (a test's Config) is an
// empty environment's.
func (c *Config) settings() settings.Settings {
	if c.Settings == nil {
		return settings.Defaults()
	}
	return *c.Settings
}

// store is the content store: PQREPRO_STORE, else .store under Root.
func (c *Config) store() *repro.Store { return repro.OpenStore(c.Root, c.settings().Store) }

// openRemote loads remote.toml (or PQREPRO_REMOTE) and connects with the
// settings' S3 credentials.
func openRemote(cfg Config) (remote.Remote, error) {
	c, _, err := remote.LoadConfig(cfg.Root, cfg.settings().Remote)
	if err != nil {
		return nil, err
	}
	c.Creds = cfg.settings().S3
	return remote.Open(cfg.Root, c)
}
