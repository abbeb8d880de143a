package quiet

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// fakeLoad is a proc directory whose loadavg changes at every read of
// the clock: loads[i] after i ticks.
func fakeLoad(t *testing.T, loads ...string) (proc string, after func(time.Duration) <-chan time.Time) {
	t.Helper()
	proc = t.TempDir()
	write := func(i int) {
		if i >= len(loads) {
			i = len(loads) - 1
		}
		if err := os.WriteFile(filepath.Join(proc, "loadavg"), []byte(loads[i]), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(0)
	n := 0
	return proc, func(time.Duration) <-chan time.Time {
		n++
		write(n)
		c := make(chan time.Time, 1)
		c <- time.Time{}
		return c
	}
}

func TestSettle(t *testing.T) {
	for _, tc := range []struct {
		name   string
		loads  []string
		want   float64
		lines  []string
		errSub string
	}{
		{"already quiet", []string{"0.50 0.4 0.3 1/100 1"}, 0.5, nil, ""},
		{"decays", []string{"7.54 2 1 1/100 1", "4.1 2 1 1/100 1", "1.9 2 1 1/100 1"}, 1.9,
			[]string{"waiting for the 1-minute load average (7.54) to fall to 2.0", "load average 1.90 after 10s"}, ""},
		{"never settles", []string{"6 2 1 1/100 1"}, 6,
			[]string{"waiting", "still 6.00 after 30s: the pre-flight judges it"}, ""},
		{"unreadable", []string{"garbage"}, 0, nil, "want at least 3"},
		{"not a number", []string{"x 1 1 1/1 1"}, 0, nil, "not a load average"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			proc, after := fakeLoad(t, tc.loads...)
			var log bytes.Buffer
			got, err := Settler{Proc: proc, Limit: 2, Every: 5 * time.Second, Max: 30 * time.Second, After: after}.Settle(context.Background(), &log)
			if tc.errSub != "" {
				if err == nil || !strings.Contains(err.Error(), tc.errSub) {
					t.Fatalf("err %v, want %q", err, tc.errSub)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("got %v, %v; want %v", got, err, tc.want)
			}
			for _, l := range tc.lines {
				if !strings.Contains(log.String(), l) {
					t.Errorf("log lacks %q:\n%s", l, log.String())
				}
			}
			if tc.lines == nil && log.Len() > 0 {
				t.Errorf("a quiet machine waited: %s", log.String())
			}
		})
	}
}

// TestSettleInterrupted: a cancelled context ends the wait at once.
func TestSettleInterrupted(t *testing.T) {
	proc, _ := fakeLoad(t, "9 9 9 1/1 1")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	never := func(time.Duration) <-chan time.Time { return nil }
	if _, err := (Settler{Proc: proc, Limit: 2, After: never}).Settle(ctx, &bytes.Buffer{}); err != context.Canceled {
		t.Fatalf("err %v, want context.Canceled", err)
	}
}
