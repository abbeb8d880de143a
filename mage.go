//go:build ignore

// Zero-install entry point: `go run mage.go <target>` runs the Mage
// targets of magefile.go with nothing but Go installed (Mage comes in as
// a module dependency pinned in go.mod).
package main

import (
	"os"

	"github.com/magefile/mage/mage"
)

func main() { os.Exit(mage.Main()) }
