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
	fmt.Println(len(s.Configs()), "configurations,", len(s.Units("quick")), "of them run on", len(s.Paths("quick")), "paths,", len(steps), "connections, estimate under a minute:", d.Minutes() < 1)
	// Output: 115 configurations, 72 of them run on 3 paths, 2880 connections, estimate under a minute: true
}
