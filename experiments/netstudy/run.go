package netstudy

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"time"

	"pqrepro/experiments/capture"
	"pqrepro/experiments/handshake"
	"pqrepro/experiments/linkemu"
	"pqrepro/internal/provenance"
	"pqrepro/internal/repro"
	"pqrepro/internal/spec"
)

// RunConfig says where and how to run the experiment.
type RunConfig struct {
	// Root is the repository root. meta.json names the spec relative to it
	// and the content store defaults to repro.OpenStore(Root).
	Root string
	// Profile is "quick" or "full" (any [profiles.*] of the spec).
	Profile string
	// SpecPath is the spec; empty means Root/experiments/net.toml. On
	// success the run is pinned in its [runs] table.
	SpecPath string
	// DataDir receives data/net/<run-id>/; empty means Root/data.
	DataDir string
	// Store keeps the packet captures; nil means repro.OpenStore(Root).
	Store *repro.Store
	// Log receives the plan and progress lines; nil means os.Stdout.
	Log io.Writer
	// ProgressEvery throttles progress lines; 0 means 5 s.
	ProgressEvery time.Duration
	// Now is the clock of the run ID and of meta.json; nil is time.Now.
	// Handshake timers always use the real monotonic clock.
	Now func() time.Time
	// LinkOptions are the emulator's host settings (prefix, netns dir).
	LinkOptions linkemu.Options

	// hooks for tests: called after every recorded attempt with the link
	// and a function that stops it as if the forwarder had died.
	afterAttempt func(done int, link *linkemu.Link, kill func(error))
}

// ErrNeedRoot is returned before anything is created when the process is
// not root.
var ErrNeedRoot = errors.New("net:run needs root: it creates network namespaces and TUN devices and captures packets; run it as root (sudo -E mage net:run)")

