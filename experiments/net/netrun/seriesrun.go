package netrun

import (
	"cmp"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"time"

	"pqrepro/datasets/netdata"
	"pqrepro/experiments/instruments/capture"
	"pqrepro/experiments/instruments/handshake"
	"pqrepro/experiments/instruments/linkemu"
	"pqrepro/experiments/instruments/netns"
	"pqrepro/experiments/instruments/tcpns"
	"pqrepro/internal/repro"
	"pqrepro/internal/tcpstack"
)

// series runs one series on a link of its own. It starts and self-tests the
// link (alone, see runner.quiet), servers in B, a capture on A's TUN
// device, the warm-up and the recorded attempts, then join the capture and
// store it. Everything it created is removed when it returns. Each step is
// a method of seriesRun below.
func (r *runner) series(ctx context.Context, idx int, s Series) (res seriesResult, err error) {
	res.start = time.Now()
	scCtx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	linkCtx, killLink := context.WithCancelCause(scCtx)
	defer killLink(nil)
	sr := &seriesRun{r: r, idx: idx, s: s, ctx: scCtx, kill: killLink, ep: r.eps[s.Toolchain]}
	fmt.Fprintf(r.cfg.Log, "net:run: [%d/%d] %s: starting its link (seed %d) and the self-test\n", idx+1, len(r.est.Series), s.ID, s.Link.Seed)
	if res.selfTest, err = sr.setUpLink(linkCtx); err != nil {
		return res, err
	}
	defer sr.link.Close()
	// A link that stops by itself (the forwarder died) ends the series,
	// and through runAll the run.
	defer watchLink(sr.link, cancel)()
	defer sr.close()
	if res.tcpStack, err = sr.readTCPStack(); err != nil {
		return res, err
	}
	if err := sr.startServers(); err != nil {
		return res, err
	}
	if err := sr.startCapture(); err != nil {
		return res, err
	}
	if err := sr.startClients(); err != nil {
		return res, err
	}
	res.hsStart = time.Now()
	r.mu.Lock()
	r.progs[idx].hsStart = res.hsStart
	r.mu.Unlock()
	order := r.plan.Order
	if s.Block {
		order = r.plan.transferOrder()
	}
	steps := seriesSteps(order, s.Groups, s.Round, r.plan.Warmup, r.spec.Seeds.Order, s.Link.Seed)
	if err := sr.measure(steps); err != nil {
		return res, err
	}
	res.hsEnd = time.Now()
	if err := sr.finish(&res); err != nil {
		return res, err
	}
	res.end = time.Now()
	r.mu.Lock()
	r.progs[idx].finished, r.progs[idx].hsEnd = true, res.hsEnd
	r.mu.Unlock()
	fmt.Fprintf(r.cfg.Log, "net:run: [%d/%d] %s: done, %d handshakes in %v (minimum %v)\n",
		idx+1, len(r.est.Series), s.ID, len(res.rows), res.hsEnd.Sub(res.hsStart).Round(time.Millisecond), r.est.Series[idx].Minimum.Round(time.Millisecond))
	return res, nil
}

// seriesRun is the state of one series while it runs. Its fields are set
// by the steps in order (setUpLink, startServers, startCapture,
// startClients, measure, finish), and close removes whatever they set up.
type seriesRun struct {
	r    *runner
	idx  int
	s    Series
	ctx  context.Context // the series' context: cancelled with the run, or when the link dies
	kill func(error)     // stops the link as if its forwarder had died (tests)
	ep   *Endpoint       // nil: the handshakes run in process

	link *linkemu.Link
	th   *netns.Thread // the client thread in namespace A
	slog *serverLog

	epSrv   *epServer // the endpoint's server process in B
	lns     []net.Listener
	stopSrv context.CancelFunc // the in-process servers
	srvWG   sync.WaitGroup
	srvErrs []error

	capPath     string
	capt        *capture.Capture
	capStopped  bool
	keepCapture bool

	epCli     *epClient
	clients   []*handshake.Client // in-process clients by group index
	toolchain string

	rows []netdata.Row // recorded attempts, time order
}

