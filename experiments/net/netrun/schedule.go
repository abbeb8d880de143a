package netrun

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"sync"
	"syscall"
	"time"

	"pqrepro/datasets/netdata"
	"pqrepro/experiments/instruments/handshake"
	"pqrepro/experiments/instruments/linkemu"
	"pqrepro/experiments/instruments/runlife"
	"pqrepro/internal/tcpstack"
)

type runner struct {
	cfg     RunConfig
	spec    *Spec
	plan    Plan
	est     Estimation
	bundle  *handshake.Bundle
	dir     string
	started time.Time
	eps     map[string]*Endpoint // endpoint builds by toolchain
	rem     *remoteServers       // the servers on the remote host, nil without one (remote.go)
	pem     struct{ cert, key, roots string }
	life    *runlife.Life // the run's lifecycle; its MachineLine goes on progress lines

	// quiet keeps a link's self-test free of the other series' traffic:
	// StartVerified takes it exclusively, every attempt (warm-up included)
	// holds it shared. A series that would start a handshake while another
	// link is being verified waits (at most one self-test, under a second);
	// the pause falls between two handshakes, never inside one.
	quiet sync.RWMutex

	mu        sync.Mutex // guards the progress counters
	done      int        // recorded attempts so far
	progs     []seriesProgress
	lastPrint time.Time
}

// seriesProgress is one series' state for the ETA.
type seriesProgress struct {
	done     int       // recorded attempts
	hsStart  time.Time // zero until its handshakes start
	hsEnd    time.Time // zero until its handshakes end
	finished bool
}

// seriesResult is what one series produced. Its times bound the whole
// series (link start to capture stored) and its handshake phase (first
// warm-up connection to the last recorded attempt).
type seriesResult struct {
	rows           []netdata.Row
	selfTest       linkemu.SelfTestReport
	linkStats      linkemu.Stats
	capture        captureInfo // SHA256 and the capture's own counts; the join's are filled by Run
	capPath        string      // the capture, in the run folder until Run places it
	capBytes       int64
	start, end     time.Time
	hsStart, hsEnd time.Time
	late           []linkemu.LateEvent       // writes past plan.LateBound (hygiene.go)
	toolchain      string                    // the rows' toolchain column
	tcpStack       map[string]tcpstack.Stack // by side, read when the link was up
}

// runAll runs the series in the estimate's dispatch order, at most
// plan.Parallel at a time. An exclusive series runs only when nothing else
// runs and nothing else while it runs; the transfer block starts when
// every series before it has ended. The first series that fails cancels
// the others (their links close as they return); runAll returns only when
// every series has returned, with that first error.
func (r *runner) runAll(ctx context.Context) ([]seriesResult, error) {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	results := make([]seriesResult, len(r.est.Series))
	slots := make(chan struct{}, r.plan.Parallel)
	var (
		wg       sync.WaitGroup
		errOnce  sync.Once
		firstErr error
	)
	fail := func(err error) {
		errOnce.Do(func() { firstErr = err; cancel(err) })
	}
	run := func(i int) {
		s := r.est.Series[i].Series
		res, err := r.series(ctx, i, s)
		if err != nil {
			fail(fmt.Errorf("series %s: %w", s.ID, err))
			return
		}
		results[i] = res
	}
	acquire := func(n int) int {
		got := 0
		for ; got < n; got++ {
			select {
			case slots <- struct{}{}:
			case <-ctx.Done():
				return got
			}
		}
		return got
	}
	release := func(n int) {
		for range n {
			<-slots
		}
	}
	// held: slots the transfer block may not use, taken at its barrier
	// and given back when it ends (plan.TransferParallel).
	barrier, held := false, 0
dispatch:
	for _, i := range r.est.Order {
		x := r.est.Series[i].Block
		switch {
		case x && !barrier:
			// The transfer block (our extension) starts when every
			// series before it has ended (dispatchOrder), on at most
			// TransferParallel slots.
			barrier = true
			got := acquire(cap(slots))
			if got < cap(slots) {
				release(got)
				break dispatch
			}
			tp := r.plan.TransferParallel
			if tp <= 0 || tp > cap(slots) {
				tp = cap(slots) // 0: parallel_series
			}
			held = cap(slots) - tp
			release(got - held)
		case !x && held > 0:
			release(held)
			held = 0
		}
		if r.est.Series[i].Exclusive {
			want := cap(slots) - held
			got := acquire(want) // every slot: waits for the running ones
			if got < want {
				release(got)
				break dispatch
			}
			run(i)
			release(got)
			continue
		}
		if acquire(1) < 1 {
			break dispatch
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer release(1)
			run(i)
		}()
	}
	wg.Wait()
	if firstErr != nil {
		return nil, firstErr
	}
	if ctx.Err() != nil {
		return nil, context.Cause(ctx)
	}
	return results, nil
}