// Run runs the profile's scenarios and writes a new run folder
// data/net/<run-id>/ with records.csv.gz and meta.json, puts one pcapng per
// scenario into the content store, and pins the run in the spec. On any
// failure, cancellation (Ctrl-C) or a link that stops mid-run, the
// namespaces are removed, the run folder is aborted and nothing is pinned.
func Run(ctx context.Context, cfg RunConfig) (err error) {
	if os.Geteuid() != 0 {
		return ErrNeedRoot
	}
	if cfg.Root == "" {
		return errors.New("net:run: RunConfig.Root is empty: give the repository root")
	}
	if cfg.SpecPath == "" {
		cfg.SpecPath = filepath.Join(cfg.Root, spec.Path(Study))
	}
	if cfg.DataDir == "" {
		cfg.DataDir = filepath.Join(cfg.Root, "data")
	}
	if cfg.Store == nil {
		cfg.Store = repro.OpenStore(cfg.Root)
	}
	if cfg.Log == nil {
		cfg.Log = os.Stdout
	}
	if cfg.ProgressEvery == 0 {
		cfg.ProgressEvery = 5 * time.Second
	}
	now := cfg.Now
	if now == nil {
		now = time.Now
	}
	specBytes, err := os.ReadFile(cfg.SpecPath)
	if err != nil {
		return fmt.Errorf("net:run: %w", err)
	}
	sp, err := LoadSpec(cfg.SpecPath)
	if err != nil {
		return fmt.Errorf("net:run: %w", err)
	}
	plan, err := sp.Plan(cfg.Profile)
	if err != nil {
		return fmt.Errorf("net:run: %w", err)
	}
	est, err := Estimate(sp, cfg.Profile)
	if err != nil {
		return fmt.Errorf("net:run: %w", err)
	}
	fmt.Fprintf(cfg.Log, "net:run: profile %s, order %s, groups %v, cert %s, rounds %v\n", plan.Profile, plan.Order, plan.Groups, plan.CertKey, plan.Rounds)
	for _, sc := range plan.Scenarios {
		fmt.Fprintf(cfg.Log, "net:run:   %s\n", sc)
	}
	fmt.Fprintf(cfg.Log, "net:run: %s\n", est)

	bundle, err := handshake.MakeCerts(handshake.CertConfig{Key: plan.CertKey, Chain: sp.CertChain, Seed: sp.Seeds.Certificates})
	if err != nil {
		return fmt.Errorf("net:run: certificates: %w", err)
	}
	start := now()
	run, err := repro.NewRun(cfg.DataDir, Study, cfg.Profile, start)
	if err != nil {
		return fmt.Errorf("net:run: %w", err)
	}
	defer func() {
		if err != nil {
			run.Abort()
		}
	}()

	r := &runner{cfg: cfg, spec: sp, plan: plan, est: est, bundle: bundle, dir: run.Dir, started: time.Now()}
	var rows []Row
	measured := map[string]any{}
	selfTests := map[string]linkemu.SelfTestReport{}
	linkStats := map[string]linkemu.Stats{}
	captures := map[string]captureInfo{}
	files := map[string]string{}
	var phase time.Duration
	for i, sc := range plan.Scenarios {
		res, err := r.scenario(ctx, i, sc)
		if err != nil {
			return fmt.Errorf("net:run: scenario %s: %w", sc.Name, err)
		}
		rows = append(rows, res.rows...)
		selfTests[sc.Name] = res.selfTest
		linkStats[sc.Name] = res.linkStats
		captures[sc.Name] = res.capture
		files["captures/"+sc.Name+".pcapng"] = res.capture.SHA256
		phase += res.wall
	}
	recSum, err := writeRecords(filepath.Join(run.Dir, RecordsFile), rows)
	if err != nil {
		return fmt.Errorf("net:run: %w", err)
	}
	files[RecordsFile] = recSum

	scen := make([]scenarioMeta, len(plan.Scenarios))
	for i, sc := range plan.Scenarios {
		ss := sp.Scenarios[sc.Name]
		scen[i] = scenarioMeta{Name: sc.Name, RTTms: ss.RTTMs, JitterMs: ss.JitterMs, LossPct: ss.LossPct, RateBps: sc.AtoB.Rate, QueueBytes: sc.AtoB.Queue, Seed: sc.Seed, Link: sc.String()}
	}
	groups := make([]string, len(plan.Groups))
	for i, g := range plan.Groups {
		groups[i] = g.String()
	}
	attempts, oks := 0, 0
	failures := map[string]map[string]map[string]int{}
	for _, row := range rows {
		attempts++
		if row.OK {
			oks++
			continue
		}
		f := failures[row.Scenario]
		if f == nil {
			f = map[string]map[string]int{}
			failures[row.Scenario] = f
		}
		rk := strconv.Itoa(row.Round)
		if f[rk] == nil {
			f[rk] = map[string]int{}
		}
		f[rk][row.Group]++
	}
	measured["design"] = designMeta{Order: plan.Order, Groups: groups, Rounds: plan.Rounds, CertKey: string(plan.CertKey), CertChain: sp.CertChain, Warmup: plan.Warmup, TimeoutMs: float64(plan.Timeout) / 1e6, Scenarios: scen}
	measured["selftest"] = selfTests
	measured["link_stats"] = linkStats
	measured["capture"] = captures
	measured["handshakes"] = map[string]int{"attempts": attempts, "ok": oks, "failed": attempts - oks}
	measured["failures"] = failures
	measured["wall_time_s"] = phase.Seconds()
	measured["theoretical_min_s"] = est.Minimum.Seconds()
	measured["expected_s"] = est.Expected.Seconds()
	if est.Minimum > 0 {
		measured["wall_to_theoretical_ratio"] = phase.Seconds() / est.Minimum.Seconds()
	}
	measured["rtts_per_connection"] = RTTsPerConnection

	m := provenance.Collect(ctx, provenance.Options{Root: cfg.Root})
	m.Study, m.RunID, m.Profile = Study, run.ID, cfg.Profile
	if rel, err := filepath.Rel(cfg.Root, cfg.SpecPath); err == nil && filepath.IsLocal(rel) {
		m.Spec = filepath.ToSlash(rel)
	} else {
		m.Spec = filepath.Base(cfg.SpecPath)
	}
	m.SpecSHA = repro.HashBytes(specBytes)
	m.Seeds = map[string]uint64{"certificates": sp.Seeds.Certificates, "order": sp.Seeds.Order}
	for _, sc := range plan.Scenarios {
		m.Seeds["link-"+sc.Name] = sc.Seed
	}
	m.Start, m.End = start.UTC(), now().UTC()
	m.Board = "host: linkemu userspace link between two network namespaces"
	m.Measured = measured
	m.Files = files
	m.Notes = []string{
		"captures/*.pcapng are in the content store under their SHA-256 (repro.Store); they hold the client key log as a Decryption Secrets Block",
		"latency ths_ns: capture on namespace A's TUN device (the client side), first segment of the ClientHello to first segment of the client Finished",
		fmt.Sprintf("wall_time_s is the handshake phase of all scenarios (self-tests excluded); theoretical_min_s = sum over connections of %d x RTT", RTTsPerConnection),
	}
	if err := provenance.Write(run.Dir, m); err != nil {
		return fmt.Errorf("net:run: %w", err)
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("net:run: %w", err)
	}
	if err := run.Commit(); err != nil {
		return fmt.Errorf("net:run: %w", err)
	}
	if err := spec.Pin(cfg.SpecPath, cfg.Profile, run.ID); err != nil {
		return fmt.Errorf("net:run: run %s is committed but could not be pinned: %w (add %s = %q under [runs] by hand)", run.ID, err, cfg.Profile, run.ID)
	}
	ratio := 0.0
	if est.Minimum > 0 {
		ratio = phase.Seconds() / est.Minimum.Seconds()
	}
	fmt.Fprintf(cfg.Log, "net:run: %d of %d handshakes ok; handshake phase %v, theoretical minimum %v (ratio %.2f); run %s pinned for %s\n",
		oks, attempts, phase.Round(time.Millisecond), est.Minimum.Round(time.Millisecond), ratio, run.ID, cfg.Profile)
	return nil
}

