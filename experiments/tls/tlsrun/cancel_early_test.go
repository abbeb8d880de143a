package tlsrun

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestRunCancelledEarly cancels a run at several moments of its setup
// (before it starts, while the servers, paths and capture come up): every
// one must end as an interruption that leaves nothing behind, never as a
// crash.
func TestRunCancelledEarly(t *testing.T) {
	needRoot(t)
	t.Run("loopback", func(t *testing.T) { cancelEarly(t, tinySpec) })
	t.Run("bridge", func(t *testing.T) {
		needBridge(t)
		useTestPrefix(t)
		cancelEarly(t, bridgeSpec)
	})
}

func cancelEarly(t *testing.T, specText string) {
	for i, after := range []time.Duration{0, time.Millisecond, 5 * time.Millisecond, 20 * time.Millisecond, 60 * time.Millisecond, 150 * time.Millisecond, 300 * time.Millisecond} {
		t.Run(fmt.Sprint(after), func(t *testing.T) {
			e := newEnv(t, strings.Replace(specText, "n = 5", "n = 400", 1))
			marker, spec := e.previousRun(t)
			ctx, cancel := context.WithCancel(context.Background())
			if after == 0 {
				cancel()
			} else {
				time.AfterFunc(after, cancel)
			}
			defer cancel()
			_, err := Run(ctx, e.config(time.Date(2026, 11, 30, 12, 1, i, 0, time.UTC)))
			if err == nil {
				t.Skip("the run finished before the cancel")
			}
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("err = %v, want the cancellation", err)
			}
			e.checkUntouched(t, marker, spec)
			checkNoLeftovers(t)
		})
	}
}
