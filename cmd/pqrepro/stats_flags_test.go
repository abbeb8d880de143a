package main

import (
	"flag"
	"io"
)

type testFlagSet struct {
	fs   *flag.FlagSet
	json *bool
}

func newTestFlagSet() testFlagSet {
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	return testFlagSet{fs: fs, json: fs.Bool("json", false, "")}
}
