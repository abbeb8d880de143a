package netrun

import (
	"cmp"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"pqrepro/datasets/netdata"
	"pqrepro/experiments/instruments/netns"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"syscall"
	"time"

	"pqrepro/experiments/instruments/capture"
	"pqrepro/experiments/instruments/handshake"
	"pqrepro/experiments/instruments/rederive"
	"pqrepro/experiments/instruments/runlife"
	"pqrepro/experiments/instruments/sshhost"
	"pqrepro/experiments/net/linkemu"
	"pqrepro/experiments/net/netjoin"
	"pqrepro/internal/atomicfile"
	"pqrepro/internal/provenance"
	"pqrepro/internal/repro"
)

// RunConfig says where and how to run the experiment.
type RunConfig struct {
	// Root is the repository root. meta.json names the spec relative to it
	// and the content store defaults to repro.OpenStore(Root); "" is the
	// repository root above the working directory (runlife.FindRoot).
	Root string
	// Git is the state of the repository the run was started from
	// (provenance.RepoGit at the repository root, taken by the pipeline
	// when the run starts); nil means the state of Root.
	Git *provenance.Git
	// Profile is "quick" or "full" (any [profiles.*] of the spec).
	Profile string
	// SpecPath is the spec; empty means Root/experiments/net.toml. On
	// success the run is pinned in its [runs] table.
	SpecPath string
	// DataDir receives data/net/<run-id>/; empty means Root/data.
	DataDir string
	// Store keeps the packet captures; nil means repro.OpenStore(Root).
	Store *repro.Store
	// CaptureInRepoMax: captures of at most this many bytes in total
	// (uncompressed) are committed gzip'd in the run folder, larger ones go
	// to Store; 0 means rederive.InRepoMaxBytes, negative means always Store.
	CaptureInRepoMax int64
	// Log receives the plan and progress lines; nil discards them.
	Log io.Writer
	// ProgressEvery throttles progress lines; 0 means 5 s.
	ProgressEvery time.Duration
	// Now is the clock of the run ID and of meta.json; nil is time.Now.
	// Handshake timers always use the real monotonic clock.
	Now func() time.Time
	// LinkOptions are the emulator's host settings (prefix, netns dir).
	LinkOptions linkemu.Options
	// RemoteSSH, when set, replaces how the spec's [remote] host is
	// reached (tests: a private ssh_config, no agent); BuildRoot is the
	// module the host's pqrepro is built from ("" is Root).
	RemoteSSH *sshhost.Options
	BuildRoot string

	// hooks for tests: called after every recorded attempt with the link
	// and a function that stops it as if the forwarder had died.
	afterAttempt func(done int, link *linkemu.Link, kill func(error))
}

// testHookDialGroup, when set, changes the group an endpoint client offers
// (tests: a client and server that disagree must fail the run).
var testHookDialGroup func(string) string

// geteuid is os.Geteuid; tests replace it to exercise the not-root path
// when they run as root.
var geteuid = os.Geteuid

// ErrNeedRoot is returned before anything is created when the process is
// not root.
var ErrNeedRoot = errors.New("net:run needs root: it creates network namespaces and TUN devices and captures packets; run it as root (sudo -E mage net:run)")

// Run runs the profile's scenarios and writes a new run folder
// data/net/<run-id>/ with inproc.csv.gz (what the process measured),
// records.csv.gz (derived from it and the captures by netjoin.DeriveRows,
// the function the build's net:records stage calls again) and meta.json;
// keeps one pcapng per series gzip'd in the run folder when they are small
// (rederive.InRepoMaxBytes in all) or in the content store; and pins the
// run in the spec. On any
// failure, cancellation (Ctrl-C) or a link that stops mid-run, the
// namespaces are removed, the run folder is aborted and nothing is pinned.
// It returns the new run's ID (its folder's name under
// DataDir/net/), "" when no run was recorded.
func Run(ctx context.Context, cfg RunConfig) (string, error) {
	var id string
	err := record(ctx, cfg, &id)
	return id, err
}

