package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"time"

	"pqrepro/datasets/picodata"
	"pqrepro/experiments/pico/picoboard"
)

func init() {
	register("pico", "RP2040 firmware: build, emulate, read, flash, size (pico help)", runPico)
}

func runPico(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] == "help" || args[0] == "-h" {
		fmt.Fprintln(stderr, `usage: pqrepro pico <build|emulate|read|flash|size> [flags]
  build    -profile quick|full -images mlkem,mldsa44,...      build RAM-only UF2 images
  emulate  -profile ... -images ... -out DIR                  run them in rp2040js, verify, write records
  read     -port /dev/ttyUSB0 -out DIR [-timeout 60s]          read one run from a board
  flash    -uf2 FILE [-drive DIR]                              copy a UF2 to the RPI-RP2 BOOTSEL drive
  size     -elf FILE                                           section and per-scheme size report`)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	fs := flag.NewFlagSet("pico "+args[0], flag.ContinueOnError)
	fs.SetOutput(stderr)
	profile := fs.String("profile", "quick", "quick or full")
	images := fs.String("images", "", "comma-separated image names (default: all standard images)")
	out := fs.String("out", "", "output directory for raw logs and records")
	port := fs.String("port", "", "serial port of the board")
	timeout := fs.Duration("timeout", 60*time.Second, "idle timeout when reading a board")
	uf2 := fs.String("uf2", "", "UF2 file to flash")
	drive := fs.String("drive", "", "mount point of the RPI-RP2 drive (default: search)")
	elfPath := fs.String("elf", "", "ELF file for the size report")
	if err := fs.Parse(args[1:]); err != nil {
		return 2
	}
	fail := func(err error) int {
		fmt.Fprintln(stderr, "pqrepro pico:", err)
		return 1
	}
	prof, err := picoboard.ProfileByName(*profile)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 2
	}
	var cfgs []picoboard.BuildConfig
	for _, c := range picoboard.StandardImages() {
		if *images == "" || contains(strings.Split(*images, ","), c.Name) {
			c.Profile = prof
			c.Log = stderr
			cfgs = append(cfgs, c)
		}
	}
	switch args[0] {
	case "build":
		for _, c := range cfgs {
			img, err := picoboard.Build(ctx, c)
			if err != nil {
				return fail(err)
			}
			fmt.Fprintf(stdout, "%s\t%s\t%s\t%.1fs\n", img.Name, img.FirmwareID, img.UF2, img.BuildTime.Seconds())
		}
		return 0
	case "emulate":
		if *out == "" {
			fmt.Fprintln(stderr, "pico emulate: -out DIR is required")
			return 2
		}
		status := 0
		for _, c := range cfgs {
			img, err := picoboard.Build(ctx, c)
			if err != nil {
				return fail(err)
			}
			raw, err := os.Create(filepath.Join(*out, img.Name+".serial.log"))
			if err != nil {
				return fail(err)
			}
			run, err := picoboard.Emulate(ctx, img, picoboard.RunConfig{RawLog: raw, Log: stderr, Progress: func(m picodata.Measurement) {
				if m.Iter == 0 {
					fmt.Fprintf(stderr, "  %s %s %.3f ms\n", m.Scheme, m.Op, float64(m.Micros)/1000)
				}
			}})
			raw.Close()
			if err != nil {
				fmt.Fprintln(stderr, err)
				status = 1
				if run == nil {
					continue
				}
			}
			checks, verr := picoboard.VerifyVectors(run.Dataset)
			if verr != nil {
				fmt.Fprintln(stderr, verr)
				status = 1
			}
			b, _ := json.MarshalIndent(struct {
				Image  picoboard.Image        `json:"image"`
				Run    *picoboard.EmulatedRun `json:"run"`
				Checks []picodata.Check       `json:"checks"`
			}{img, run, checks}, "", " ")
			if err := os.WriteFile(filepath.Join(*out, img.Name+".json"), b, 0o644); err != nil {
				return fail(err)
			}
			fmt.Fprintf(stdout, "%s: %d measurements, %d checks, complete=%v, %.1f simulated MHz, %.1f s wall\n",
				img.Name, len(run.Measurements), len(checks), run.Complete, run.Emulator.SimMHz, run.Emulator.WallSeconds)
		}
		return status
	case "size":
		rep, err := picoboard.SizeReportFile(*elfPath)
		if err != nil {
			return fail(err)
		}
		rep.WriteText(stdout)
		return 0
	case "flash":
		dst, err := picoboard.Flash(*uf2, picoboard.FlashConfig{Drive: *drive})
		if err != nil {
			return fail(err)
		}
		fmt.Fprintf(stdout, "copied %s to %s\n", *uf2, dst)
		return 0
	case "read":
		if *port == "" || *out == "" {
			fmt.Fprintln(stderr, "pico read: -port and -out are required")
			return 2
		}
		ds, err := picoboard.Read(ctx, *port, picoboard.ReadConfig{IdleTimeout: *timeout, RawLogPath: filepath.Join(*out, "board.serial.log")})
		if ds != nil {
			b, _ := json.MarshalIndent(ds, "", " ")
			if werr := os.WriteFile(filepath.Join(*out, "board.json"), b, 0o644); werr != nil {
				return fail(werr)
			}
		}
		if err != nil {
			return fail(err)
		}
		return 0
	}
	fmt.Fprintf(stderr, "pqrepro pico: unknown action %q\n", args[0])
	return 2
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