// designMeta is measured.design in meta.json: what the analysis needs to
// know about the run's design.
type designMeta struct {
	Order     string         `json:"order"`
	Groups    []string       `json:"groups"`
	Rounds    []int          `json:"rounds"`
	CertKey   string         `json:"cert_key"`
	CertChain bool           `json:"cert_chain"`
	Warmup    int            `json:"warmup"`
	TimeoutMs float64        `json:"timeout_ms"`
	Scenarios []scenarioMeta `json:"scenarios"`
}

type scenarioMeta struct {
	Name       string  `json:"name"`
	RTTms      float64 `json:"rtt_ms"`
	JitterMs   float64 `json:"jitter_ms"`
	LossPct    float64 `json:"loss_pct"`
	RateBps    int64   `json:"rate_bps"`
	QueueBytes int     `json:"queue_bytes"`
	Seed       uint64  `json:"seed"`
	Link       string  `json:"link"`
}

type captureInfo struct {
	SHA256      string `json:"sha256"`
	Packets     uint64 `json:"packets"`
	KernelSeen  uint64 `json:"kernel_seen"`
	KernelDrops uint64 `json:"kernel_drops"`
	Truncated   uint64 `json:"truncated"`
	Connections int    `json:"connections"` // capture records (warm-up included)
	Joined      int    `json:"joined"`      // recorded attempts with a capture record
	Unmatched   int    `json:"unmatched"`   // recorded, handshake ok, but no complete capture record
}

type runner struct {
	cfg     RunConfig
	spec    *Spec
	plan    Plan
	est     Estimation
	bundle  *handshake.Bundle
	dir     string
	started time.Time

	done      int // recorded attempts so far
	expDone   time.Duration
	lastPrint time.Time
}

type scenarioResult struct {
	rows      []Row
	selfTest  linkemu.SelfTestReport
	linkStats linkemu.Stats
	capture   captureInfo
	wall      time.Duration
}

// serverLog collects the servers' records by client address.
type serverLog struct {
	mu    sync.Mutex
	recs  map[string][]handshake.ServerRecord
	fatal error
}

func (s *serverLog) add(r handshake.ServerRecord) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if r.Err != nil && r.DurationNs > 0 && s.fatal == nil {
		// The handshake completed but the connection is not what the
		// configuration says: an error, never a sample.
		s.fatal = r.Err
	}
	s.recs[r.Client] = append(s.recs[r.Client], r)
}

// take returns the server's handshake time of the connection from client
// accepted at or after t0, or 0.
func (s *serverLog) take(client string, t0 time.Time) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	rs := s.recs[client]
	for i, r := range rs {
		if !r.Accept.Before(t0) {
			s.recs[client] = append(rs[:i:i], rs[i+1:]...)
			if r.Err != nil {
				return 0
			}
			return r.DurationNs
		}
	}
	return 0
}

func (s *serverLog) err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.fatal
}

