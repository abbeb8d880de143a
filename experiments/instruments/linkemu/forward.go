package linkemu

import (
	"errors"
	"fmt"
	"math"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"
)

// Lateness histogram: write time minus due time, in lateBucket steps.
const (
	lateBucket  = 10 * time.Microsecond
	lateBuckets = 2000 // up to 20 ms; later packets land in the last bucket
)

// dirCounters are one direction's live counters (atomics: Stats reads them
// while the forwarder runs).
type dirCounters struct {
	rxPackets, rxBytes         atomic.Uint64
	txPackets, txBytes         atomic.Uint64
	dropLoss, dropQueue, dropQ atomic.Uint64
	late                       [lateBuckets]atomic.Uint64
	lateMax                    atomic.Int64
	lateEvents, lateDropped    atomic.Uint64 // writes past Options.LateBound: kept, and beyond MaxLateEvents
}

type packet struct {
	buf *[]byte
	n   int
	due time.Duration // since epoch
}

// forwarder moves packets of one direction with two goroutines, each locked to
// its own OS thread (and, when allowed, at SCHED_FIFO priority). They are a
// reader (poll src TUN -> read -> Shaper -> queue) and a writer that waits for
// each packet's due time on a timerfd and writes it to dst. Both also poll an
// eventfd that stop signals; the TUN descriptors are closed only after both
// have returned.
type forwarder struct {
	l        *Link
	dir      int
	src, dst int
	shaper   *Shaper
	queue    chan packet
	pool     sync.Pool
	epoch    time.Time
	epochMon int64 // CLOCK_MONOTONIC ns at epoch
	tfd, efd int   // timerfd, and eventfd that wakes both loops to stop
	realtime bool
	rtOK     atomic.Int32 // threads that got SCHED_FIFO
	c        dirCounters
	wg       sync.WaitGroup
	// lateBound and lateEvents: writes later than lateBound past their due
	// time are kept (Options.LateBound); only the writer appends.
	lateBound  time.Duration
	lateEvents []LateEvent
}

func newForwarder(l *Link, dir int, src, dst int, sh *Shaper, mtu, inflight int, epoch time.Time) (*forwarder, error) {
	f := &forwarder{l: l, dir: dir, src: src, dst: dst, shaper: sh, queue: make(chan packet, inflight), epoch: epoch,
		tfd: -1, efd: -1, realtime: !l.opts.NoRealtime, lateBound: l.opts.LateBound}
	f.pool.New = func() any { b := make([]byte, mtu); return &b }
	var err error
	if f.tfd, err = unix.TimerfdCreate(unix.CLOCK_MONOTONIC, unix.TFD_CLOEXEC); err != nil {
		return nil, fmt.Errorf("timerfd_create: %w", err)
	}
	if f.efd, err = unix.Eventfd(0, unix.EFD_CLOEXEC|unix.EFD_NONBLOCK); err != nil {
		unix.Close(f.tfd)
		return nil, fmt.Errorf("eventfd: %w", err)
	}
	f.epochMon = monotonicEpoch(epoch)
	return f, nil
}

// testHookClockPair, when set, runs inside monotonicEpoch's bracket, just
// before the CLOCK_MONOTONIC reading (step 0) and just after it (step 1):
// tests preempt the reader there.
var testHookClockPair func(step int)

// monotonicEpoch maps epoch onto CLOCK_MONOTONIC, the clock of the
// timerfd, so that epochMon + due is a packet's due time there. Go's
// monotonic reading is the same clock, but the two readings cannot be
// taken at one instant: a goroutine preempted between them (a busy
// machine) would shift every due time of the link by the preemption, and
// reading Go's clock after CLOCK_MONOTONIC shifts it early, so that every
// packet leaves early by the same amount (a CI run under load measured
// 2.7 ms early on a 10 ms link). So the CLOCK_MONOTONIC reading ts is
// bracketed by two readings of time.Since(epoch), m1 <= e <= m2, where e
// is the time since epoch at the instant of ts, and the result is
// ts - m1 >= ts - e: due times are late by at most m2 - m1, never early.
// Of five brackets the narrowest is kept; on an idle machine it is under
// a microsecond wide.
func monotonicEpoch(epoch time.Time) int64 {
	best, width := int64(0), time.Duration(math.MaxInt64)
	for range 5 {
		m1 := time.Since(epoch)
		if testHookClockPair != nil {
			testHookClockPair(0)
		}
		var ts unix.Timespec
		unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts)
		if testHookClockPair != nil {
			testHookClockPair(1)
		}
		m2 := time.Since(epoch)
		if w := m2 - m1; w < width {
			best, width = ts.Nano()-int64(m1), w
		}
		if width < 20*time.Microsecond {
			break
		}
	}
	return best
}

