// Package interrupt turns a request to stop into a cancelled context, the
// same way for every target and command. That is, SIGINT (Ctrl-C) and
// SIGTERM (kill, timeout, a CI supervisor) both cancel, so that whatever
// runs takes its cleanup path (captures closed, network namespaces
// removed, the incomplete run folder deleted, nothing pinned) whichever
// of them stopped it. Go's default for SIGTERM is to exit at once, and
// Mage's generated main cancels only on SIGINT. (mage.go's own process,
// which passes signals on to the compiled magefile's group, is
// internal/magemain.)
package interrupt

import (
	"context"
	"os"
	"os/signal"
	"syscall"
)

// Signals are the signals that cancel a Context.
var Signals = []os.Signal{os.Interrupt, syscall.SIGTERM}

// Context returns a copy of parent that is cancelled on SIGINT or
// SIGTERM. Stop releases the signals (a later one then acts as if
// Context had not been called) and cancels the context.
func Context(parent context.Context) (ctx context.Context, stop context.CancelFunc) {
	return signal.NotifyContext(parent, Signals...)
}
