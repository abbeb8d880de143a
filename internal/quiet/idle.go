package quiet

import (
	"context"
	"fmt"
	"os"
	"time"
)

// An IdleWait waits until the machine's CPUs are idle. Idle is measured as
// the share of all CPU ticks spent in processes, interrupts and steal over
// short windows of /proc/stat.
//
// Why: a short measurement of CPU time (a run's host probe) made while
// the kernel still tears down a run's network namespaces, or while the
// runner's own memory is collected, measures that work too. The load
// average cannot tell: it moves over a minute, the disturbance lasts
// seconds. The zero value waits with the defaults below.
type IdleWait struct {
	// MaxBusy is the largest busy share of all CPUs that counts as idle
	// (default 0.1: a tenth of the machine).
	MaxBusy float64
	// Window is one measurement's length (default 500 ms); Windows the
	// number of idle windows in a row that end the wait (default 2).
	Window  time.Duration
	Windows int
	// Limit bounds the wait (default 60 s); the machine is then taken as
	// it is, and the caller records how busy it was.
	Limit time.Duration
	// ReadStat reads /proc/stat; nil reads the file (tests inject it).
	ReadStat func() ([]byte, error)
}

// Wait blocks until Windows windows in a row were idle, Limit passed or
// ctx ended. It returns how long it waited and the busy share of the
// last window; it is an error only when /proc/stat cannot be read or ctx
// ended.
func (w IdleWait) Wait(ctx context.Context) (waited time.Duration, busy float64, err error) {
	w = w.withDefaults()
	start := time.Now()
	prev, err := w.read()
	if err != nil {
		return 0, 0, err
	}
	idle := 0
	for {
		select {
		case <-ctx.Done():
			return time.Since(start), busy, context.Cause(ctx)
		case <-time.After(w.Window):
		}
		cur, err := w.read()
		if err != nil {
			return time.Since(start), busy, err
		}
		busy = busyShare(prev, cur)
		prev = cur
		if busy <= w.MaxBusy {
			idle++
		} else {
			idle = 0
		}
		if idle >= w.Windows || time.Since(start) >= w.Limit {
			return time.Since(start), busy, nil
		}
	}
}

func (w IdleWait) withDefaults() IdleWait {
	if w.MaxBusy <= 0 {
		w.MaxBusy = 0.1
	}
	if w.Window <= 0 {
		w.Window = 500 * time.Millisecond
	}
	if w.Windows <= 0 {
		w.Windows = 2
	}
	if w.Limit <= 0 {
		w.Limit = time.Minute
	}
	if w.ReadStat == nil {
		w.ReadStat = func() ([]byte, error) { return os.ReadFile("/proc/stat") }
	}
	return w
}

func (w IdleWait) read() (cpuTimes, error) {
	b, err := w.ReadStat()
	if err != nil {
		return cpuTimes{}, fmt.Errorf("idle wait: %w", err)
	}
	c, _, err := parseStat(b)
	if err != nil {
		return cpuTimes{}, fmt.Errorf("idle wait: %w", err)
	}
	return c, nil
}

// busyShare is the share of the ticks between a and b that were not
// idle or iowait: processes, interrupts and steal. A counter that went
// backwards (or no tick passed) reads as fully busy, so it never ends a
// wait early.
func busyShare(a, b cpuTimes) float64 {
	if b.total() <= a.total() || b.idle < a.idle || b.iowait < a.iowait {
		return 1
	}
	total := float64(b.total() - a.total())
	idle := float64(b.idle-a.idle) + float64(b.iowait-a.iowait)
	return max(0, min(1, 1-idle/total))
}
