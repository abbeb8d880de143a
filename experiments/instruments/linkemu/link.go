package linkemu

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Side names one end of the link.
type Side int

const (
	A Side = 0
	B Side = 1
)

func (s Side) String() string {
	switch s {
	case A:
		return "a"
	case B:
		return "b"
	}
	return fmt.Sprintf("Side(%d)", int(s))
}

// Endpoint describes one end of a running link.
type Endpoint struct {
	Namespace string     `json:"namespace"` // iproute2 name; empty if anonymous
	Path      string     `json:"path"`      // bind mount for nsenter/setns; empty if anonymous
	Iface     string     `json:"iface"`     // TUN interface inside the namespace
	Addr      netip.Addr `json:"addr"`      // IPv4 address of Iface
}

// Options are the host-side settings of a link; the zero value is usable.
type Options struct {
	Prefix     string       // namespace name prefix, default "pqr-"
	NetnsDir   string       // where names are mounted, default DefaultNetnsDir
	Anonymous  bool         // no names: namespaces live only as long as the Link
	TunPath    string       // TUN clone device, default DefaultTunPath
	AddrA      netip.Prefix // default 10.77.0.1/24
	AddrB      netip.Prefix // default 10.77.0.2/24
	TxQueueLen int          // of the TUN devices, default 10000 (kernel default 500)
	// NoRealtime keeps the forwarder's threads at normal priority. By
	// default they ask for SCHED_FIFO priority 10 (sched(7)) so that other
	// processes on a busy machine cannot hold a packet past its due time;
	// without CAP_SYS_NICE the request fails and they run at normal
	// priority (Stats.Realtime says which).
	NoRealtime bool
	// KeepGOMAXPROCS stops StartWith from raising runtime.GOMAXPROCS to
	// MinProcs. The forwarder's threads need a Go P each time they wake; on
	// a machine busier than its cores, a P held by a preempted
	// normal-priority thread holds a due packet back by a whole scheduler
	// time slice (measured: forwarder lateness p99 14 ms with 2 Ps, 0.3 ms
	// with 8, at load 7 on 2 cores). Idle Ps cost nothing.
	KeepGOMAXPROCS bool
	// InFlight is the capacity, in packets, of each direction's queue between
	// the reader and the timed writer (packets already accepted by the
	// Shaper and waiting for their due time). Default 16384; a packet that
	// does not fit is dropped and counted in DirStats.DropOverflow.
	InFlight int
	// LateBound, when positive, makes each direction keep every packet it
	// writes more than LateBound after the packet's due time (the emulator's
	// own delay beyond the scenario, from a stalled writer thread), with
	// its flow and times: Link.LateEvents. Zero keeps none (the lateness
	// histogram in Stats is kept either way).
	LateBound time.Duration
}

// MinProcs is the GOMAXPROCS StartWith raises the process to (see
// Options.KeepGOMAXPROCS).
const MinProcs = 8

// DefaultPrefix starts the name of every namespace the emulator creates.
const DefaultPrefix = "pqr-"

func (o *Options) fill() error {
	if o.Prefix == "" {
		o.Prefix = DefaultPrefix
	}
	if err := validPrefix(o.Prefix); err != nil {
		return err
	}
	if o.NetnsDir == "" {
		o.NetnsDir = DefaultNetnsDir
	}
	if o.TunPath == "" {
		o.TunPath = DefaultTunPath
	}
	if !o.AddrA.IsValid() {
		o.AddrA = netip.MustParsePrefix("10.77.0.1/24")
	}
	if !o.AddrB.IsValid() {
		o.AddrB = netip.MustParsePrefix("10.77.0.2/24")
	}
	if !o.AddrA.Addr().Is4() || !o.AddrB.Addr().Is4() || o.AddrA.Masked() != o.AddrB.Masked() ||
		o.AddrA.Addr() == o.AddrB.Addr() || o.AddrA.Bits() > 30 {
		return fmt.Errorf("link addresses %v and %v: want two different IPv4 addresses in one subnet of at most /30", o.AddrA, o.AddrB)
	}
	if o.TxQueueLen == 0 {
		o.TxQueueLen = 10000
	}
	if o.TxQueueLen < 0 {
		return fmt.Errorf("negative TxQueueLen %d", o.TxQueueLen)
	}
	if o.InFlight == 0 {
		o.InFlight = 16384
	}
	if o.InFlight < 0 {
		return fmt.Errorf("negative InFlight %d", o.InFlight)
	}
	if o.LateBound < 0 {
		return fmt.Errorf("negative LateBound %v", o.LateBound)
	}
	return nil
}

