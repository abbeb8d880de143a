package pipeline

import (
	"context"
	"errors"
	"strings"
	"testing"

	"pqrepro/experiments/instruments/runlife"
	"pqrepro/internal/settings"
)

// TestConfigure is what the magefile's targets get: quick runs the quick
// profile whatever PQREPRO_PROFILE says, or fails saying why (issue 33:
// with PQREPRO_PROFILE=full exported, quick ran the 70-minute full
// profile); the other targets take PQREPRO_PROFILE over their default.
func TestConfigure(t *testing.T) {
	quick := TargetProfile{Fixed: settings.Quick}
	full := TargetProfile{Default: settings.Full}
	for _, tc := range []struct {
		target  string
		tp      TargetProfile
		env     map[string]string
		profile string
		err     string
	}{
		{"quick", quick, nil, settings.Quick, ""},
		{"quick", quick, map[string]string{"PQREPRO_PROFILE": "quick"}, settings.Quick, ""},
		{"quick", quick, map[string]string{"PQREPRO_PROFILE": "full"}, "", "quick runs the quick profile only, but PQREPRO_PROFILE=full: unset PQREPRO_PROFILE"},
		{"all", full, nil, settings.Full, ""},
		{"all", full, map[string]string{"PQREPRO_PROFILE": "quick"}, settings.Quick, ""},
		{"verify", TargetProfile{}, nil, "", ""},
		{"verify", TargetProfile{}, map[string]string{"PQREPRO_PROFILE": "full"}, settings.Full, ""},
		{"all", full, map[string]string{"PQREPRO_PROFILE": "fast"}, "", `all: settings: PQREPRO_PROFILE="fast": want quick or full`},
		{"calibrate", full, map[string]string{"PQREPRO_CALIBRATE_K": "-3"}, "", `calibrate: settings: PQREPRO_CALIBRATE_K="-3"`},
	} {
		cfg, err := Configure("/repo", tc.target, tc.tp, func(k string) string { return tc.env[k] }, true)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s %v: err = %v, want %q", tc.target, tc.env, err, tc.err)
			}
			continue
		}
		if err != nil || cfg.Profile != tc.profile || cfg.Root != "/repo" || !cfg.Verbose || cfg.Settings == nil {
			t.Errorf("%s %v: %+v, %v; want profile %q", tc.target, tc.env, cfg, err, tc.profile)
		}
	}
	cfg, err := Configure("/repo", "all", full, func(k string) string {
		return map[string]string{"PQREPRO_STUDIES": "tls", "PQREPRO_STORE": "/s"}[k]
	}, false)
	if err != nil || cfg.settings().Store != "/s" || cfg.store().Dir != "/s" || len(cfg.settings().Studies) != 1 {
		t.Errorf("the settings are not passed down: %+v, %v", cfg.Settings, err)
	}
	if (&Config{Root: "/repo"}).store().Dir != "/repo/.store" {
		t.Error("a Config without settings does not use the default store")
	}
}

// TestRunExperimentPassesPin: PQREPRO_PIN and PQREPRO_PIN_BUSY reach the
// runner in its runlife.Config (Config.lifeConfig), and their absence is
// no pin choice.
func TestRunExperimentPassesPin(t *testing.T) {
	var got runlife.Config
	st := Study{Name: "x", Run: func(ctx context.Context, cfg Config, spec, data string) (string, error) {
		got = cfg.lifeConfig(spec, data)
		return "", errors.New("stop")
	}}
	s := settings.Defaults()
	s.NoPin, s.PinBusy = true, "the only host"
	if _, err := runExperiment(context.Background(), Config{Root: t.TempDir(), Settings: &s}, st, "", t.TempDir()); err == nil {
		t.Fatal("the runner's error was lost")
	}
	if !got.NoPin || got.PinBusy != "the only host" {
		t.Errorf("the runner got NoPin %v, PinBusy %q", got.NoPin, got.PinBusy)
	}
	runExperiment(context.Background(), Config{Root: t.TempDir()}, st, "", t.TempDir())
	if got.NoPin || got.PinBusy != "" {
		t.Errorf("without settings the runner got NoPin %v, PinBusy %q", got.NoPin, got.PinBusy)
	}
}

// TestConfigureRefusesBadPinBusy is issue 44's item 4: a PQREPRO_PIN_BUSY
// the paper cannot print stops the target in Configure, before any
// installer or run starts (docs/config.md), not only in runlife.New
// after the installers have run.
func TestConfigureRefusesBadPinBusy(t *testing.T) {
	for _, tc := range []struct {
		name, value, want string
	}{
		{"a good reason", "the only host of this kind", ""},
		{"an escape character", "quiet enough\x1b[2J", "PQREPRO_PIN_BUSY: character 13 is U+001B"},
		{"blank", "   ", "PQREPRO_PIN_BUSY is blank"},
		{"too long", strings.Repeat("busy ", 41), "at most 200"},
		{"a word too long", "see /var/log/backups/nightly", "split it with a space"},
	} {
		t.Run(strings.ReplaceAll(tc.name, " ", "_"), func(t *testing.T) {
			_, err := Configure("/repo", "tls:run", TargetProfile{Default: settings.Full}, func(k string) string {
				return map[string]string{settings.PinBusy: tc.value}[k]
			}, false)
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("Configure: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "tls:run: ")):
				t.Errorf("Configure: %v, want an error of tls:run saying %q", err, tc.want)
			}
		})
	}
}
