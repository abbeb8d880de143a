package quiet

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"
)

// statSeq returns a ReadStat that serves one /proc/stat per call, each
// adding 100 ticks of which busy[i] are busy (user) and the rest idle.
func statSeq(busy ...uint64) func() ([]byte, error) {
	var user, idle uint64
	i := 0
	return func() ([]byte, error) {
		if i > 0 {
			b := busy[min(i-1, len(busy)-1)]
			user, idle = user+b, idle+100-b
		}
		i++
		return []byte(fmt.Sprintf("cpu  %d 0 0 %d 0 0 0 0 0 0\ncpu0 0 0 0 0\ncpu1 0 0 0 0\n", user, idle)), nil
	}
}

func TestIdleWait(t *testing.T) {
	ctx := context.Background()
	fast := IdleWait{Window: time.Millisecond, Windows: 2, MaxBusy: 0.1, Limit: time.Second}

	w := fast
	seq, reads := statSeq(50, 60, 5, 40, 5, 5), 0
	w.ReadStat = func() ([]byte, error) { reads++; return seq() }
	waited, busy, err := w.Wait(ctx)
	if err != nil || math.Abs(busy-0.05) > 1e-9 || waited >= time.Second || reads != 7 {
		t.Errorf("busy, busy, idle, busy, idle, idle: waited %v, busy %v, %v; want it to end on the second idle window in a row (7 reads, got %d)", waited, busy, err, reads)
	}

	w = fast
	w.Limit = 20 * time.Millisecond
	w.ReadStat = statSeq(90)
	waited, busy, err = w.Wait(ctx)
	if err != nil || math.Abs(busy-0.9) > 1e-9 || waited < 20*time.Millisecond {
		t.Errorf("always busy: waited %v, busy %v, %v; want the limit and the last busy share", waited, busy, err)
	}

	w = fast
	w.ReadStat = func() ([]byte, error) { return nil, errors.New("no /proc") }
	if _, _, err := w.Wait(ctx); err == nil || !strings.Contains(err.Error(), "no /proc") {
		t.Errorf("unreadable /proc/stat: %v", err)
	}

	w = fast
	w.ReadStat = func() ([]byte, error) { return []byte("intr 1\n"), nil }
	if _, _, err := w.Wait(ctx); err == nil || !strings.Contains(err.Error(), "no aggregate cpu line") {
		t.Errorf("bad /proc/stat: %v", err)
	}

	w = fast
	w.Limit = time.Hour
	w.ReadStat = statSeq(90)
	cctx, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
	defer cancel()
	if _, _, err := w.Wait(cctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("cancelled: %v, want the context's error", err)
	}
}

func TestBusyShare(t *testing.T) {
	a := cpuTimes{user: 100, idle: 100}
	for _, tc := range []struct {
		b    cpuTimes
		want float64
	}{
		{cpuTimes{user: 150, idle: 150}, 0.5},
		{cpuTimes{user: 100, idle: 200}, 0},
		{cpuTimes{user: 100, idle: 150, iowait: 50}, 0},
		{cpuTimes{user: 120, idle: 180, steal: 100}, 0.6},
		{cpuTimes{user: 100, idle: 100}, 1}, // no tick passed
		{cpuTimes{user: 300, idle: 50}, 1},  // a counter went backwards
	} {
		if got := busyShare(a, tc.b); math.Abs(got-tc.want) > 1e-9 {
			t.Errorf("busyShare(%+v) = %v, want %v", tc.b, got, tc.want)
		}
	}
}
