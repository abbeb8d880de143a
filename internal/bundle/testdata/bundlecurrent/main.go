// Command bundlecurrent runs pipeline.Bundle on the repository it is
// started in, until `mage bundle` is wired in magefile.go:
//
//	go run ./internal/bundle/testdata/bundlecurrent
//
// PQREPRO_BUNDLE_DIRTY=1 and PQREPRO_BUNDLE_MEASURE=1 work as for
// `mage bundle`.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"

	"pqrepro/internal/pipeline"
)

func main() {
	root, err := os.Getwd()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := pipeline.Bundle(ctx, pipeline.Config{Root: root, Profile: pipeline.Full}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