// setUpLink starts the series' link and self-tests it (selfTestTwice),
// holding runner.quiet so that no other series' handshake runs meanwhile.
func (sr *seriesRun) setUpLink(ctx context.Context) (linkemu.SelfTestReport, error) {
	r, s := sr.r, sr.s
	stc := linkemu.SelfTestConfig{Probes: r.spec.SelfTest.Probes, Tolerance: msDur(r.spec.SelfTest.ToleranceMs)}
	link, rep, err := selfTestTwice(func() (*linkemu.Link, linkemu.SelfTestReport, error) {
		r.quiet.Lock()
		defer r.quiet.Unlock()
		return linkemu.StartVerified(ctx, s.Link, r.linkOptions(), stc)
	}, func() bool { return ctx.Err() != nil }, func(err error) {
		fmt.Fprintf(r.cfg.Log, "net:run: [%d/%d] %s: the self-test missed (%v); testing a fresh link once more\n", sr.idx+1, len(r.est.Series), s.ID, err)
	})
	if err != nil {
		return rep, err
	}
	sr.link = link
	fmt.Fprintf(r.cfg.Log, "net:run: [%d/%d] %s: self-test RTT p50 %.3f ms (expected %.3f, error %+.3f ms), loss %.3f\n",
		sr.idx+1, len(r.est.Series), s.ID, rep.P50Ms, rep.ExpectedRTTms, rep.ErrorP50Ms, rep.Loss)
	return rep, nil
}

// selfTestTwice starts a link and its self-test, once more when it misses.
// When the self-test misses the delay (a linkemu.AccuracyError) and stopped
// is false, it tells missed and calls it once more: one stall of the machine
// during the probes should not end a run, a link that is wrong twice
// should. Any other error is returned at once.
func selfTestTwice[L any](start func() (L, linkemu.SelfTestReport, error), stopped func() bool, missed func(error)) (L, linkemu.SelfTestReport, error) {
	for attempt := 1; ; attempt++ {
		link, rep, err := start()
		var ae *linkemu.AccuracyError
		if err == nil || !errors.As(err, &ae) {
			return link, rep, err
		}
		if attempt == 2 || stopped() {
			return link, rep, fmt.Errorf("the link self-test failed twice, so the run does not start: %w", err)
		}
		missed(err)
	}
}

// watchLink cancels the series with the link's error when the link stops
// by itself; the returned function ends the watch.
func watchLink(link *linkemu.Link, cancel context.CancelCauseFunc) (stop func()) {
	watchStop := make(chan struct{})
	go func() {
		select {
		case <-link.Done():
			if lerr := link.Err(); lerr != nil {
				cancel(fmt.Errorf("the link emulator stopped mid-run: %w", lerr))
			}
		case <-watchStop:
		}
	}()
	return func() { close(watchStop) }
}

// readTCPStack reads the TCP stack of both namespaces of the series' link,
// by side ("a" the client's, "b" the server's), for meta.json's
// measured.tcp_stack.
func (sr *seriesRun) readTCPStack() (map[string]tcpstack.Stack, error) {
	st := map[string]tcpstack.Stack{}
	for _, side := range []linkemu.Side{linkemu.A, linkemu.B} {
		ep := sr.link.Endpoint(side)
		s, err := tcpns.Read(func(fn func() error) error { return sr.link.RunIn(side, fn) }, []string{ep.Iface})
		if err != nil {
			return nil, fmt.Errorf("%s in %s: %w", sr.s.ID, ep.Namespace, err)
		}
		st[side.String()] = s
	}
	return st, nil
}

// port is the address of the server for the group of index gi in the
// spec. It is port + gi on B's address (the same address as in a serial run).
func (sr *seriesRun) port(gi int) string {
	return net.JoinHostPort(sr.link.Endpoint(linkemu.B).Addr.String(), strconv.Itoa(sr.r.spec.Port+gi))
}

