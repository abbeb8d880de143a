package pipeline

import (
	"context"

	"pqrepro/internal/interrupt"
)

// withSignals cancels ctx on SIGINT and SIGTERM (internal/interrupt, the
// one implementation the targets and cmd/pqrepro share) and when the
// target's launcher exits (interrupt.Target). An experiment
// stopped by Ctrl-C, a supervisor or a killed `go run` thus takes its
// cleanup path.
func withSignals(ctx context.Context) (context.Context, context.CancelFunc) {
	return interrupt.Target(ctx)
}
