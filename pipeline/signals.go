package pipeline

import (
	"context"

	"pqrepro/internal/interrupt"
)

// withSignals cancels ctx on SIGINT and SIGTERM (internal/interrupt, the
// one implementation the targets and cmd/pqrepro share), so that an
// experiment stopped by Ctrl-C or by a supervisor takes its cleanup path.
func withSignals(ctx context.Context) (context.Context, context.CancelFunc) {
	return interrupt.Context(ctx)
}