// ErrClosed is returned by methods of a link that has stopped.
var ErrClosed = errors.New("link emulator stopped")

// Link is a running emulated link. Its methods are safe for concurrent use.
type Link struct {
	sc   Scenario
	opts Options
	ends [2]Endpoint
	ns   [2]*netns
	tun  [2]int // TUN descriptors, -1 when closed
	fwd  [2]*forwarder

	stopping  atomic.Bool
	done      chan struct{}
	closeOnce sync.Once
	closeErr  error

	mu   sync.Mutex
	err  error // why the link stopped on its own
	cmds []*exec.Cmd

	nsMu sync.RWMutex // RunIn holds it shared so teardown cannot close a namespace fd in use
}

var linkSeq atomic.Uint64

// Start creates the two namespaces and TUN devices and starts forwarding
// for sc with default Options. See StartWith.
func Start(ctx context.Context, sc Scenario) (*Link, error) {
	return StartWith(ctx, sc, Options{})
}

// StartWith starts a link of scenario sc with options opts.
//
// It validates sc and opts (nothing is created when they are invalid),
// checks that the TUN device can be opened, creates namespaces
// "<prefix><pid>-<n>-a" and "-b" with one TUN device each, and starts the
// forwarder. When ctx is cancelled the link shuts down, removes everything
// and Err reports ctx's error. On any error nothing is left behind.
func StartWith(ctx context.Context, sc Scenario, opts Options) (_ *Link, err error) {
	if err := sc.Validate(); err != nil {
		return nil, err
	}
	if err := opts.fill(); err != nil {
		return nil, fmt.Errorf("link options: %w", err)
	}
	if sc.MTU == 0 {
		sc.MTU = DefaultMTU
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("start link: %w", err)
	}
	if err := checkTunAccess(opts.TunPath); err != nil {
		return nil, fmt.Errorf("link emulator cannot run here: %w", err)
	}
	if !opts.KeepGOMAXPROCS && runtime.GOMAXPROCS(0) < MinProcs {
		runtime.GOMAXPROCS(MinProcs)
	}
	l := &Link{sc: sc, opts: opts, done: make(chan struct{}), tun: [2]int{-1, -1}}
	base := fmt.Sprintf("%s%d-%d", opts.Prefix, os.Getpid(), linkSeq.Add(1))
	defer func() {
		if err != nil {
			l.teardown()
			close(l.done)
		}
	}()
	dir := opts.NetnsDir
	if opts.Anonymous {
		dir = ""
	}
	for i, addr := range []netip.Prefix{opts.AddrA, opts.AddrB} {
		side := Side(i)
		name := base + "-" + side.String()
		tun := -1
		var iface string
		ns, err := newNetns(dir, name, func() error {
			var err error
			tun, iface, err = createTun(tunConfig{path: opts.TunPath, name: "pqr-tun", mtu: sc.MTU, txqlen: opts.TxQueueLen, addr: addr})
			return err
		})
		if ns != nil {
			l.ns[i] = ns
		}
		if err != nil {
			return nil, fmt.Errorf("start link %s: %w", base, err)
		}
		l.tun[i] = tun
		l.ends[i] = Endpoint{Path: ns.path, Iface: iface, Addr: addr.Addr()}
		if !opts.Anonymous {
			l.ends[i].Namespace = name
		}
	}
	epoch := time.Now()
	for i, d := range []Direction{sc.AtoB, sc.BtoA} {
		f, err := newForwarder(l, i, l.tun[i], l.tun[1-i], NewShaper(d, sc.Seed, uint64(i)), sc.MTU, opts.InFlight, epoch)
		if err != nil {
			for _, g := range l.fwd {
				if g != nil {
					g.stop()
					g.wait()
				}
			}
			return nil, fmt.Errorf("start link %s: %w", base, err)
		}
		l.fwd[i] = f
	}
	for _, f := range l.fwd {
		f.start()
	}
	go func() {
		select {
		case <-ctx.Done():
			l.fail(fmt.Errorf("link %s: %w", base, context.Cause(ctx)))
		case <-l.done:
		}
	}()
	return l, nil
}

