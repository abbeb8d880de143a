package pipeline

import (
	"context"
	"strings"

	"pqrepro/internal/treelock"
)

// refusing lists the targets that refuse to start while another command
// writes in the tree, beside every study's run target (<study>:run, see
// runTarget). Every other writing target waits for it.
//
// Runs refuse: they measure, and a run queued behind a build or another
// run would start unattended at some later time, or (without the lock)
// run under the other's CPU load and race it for the pin. all and quick
// run every experiment again, so they refuse too; they write only under
// .cache/reproduce/, but hold the write lock from start to end all the
// same, because they read the committed outputs, specs and pins as their
// reference (a build must not rewrite them halfway) and their timings
// must not share the CPU with another run or build. Builds, clean and
// the rest wait: they are deterministic and short, and the second one
// finds the first one's work done.
var refusing = map[string]bool{
	"all":   true,
	"quick": true,
}

// runs lists the targets that report leftovers of killed commands when
// they start (status reports them too), beside every study's run target.
var runs = map[string]bool{
	"all": true, "quick": true,
}

// runTarget reports whether the target is a study's run target: the Run
// of a study's Mage namespace (RunTarget), <study>:run.
func runTarget(target string) bool { return strings.HasSuffix(target, ":run") }

// Locked runs fn, a target that writes in the tree, under the tree's
// write lock (internal/treelock). Another writing command makes it wait
// with one line saying for whom, or refuse (see refusing). It cancels
// ctx on SIGINT and SIGTERM, so that every writing target takes its
// cleanup path whichever signal stops it. Read-only targets (status,
// verify, claims, -l) take no lock and run alongside.
func Locked(ctx context.Context, cfg Config, target string, fn func(context.Context, Config) error) error {
	ctx, stop := withSignals(ctx)
	defer stop()
	policy := treelock.Wait
	if refusing[target] || runTarget(target) {
		policy = treelock.Refuse
	}
	l, err := treelock.Acquire(ctx, cfg.Root, treelock.Write, target, policy, cfg.log())
	if err != nil {
		return err
	}
	defer l.Release()
	if runs[target] || runTarget(target) {
		reportLeftovers(cfg)
	}
	return fn(ctx, cfg)
}

// Signalled runs fn with ctx cancelled on SIGINT and SIGTERM, for
// targets that write nothing in the tree.
//
// Such a target (verify, test) may still leave temporary files or
// processes; with ctx cancelled on SIGINT and SIGTERM, so that it cleans
// up whichever signal stops it.
func Signalled(ctx context.Context, cfg Config, fn func(context.Context, Config) error) error {
	ctx, stop := withSignals(ctx)
	defer stop()
	return fn(ctx, cfg)
}
