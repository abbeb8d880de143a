package picoboard

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"time"

	"pqrepro/datasets/picodata"
)

// The actions below are the pieces of Study C one at a time, outside a
// run: `pqrepro pico <action>` parses their flags and the Mage targets
// pico:build, pico:emulate, pico:flash and pico:read call them directly.
// Each writes its results to out (one line per image) and its progress
// to log.

// Images returns the standard images (StandardImages) named in names, or
// all of them.
//
// They are for the profile (quick or full) and the repository root (""
// finds it from the working directory).
func Images(root, profile string, names []string, log io.Writer) ([]BuildConfig, error) {
	prof, err := ProfileByName(profile)
	if err != nil {
		return nil, err
	}
	var cfgs []BuildConfig
	for _, c := range StandardImages() {
		if len(names) == 0 || slices.Contains(names, c.Name) {
			c.Root, c.Profile, c.Log = root, prof, log
			cfgs = append(cfgs, c)
		}
	}
	return cfgs, nil
}

// BuildImages builds every image of cfgs (cached builds are reused) and
// writes one line per image to out. That is, name, firmware ID, UF2
// path and build time.
func BuildImages(ctx context.Context, cfgs []BuildConfig, out io.Writer) error {
	for _, c := range cfgs {
		img, err := Build(ctx, c)
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "%s\t%s\t%s\t%.1fs\n", img.Name, img.FirmwareID, img.UF2, img.BuildTime.Seconds())
	}
	return nil
}

// EmulateImages builds, emulates and checks every image of cfgs, writing
// one line per image to out.
//
// It builds every image, runs it in rp2040js and checks its test vectors
// on the host (VerifyVectors), writing the raw serial log
// <image>.serial.log and <image>.json (image, run, checks) into dir and
// one line per image to out. A build error stops it; an image whose run
// or checks fail is reported on log and the others still run, and the
// error then counts them. Nothing is registered as a dataset: `mage
// pico:run` does that.
func EmulateImages(ctx context.Context, cfgs []BuildConfig, dir string, out, log io.Writer) error {
	failed := 0
	for _, c := range cfgs {
		img, err := Build(ctx, c)
		if err != nil {
			return err
		}
		raw, err := os.Create(filepath.Join(dir, img.Name+".serial.log"))
		if err != nil {
			return err
		}
		run, err := Emulate(ctx, img, RunConfig{RawLog: raw, Log: log, Progress: func(m picodata.Measurement) {
			if m.Iter == 0 {
				fmt.Fprintf(log, "  %s %s %.3f ms\n", m.Scheme, m.Op, float64(m.Micros)/1000)
			}
		}})
		raw.Close()
		if err != nil {
			fmt.Fprintln(log, err)
			failed++
			if run == nil {
				continue
			}
		}
		checks, verr := VerifyVectors(run.Dataset)
		if verr != nil {
			fmt.Fprintln(log, verr)
			if err == nil {
				failed++
			}
		}
		b, _ := json.MarshalIndent(struct {
			Image  Image            `json:"image"`
			Run    *EmulatedRun     `json:"run"`
			Checks []picodata.Check `json:"checks"`
		}{img, run, checks}, "", " ")
		if err := os.WriteFile(filepath.Join(dir, img.Name+".json"), b, 0o644); err != nil {
			return err
		}
		fmt.Fprintf(out, "%s: %d measurements, %d checks, complete=%v, %.1f simulated MHz, %.1f s wall\n",
			img.Name, len(run.Measurements), len(checks), run.Complete, run.Emulator.SimMHz, run.Emulator.WallSeconds)
	}
	if failed > 0 {
		return fmt.Errorf("%d of %d images failed in the emulator or on the host checks (above)", failed, len(cfgs))
	}
	return nil
}

// FlashUF2 copies uf2 to the RPI-RP2 BOOTSEL drive (drive, or found
// when "") and says where on out. Untested on hardware: tested against
// a directory holding INFO_UF2.TXT.
func FlashUF2(uf2, drive string, out io.Writer) error {
	dst, err := Flash(uf2, FlashConfig{Drive: drive})
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "copied %s to %s\n", uf2, dst)
	return nil
}

// ReadBoard reads one benchmark run from a board's serial port into dir.
// That is, the raw log verbatim (board.serial.log) and what it parsed
// (board.json, written even when the read fails part way). Untested on
// hardware: tested against a pseudo-terminal.
func ReadBoard(ctx context.Context, port, dir string, idle time.Duration) error {
	ds, err := Read(ctx, port, ReadConfig{IdleTimeout: idle, RawLogPath: filepath.Join(dir, "board.serial.log")})
	if ds != nil {
		b, _ := json.MarshalIndent(ds, "", " ")
		if werr := os.WriteFile(filepath.Join(dir, "board.json"), b, 0o644); werr != nil {
			return werr
		}
	}
	return err
}