// startServers starts the client thread in A and the servers in B, one per
// group of the series. A server is the endpoint's server process (a child
// is in the network namespace of the thread that forks it) or in-process
// handshake.Servers.
func (sr *seriesRun) startServers() error {
	r, s := sr.r, sr.s
	epA, epB := sr.link.Endpoint(linkemu.A), sr.link.Endpoint(linkemu.B)
	th, err := netns.NewThread(epA.Path)
	if err != nil {
		return fmt.Errorf("client thread in %s: %w", epA.Namespace, err)
	}
	sr.th = th
	sr.slog = &serverLog{recs: map[string][]handshake.ServerRecord{}}
	if sr.ep != nil && r.rem == nil {
		var listen []string
		for _, gi := range s.Groups {
			listen = append(listen, r.plan.armListen(sr.port(gi), gi))
		}
		inB := func(fn func()) { sr.link.RunIn(linkemu.B, func() error { fn(); return nil }) }
		if sr.epSrv, err = startEndpointServer(sr.ctx, sr.ep, r.pem.cert, r.pem.key, r.plan.Timeout, s.CC, listen, inB, sr.slog.add); err != nil {
			return fmt.Errorf("%s in %s: %w", s.ID, epB.Namespace, err)
		}
		return nil
	}
	lns := make([]net.Listener, len(s.Groups))
	err = sr.link.RunIn(linkemu.B, func() error {
		for k, gi := range s.Groups {
			ln, err := net.Listen("tcp", sr.port(gi))
			if err != nil {
				return fmt.Errorf("listen %s in %s: %w", sr.port(gi), epB.Namespace, err)
			}
			lns[k] = ln
		}
		return nil
	})
	if err != nil {
		for _, ln := range lns {
			if ln != nil {
				ln.Close()
			}
		}
		return err
	}
	srvCtx, stopSrv := context.WithCancel(context.Background())
	sr.lns, sr.stopSrv, sr.srvErrs = lns, stopSrv, make([]error, len(lns))
	for k, gi := range s.Groups {
		if r.rem != nil { // B relays to the remote host's server of the group
			sr.srvWG.Add(1)
			go func() { defer sr.srvWG.Done(); sr.srvErrs[k] = r.rem.relay(srvCtx, lns[k], gi, sr.slog) }()
			continue
		}
		g := r.plan.Groups[gi]
		exp := handshake.Expect{Group: g, Key: r.plan.CertKey, Chain: r.spec.CertChain}
		srv := &handshake.Server{TLS: handshake.ServerTLSConfig(r.bundle, g, nil), Expect: exp, Timeout: r.plan.Timeout}
		sr.srvWG.Add(1)
		go func() { defer sr.srvWG.Done(); sr.srvErrs[k] = srv.Serve(srvCtx, lns[k], sr.slog.add) }()
	}
	return nil
}

// startCapture captures on A's TUN device for the whole series. On TUN
// every packet is seen once, so the loopback outgoing filter must be off.
// The file is hidden until Run places it (committed gzip'd or in the
// store); a failed series removes it, a failed run the run folder.
func (sr *seriesRun) startCapture() error {
	sr.capPath = filepath.Join(sr.r.dir, ".capture-"+sr.s.ID+".pcapng")
	var err error
	off := false
	sr.th.Do(func() {
		sr.capt, err = capture.Start(sr.ctx, capture.Options{Interface: sr.link.Endpoint(linkemu.A).Iface, Path: sr.capPath, DropOutgoing: &off})
	})
	return err
}

// startClients makes the series' clients in A, which log their keys into
// the capture: the endpoint's client process, or one in-process
// handshake.Client per group.
func (sr *seriesRun) startClients() error {
	r, s := sr.r, sr.s
	sr.toolchain = runtime.Version()
	if sr.ep != nil {
		var err error
		if sr.epCli, err = startEndpointClient(sr.ep, r.pem.roots, r.plan.Timeout, s.CC, sr.capt.KeyLog(), sr.th.Do); err != nil {
			return fmt.Errorf("%s in %s: %w", s.ID, sr.link.Endpoint(linkemu.A).Namespace, err)
		}
		sr.toolchain = sr.ep.GoVersion
		return nil
	}
	sr.clients = make([]*handshake.Client, len(r.plan.Groups))
	for _, gi := range s.Groups {
		g := r.plan.Groups[gi]
		exp := handshake.Expect{Group: g, Key: r.plan.CertKey, Chain: r.spec.CertChain}
		sr.clients[gi] = &handshake.Client{TLS: handshake.ClientTLSConfig(r.bundle.Roots, "localhost", []tls.CurveID{g}, sr.capt.KeyLog()), Expect: exp, Timeout: r.plan.Timeout}
	}
	return nil
}

