package tlsrun_test

import (
	"context"
	"fmt"
	"os"
	"os/signal"

	"pqrepro/experiments/instruments/runlife"
	"pqrepro/experiments/tls/tlsrun"
)

// Run records a dataset for the quick profile of experiments/tls.toml
// (as root), registers it under data/tls/<run-id>/ and pins it in the spec.
// Ctrl-C removes the incomplete run.
func ExampleRun() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	res, err := tlsrun.Run(ctx, tlsrun.RunConfig{Config: runlife.Config{Root: ".", Profile: "quick", Log: os.Stdout}})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return
	}
	fmt.Println("run", res.RunID, "in", res.Dir)
}

// Estimate gives the plan's expected wall time before anything runs.
func ExampleEstimate() {
	s, err := tlsrun.LoadSpec("../../tls.toml")
	if err != nil {
		fmt.Println(err)
		return
	}
	steps, _ := tlsrun.Plan(s, "quick")
	d, _ := tlsrun.Estimate(s, "quick")
	fmt.Println(len(s.Configs()), "configurations,", len(s.Units("quick")), "units on", len(s.Paths("quick")), "paths and the emulated ones,", len(steps), "connections, estimate under two minutes:", d.Minutes() < 2)
	// Output: 115 configurations, 144 units on 3 paths and the emulated ones, 4320 connections, estimate under two minutes: true
}