func (f *forwarder) name() string {
	if f.dir == 0 {
		return "a->b"
	}
	return "b->a"
}

func (f *forwarder) start() {
	f.wg.Add(2)
	go f.read()
	go f.write()
}

// stop wakes both loops; they return and wait then releases the fds.
func (f *forwarder) stop() {
	var one = [8]byte{1}
	unix.Write(f.efd, one[:])
}

func (f *forwarder) wait() {
	f.wg.Wait()
	unix.Close(f.tfd)
	unix.Close(f.efd)
}

func (f *forwarder) die(err error) {
	if f.l.stopping.Load() {
		return
	}
	f.l.fail(fmt.Errorf("link forwarder %s died: %w", f.name(), err))
}

// lockThread pins the goroutine to its thread for good and asks for
// SCHED_FIFO. The thread is destroyed when the goroutine ends, so a raised
// priority never leaks to other goroutines.
func (f *forwarder) lockThread() {
	runtime.LockOSThread()
	if f.realtime {
		if err := unix.SchedSetAttr(0, &unix.SchedAttr{Policy: unix.SCHED_FIFO, Priority: 10}, 0); err == nil {
			f.rtOK.Add(1)
		}
	}
}

// errStop is returned by waitFor when stop was signalled.
var errStop = errors.New("stopping")

// waitFor blocks in poll(2) until fd is readable or stop is signalled.
func (f *forwarder) waitFor(fd int) error {
	fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}, {Fd: int32(f.efd), Events: unix.POLLIN}}
	for {
		_, err := unix.Poll(fds, -1)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return fmt.Errorf("poll: %w", err)
		}
		if fds[1].Revents != 0 {
			return errStop
		}
		if fds[0].Revents&(unix.POLLERR|unix.POLLHUP|unix.POLLNVAL) != 0 {
			return fmt.Errorf("poll: device error (revents %#x)", fds[0].Revents)
		}
		if fds[0].Revents != 0 {
			return nil
		}
	}
}

func (f *forwarder) read() {
	defer f.wg.Done()
	defer close(f.queue) // no more sends: the writer drains and exits
	f.lockThread()
	defer func() {
		if p := recover(); p != nil {
			f.die(fmt.Errorf("panic in reader: %v", p))
		}
	}()
	for {
		bp := f.pool.Get().(*[]byte)
		n, err := unix.Read(f.src, *bp)
		if errors.Is(err, unix.EAGAIN) || errors.Is(err, unix.EINTR) {
			f.pool.Put(bp)
			if err := f.waitFor(f.src); err != nil {
				if err != errStop {
					f.die(fmt.Errorf("read TUN: %w", err))
				}
				return
			}
			continue
		}
		if err != nil || n <= 0 {
			f.pool.Put(bp)
			f.die(fmt.Errorf("read TUN: %d, %w", n, err))
			return
		}
		now := time.Since(f.epoch)
		f.c.rxPackets.Add(1)
		f.c.rxBytes.Add(uint64(n))
		v, due := f.shaper.Offer(now, n)
		switch v {
		case DropLoss:
			f.c.dropLoss.Add(1)
			f.pool.Put(bp)
			continue
		case DropQueue:
			f.c.dropQueue.Add(1)
			f.pool.Put(bp)
			continue
		}
		select {
		case f.queue <- packet{buf: bp, n: n, due: due}:
		default:
			f.c.dropQ.Add(1)
			f.pool.Put(bp)
		}
	}
}

func (f *forwarder) write() {
	defer f.wg.Done()
	f.lockThread()
	defer func() {
		if p := recover(); p != nil {
			f.die(fmt.Errorf("panic in writer: %v", p))
		}
	}()
	stopped := false
	for p := range f.queue {
		if stopped || f.l.stopping.Load() {
			f.pool.Put(p.buf)
			continue // drain until the reader closes the queue
		}
		if err := f.sleepUntil(p.due); err != nil {
			f.pool.Put(p.buf)
			stopped = true
			if err != errStop {
				f.die(err)
			}
			continue
		}
		if testHookBeforeWrite != nil {
			testHookBeforeWrite(f.dir, (*p.buf)[:p.n])
		}
		_, err := unix.Write(f.dst, (*p.buf)[:p.n])
		late := time.Since(f.epoch) - p.due
		if f.lateBound > 0 && late > f.lateBound && err == nil {
			f.recordLate((*p.buf)[:p.n], p.due, late)
		}
		f.pool.Put(p.buf)
		if err != nil {
			if errors.Is(err, unix.EAGAIN) || errors.Is(err, unix.ENOBUFS) {
				f.c.dropQ.Add(1) // the receiving kernel queue is full: a drop, not a death
				continue
			}
			stopped = true
			f.die(fmt.Errorf("write TUN: %w", err))
			continue
		}
		f.c.txPackets.Add(1)
		f.c.txBytes.Add(uint64(p.n))
		b := int(late / lateBucket)
		b = min(max(b, 0), lateBuckets-1)
		f.c.late[b].Add(1)
		if int64(late) > f.c.lateMax.Load() {
			f.c.lateMax.Store(int64(late))
		}
	}
}

