package pipeline

import (
	"context"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"time"
)

// Bench prints the pipeline's performance figures. That is, the wall time
// of a no-op build of the current tree (what `mage build` costs beyond
// compiling the magefile when nothing is stale), then every Go benchmark of
// the module (go test -bench, one run each; use benchstat over several runs
// to compare two versions).
func Bench(ctx context.Context, cfg Config) error {
	if err := cfg.Validate(); err != nil {
		return err
	}
	quiet := cfg
	quiet.Log = io.Discard
	if err := Build(ctx, quiet); err != nil {
		return fmt.Errorf("bench: bring the tree up to date first: %w", err)
	}
	const n = 5
	var best time.Duration
	for i := range n {
		start := time.Now()
		if err := Build(ctx, quiet); err != nil {
			return err
		}
		if d := time.Since(start); i == 0 || d < best {
			best = d
		}
	}
	cfg.printf("bench: no-op build of this tree: %v (best of %d, in process, hash cache warm)", best.Round(10*time.Microsecond), n)
	argv := []string{"go", "test", "-run", "^$", "-bench", ".", "-benchmem", "./..."}
	cfg.printf("bench: %s", strings.Join(argv, " "))
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Dir = cfg.Root
	cmd.Stdout, cmd.Stderr = cfg.log(), cfg.log()
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s: %w", strings.Join(argv, " "), err)
	}
	return nil
}
