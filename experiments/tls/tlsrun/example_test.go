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
	for _, profile := range []string{"quick", "full"} {
		steps, _ := tlsrun.Plan(s, profile)
		d, _ := tlsrun.Estimate(s, profile)
		fmt.Println(profile+":", len(s.Units(profile)), "units on", len(s.Paths(profile)), "paths and the emulated ones,", len(steps), "connections, estimate under 15 minutes:", d.Minutes() < 15)
	}
	fmt.Println(len(s.Configs()), "configurations in the spec")
	// Output:
	// quick: 72 units on 3 paths and the emulated ones, 2880 connections, estimate under 15 minutes: true
	// full: 168 units on 3 paths and the emulated ones, 65680 connections, estimate under 15 minutes: true
	// 115 configurations in the spec
}
