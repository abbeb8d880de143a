// Package interrupt turns a request to stop into a cancelled context, the
// same way for every target and command.
//
// SIGINT (Ctrl-C) and SIGTERM (kill, timeout, a CI supervisor) both cancel, so that whatever runs
// takes its cleanup path (captures closed, network namespaces removed,
// the incomplete run folder deleted, nothing pinned) whichever of them
// stopped it. Go's default for SIGTERM is to exit at once, and Mage's
// generated main cancels only on SIGINT. For a target (Target), the death
// of the process that started it cancels too: a target whose launcher was
// killed (SIGKILL to `go run`, a CI time limit, an installed mage binary)
// would otherwise go on for an hour with its namespaces, servers and the
// tree's lock. (mage.go's own process, which passes signals on to the compiled
// magefile's group, is internal/magemain.)
package interrupt

import (
	"context"
	"os"
	"os/signal"
	"syscall"
	"time"
)

// Signals are the signals that cancel a Context.
var Signals = []os.Signal{os.Interrupt, syscall.SIGTERM}

// ParentPoll is how often a Context looks whether the process that started
// this one has exited. The parent PID changes when the kernel re-parents
// an orphan. Polling needs no cooperation from the parent; a parent that
// set PR_SET_PDEATHSIG (internal/magemain does) stops its child at once.
const ParentPoll = 250 * time.Millisecond

// Context returns a copy of parent that is cancelled on SIGINT or SIGTERM.
// The returned stop releases the signals (a later one then acts as if
// Context had not been called) and cancels the context. cmd/pqrepro's
// commands use it: one started with nohup or & may outlive its shell.
func Context(parent context.Context) (ctx context.Context, stop context.CancelFunc) {
	return signal.NotifyContext(parent, Signals...)
}

// Target is Context that is also cancelled when the process that started
// this one exits. The Mage targets use it (pipeline), whose launcher is
// `go run mage.go`, mage.go's process or an installed mage, and which
// must not outlive it holding the tree's lock.
func Target(parent context.Context) (ctx context.Context, stop context.CancelFunc) {
	sctx, stopSignals := Context(parent)
	ctx, cancel := context.WithCancel(sctx)
	if ppid := os.Getppid(); ppid > 1 { // 1: started by init or already orphaned: nothing to watch
		go watchParent(ctx, ppid, cancel)
	}
	return ctx, func() {
		cancel()
		stopSignals()
	}
}

// watchParent cancels when this process's parent is no longer ppid.
func watchParent(ctx context.Context, ppid int, cancel context.CancelFunc) {
	t := time.NewTicker(ParentPoll)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if os.Getppid() != ppid {
				cancel()
				return
			}
		}
	}
}
