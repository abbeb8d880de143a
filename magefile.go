//go:build mage

// pqrepro reproduces three PQC performance studies. PQREPRO_PROFILE=quick|full picks the profile of experiments (default full) and of the datasets the outputs are built from (default: each study's full run if pinned, else its quick run); PQREPRO_STUDIES=tls,net limits the studies all re-runs; -v adds detail; docs/config.md lists every setting.
package main

import (
	"context"
	"os"

	"github.com/magefile/mage/mg"

	"pqrepro/internal/settings"
	"pqrepro/pipeline"
)

// Default is what `mage` with no target runs.
var Default = All

// The targets' profiles (pipeline.TargetProfile): quick runs only the
// quick profile; the others take PQREPRO_PROFILE, else their default.
var (
	quick   = pipeline.TargetProfile{Fixed: settings.Quick}
	full    = pipeline.TargetProfile{Default: settings.Full}
	quickOr = pipeline.TargetProfile{Default: settings.Quick}
	pinned  = pipeline.TargetProfile{}
)

// with runs fn with the target's configuration: the environment is read
// here, once (internal/settings, docs/config.md).
func with(ctx context.Context, target string, tp pipeline.TargetProfile, fn func(context.Context, pipeline.Config) error) error {
	root, err := os.Getwd()
	if err != nil {
		return err
	}
	cfg, err := pipeline.Configure(root, target, tp, os.Getenv, mg.Verbose())
	if err != nil {
		return err
	}
	return fn(ctx, cfg)
}

// locked is with under the tree's write lock (pipeline.Locked).
func locked(ctx context.Context, target string, tp pipeline.TargetProfile, fn func(context.Context, pipeline.Config) error) error {
	return with(ctx, target, tp, func(ctx context.Context, cfg pipeline.Config) error { return pipeline.Locked(ctx, cfg, target, fn) })
}

// All reproduces everything at the full profile (PQREPRO_PROFILE=quick:
// minutes) into .cache/reproduce/<profile> without touching the committed
// tree. In order: plan and estimate, verify the committed data, re-run
// every experiment that can run here, paper from the new runs, one table
// of every claim against the reference run of the same profile.
func All(ctx context.Context) error {
	return locked(ctx, "all", full, pipeline.All)
}

// Quick is all at the quick profile (minutes): new quick runs compared with the quick reference runs; PQREPRO_PROFILE=full is an error.
func Quick(ctx context.Context) error {
	return locked(ctx, "quick", quick, pipeline.All)
}

// Calibrate measures all's false-alarm rate and power at PQREPRO_PROFILE (default full) on pseudo-replicates of the reference runs (PQREPRO_CALIBRATE_K, default 200; docs/agreement.md).
func Calibrate(ctx context.Context) error {
	return locked(ctx, "calibrate", full, pipeline.Calibrate)
}

// Test installs what the tests need, then runs go vet and go test ./... .
func Test(ctx context.Context) error {
	return with(ctx, "test", quickOr, func(ctx context.Context, cfg pipeline.Config) error {
		return pipeline.Signalled(ctx, cfg, func(ctx context.Context, cfg pipeline.Config) error { return pipeline.Test(ctx, cfg) })
	})
}

// Status lists every stage and, for stale ones, which input changed (old and new hash).
func Status(ctx context.Context) error { return with(ctx, "status", pinned, pipeline.Status) }

// Verify checks every raw data hash and re-derives every output from the committed data, byte for byte.
func Verify(ctx context.Context) error {
	return with(ctx, "verify", pinned, func(ctx context.Context, cfg pipeline.Config) error {
		return pipeline.Signalled(ctx, cfg, pipeline.Verify)
	})
}

// Build rebuilds every stale analysis, figure, table and paper stage from the pinned datasets.
func Build(ctx context.Context) error { return locked(ctx, "build", pinned, build) }

func build(ctx context.Context, cfg pipeline.Config) error { return pipeline.Build(ctx, cfg) }

// Paper builds paper/main.pdf and every stale output it includes.
func Paper(ctx context.Context) error {
	return locked(ctx, "paper", pinned, pipeline.Paper)
}

// Claims evaluates every published claim on the current results and prints claim, published, ours, verdict.
func Claims(ctx context.Context) error { return with(ctx, "claims", pinned, pipeline.Claims) }

