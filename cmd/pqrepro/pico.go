package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"pqrepro/experiments/pico/picoboard"
	"pqrepro/internal/interrupt"
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
	ctx, stop := interrupt.Context(context.Background())
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
	var names []string
	if *images != "" {
		names = strings.Split(*images, ",")
	}
	cfgs, err := picoboard.Images("", *profile, names, stderr)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 2
	}
	exit := func(err error) int {
		if err != nil {
			return fail(err)
		}
		return 0
	}
	switch args[0] {
	case "build":
		return exit(picoboard.BuildImages(ctx, cfgs, stdout))
	case "emulate":
		if *out == "" {
			fmt.Fprintln(stderr, "pico emulate: -out DIR is required")
			return 2
		}
		return exit(picoboard.EmulateImages(ctx, cfgs, *out, stdout, stderr))
	case "size":
		rep, err := picoboard.SizeReportFile(*elfPath)
		if err != nil {
			return fail(err)
		}
		rep.WriteText(stdout)
		return 0
	case "flash":
		return exit(picoboard.FlashUF2(*uf2, *drive, stdout))
	case "read":
		if *port == "" || *out == "" {
			fmt.Fprintln(stderr, "pico read: -port and -out are required")
			return 2
		}
		return exit(picoboard.ReadBoard(ctx, *port, *out, *timeout))
	}
	fmt.Fprintf(stderr, "pqrepro pico: unknown action %q\n", args[0])
	return 2
}