// fail records why the link stopped (the first reason wins) and shuts it
// down in the background; Done is closed when everything is removed.
func (l *Link) fail(err error) {
	l.mu.Lock()
	if l.err == nil && !l.stopping.Load() {
		l.err = err
	}
	l.mu.Unlock()
	go l.Close()
}

// Err returns nil while the link runs and after a Close by its owner, and
// the reason otherwise. That is, the forwarder's I/O error or the
// context's error.
func (l *Link) Err() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.err
}

// Done is closed when the link has stopped and its namespaces are removed.
func (l *Link) Done() <-chan struct{} { return l.done }

// Scenario returns the scenario the link runs (MTU filled in).
func (l *Link) Scenario() Scenario { return l.sc }

// Endpoint returns the description of one side.
func (l *Link) Endpoint(s Side) Endpoint { return l.ends[s&1] }

// Close stops forwarding, kills processes started with StartCmd, closes the
// TUN devices (which removes them) and removes both namespaces. It waits
// until all of that is done and is safe to call more than once.
func (l *Link) Close() error {
	l.closeOnce.Do(func() {
		l.closeErr = l.teardown()
		close(l.done)
	})
	<-l.done
	return l.closeErr
}

func (l *Link) teardown() error {
	l.stopping.Store(true)
	var errs []error
	l.mu.Lock()
	cmds := l.cmds
	l.cmds = nil
	l.mu.Unlock()
	for _, c := range cmds {
		if c.Process != nil && c.ProcessState == nil {
			c.Process.Signal(syscall.SIGKILL)
		}
	}
	for _, f := range l.fwd {
		if f != nil {
			f.stop()
		}
	}
	for _, f := range l.fwd {
		if f != nil {
			f.wait()
		}
	}
	for i, fd := range l.tun {
		if fd >= 0 {
			unix.Close(fd)
			l.tun[i] = -1
		}
	}
	l.nsMu.Lock()
	defer l.nsMu.Unlock()
	for i, ns := range l.ns {
		if ns != nil {
			if err := ns.remove(); err != nil {
				errs = append(errs, err)
			}
			l.ns[i] = nil
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("remove link namespaces: %w (run 'pqrepro linkemu clean')", errors.Join(errs...))
	}
	return nil
}

// RunIn runs fn on an OS thread inside side's namespace and waits for it.
// Sockets fn creates (net.Listen, net.Dial, net.ListenPacket) belong to that
// namespace for their whole life, so fn typically just opens them and the
// caller uses them from any goroutine. fn must not start goroutines that
// expect to be in the namespace: they are not.
func (l *Link) RunIn(side Side, fn func() error) error {
	l.nsMu.RLock()
	defer l.nsMu.RUnlock()
	if l.stopping.Load() || l.ns[side&1] == nil {
		if err := l.Err(); err != nil {
			return fmt.Errorf("%w: %w", ErrClosed, err)
		}
		return ErrClosed
	}
	return inNetns(l.ns[side&1].fd, fn)
}

// StartCmd starts cmd (see os/exec) inside side's namespace: the child is
// forked from a thread that is in the namespace, so it inherits it. Close
// kills it if it is still running; the caller should Wait for it.
func (l *Link) StartCmd(side Side, cmd *exec.Cmd) error {
	if err := l.RunIn(side, cmd.Start); err != nil {
		return fmt.Errorf("start %s in namespace %s: %w", cmd.Path, side, err)
	}
	l.mu.Lock()
	l.cmds = append(l.cmds, cmd)
	l.mu.Unlock()
	return nil
}
