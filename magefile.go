//go:build mage

// pqrepro reproduces three PQC performance studies. PQREPRO_PROFILE=quick|full picks the profile of experiments (default full) and of the datasets the outputs are built from (default: each study's full run if pinned, else its quick run); PQREPRO_STUDIES=tls,net limits the studies all re-runs; -v adds detail.
package main

import (
	"context"
	"os"

	"github.com/magefile/mage/mg"

	"pqrepro/pipeline"
)

// Default is what `mage` with no target runs.
var Default = All

func config(defaultProfile string) pipeline.Config {
	root, err := os.Getwd()
	if err != nil {
		panic(err)
	}
	profile := os.Getenv("PQREPRO_PROFILE")
	if profile == "" {
		profile = defaultProfile
	}
	return pipeline.Config{Root: root, Profile: profile, Verbose: mg.Verbose()}
}

// All reproduces everything at the full profile (PQREPRO_PROFILE=quick:
// minutes) into .cache/reproduce/<profile> without touching the committed
// tree. In order: plan and estimate, verify the committed data, re-run
// every experiment that can run here, paper from the new runs, one table
// of every claim against the reference run of the same profile.
func All(ctx context.Context) error {
	return pipeline.Locked(ctx, config(pipeline.Full), "all", pipeline.All)
}

// Quick is all at the quick profile (minutes): new quick runs compared with the quick reference runs.
func Quick(ctx context.Context) error {
	return pipeline.Locked(ctx, config(pipeline.Quick), "quick", pipeline.All)
}

// Calibrate measures all's false-alarm rate and power at PQREPRO_PROFILE (default full) on pseudo-replicates of the reference runs (PQREPRO_CALIBRATE_K, default 200; docs/agreement.md).
func Calibrate(ctx context.Context) error {
	return pipeline.Locked(ctx, config(pipeline.Full), "calibrate", pipeline.Calibrate)
}

// Test installs what the tests need, then runs go vet and go test ./... .
func Test(ctx context.Context) error {
	return pipeline.Signalled(ctx, config(pipeline.Quick), func(ctx context.Context, cfg pipeline.Config) error { return pipeline.Test(ctx, cfg) })
}

// Status lists every stage and, for stale ones, which input changed (old and new hash).
func Status(ctx context.Context) error { return pipeline.Status(ctx, config("")) }

// Verify checks every raw data hash and re-derives every output from the committed data, byte for byte.
func Verify(ctx context.Context) error { return pipeline.Signalled(ctx, config(""), pipeline.Verify) }

// Build rebuilds every stale analysis, figure, table and paper stage from the pinned datasets.
func Build(ctx context.Context) error { return pipeline.Locked(ctx, config(""), "build", build) }

func build(ctx context.Context, cfg pipeline.Config) error { return pipeline.Build(ctx, cfg) }

// Paper builds paper/main.pdf and every stale output it includes.
func Paper(ctx context.Context) error {
	return pipeline.Locked(ctx, config(""), "paper", pipeline.Paper)
}

// Claims evaluates every published claim on the current results and prints claim, published, ours, verdict.
func Claims(ctx context.Context) error { return pipeline.Claims(ctx, config("")) }

// Bundle writes the deterministic artifact archive of the current commit to .cache/dist and prints its SHA-256 and size.
func Bundle(ctx context.Context) error {
	return pipeline.Locked(ctx, config(""), "bundle", pipeline.Bundle)
}

// Clean removes build caches and leftovers of interrupted runs; keeps data, the content store and committed outputs.
func Clean(ctx context.Context) error {
	return pipeline.Locked(ctx, config(""), "clean", func(_ context.Context, cfg pipeline.Config) error { return pipeline.Clean(cfg) })
}

// Bench runs every Go benchmark and times a no-op build; prints the figures.
func Bench(ctx context.Context) error {
	return pipeline.Locked(ctx, config(""), "bench", pipeline.Bench)
}

// Data holds the transfers between the content store (.store) and the data remote named in remote.toml.
type Data mg.Namespace

// Pull fetches the stored blobs the runs refer to from the data remote, checking every SHA-256; resumes an interrupted pull.
func (Data) Pull(ctx context.Context) error { return pipeline.DataPull(ctx, config("")) }

// Push uploads the stored blobs the runs refer to that the data remote lacks; a blob appears there only whole.
func (Data) Push(ctx context.Context) error { return pipeline.DataPush(ctx, config("")) }

// TLS holds Study A: TLS 1.3 signature x key-exchange matrix on one host.
type TLS mg.Namespace

// Run captures TLS 1.3 handshakes into a new dataset under data/tls (PQREPRO_PROFILE=quick|full).
func (TLS) Run(ctx context.Context) error {
	return pipeline.RunTarget(ctx, config(pipeline.Full), "tls")
}

// OpenSSL builds OpenSSL 3.5 from Debian's source package into .cache/openssl, once, and its handshake harness.
func (TLS) OpenSSL(ctx context.Context) error { return pipeline.TLSOpenSSL(ctx, config("")) }

// Net holds Study B: X25519 vs X25519MLKEM768 across emulated networks.
type Net mg.Namespace

// Run captures handshakes across the emulated links into a new dataset under data/net.
func (Net) Run(ctx context.Context) error {
	return pipeline.RunTarget(ctx, config(pipeline.Full), "net")
}

// Clean removes network namespaces and TUN devices left behind by a crashed run.
func (Net) Clean(ctx context.Context) error {
	return pipeline.Locked(ctx, config(pipeline.Full), "net:clean", pipeline.NetClean)
}

// Pico holds Study C: ML-KEM and ML-DSA on the RP2040.
type Pico mg.Namespace

// Run builds the firmware and benchmarks it on a Pico if one is attached, else in rp2040js, into data/pico.
func (Pico) Run(ctx context.Context) error {
	return pipeline.RunTarget(ctx, config(pipeline.Full), "pico")
}

// Build compiles the RP2040 benchmark firmware images (ELF and RAM-only UF2) with gcc-arm-none-eabi (profile default quick).
func (Pico) Build(ctx context.Context) error {
	return pipeline.Locked(ctx, config(""), "pico:build", pipeline.PicoBuild)
}

// Emulate runs the firmware in rp2040js at its own 133 MHz clock, verifies it on the host, writes .cache/pico/emulate.
func (Pico) Emulate(ctx context.Context) error {
	return pipeline.Locked(ctx, config(""), "pico:emulate", pipeline.PicoEmulate)
}

// Flash copies a UF2 (PQREPRO_PICO_UF2) to a Pico in BOOTSEL mode (RPI-RP2 drive; untested on hardware).
func (Pico) Flash(ctx context.Context) error {
	return pipeline.Locked(ctx, config(""), "pico:flash", pipeline.PicoFlash)
}

// Read reads a run from a flashed Pico's serial port PQREPRO_PICO_PORT into .cache/pico/read (untested on hardware).
func (Pico) Read(ctx context.Context) error {
	return pipeline.Locked(ctx, config(""), "pico:read", pipeline.PicoRead)
}
