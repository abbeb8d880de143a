package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"pqrepro/experiments/instruments/capture"
	"pqrepro/experiments/instruments/runlife"
	"pqrepro/experiments/tls/tlsrun"
	"pqrepro/internal/interrupt"
	"pqrepro/internal/repro"
	"pqrepro/internal/settings"
)

func init() {
	register("tlsrun", "record a Study A dataset (the runner behind `mage tls:run`; needs root)", runTLSRun)
}

// runTLSRun is `pqrepro tlsrun`: the same Run as `mage tls:run`, for a
// machine where Mage cannot run as root (sudo pqrepro tlsrun -profile quick).
func runTLSRun(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("tlsrun", flag.ContinueOnError)
	fs.SetOutput(stderr)
	root := fs.String("root", ".", "repository `root` (spec, data/ and the store below it)")
	profile := fs.String("profile", "quick", "spec `profile` (quick, full)")
	specPath := fs.String("spec", "", "spec `file` (default ROOT/experiments/tls.toml); the run is pinned in it")
	dataDir := fs.String("data", "", "data `directory` (default ROOT/data)")
	store := fs.String("store", "", "content store `directory` (default $PQREPRO_STORE or ROOT/.store)")
	estimate := fs.Bool("estimate", false, "print the plan's estimated wall time and exit")
	verbose := fs.Bool("v", false, "verbose: one line per server")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: pqrepro tlsrun [flags]")
		fmt.Fprintln(stderr, "Runs experiments/tls.toml's profile on lo with a packet capture and registers data/tls/<run-id>/.")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() != 0 {
		fs.Usage()
		return 2
	}
	if *estimate {
		p := *specPath
		if p == "" {
			p = *root + "/experiments/tls.toml"
		}
		s, err := tlsrun.LoadSpec(p)
		if err != nil {
			fmt.Fprintln(stderr, "pqrepro tlsrun:", err)
			return 2
		}
		d, err := tlsrun.Estimate(s, *profile)
		if err != nil {
			fmt.Fprintln(stderr, "pqrepro tlsrun:", err)
			return 2
		}
		fmt.Fprintf(stdout, "%s: estimated %s\n", *profile, d.Round(1e9))
		return 0
	}
	set, err := settings.Load(os.Getenv)
	if err != nil {
		fmt.Fprintln(stderr, "pqrepro tlsrun:", err)
		return 2
	}
	cfg := tlsrun.RunConfig{Config: runlife.Config{Root: *root, Profile: *profile, SpecPath: *specPath, DataDir: *dataDir, Log: stdout, Verbose: *verbose,
		NoPin: set.NoPin, PinBusy: set.PinBusy}}
	if *store == "" {
		*store = set.Store
	}
	if *store != "" {
		cfg.Store = &repro.Store{Dir: *store}
	}
	ctx, stop := interrupt.Context(context.Background())
	defer stop()
	res, err := tlsrun.Run(ctx, cfg)
	if err != nil {
		fmt.Fprintln(stderr, "pqrepro tlsrun:", err)
		if errors.Is(err, capture.ErrNeedRoot) {
			return 2
		}
		return 1
	}
	fmt.Fprintln(stdout, res.Dir)
	return 0
}
