package remote

import (
	"context"
	"errors"
	"testing"
	"time"
)

// TestStallFiresAfterStallNotLater is issue 44's item 3: the stall timer
// ends an attempt Options.Stall after the last byte (or the start), not
// a quarter to a half later. The watchdog's first tick used to count as
// progress, so a silent remote was given up on after 75-90 s instead of
// 60 s, and a pull of three silent blobs took 19 min 43 s against the
// 16 min docs/data-remote.md states.
func TestStallFiresAfterStallNotLater(t *testing.T) {
	const after = time.Second
	// slack allows for a busy machine's timer latency; the old watchdog
	// fired a whole tick (after/4) late at best.
	const slack = after / 8
	for _, tc := range []struct {
		name   string
		writes int // bytes written 100 ms apart before the silence
	}{
		{"silent from the start", 0},
		{"silent after three bytes", 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, w := watch(context.Background(), after)
			defer w.stop()
			last := time.Now()
			for range tc.writes {
				time.Sleep(100 * time.Millisecond)
				w.Write([]byte{1})
				last = time.Now()
			}
			<-ctx.Done()
			idle := time.Since(last)
			if !errors.Is(context.Cause(ctx), ErrStalled) {
				t.Fatalf("cause %v, want ErrStalled", context.Cause(ctx))
			}
			if idle < after-10*time.Millisecond || idle > after+slack {
				t.Errorf("stalled after %v without a byte, want %v (at most %v late)", idle.Round(time.Millisecond), after, slack)
			}
		})
	}
}