func (r *runner) scenario(ctx context.Context, idx int, sc linkemu.Scenario) (res scenarioResult, err error) {
	scCtx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	linkCtx, killLink := context.WithCancelCause(scCtx)
	defer killLink(nil)
	stc := linkemu.SelfTestConfig{Probes: r.spec.SelfTest.Probes, Tolerance: msDur(r.spec.SelfTest.ToleranceMs)}
	fmt.Fprintf(r.cfg.Log, "net:run: [%d/%d] %s: starting the link and its self-test\n", idx+1, len(r.plan.Scenarios), sc.Name)
	link, rep, err := linkemu.StartVerified(linkCtx, sc, r.cfg.LinkOptions, stc)
	if err != nil {
		var ae *linkemu.AccuracyError
		if errors.As(err, &ae) {
			return res, fmt.Errorf("the link self-test failed, so the run does not start: %w", err)
		}
		return res, err
	}
	defer link.Close()
	res.selfTest = rep
	fmt.Fprintf(r.cfg.Log, "net:run: [%d/%d] %s: self-test RTT p50 %.3f ms (expected %.3f, error %+.3f ms), loss %.3f\n",
		idx+1, len(r.plan.Scenarios), sc.Name, rep.P50Ms, rep.ExpectedRTTms, rep.ErrorP50Ms, rep.Loss)

	// A link that stops by itself (the forwarder died) ends the scenario.
	watchStop := make(chan struct{})
	defer close(watchStop)
	go func() {
		select {
		case <-link.Done():
			if lerr := link.Err(); lerr != nil {
				cancel(fmt.Errorf("the link emulator stopped mid-run: %w", lerr))
			}
		case <-watchStop:
		}
	}()

	epA, epB := link.Endpoint(linkemu.A), link.Endpoint(linkemu.B)
	th, err := newNSThread(epA.Path)
	if err != nil {
		return res, fmt.Errorf("client thread in %s: %w", epA.Namespace, err)
	}
	defer th.close()

	// Servers in B, one per group.
	lns := make([]net.Listener, len(r.plan.Groups))
	err = link.RunIn(linkemu.B, func() error {
		for i := range r.plan.Groups {
			addr := net.JoinHostPort(epB.Addr.String(), strconv.Itoa(r.spec.Port+i))
			ln, err := net.Listen("tcp", addr)
			if err != nil {
				return fmt.Errorf("listen %s in %s: %w", addr, epB.Namespace, err)
			}
			lns[i] = ln
		}
		return nil
	})
	if err != nil {
		for _, ln := range lns {
			if ln != nil {
				ln.Close()
			}
		}
		return res, err
	}
	slog := &serverLog{recs: map[string][]handshake.ServerRecord{}}
	srvCtx, stopSrv := context.WithCancel(context.Background())
	var srvWG sync.WaitGroup
	srvErrs := make([]error, len(lns))
	defer func() { stopSrv(); srvWG.Wait() }()
	for i, g := range r.plan.Groups {
		exp := handshake.Expect{Group: g, Key: r.plan.CertKey, Chain: r.spec.CertChain}
		srv := &handshake.Server{TLS: handshake.ServerTLSConfig(r.bundle, g, nil), Expect: exp, Timeout: r.plan.Timeout}
		srvWG.Add(1)
		go func() { defer srvWG.Done(); srvErrs[i] = srv.Serve(srvCtx, lns[i], slog.add) }()
	}

	// Capture on A's TUN device for the whole scenario. On TUN every
	// packet is seen once, so the loopback outgoing filter must be off.
	capPath := filepath.Join(r.dir, ".capture-"+sc.Name+".pcapng")
	defer os.Remove(capPath)
	var capt *capture.Capture
	off := false
	th.do(func() {
		capt, err = capture.Start(scCtx, capture.Options{Interface: epA.Iface, Path: capPath, DropOutgoing: &off})
	})
	if err != nil {
		return res, err
	}
	capStopped := false
	defer func() {
		if !capStopped {
			capt.Stop()
		}
	}()

	clients := make([]*handshake.Client, len(r.plan.Groups))
	addrs := make([]string, len(r.plan.Groups))
	for i, g := range r.plan.Groups {
		exp := handshake.Expect{Group: g, Key: r.plan.CertKey, Chain: r.spec.CertChain}
		clients[i] = &handshake.Client{TLS: handshake.ClientTLSConfig(r.bundle.Roots, "localhost", []tls.CurveID{g}, capt.KeyLog()), Expect: exp, Timeout: r.plan.Timeout}
		addrs[i] = net.JoinHostPort(epB.Addr.String(), strconv.Itoa(r.spec.Port+i))
	}

	perConn := r.est.PerScenario[idx].Expected / time.Duration(max(1, r.est.PerScenario[idx].Connections))
	attempt := func(gi int) (Row, error) {
		if err := context.Cause(scCtx); err != nil && scCtx.Err() != nil {
			return Row{}, err
		}
		var cr handshake.ClientRecord
		var derr error
		t0 := time.Now()
		th.do(func() { cr, derr = clients[gi].Dial(scCtx, addrs[gi]) })
		row := Row{Scenario: sc.Name, Group: r.plan.Groups[gi].String(), StartNs: t0.UnixNano(), Client: cr.Local, Server: addrs[gi], ClientNs: cr.DurationNs}
		if scCtx.Err() != nil {
			return row, context.Cause(scCtx)
		}
		if err := slog.err(); err != nil {
			return row, err
		}
		row.OK = derr == nil
		if derr != nil {
			class := classify(derr)
			switch {
			case class == "":
				return row, fmt.Errorf("handshake %d: %w (not a network failure: fix the configuration)", r.done+1, derr)
			case cr.DurationNs > 0:
				row.OK, row.Failure = true, "close-"+class // handshake done, the close timed out
			default:
				row.Failure = class
			}
		}
		if row.Client != "" {
			row.ServerNs = slog.take(row.Client, t0)
		}
		return row, nil
	}

	t0 := time.Now()
	var rows []Row
	index := 0
	record := func(round, gi, seq int) error {
		row, err := attempt(gi)
		if err != nil {
			return err
		}
		row.Round, row.Seq, row.Index = round, seq, index
		index++
		rows = append(rows, row)
		r.done++
		r.expDone += perConn
		r.progress(sc.Name, round, row.Group, false)
		if r.cfg.afterAttempt != nil {
			r.cfg.afterAttempt(r.done, link, func(e error) { killLink(e) })
		}
		return nil
	}
	warm := func(gi int) error {
		for range r.plan.Warmup {
			if _, err := attempt(gi); err != nil {
				return err
			}
		}
		return nil
	}
	rng := rand.New(rand.NewPCG(r.spec.Seeds.Order, uint64(idx)))
	for _, round := range r.plan.Rounds {
		switch r.plan.Order {
		case Serial:
			for gi := range r.plan.Groups {
				if err := warm(gi); err != nil {
					return res, err
				}
				for seq := range round {
					if err := record(round, gi, seq); err != nil {
						return res, err
					}
				}
			}
		case Interleaved:
			for gi := range r.plan.Groups {
				if err := warm(gi); err != nil {
					return res, err
				}
			}
			order := make([]int, len(r.plan.Groups))
			for seq := range round {
				for i := range order {
					order[i] = i
				}
				rng.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
				for _, gi := range order {
					if err := record(round, gi, seq); err != nil {
						return res, err
					}
				}
			}
		}
	}
	res.wall = time.Since(t0)

	stopSrv()
	srvWG.Wait()
	for i, e := range srvErrs {
		if e != nil {
			return res, fmt.Errorf("server for %s: %w", r.plan.Groups[i], e)
		}
	}
	if err := slog.err(); err != nil {
		return res, err
	}
	capStopped = true
	cst, err := capt.Stop()
	if err != nil {
		return res, err
	}
	if err := cst.Valid(); err != nil {
		return res, err
	}
	if lerr := link.Err(); lerr != nil {
		return res, fmt.Errorf("the link emulator stopped mid-run: %w", lerr)
	}
	if err := context.Cause(scCtx); scCtx.Err() != nil {
		return res, err
	}
	res.linkStats = link.Stats()
	if err := link.Close(); err != nil {
		return res, err
	}
	ci, err := joinCapture(capPath, rows, r.plan.Timeout)
	if err != nil {
		return res, err
	}
	ci.Packets, ci.KernelSeen, ci.KernelDrops, ci.Truncated = cst.Packets, cst.KernelSeen, cst.KernelDrops, cst.Truncated
	sum, err := r.cfg.Store.Put(capPath)
	if err != nil {
		return res, fmt.Errorf("store the capture: %w", err)
	}
	ci.SHA256 = sum
	res.capture = ci
	res.rows = rows
	r.progress(sc.Name, 0, "", true)
	return res, nil
}

