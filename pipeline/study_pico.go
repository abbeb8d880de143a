package pipeline

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"pqrepro/datasets/picodata"
	"time"

	"pqrepro/analysis/agreement"
	"pqrepro/analysis/picostudy"
	"pqrepro/experiments/pico/picoboard"
	"pqrepro/experiments/pico/picorun"
	"pqrepro/internal/deps"
	"pqrepro/internal/repro"
	"pqrepro/internal/settings"
	"pqrepro/internal/spec"
)

const picoStudy = "pico"

func init() {
	studies = append(studies, Study{
		Name:  picoStudy,
		Label: "C",
		// Two runs holding one identical file of these are copies.
		Timed:    []string{picodata.HostTimingsFile},
		Title:    "Study C: ML-KEM and ML-DSA on the RP2040 (rp2040js unless a board is configured)",
		Citation: `"Benchmarking NIST-Standardised ML-KEM and ML-DSA on ARM Cortex-M0+: Performance, Memory, and Energy on the RP2040"`,
		Packages: []string{"experiments/pico/picorun", "experiments/pico/picoboard", "datasets/picodata", "analysis/picostudy"},
		Targets: []TargetDoc{
			{Names: []string{"pico:run"},
				Does: "Study C: build the firmware and benchmark it in rp2040js (or on a configured board) into a new run under `data/pico/`"},
			{Names: []string{"pico:build", "pico:emulate", "pico:flash", "pico:read"},
				Does: "Study C pieces: images, an emulator run into `.cache/pico/emulate`, a BOOTSEL copy, a serial read"},
		},
		Hardware:     "optional: a Raspberry Pi Pico (RP2040) on USB; without one the firmware runs in the rp2040js emulator",
		Requirements: picorun.Requirements,
		TestRequirements: func(root string) []deps.Requirement {
			return append(picorun.Requirements(root), reqDpkgDev)
		},
		CheckSpec: func(root string) error {
			_, err := picorun.LoadSpec(filepath.Join(root, spec.Path(picorun.Study)))
			return err
		},
		EstimateFor: func(root, profile string) time.Duration { return picorun.Estimate(profile) },
		// A fresh machine fetches the pinned sources once (the image
		// builds are in EstimateFor).
		OneTime: func(root string) []OneTimeWork {
			if picoboard.SourcesFetched(root) {
				return nil
			}
			return []OneTimeWork{{What: "fetch the firmware's and the emulator's pinned sources into .cache/pico (npm ci twice, apt-get source mbedtls)", Estimate: picoboard.FetchEstimate}}
		},
		Run: func(ctx context.Context, cfg Config, specPath, dataDir string) (string, error) {
			return runID(picorun.Run(ctx, picorun.RunConfig{Config: cfg.lifeConfig(specPath, dataDir)}))
		},
		// The numbers the paper may state literally about the study.
		HandTyped: picostudy.HandTyped,

		StagesFor: func(root, profile, run string, set settings.Settings) ([]*repro.Stage, error) {
			return picostudy.Stages(run, picostudy.Params{SourceDateEpoch: set.SourceDateEpoch}), nil
		},
		Claims: picostudy.Claims,
		// The known changes are the same whatever the reference's values.
		Results: resultsOf[picostudy.Results]{Decode: picostudy.DecodeResults, Items: picostudy.CompareItems,
			Changes:   func(*picostudy.Results) []agreement.Change { return picostudy.CalibrationChanges() },
			Resampler: picostudy.Resampler, Method: picostudy.ResampleMethod}.decode,
	})
}

// reqDpkgDev is what the tests of the mbedTLS comparison need: they
// unpack the pinned mbedTLS source package (apt-get source).
var reqDpkgDev = deps.Requirement{Name: "dpkg-source", Why: "unpacking the pinned mbedTLS source package (apt-get source)",
	Present: deps.Command("dpkg-source"), Apt: []string{"dpkg-dev"}}

// picoImages installs what the firmware build needs and returns the
// standard images of the profile (PQREPRO_PROFILE, default quick). The
// pico:* targets call experiments/pico/picoboard directly, the same
// functions as `pqrepro pico <action>` (cmd/pqrepro/pico.go).
func picoImages(ctx context.Context, cfg Config) ([]picoboard.BuildConfig, error) {
	if err := cfg.installer().Ensure(ctx, picorun.Requirements(cfg.Root)); err != nil {
		return nil, err
	}
	return picoboard.Images(cfg.Root, profileOr(cfg, settings.Quick), nil, cfg.log())
}

// PicoBuild builds every standard firmware image (ELF and RAM-only UF2)
// for the profile (PQREPRO_PROFILE, default quick).
func PicoBuild(ctx context.Context, cfg Config) error {
	cfgs, err := picoImages(ctx, cfg)
	if err != nil {
		return fmt.Errorf("pico:build: %w", err)
	}
	if err := picoboard.BuildImages(ctx, cfgs, cfg.log()); err != nil {
		return fmt.Errorf("pico:build: %w", err)
	}
	return nil
}

// PicoEmulate builds the images and runs them in rp2040js, verifying
// every result on the host, into .cache/pico/emulate/ (no dataset is
// registered: `mage pico:run` does that).
func PicoEmulate(ctx context.Context, cfg Config) error {
	out := filepath.Join(cfg.Root, ".cache", "pico", "emulate")
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	cfgs, err := picoImages(ctx, cfg)
	if err != nil {
		return fmt.Errorf("pico:emulate: %w", err)
	}
	if err := picoboard.EmulateImages(ctx, cfgs, out, cfg.log(), cfg.log()); err != nil {
		return fmt.Errorf("pico:emulate: %w", err)
	}
	return nil
}

// PicoFlash copies an image's UF2 to a Pico in BOOTSEL mode. The image is
// PQREPRO_PICO_UF2, default the ML-KEM image of the profile; the RPI-RP2
// drive is found automatically or named by PQREPRO_PICO_DRIVE.
// Untested on hardware: tested against a directory holding INFO_UF2.TXT.
func PicoFlash(ctx context.Context, cfg Config) error {
	uf2 := cfg.settings().PicoUF2
	if uf2 == "" {
		uf2 = filepath.Join(cfg.Root, ".cache", "pico", "images", "mlkem.uf2")
		if err := PicoBuild(ctx, cfg); err != nil {
			return err
		}
	}
	if err := picoboard.FlashUF2(uf2, cfg.settings().PicoDrive, cfg.log()); err != nil {
		return fmt.Errorf("pico:flash: %w", err)
	}
	return nil
}

// PicoRead reads one benchmark run from a flashed Pico's serial port into
// .cache/pico/read/, keeping the raw log verbatim. The port is
// PQREPRO_PICO_PORT, for example /dev/ttyUSB0 for a USB-UART adapter on
// GP0/GP1. Untested on hardware: tested against a pseudo-terminal.
func PicoRead(ctx context.Context, cfg Config) error {
	port := cfg.settings().PicoPort
	if port == "" {
		return fmt.Errorf("pico:read: set PQREPRO_PICO_PORT to the board's serial port (for example /dev/ttyUSB0)")
	}
	out := filepath.Join(cfg.Root, ".cache", "pico", "read")
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	// The idle timeout of `pqrepro pico read`'s default.
	if err := picoboard.ReadBoard(ctx, port, out, 60*time.Second); err != nil {
		return fmt.Errorf("pico:read: %w", err)
	}
	return nil
}

func profileOr(cfg Config, def string) string {
	if cfg.Profile != "" {
		return cfg.Profile
	}
	return def
}
