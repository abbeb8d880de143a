package bundle_test

import (
	"context"
	"fmt"
	"os"
	"time"

	"pqrepro/internal/bundle"
)

// Write bundles the commit checked out at the root into
// .cache/dist/pqrepro-<version>.tar.gz.
func ExampleWrite() {
	rep, err := bundle.Write(context.Background(), bundle.Options{Root: ".", Log: os.Stdout})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%s  %s (%d bytes)\n", rep.SHA256, rep.Path, rep.Size)
}

// Measure times targets with an injected clock; the result is what
// `PQREPRO_BUNDLE_MEASURE=1 mage bundle` commits.
func ExampleMeasure() {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	ticks := 0
	clock := func() time.Time { ticks++; return t0.Add(time.Duration(ticks) * 2 * time.Second) }
	steps := []bundle.Step{
		{Name: "verify", Note: "re-derives every stage", Run: func(context.Context) error { return nil }},
		{Name: "paper", Run: func(context.Context) error { return fmt.Errorf("pdflatex not found") }},
	}
	t, _ := bundle.Measure(context.Background(), "2 cores", "go1.27.3", steps, clock, nil)
	fmt.Println(t.Targets["verify"].Seconds, t.Targets["verify"].Note)
	fmt.Println(t.Targets["paper"].Failed, t.Targets["paper"].Note)
	// Output:
	// 2 re-derives every stage
	// true failed: pdflatex not found
}