// progress prints done/total with an ETA at most every ProgressEvery. The
// ETA scales the model's expected time of the remaining handshakes by how
// fast the run has been against the model so far.
func (r *runner) progress(scenario string, round int, group string, force bool) {
	now := time.Now()
	if !force && now.Sub(r.lastPrint) < r.cfg.ProgressEvery {
		return
	}
	r.lastPrint = now
	total := r.est.Handshakes
	elapsed := now.Sub(r.started)
	eta := "unknown"
	if r.expDone > 0 {
		speed := float64(elapsed) / float64(r.expDone)
		remaining := time.Duration(float64(r.est.Expected-r.expDone) * speed)
		eta = max(remaining, 0).Round(time.Second).String()
	}
	where := scenario + " done"
	if !force {
		where = fmt.Sprintf("%s round %d %s", scenario, round, group)
	}
	fmt.Fprintf(r.cfg.Log, "net:run: %d/%d handshakes (%.1f %%), %s, elapsed %v, ETA %s\n",
		r.done, total, 100*float64(r.done)/float64(max(total, 1)), where, elapsed.Round(time.Second), eta)
}

// classify names a network failure of one attempt, or returns "" when the
// error is not one a lossy link explains (a configuration error).
func classify(err error) string {
	var ne net.Error
	switch {
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
