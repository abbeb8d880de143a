package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"path/filepath"

	"pqrepro/pipeline"
)

func init() {
	register("seal", "write the MANIFEST.sha256 of a run committed before runs were sealed (once)", runSeal)
}

// runSeal is `pqrepro seal RUN...`: the one-time repair for runs that
// were committed before repro.Run.Commit wrote a manifest (pipeline.Seal).
// It refuses a sealed run and a run that differs from its meta.json or
// SHA256SUMS.
func runSeal(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("seal", flag.ContinueOnError)
	fs.SetOutput(stderr)
	root := fs.String("root", ".", "repository `root`")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: pqrepro seal [-root DIR] data/<study>/<run-id>...")
		fmt.Fprintln(stderr, "Checks every file of each run against its meta.json and SHA256SUMS (working and committed),")
		fmt.Fprintln(stderr, "appends a note to its README.md, writes its MANIFEST.sha256 (with the size of each blob the")
		fmt.Fprintln(stderr, "content store holds, the bound a data:pull reads to) and pins the manifest's SHA-256")
		fmt.Fprintln(stderr, "in experiments/<study>.toml. Refuses a run that is sealed already.")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() == 0 {
		fs.Usage()
		return 2
	}
	abs, err := filepath.Abs(*root)
	if err != nil {
		fmt.Fprintln(stderr, "pqrepro seal:", err)
		return 2
	}
	if err := pipeline.Seal(context.Background(), pipeline.Config{Root: abs, Log: stdout}, fs.Args()...); err != nil {
		fmt.Fprintln(stderr, "pqrepro seal:", err)
		return 1
	}
	return 0
}