// finish stops the servers and the capture, checks the series and keeps its
// results. It checks that nothing failed on the way (a dead link first: it
// is the cause of whatever else failed after it, server reads or the
// capture's "network is down"), then records the link's counters, closes
// the link, keeps the capture (its SHA-256 and size in res) and puts the
// rows in record order.
func (sr *seriesRun) finish(res *seriesResult) error {
	link := sr.link
	if sr.stopSrv != nil {
		sr.stopSrv()
	}
	sr.srvWG.Wait()
	if sr.epSrv != nil {
		err := sr.epSrv.close()
		sr.epSrv = nil
		if err != nil && link.Err() == nil {
			return fmt.Errorf("endpoint server: %w", err)
		}
	}
	if lerr := link.Err(); lerr != nil {
		return fmt.Errorf("the link emulator stopped mid-run: %w", lerr)
	}
	for k, e := range sr.srvErrs {
		if e != nil {
			return fmt.Errorf("server for %s: %w", sr.r.plan.Groups[sr.s.Groups[k]], e)
		}
	}
	if err := sr.slog.err(); err != nil {
		return err
	}
	sr.capStopped = true
	cst, err := sr.capt.Stop()
	if lerr := link.Err(); lerr != nil {
		return fmt.Errorf("the link emulator stopped mid-run: %w", lerr)
	}
	if err != nil {
		return err
	}
	if err := cst.Valid(); err != nil {
		return err
	}
	if err := context.Cause(sr.ctx); sr.ctx.Err() != nil {
		return err
	}
	res.linkStats = link.Stats()
	if err := link.Close(); err != nil {
		return err
	}
	res.late, res.toolchain = link.LateEvents(), sr.toolchain
	sum, err := repro.HashFile(sr.capPath)
	if err != nil {
		return fmt.Errorf("hash the capture: %w", err)
	}
	fi, err := os.Stat(sr.capPath)
	if err != nil {
		return err
	}
	sr.keepCapture = true
	res.capPath, res.capBytes = sr.capPath, fi.Size()
	res.capture = captureInfo{SHA256: sum, Packets: cst.Packets, KernelSeen: cst.KernelSeen, KernelDrops: cst.KernelDrops, Truncated: cst.Truncated}
	res.rows = sortRows(sr.rows, sr.r.groupIndex)
	return nil
}

// sortRows puts a series' rows in record order: by group (spec order,
// groupIndex), then seq. A serial series is already in it; an interleaved
// one is in time order.
func sortRows(rows []netdata.Row, groupIndex func(string) int) []netdata.Row {
	slices.SortStableFunc(rows, func(a, b netdata.Row) int {
		return cmp.Or(cmp.Compare(groupIndex(a.Group), groupIndex(b.Group)), cmp.Compare(a.Seq, b.Seq))
	})
	return rows
}

// close removes what the steps set up and finish did not. That is the
// endpoint's client, the capture (and its file unless finish kept it), the
// servers and the client thread.
func (sr *seriesRun) close() {
	if sr.epCli != nil {
		sr.epCli.close()
	}
	if sr.capt != nil && !sr.capStopped {
		sr.capt.Stop()
	}
	if sr.capPath != "" && !sr.keepCapture {
		os.Remove(sr.capPath)
	}
	if sr.stopSrv != nil {
		sr.stopSrv()
	}
	sr.srvWG.Wait()
	if sr.epSrv != nil {
		sr.epSrv.close()
	}
	if sr.th != nil {
		sr.th.Close()
	}
}