// sleepUntil blocks until due (since epoch) on the timerfd, or until stop.
func (f *forwarder) sleepUntil(due time.Duration) error {
	if due <= time.Since(f.epoch) {
		return nil
	}
	spec := unix.ItimerSpec{Value: unix.NsecToTimespec(f.epochMon + int64(due))}
	if err := unix.TimerfdSettime(f.tfd, unix.TFD_TIMER_ABSTIME, &spec, nil); err != nil {
		return fmt.Errorf("timerfd_settime: %w", err)
	}
	if err := f.waitFor(f.tfd); err != nil {
		return err
	}
	var buf [8]byte
	unix.Read(f.tfd, buf[:]) // consume the expiration count
	return nil
}

// DirStats are one direction's counters.
type DirStats struct {
	RxPackets    uint64 `json:"rx_packets"` // read from the source TUN
	RxBytes      uint64 `json:"rx_bytes"`
	TxPackets    uint64 `json:"tx_packets"` // written to the destination TUN
	TxBytes      uint64 `json:"tx_bytes"`
	DropLoss     uint64 `json:"drop_loss"`     // random loss
	DropQueue    uint64 `json:"drop_queue"`    // drop-tail queue full
	DropOverflow uint64 `json:"drop_overflow"` // forwarder's in-flight queue full (should be 0)
	// Lateness of writes behind their due time: the emulator's own timing
	// error (10 µs resolution; values above 20 ms are counted as 20 ms).
	LateP50 time.Duration `json:"late_p50_ns"`
	LateP99 time.Duration `json:"late_p99_ns"`
	LateMax time.Duration `json:"late_max_ns"`
	// LateEvents counts the writes later than Options.LateBound past their
	// due time that Link.LateEvents returns; LateDropped those beyond
	// MaxLateEvents, counted but not kept. Both 0 without a bound.
	LateEvents  uint64 `json:"late_events,omitempty"`
	LateDropped uint64 `json:"late_events_dropped,omitempty"`
	// Realtime says whether both of this direction's threads run at
	// SCHED_FIFO (see Options.NoRealtime).
	Realtime bool `json:"realtime"`
}

// Stats are both directions' counters.
type Stats struct {
	AtoB DirStats `json:"a_to_b"`
	BtoA DirStats `json:"b_to_a"`
}

// Stats returns a snapshot of the counters. Packets in flight are counted
// in Rx but not yet in Tx or a drop counter.
func (l *Link) Stats() Stats {
	var s Stats
	for i, d := range []*DirStats{&s.AtoB, &s.BtoA} {
		f := l.fwd[i]
		if f == nil {
			continue
		}
		c := &f.c
		*d = DirStats{
			RxPackets: c.rxPackets.Load(), RxBytes: c.rxBytes.Load(),
			TxPackets: c.txPackets.Load(), TxBytes: c.txBytes.Load(),
			DropLoss: c.dropLoss.Load(), DropQueue: c.dropQueue.Load(), DropOverflow: c.dropQ.Load(),
			LateMax:    time.Duration(c.lateMax.Load()),
			LateEvents: c.lateEvents.Load(), LateDropped: c.lateDropped.Load(),
			Realtime: f.rtOK.Load() == 2,
		}
		var hist [lateBuckets]uint64
		var total uint64
		for b := range hist {
			hist[b] = c.late[b].Load()
			total += hist[b]
		}
		d.LateP50 = histQuantile(hist[:], total, 0.50)
		d.LateP99 = histQuantile(hist[:], total, 0.99)
	}
	return s
}

// histQuantile returns the upper edge of the bucket holding the q-quantile.
func histQuantile(hist []uint64, total uint64, q float64) time.Duration {
	if total == 0 {
		return 0
	}
	rank := uint64(q*float64(total-1)) + 1
	var cum uint64
	for b, n := range hist {
		cum += n
		if cum >= rank {
			return time.Duration(b+1) * lateBucket
		}
	}
	return time.Duration(len(hist)) * lateBucket
}