// Bundle writes the deterministic artifact archive of the current commit to .cache/dist and prints its SHA-256 and size.
func Bundle(ctx context.Context) error {
	return locked(ctx, "bundle", pinned, pipeline.Bundle)
}

// Clean removes build caches and leftovers of interrupted runs; keeps data, the content store and committed outputs.
func Clean(ctx context.Context) error {
	return locked(ctx, "clean", pinned, func(_ context.Context, cfg pipeline.Config) error { return pipeline.Clean(cfg) })
}

// Bench runs every Go benchmark and times a no-op build; prints the figures.
func Bench(ctx context.Context) error {
	return locked(ctx, "bench", pinned, pipeline.Bench)
}

// Data holds the transfers between the content store (.store) and the data remote named in remote.toml.
type Data mg.Namespace

// Pull fetches the stored blobs the runs refer to from the data remote, checking every SHA-256; resumes an interrupted pull.
func (Data) Pull(ctx context.Context) error { return with(ctx, "data:pull", pinned, pipeline.DataPull) }

// Push uploads the stored blobs the runs refer to that the data remote lacks; a blob appears there only whole.
func (Data) Push(ctx context.Context) error { return with(ctx, "data:push", pinned, pipeline.DataPush) }

// TLS holds Study A: TLS 1.3 signature x key-exchange matrix on one host.
type TLS mg.Namespace

// Run captures TLS 1.3 handshakes into a new dataset under data/tls (PQREPRO_PROFILE=quick|full).
func (TLS) Run(ctx context.Context) error {
	return with(ctx, "tls:run", full, func(ctx context.Context, cfg pipeline.Config) error {
		return pipeline.RunTarget(ctx, cfg, "tls")
	})
}

// OpenSSL builds OpenSSL 3.5 from Debian's source package into .cache/openssl, once, and its handshake harness.
func (TLS) OpenSSL(ctx context.Context) error {
	return with(ctx, "tls:openssl", pinned, pipeline.TLSOpenSSL)
}

// Net holds Study B: X25519 vs X25519MLKEM768 across emulated networks.
type Net mg.Namespace

// Run captures handshakes across the emulated links into a new dataset under data/net.
func (Net) Run(ctx context.Context) error {
	return with(ctx, "net:run", full, func(ctx context.Context, cfg pipeline.Config) error {
		return pipeline.RunTarget(ctx, cfg, "net")
	})
}

// Clean removes network namespaces and TUN devices left behind by a crashed run.
func (Net) Clean(ctx context.Context) error {
	return locked(ctx, "net:clean", full, pipeline.NetClean)
}

// Pico holds Study C: ML-KEM and ML-DSA on the RP2040.
type Pico mg.Namespace

// Run builds the firmware and benchmarks it on a Pico if one is attached, else in rp2040js, into data/pico.
func (Pico) Run(ctx context.Context) error {
	return with(ctx, "pico:run", full, func(ctx context.Context, cfg pipeline.Config) error {
		return pipeline.RunTarget(ctx, cfg, "pico")
	})
}

// Build compiles the RP2040 benchmark firmware images (ELF and RAM-only UF2) with gcc-arm-none-eabi (profile default quick).
func (Pico) Build(ctx context.Context) error {
	return locked(ctx, "pico:build", pinned, pipeline.PicoBuild)
}

// Emulate runs the firmware in rp2040js at its own 133 MHz clock, verifies it on the host, writes .cache/pico/emulate.
func (Pico) Emulate(ctx context.Context) error {
	return locked(ctx, "pico:emulate", pinned, pipeline.PicoEmulate)
}

// Flash copies a UF2 (PQREPRO_PICO_UF2) to a Pico in BOOTSEL mode (RPI-RP2 drive; untested on hardware).
func (Pico) Flash(ctx context.Context) error {
	return locked(ctx, "pico:flash", pinned, pipeline.PicoFlash)
}

// Read reads a run from a flashed Pico's serial port PQREPRO_PICO_PORT into .cache/pico/read (untested on hardware).
func (Pico) Read(ctx context.Context) error {
	return locked(ctx, "pico:read", pinned, pipeline.PicoRead)
}
