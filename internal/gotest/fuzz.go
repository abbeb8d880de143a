package gotest

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// ListFile names, in a package folder, the bounded fuzz runs of that
// package: one `go test -fuzz` command per line, # for comments.
const ListFile = "fuzz.txt"

// Bounded runs the bounded fuzzers of every fuzz.txt under root when run
// is set (CI set or PQREPRO_FUZZ=1: internal/settings).
//
// Each command is a fuzzer for a few seconds, run by sh in root; when run
// is not set it says how to run them. `mage test` runs it before the
// tests, so that the test run's summary stays the last line. Hidden
// folders, node_modules and testdata are not searched.
func Bounded(ctx context.Context, root string, run bool, log io.Writer) error {
	printf := func(format string, args ...any) { fmt.Fprintf(log, format+"\n", args...) }
	var lists []string
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && p != root && (strings.HasPrefix(d.Name(), ".") || d.Name() == "node_modules" || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if !d.IsDir() && d.Name() == ListFile {
			lists = append(lists, p)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("find %s files: %w", ListFile, err)
	}
	var cmds []string
	for _, l := range lists {
		b, err := os.ReadFile(l)
		if err != nil {
			return err
		}
		for _, line := range strings.Split(string(b), "\n") {
			if line = strings.TrimSpace(line); line != "" && !strings.HasPrefix(line, "#") {
				cmds = append(cmds, line)
			}
		}
	}
	if len(cmds) == 0 {
		return nil
	}
	if !run {
		printf("test: %d bounded fuzz runs (%s files) not run: set PQREPRO_FUZZ=1 (CI runs them)", len(cmds), ListFile)
		return nil
	}
	for i, c := range cmds {
		printf("test: fuzz %d/%d: %s", i+1, len(cmds), c)
		cmd := exec.CommandContext(ctx, "sh", "-c", c)
		cmd.Dir = root
		cmd.Stdout, cmd.Stderr = log, log
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("bounded fuzzing: %s: %w (the failing input is under the package's testdata/fuzz: commit it as a regression case)", c, err)
		}
	}
	return nil
}