// record is Run; it sets *id when the run is committed.
func record(ctx context.Context, cfg RunConfig, id *string) (err error) {
	if geteuid() != 0 {
		return ErrNeedRoot
	}
	l, err := runlife.New(runlife.Config{Study: Study, Root: cfg.Root, Git: cfg.Git, Profile: cfg.Profile,
		SpecPath: cfg.SpecPath, DataDir: cfg.DataDir, Log: cfg.Log, Now: cfg.Now})
	if err != nil {
		return err
	}
	cfg.Root, cfg.SpecPath, cfg.DataDir = l.Root, l.SpecPath, l.DataDir
	if cfg.Store == nil {
		cfg.Store = repro.OpenStore(cfg.Root)
	}
	cfg.Log = &lockedWriter{w: l.Log} // series log from their own goroutines
	if cfg.ProgressEvery == 0 {
		cfg.ProgressEvery = 5 * time.Second
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
	fmt.Fprintf(cfg.Log, "net:run: schedule (planned start .. end from the first series' start):\n")
	est.WritePlan(cfg.Log)

	bundle, err := handshake.MakeCerts(handshake.CertConfig{Key: plan.CertKey, Chain: sp.CertChain, Seed: sp.Seeds.Certificates})
	if err != nil {
		return fmt.Errorf("net:run: certificates: %w", err)
	}
	// The endpoint builds (cached) and their certificate files, before
	// the run folder exists: a build that fails creates no run.
	eps := map[string]*Endpoint{}
	var pemDir string
	if len(plan.Toolchains) > 0 {
		for _, tc := range plan.Toolchains {
			if eps[tc], err = BuildEndpoint(ctx, cfg.Root, tc, cfg.Log); err != nil {
				return fmt.Errorf("net:run: %w", err)
			}
			fmt.Fprintf(cfg.Log, "net:run: endpoint %s: %s (source sha256 %s)\n", tc, eps[tc].Path, eps[tc].SourceSHA[:16])
		}
		if pemDir, err = os.MkdirTemp("", "pqrepro-net-pem-"); err != nil {
			return fmt.Errorf("net:run: %w", err)
		}
		defer os.RemoveAll(pemDir)
	}
	buildRoot := cmp.Or(cfg.BuildRoot, cfg.Root)
	rem, err := startRemote(ctx, sp, plan, cfg.RemoteSSH, buildRoot, cfg.Log)
	if err != nil {
		return l.Errorf("%w; nothing was recorded", err)
	}
	defer func() {
		if serr := rem.stop(); serr != nil {
			fmt.Fprintf(cfg.Log, "net:run: WARNING: %v\n", serr)
		}
	}()
	if done := rem.done(); done != nil { // a dropped SSH session or a dead remote server ends the run
		var stopRun context.CancelCauseFunc
		ctx, stopRun = context.WithCancelCause(ctx)
		defer stopRun(nil)
		go func() {
			select {
			case <-done:
				stopRun(rem.err())
			case <-ctx.Done():
			}
		}()
	}
	if err := l.Begin(ctx); err != nil {
		return err
	}
	defer l.Abort()
	run := l.Run

	r := &runner{cfg: cfg, spec: sp, plan: plan, est: est, bundle: bundle, dir: run.Dir, started: time.Now(), progs: make([]seriesProgress, len(est.Series)), eps: eps, life: l}
	if pemDir != "" {
		if r.pem.cert, r.pem.key, r.pem.roots, err = endpointFiles(pemDir, bundle); err != nil {
			return fmt.Errorf("net:run: %w", err)
		}
	}
	r.rem = rem
	results, err := r.runAll(ctx)
	if rerr := rem.failure(err); rerr != nil {
		return rerr
	}
	if err != nil {
		return fmt.Errorf("net:run: %w", err)
	}
	var rows, ctlRows []Row
	measured := map[string]any{}
	selfTests := map[string]linkemu.SelfTestReport{}
	linkStats := map[string]linkemu.Stats{}
	captures := map[string]captureInfo{}
	files := map[string]string{}
	capPaths := map[string]string{}
	var capBytes int64
	for i, se := range est.Series {
		res := results[i]
		if se.Control {
			ctlRows = append(ctlRows, res.rows...)
		} else {
			rows = append(rows, res.rows...)
		}
		selfTests[se.ID] = res.selfTest
		linkStats[se.ID] = res.linkStats
		capPaths[se.ID] = res.capPath
		capBytes += res.capBytes
		files[netdata.CaptureName(se.ID)] = res.capture.SHA256
	}
	sched := r.scheduleMeta(results)

	// What the process measured (inproc.csv.gz), then the records derived
	// from it and the captures by netjoin.DeriveRows: the function the
	// build's net:records stage calls on the committed run.
	inproc, err := netdata.EncodeInproc(rows)
	if err != nil {
		return fmt.Errorf("net:run: %w", err)
	}
	if err := atomicfile.WriteFile(filepath.Join(run.Dir, rederive.InprocFile), inproc, 0o644); err != nil {
		return fmt.Errorf("net:run: %w", err)
	}
	files[rederive.InprocFile] = repro.HashBytes(inproc)
	recBytes, joins, err := netjoin.DeriveRows(ctx, inproc, plan.Timeout, func(series string) (io.ReadCloser, error) {
		return rederive.OpenFile(capPaths[series], files[netdata.CaptureName(series)])
	})
	if err != nil {
		return fmt.Errorf("net:run: %w", err)
	}
	// Measurement hygiene (hygiene.go): the serial controls' rows and
	// the late-packet record.
	ctlJoins, err := r.writeHygiene(ctx, results, ctlRows, capPaths, files, measured)
	if err != nil {
		return fmt.Errorf("net:run: %w", err)
	}
	for i, se := range est.Series {
		ji, ok := joins[se.ID]
		if se.Control {
			ji, ok = ctlJoins[se.ID]
		}
		ci := results[i].capture
		if ok {
			ci.Connections, ci.Joined, ci.Unmatched = ji.Connections, ji.Joined, ji.Unmatched
		}
		captures[se.ID] = ci
	}
	if err := atomicfile.WriteFile(filepath.Join(run.Dir, RecordsFile), recBytes, 0o644); err != nil {
		return fmt.Errorf("net:run: %w", err)
	}
	files[RecordsFile] = repro.HashBytes(recBytes)

	// Small captures are committed with the run, compressed; large ones go
	// to the content store. meta.json names each by the SHA-256 of its
	// uncompressed bytes either way.
	inRepo := capBytes <= rederive.InRepoLimit(cfg.CaptureInRepoMax)
	for _, se := range est.Series {
		p := capPaths[se.ID]
		if inRepo {
			name := netdata.CaptureName(se.ID) + rederive.GzipExt
			dst := filepath.Join(run.Dir, filepath.FromSlash(name))
			if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
				return fmt.Errorf("net:run: %w", err)
			}
			sum, err := rederive.Gzip(p, dst)
			if err != nil {
				return fmt.Errorf("net:run: %w", err)
			}
			files[name] = sum
		} else if _, err := r.cfg.Store.Put(p); err != nil {
			return fmt.Errorf("net:run: store the capture of %s: %w", se.ID, err)
		}
		if err := os.Remove(p); err != nil {
			return fmt.Errorf("net:run: %w", err)
		}
	}
	where := "in the content store under their SHA-256 (repro.Store)"
	if inRepo {
		where = "committed in the run folder as captures/<series>.pcapng.gz (meta.json names the uncompressed bytes' SHA-256)"
	}

	scen := make([]netdata.Scenario, len(plan.Scenarios))
	for i, sc := range plan.Scenarios {
		ss := sp.Scenarios[sc.Name]
		scen[i] = netdata.Scenario{Name: sc.Name, RTTms: ss.RTTMs, JitterMs: ss.JitterMs, LossPct: ss.LossPct, RateBps: sc.AtoB.Rate, QueueBytes: sc.AtoB.Queue, Seed: sc.Seed, Link: sc.String()}
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
	measured["design"] = netdata.Design{Order: plan.Order, Groups: groups, Rounds: plan.Rounds, CertKey: string(plan.CertKey), CertChain: sp.CertChain, Warmup: plan.Warmup, TimeoutMs: float64(plan.Timeout) / 1e6, Scenarios: scen, Toolchains: plan.Toolchains}
	if len(eps) > 0 {
		em := map[string]any{}
		for tc, ep := range eps {
			em[tc] = map[string]string{"go_version": ep.GoVersion, "source_sha256": ep.SourceSHA, "source": EndpointDir}
		}
		measured["endpoints"] = em
	} else {
		measured["endpoints"] = map[string]any{InProcess: map[string]string{"go_version": runtime.Version(), "source": "experiments/instruments/handshake (in process)"}}
	}
	measured["selftest"] = selfTests
	measured["link_stats"] = linkStats
	measured["capture"] = captures
	measured["handshakes"] = map[string]int{"attempts": attempts, "ok": oks, "failed": attempts - oks}
	measured["failures"] = failures
	measured["schedule"] = sched
	measured["wall_time_s"] = sched.WallS
	measured["handshake_work_s"] = sched.WorkS
	measured["theoretical_min_s"] = est.Minimum.Seconds()
	measured["scheduled_min_s"] = est.ScheduledMinimum.Seconds()
	measured["expected_s"] = est.Expected.Seconds()
	if est.Minimum > 0 {
		measured["wall_to_theoretical_ratio"] = sched.WallS / est.Minimum.Seconds()
		measured["work_to_theoretical_ratio"] = sched.WorkS / est.Minimum.Seconds()
	}
	if est.ScheduledMinimum > 0 {
		measured["wall_to_scheduled_min_ratio"] = sched.WallS / est.ScheduledMinimum.Seconds()
	}
	measured["rtts_per_connection"] = RTTsPerConnection

	m := l.Meta(ctx, nil)
	m.Seeds = map[string]uint64{"certificates": sp.Seeds.Certificates, "order": sp.Seeds.Order}
	for _, sc := range plan.Scenarios {
		m.Seeds["link-"+sc.Name] = sc.Seed
	}
	for _, se := range est.Series {
		m.Seeds["link-"+se.ID] = se.Link.Seed
	}
	m.Board = "host: linkemu userspace link between two network namespaces"
	if rem != nil {
		measured["remote_host"] = rem.srv.Prov
		measured["remote_ready_s"] = rem.srv.Ready.Seconds()
	}
	m.Measured = measured
	m.Files = files
	m.Notes = []string{
		"captures/<series>.pcapng are " + where + ", one per series (scenario-round-group), each from its own link; they hold the client key log as a Decryption Secrets Block; records.csv.gz is derived from them and inproc.csv.gz by experiments/net/netjoin (the build's net:records stage re-derives it)",
		"latency ths_ns: capture on namespace A's TUN device (the client side), first segment of the ClientHello to first segment of the client Finished",
		"selftest, link_stats and capture are keyed by series; link-<series> seeds are SeriesSeed(scenario seed, round, group code point)",
		fmt.Sprintf("wall_time_s: first series' link start to last series' end (self-tests, capture joins included); handshake_work_s: sum of the series' handshake phases; theoretical_min_s = sum over connections of %d x RTT; scheduled_min_s: the schedule's makespan at that minimum; schedule: which series ran when, with which", RTTsPerConnection),
	}
	if rem != nil {
		m.Notes = append(m.Notes, fmt.Sprintf("remote host: the servers ran on %s (pqrepro remote serve, binary sha256:%s); namespace B relayed each connection to them over the real network, so a handshake crossed its emulated link, then that network; server_ns is the remote server's, its accept time this host's", rem.srv.Host.Dest(), rem.srv.Dep.SHA256))
	}
	if err := ctx.Err(); err != nil {
		if rerr := rem.failure(err); rerr != nil {
			return rerr
		}
	}
	if err := l.Commit(ctx, m); err != nil {
		return err
	}
	*id = l.Run.ID
	wall := time.Duration(sched.WallS * 1e9)
	fmt.Fprintf(cfg.Log, "net:run: %d of %d handshakes ok; wall %v, theoretical minimum %v serial (ratio %.3f), %v as scheduled (ratio %.3f); run %s pinned for %s\n",
		oks, attempts, wall.Round(time.Millisecond), est.Minimum.Round(time.Millisecond), sched.WallS/max(est.Minimum.Seconds(), 1e-9),
		est.ScheduledMinimum.Round(time.Millisecond), sched.WallS/max(est.ScheduledMinimum.Seconds(), 1e-9), run.ID, cfg.Profile)
	return nil
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

// seriesResult is what one series produced; the times bound the whole
// series (link start to capture stored) and its handshake phase (first
// warm-up connection to the last recorded attempt).
type seriesResult struct {
	rows           []Row
	selfTest       linkemu.SelfTestReport
	linkStats      linkemu.Stats
	capture        captureInfo // SHA256 and the capture's own counts; the join's are filled by Run
	capPath        string      // the capture, in the run folder until Run places it
	capBytes       int64
	start, end     time.Time
	hsStart, hsEnd time.Time
	late           []linkemu.LateEvent // writes past plan.LateBound (hygiene.go)
	toolchain      string              // the rows' toolchain column
}

// runAll starts the series in the estimate's dispatch order, at most
// plan.Parallel at a time, an exclusive series only when nothing else runs
// and nothing else while it runs. The first series that fails cancels the
// others (their links close as they return); runAll returns only when
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
dispatch:
	for _, i := range r.est.Order {
		if r.est.Series[i].Exclusive {
			got := acquire(cap(slots)) // every slot: waits for the running ones
			if got < cap(slots) {
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

// scheduleMeta is measured.schedule in meta.json.
type scheduleMeta struct {
	ParallelSeries int          `json:"parallel_series"`
	Exclusive      []string     `json:"exclusive_scenarios"`
	DispatchOrder  []string     `json:"dispatch_order"`
	WallS          float64      `json:"wall_s"` // first series' start to last series' end
	WorkS          float64      `json:"handshake_work_s"`
	TheoreticalS   float64      `json:"theoretical_min_s"`
	ScheduledMinS  float64      `json:"scheduled_min_s"`
	ExpectedS      float64      `json:"expected_s"`
	Series         []seriesMeta `json:"series"` // record order
}

// seriesMeta is one series in measured.schedule. Times are seconds from
// the start of the first series (no wall-clock stamps).
type seriesMeta struct {
	ID         string     `json:"id"`
	Scenario   string     `json:"scenario"`
	Round      int        `json:"round"`
	Groups     []string   `json:"groups"`
	Seed       uint64     `json:"seed"`
	Exclusive  bool       `json:"exclusive"`
	Handshakes int        `json:"handshakes"`
	StartS     float64    `json:"start_s"` // link start
	EndS       float64    `json:"end_s"`   // capture joined and stored
	HSStartS   float64    `json:"handshakes_start_s"`
	HSEndS     float64    `json:"handshakes_end_s"`
	HSWallS    float64    `json:"handshakes_wall_s"`
	MinS       float64    `json:"theoretical_min_s"`
	Ratio      float64    `json:"wall_to_theoretical_ratio"` // handshake phase / minimum
	PlannedS   [2]float64 `json:"planned_s"`                 // Estimate's start and end
	// ConcurrentWith lists the series whose handshake phase overlapped this
	// series' handshake phase.
	ConcurrentWith []string `json:"concurrent_with"`
	MaxConcurrent  int      `json:"max_concurrent"` // most series handshaking at once during this one, itself included
}

func (r *runner) scheduleMeta(res []seriesResult) scheduleMeta {
	m := scheduleMeta{ParallelSeries: r.plan.Parallel, Exclusive: []string{}, TheoreticalS: r.est.Minimum.Seconds(),
		ScheduledMinS: r.est.ScheduledMinimum.Seconds(), ExpectedS: r.est.Expected.Seconds()}
	for i, sc := range r.plan.Scenarios {
		if r.plan.Exclusive[i] {
			m.Exclusive = append(m.Exclusive, sc.Name)
		}
	}
	for _, i := range r.est.Order {
		m.DispatchOrder = append(m.DispatchOrder, r.est.Series[i].ID)
	}
	if len(res) == 0 {
		return m
	}
	t0, t1 := res[0].start, res[0].end
	for _, x := range res {
		if x.start.Before(t0) {
			t0 = x.start
		}
		if x.end.After(t1) {
			t1 = x.end
		}
	}
	sec := func(t time.Time) float64 { return t.Sub(t0).Seconds() }
	m.WallS = t1.Sub(t0).Seconds()
	for i, se := range r.est.Series {
		x := res[i]
		groups := make([]string, len(se.Groups))
		for k, g := range se.Groups {
			groups[k] = r.plan.Groups[g].String()
		}
		hs := x.hsEnd.Sub(x.hsStart).Seconds()
		m.WorkS += hs
		sm := seriesMeta{ID: se.ID, Scenario: r.plan.Scenarios[se.Scenario].Name, Round: se.Round, Groups: groups, Seed: se.Link.Seed,
			Exclusive: se.Exclusive, Handshakes: se.Handshakes(), StartS: sec(x.start), EndS: sec(x.end),
			HSStartS: sec(x.hsStart), HSEndS: sec(x.hsEnd), HSWallS: hs, MinS: se.Minimum.Seconds(),
			PlannedS: [2]float64{se.Start.Seconds(), se.End.Seconds()}, ConcurrentWith: []string{}}
		if sm.MinS > 0 {
			sm.Ratio = hs / sm.MinS
		}
		for j, o := range r.est.Series {
			if j != i && res[j].hsStart.Before(x.hsEnd) && x.hsStart.Before(res[j].hsEnd) {
				sm.ConcurrentWith = append(sm.ConcurrentWith, o.ID)
			}
		}
		sm.MaxConcurrent = maxOverlap(res, x.hsStart, x.hsEnd)
		m.Series = append(m.Series, sm)
	}
	return m
}

// maxOverlap is the largest number of handshake phases in res running at
// one instant inside [from, to).
func maxOverlap(res []seriesResult, from, to time.Time) int {
	best := 0
	// The count only rises at a phase's start, so it is enough to count at
	// from and at every start inside the window.
	points := []time.Time{from}
	for _, x := range res {
		if x.hsStart.After(from) && x.hsStart.Before(to) {
			points = append(points, x.hsStart)
		}
	}
	for _, p := range points {
		n := 0
		for _, x := range res {
			if !x.hsStart.After(p) && x.hsEnd.After(p) {
				n++
			}
		}
		best = max(best, n)
	}
	return best
}

// lockedWriter serialises writes of the series' goroutines to the log.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
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

// series runs one series on a link of its own: start and self-test the
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
	steps := seriesSteps(r.plan.Order, s.Groups, s.Round, r.plan.Warmup, r.spec.Seeds.Order, s.Link.Seed)
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

// seriesRun is the state of one series while it runs; its fields are set
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

	rows []Row // recorded attempts, time order
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

// selfTestTwice calls start (a link and its self-test) and, when the
// self-test misses the delay (a linkemu.AccuracyError) and stopped is
// false, tells missed and calls it once more: one stall of the machine
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

// port is the address of the server for the group of index gi in the
// spec: port + gi on B's address (the same address as in a serial run).
func (sr *seriesRun) port(gi int) string {
	return net.JoinHostPort(sr.link.Endpoint(linkemu.B).Addr.String(), strconv.Itoa(sr.r.spec.Port+gi))
}

// startServers starts the client thread in A and the servers in B, one
// per group of the series: the endpoint's server process (a child is in
// the network namespace of the thread that forks it) or in-process
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
			listen = append(listen, sr.port(gi)+"="+r.plan.Groups[gi].String())
		}
		inB := func(fn func()) { sr.link.RunIn(linkemu.B, func() error { fn(); return nil }) }
		if sr.epSrv, err = startEndpointServer(sr.ctx, sr.ep, r.pem.cert, r.pem.key, r.plan.Timeout, listen, inB, sr.slog.add); err != nil {
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
		if sr.epCli, err = startEndpointClient(sr.ep, r.pem.roots, r.plan.Timeout, sr.capt.KeyLog(), sr.th.Do); err != nil {
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

// step is one connection of a series: a warm-up (not recorded) or the
// recorded attempt seq of the group of index gi.
type step struct {
	gi, seq int
	warm    bool
}

// seriesSteps lists a series' connections in the order they are made.
// Serial: per group (spec order) its warm-ups, then its round recorded
// attempts. Interleaved: every group's warm-ups, then round rounds of one
// attempt per group in an order shuffled per round by PCG(orderSeed,
// linkSeed), so that it too is independent of the schedule.
func seriesSteps(order string, groups []int, round, warmup int, orderSeed, linkSeed uint64) []step {
	var steps []step
	warm := func(gi int) {
		for range warmup {
			steps = append(steps, step{gi: gi, warm: true})
		}
	}
	switch order {
	case Serial:
		for _, gi := range groups {
			warm(gi)
			for seq := range round {
				steps = append(steps, step{gi: gi, seq: seq})
			}
		}
	case Interleaved:
		for _, gi := range groups {
			warm(gi)
		}
		rng := rand.New(rand.NewPCG(orderSeed, linkSeed))
		order := slices.Clone(groups)
		for seq := range round {
			rng.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
			for _, gi := range order {
				steps = append(steps, step{gi: gi, seq: seq})
			}
		}
	}
	return steps
}

// measure makes the steps' connections one after the other, recording
// the attempts (not the warm-ups) in sr.rows; the first error ends it.
func (sr *seriesRun) measure(steps []step) error {
	for _, st := range steps {
		row, err := sr.attempt(st.gi)
		if err != nil {
			return err
		}
		if st.warm {
			continue
		}
		row.Seq, row.Index = st.seq, sr.s.Offset+len(sr.rows)
		sr.rows = append(sr.rows, row)
		done := sr.r.progress(sr.idx)
		if sr.r.cfg.afterAttempt != nil {
			sr.r.cfg.afterAttempt(done, sr.link, func(e error) { sr.kill(e) })
		}
	}
	return nil
}

// attempt makes one connection to the server of group gi and returns its
// row; an error ends the series (the series was stopped, a server saw a
// connection that is not what the configuration says, or the handshake
// failed for a reason a lossy link does not explain).
func (sr *seriesRun) attempt(gi int) (Row, error) {
	r, s := sr.r, sr.s
	if err := context.Cause(sr.ctx); err != nil && sr.ctx.Err() != nil {
		return Row{}, err
	}
	var cr handshake.ClientRecord
	var derr error
	r.quiet.RLock()
	t0 := time.Now()
	if sr.epCli != nil {
		g := r.plan.Groups[gi].String()
		if testHookDialGroup != nil {
			g = testHookDialGroup(g)
		}
		cr, derr = sr.epCli.dial(sr.ctx, sr.port(gi), g)
	} else {
		sr.th.Do(func() { cr, derr = sr.clients[gi].Dial(sr.ctx, sr.port(gi)) })
	}
	r.quiet.RUnlock()
	row := Row{Series: s.ID, Scenario: s.Link.Name, Round: s.Round, Group: r.plan.Groups[gi].String(), StartNs: t0.UnixNano(), Client: cr.Local, Server: sr.port(gi), ClientNs: cr.DurationNs, Toolchain: sr.toolchain}
	if sr.ctx.Err() != nil {
		return row, context.Cause(sr.ctx)
	}
	if err := sr.slog.err(); err != nil {
		return row, err
	}
	if err := judgeAttempt(&row, cr, derr, len(sr.rows)+1); err != nil {
		return row, err
	}
	if row.Client != "" {
		r.rem.await(sr.slog, row.Client, 2*time.Second)
		row.ServerNs = sr.slog.take(row.Client, t0)
	}
	return row, nil
}

// judgeAttempt sets row.OK and row.Failure from the client's record and
// dial error: no error is a success; a network failure (classify) is a
// failure of that class, or a success whose close failed ("close-<class>")
// when the handshake completed; any other error is returned, naming the
// group and the attempt n: it is a configuration error, not a sample.
func judgeAttempt(row *Row, cr handshake.ClientRecord, derr error, n int) error {
	row.OK = derr == nil
	if derr == nil {
		return nil
	}
	class := classify(derr)
	switch {
	case class == "":
		return fmt.Errorf("handshake %s/%d: %w (not a network failure: fix the configuration)", row.Group, n, derr)
	case cr.DurationNs > 0:
		row.OK, row.Failure = true, "close-"+class // handshake done, the close timed out
	default:
		row.Failure = class
	}
	return nil
}

// finish stops the servers and the capture and checks that nothing
// failed on the way (a dead link first: it is the cause of whatever else
// failed after it, server reads or the capture's "network is down"), then
// records the link's counters, closes the link, keeps the capture (its
// SHA-256 and size in res) and puts the rows in record order.
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
func sortRows(rows []Row, groupIndex func(string) int) []Row {
	slices.SortStableFunc(rows, func(a, b Row) int {
		return cmp.Or(cmp.Compare(groupIndex(a.Group), groupIndex(b.Group)), cmp.Compare(a.Seq, b.Seq))
	})
	return rows
}

// close removes what the steps set up and finish did not: the endpoint's
// client, the capture (and its file unless finish kept it), the servers
// and the client thread.
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
	_, _, eta := schedule(series, r.est.Order, left, r.plan.Parallel)
	fmt.Fprintf(r.cfg.Log, "net:run: %d/%d handshakes (%.1f %%), last from %s, elapsed %v, ETA %v (speed %.2f x the model); %s\n",
		r.done, total, 100*float64(r.done)/float64(max(total, 1)), r.est.Series[idx].ID, elapsed.Round(time.Second), eta.Round(time.Second), speed, r.life.MachineLine())
	return r.done
}

// progressSpeed is how much slower than the estimate's model the series
// run so far: the sum over started series of the time their handshakes
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
