//go:build ignore

// Zero-install entry point: `go run mage.go <target>` runs a target of
// magefile.go with nothing but Go installed.
//
// Mage comes in as a module dependency pinned in go.mod.
// internal/magemain is Mage's main
// with a compile lock (several commands at once in one tree) and one way
// to stop (SIGINT, SIGTERM, the death of `go run`).
package main

import (
	"os"

	"pqrepro/internal/magemain"
)

func main() { os.Exit(magemain.Main()) }
