package quiet

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"time"
)

// A Settler waits, before a run's pre-flight, for the load of the run's
// own start-up to decay.
//
// The 1-minute load average is an exponentially weighted mean of the
// runnable tasks, sampled by the kernel every 5 s with weight
// 1 - exp(-5/60) (Linux kernel/sched/loadavg.c): a start-up that puts
// dozens of processes on the run queue at once (Study A starts 168 TLS
// servers) raises it within seconds and leaves it high for minutes after
// they have gone idle, while the run's own CPU, which the load criterion
// subtracts, is back near zero. Measured here: a full Study A run whose
// servers started just before its pre-flight read load 7.54 with other
// processes at 0.04 core at most, and was judged busy in its first two
// minutes. Waiting until the load average is back under the criterion
// (Thresholds.LoadPerCore x cores) before the pre-flight removes the
// run's own start-up from the check; other processes' load keeps it
// high, and the check then sees it.
type Settler struct {
	// Proc is the proc file system; "" is /proc.
	Proc string
	// Limit is the 1-minute load to wait for; 0 is
	// DefaultThresholds.LoadPerCore x runtime.NumCPU().
	Limit float64
	// Every is how often the load is read; 0 is 5 s (the kernel's own
	// period). Max bounds the wait; 0 is 3 min (about three time
	// constants: a burst decays to 5 % of its height).
	Every, Max time.Duration
	// After is time.After, injectable for tests.
	After func(time.Duration) <-chan time.Time
}

// Settle waits until the 1-minute load average is at most the limit, or
// Max has passed, or ctx ends. It writes one line when it starts to wait
// and one when it stops. It returns the last load read; an unreadable
// load average is an error, and a wait that ends at Max is not (the
// pre-flight then judges the load).
func (s Settler) Settle(ctx context.Context, log io.Writer) (float64, error) {
	proc := s.Proc
	if proc == "" {
		proc = "/proc"
	}
	limit := s.Limit
	if limit == 0 {
		limit = DefaultThresholds.LoadPerCore * float64(runtime.NumCPU())
	}
	every, max := s.Every, s.Max
	if every <= 0 {
		every = 5 * time.Second
	}
	if max <= 0 {
		max = 3 * time.Minute
	}
	after := s.After
	if after == nil {
		after = time.After
	}
	read := func() (float64, error) {
		b, err := os.ReadFile(filepath.Join(proc, "loadavg"))
		if err != nil {
			return 0, fmt.Errorf("quiet: settle: %w", err)
		}
		l, err := parseLoadavg(b)
		if err != nil {
			return 0, fmt.Errorf("quiet: settle: %w", err)
		}
		return l[0], nil
	}
	load, err := read()
	if err != nil || load <= limit {
		return load, err
	}
	fmt.Fprintf(log, "machine: waiting for the 1-minute load average (%.2f) to fall to %.1f before the pre-flight, up to %v: the run's own start-up raised it\n", load, limit, max)
	waited := time.Duration(0)
	for load > limit && waited < max {
		select {
		case <-ctx.Done():
			return load, ctx.Err()
		case <-after(every):
		}
		waited += every
		if load, err = read(); err != nil {
			return load, err
		}
	}
	if load > limit {
		fmt.Fprintf(log, "machine: the load average is still %.2f after %v: the pre-flight judges it\n", load, waited)
	} else {
		fmt.Fprintf(log, "machine: load average %.2f after %v\n", load, waited)
	}
	return load, nil
}