func (r *runner) groupIndex(name string) int {
	for i, g := range r.plan.Groups {
		if g.String() == name {
			return i
		}
	}
	return len(r.plan.Groups)
}

// progress counts one recorded attempt of series idx, prints done/total
// with an ETA at most every ProgressEvery, and returns the count.
//
// The ETA replays the schedule (schedule, the same as Estimate's) on what
// is left: a running series needs its expected duration times the share of
// its connections still to come, a pending one all of it, a finished one
// nothing; all of it scaled by speed = (handshake time spent so far) /
// (expected time of the attempts done so far), summed over started series.
func (r *runner) progress(idx int) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.done++
	r.progs[idx].done++
	now := time.Now()
	if now.Sub(r.lastPrint) < r.cfg.ProgressEvery {
		return r.done
	}
	r.lastPrint = now
	total := r.est.Handshakes
	elapsed := now.Sub(r.started)
	left := make([]time.Duration, len(r.est.Series))
	series := make([]Series, len(r.est.Series))
	for i, se := range r.est.Series {
		series[i] = se.Series
		if p := r.progs[i]; !p.finished {
			left[i] = time.Duration(float64(se.Expected) * (1 - float64(p.done)/float64(max(1, se.Handshakes()))))
		}
	}
	speed := progressSpeed(r.est.Series, r.progs, now)
	for i := range left {
		left[i] = time.Duration(float64(left[i]) * speed)
	}
	_, _, eta := schedule(series, r.est.Order, left, r.plan.Parallel, r.plan.TransferParallel)
	fmt.Fprintf(r.cfg.Log, "net:run: %d/%d handshakes (%.1f %%), last from %s, elapsed %v, ETA %v (speed %.2f x the model); %s\n",
		r.done, total, 100*float64(r.done)/float64(max(total, 1)), r.est.Series[idx].ID, elapsed.Round(time.Second), eta.Round(time.Second), speed, r.life.MachineLine())
	return r.done
}

// progressSpeed is how much slower than the estimate's model the series
// run so far. It is the sum over started series of the time their handshakes
// took (until now, or until they ended for a finished one) over the sum of
// the model's time for the attempts they recorded, bounded to [0.5, 10];
// 1 before any attempt.
func progressSpeed(series []SeriesEstimate, progs []seriesProgress, now time.Time) float64 {
	var spent, expected float64
	for i, se := range series {
		p := progs[i]
		if p.hsStart.IsZero() || p.done == 0 {
			continue
		}
		end := now
		if p.finished && !p.hsEnd.IsZero() {
			end = p.hsEnd
		}
		spent += float64(end.Sub(p.hsStart))
		expected += float64(p.done) * float64(se.Expected) / float64(max(1, se.Connections))
	}
	if expected == 0 {
		return 1
	}
	return min(max(spent/expected, 0.5), 10)
}

// classify names a network failure of one attempt, or returns "" when the
// error is not one a lossy link explains (a configuration error).
func classify(err error) string {
	var ne net.Error
	var ee *endpointError
	switch {
	case errors.As(err, &ee): // the endpoint classified it the same way
		return ee.class
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, os.ErrDeadlineExceeded):
		return "timeout"
	case errors.As(err, &ne) && ne.Timeout():
		return "timeout"
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE):
		return "reset"
	case errors.Is(err, syscall.ECONNREFUSED):
		return "refused"
	case errors.Is(err, syscall.EHOSTUNREACH), errors.Is(err, syscall.ENETUNREACH):
		return "unreachable"
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return "eof"
	}
	return ""
}
