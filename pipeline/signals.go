package pipeline

import (
	"context"
	"os"
	"os/signal"
	"syscall"
)

// withSignals cancels ctx on SIGINT and SIGTERM, so that an experiment
// stopped by Ctrl-C or by a supervisor (kill, a CI timeout) takes its
// cleanup path: captures closed, network namespaces removed, the
// incomplete run folder deleted and nothing pinned. Mage itself cancels
// only on SIGINT.
func withSignals(ctx context.Context) (context.Context, context.CancelFunc) {
	return signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
}
