package netstudy

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
	"pqrepro/experiments/netns"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"syscall"
	"time"

	"pqrepro/experiments/capture"
	"pqrepro/experiments/handshake"
	"pqrepro/experiments/linkemu"
	"pqrepro/experiments/netjoin"
	"pqrepro/experiments/rederive"
	"pqrepro/internal/atomicfile"
	"pqrepro/internal/provenance"
	"pqrepro/internal/repro"
	"pqrepro/internal/spec"
)

// RunConfig says where and how to run the experiment.
type RunConfig struct {
	// Root is the repository root. meta.json names the spec relative to it
	// and the content store defaults to repro.OpenStore(Root).
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
func Run(ctx context.Context, cfg RunConfig) (err error) {
	if geteuid() != 0 {
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
	cfg.Log = &lockedWriter{w: cfg.Log} // series log from their own goroutines
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

	r := &runner{cfg: cfg, spec: sp, plan: plan, est: est, bundle: bundle, dir: run.Dir, started: time.Now(), progs: make([]seriesProgress, len(est.Series)), eps: eps}
	if pemDir != "" {
		if r.pem.cert, r.pem.key, r.pem.roots, err = endpointFiles(pemDir, bundle); err != nil {
			return fmt.Errorf("net:run: %w", err)
		}
	}
	results, err := r.runAll(ctx)
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
		files[netjoin.CaptureName(se.ID)] = res.capture.SHA256
	}
	sched := r.scheduleMeta(results)

	// What the process measured (inproc.csv.gz), then the records derived
	// from it and the captures by netjoin.DeriveRows: the function the
	// build's net:records stage calls on the committed run.
	inproc, err := netjoin.EncodeInproc(rows)
	if err != nil {
		return fmt.Errorf("net:run: %w", err)
	}
	if err := atomicfile.WriteFile(filepath.Join(run.Dir, rederive.InprocFile), inproc, 0o644); err != nil {
		return fmt.Errorf("net:run: %w", err)
	}
	files[rederive.InprocFile] = repro.HashBytes(inproc)
	recBytes, joins, err := netjoin.DeriveRows(ctx, inproc, plan.Timeout, func(series string) (io.ReadCloser, error) {
		return rederive.OpenFile(capPaths[series], files[netjoin.CaptureName(series)])
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
			name := netjoin.CaptureName(se.ID) + rederive.GzipExt
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
	measured["design"] = designMeta{Order: plan.Order, Groups: groups, Rounds: plan.Rounds, CertKey: string(plan.CertKey), CertChain: sp.CertChain, Warmup: plan.Warmup, TimeoutMs: float64(plan.Timeout) / 1e6, Scenarios: scen, Toolchains: plan.Toolchains}
	if len(eps) > 0 {
		em := map[string]any{}
		for tc, ep := range eps {
			em[tc] = map[string]string{"go_version": ep.GoVersion, "source_sha256": ep.SourceSHA, "source": EndpointDir}
		}
		measured["endpoints"] = em
	} else {
		measured["endpoints"] = map[string]any{InProcess: map[string]string{"go_version": runtime.Version(), "source": "experiments/handshake (in process)"}}
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

	m := provenance.Collect(ctx, provenance.Options{Root: cfg.Root, Git: cfg.Git})
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
	for _, se := range est.Series {
		m.Seeds["link-"+se.ID] = se.Link.Seed
	}
	m.Start, m.End = start.UTC(), now().UTC()
	m.Board = "host: linkemu userspace link between two network namespaces"
	m.Measured = measured
	m.Files = files
	m.Notes = []string{
		"captures/<series>.pcapng are " + where + ", one per series (scenario-round-group), each from its own link; they hold the client key log as a Decryption Secrets Block; records.csv.gz is derived from them and inproc.csv.gz by experiments/netjoin (the build's net:records stage re-derives it)",
		"latency ths_ns: capture on namespace A's TUN device (the client side), first segment of the ClientHello to first segment of the client Finished",
		"selftest, link_stats and capture are keyed by series; link-<series> seeds are SeriesSeed(scenario seed, round, group code point)",
		fmt.Sprintf("wall_time_s: first series' link start to last series' end (self-tests, capture joins included); handshake_work_s: sum of the series' handshake phases; theoretical_min_s = sum over connections of %d x RTT; scheduled_min_s: the schedule's makespan at that minimum; schedule: which series ran when, with which", RTTsPerConnection),
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
	if err := spec.Pin(cfg.SpecPath, cfg.Profile, spec.Sealed(run.ID, run.Manifest)); err != nil {
		return fmt.Errorf("net:run: run %s is committed but could not be pinned: %w (add %s = %q under [runs] by hand)", run.ID, err, cfg.Profile, spec.Sealed(run.ID, run.Manifest))
	}
	wall := time.Duration(sched.WallS * 1e9)
	fmt.Fprintf(cfg.Log, "net:run: %d of %d handshakes ok; wall %v, theoretical minimum %v serial (ratio %.3f), %v as scheduled (ratio %.3f); run %s pinned for %s\n",
		oks, attempts, wall.Round(time.Millisecond), est.Minimum.Round(time.Millisecond), sched.WallS/max(est.Minimum.Seconds(), 1e-9),
		est.ScheduledMinimum.Round(time.Millisecond), sched.WallS/max(est.ScheduledMinimum.Seconds(), 1e-9), run.ID, cfg.Profile)
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
	// Toolchains of the endpoint builds, the primary first; absent when
	// the handshakes ran in process.
	Toolchains []string `json:"toolchains,omitempty"`
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
	eps     map[string]*Endpoint // endpoint builds by toolchain
	pem     struct{ cert, key, roots string }

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
// store it. Everything it created is removed when it returns.
func (r *runner) series(ctx context.Context, idx int, s Series) (res seriesResult, err error) {
	res.start = time.Now()
	sc := s.Link
	scCtx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	linkCtx, killLink := context.WithCancelCause(scCtx)
	defer killLink(nil)
	stc := linkemu.SelfTestConfig{Probes: r.spec.SelfTest.Probes, Tolerance: msDur(r.spec.SelfTest.ToleranceMs)}
	n := len(r.est.Series)
	fmt.Fprintf(r.cfg.Log, "net:run: [%d/%d] %s: starting its link (seed %d) and the self-test\n", idx+1, n, s.ID, sc.Seed)
	// A self-test that misses the delay is taken once more (a fresh link,
	// the same seed) before the run is refused: one stall of the machine
	// during the probes should not end a run, a link that is wrong twice
	// should. The first miss is logged.
	var link *linkemu.Link
	var rep linkemu.SelfTestReport
	for attempt := 1; ; attempt++ {
		r.quiet.Lock()
		link, rep, err = linkemu.StartVerified(linkCtx, sc, r.linkOptions(), stc)
		r.quiet.Unlock()
		var ae *linkemu.AccuracyError
		if err == nil || !errors.As(err, &ae) {
			break
		}
		if attempt == 2 || linkCtx.Err() != nil {
			return res, fmt.Errorf("the link self-test failed twice, so the run does not start: %w", err)
		}
		fmt.Fprintf(r.cfg.Log, "net:run: [%d/%d] %s: the self-test missed (%v); testing a fresh link once more\n", idx+1, n, s.ID, err)
	}
	if err != nil {
		return res, err
	}
	defer link.Close()
	res.selfTest = rep
	fmt.Fprintf(r.cfg.Log, "net:run: [%d/%d] %s: self-test RTT p50 %.3f ms (expected %.3f, error %+.3f ms), loss %.3f\n",
		idx+1, n, s.ID, rep.P50Ms, rep.ExpectedRTTms, rep.ErrorP50Ms, rep.Loss)

	// A link that stops by itself (the forwarder died) ends the series,
	// and through runAll the run.
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
	th, err := netns.NewThread(epA.Path)
	if err != nil {
		return res, fmt.Errorf("client thread in %s: %w", epA.Namespace, err)
	}
	defer th.Close()

	// Servers in B, one per group of the series, on port + the group's
	// index in the spec (the same address as in a serial run).
	port := func(gi int) string {
		return net.JoinHostPort(epB.Addr.String(), strconv.Itoa(r.spec.Port+gi))
	}
	slog := &serverLog{recs: map[string][]handshake.ServerRecord{}}
	ep := r.eps[s.Toolchain] // nil: in process
	var epSrv *epServer
	var epCli *epClient
	if ep != nil {
		// The endpoint's server process in B: a child is in the network
		// namespace of the thread that forks it.
		var listen []string
		for _, gi := range s.Groups {
			listen = append(listen, port(gi)+"="+r.plan.Groups[gi].String())
		}
		inB := func(fn func()) { link.RunIn(linkemu.B, func() error { fn(); return nil }) }
		if epSrv, err = startEndpointServer(scCtx, ep, r.pem.cert, r.pem.key, r.plan.Timeout, listen, inB, slog.add); err != nil {
			return res, fmt.Errorf("%s in %s: %w", s.ID, epB.Namespace, err)
		}
		defer func() {
			if epSrv != nil {
				epSrv.close()
			}
		}()
	}
	lns := make([]net.Listener, len(s.Groups))
	if ep == nil {
		err = link.RunIn(linkemu.B, func() error {
			for k, gi := range s.Groups {
				ln, err := net.Listen("tcp", port(gi))
				if err != nil {
					return fmt.Errorf("listen %s in %s: %w", port(gi), epB.Namespace, err)
				}
				lns[k] = ln
			}
			return nil
		})
	}
	if err != nil {
		for _, ln := range lns {
			if ln != nil {
				ln.Close()
			}
		}
		return res, err
	}
	srvCtx, stopSrv := context.WithCancel(context.Background())
	var srvWG sync.WaitGroup
	srvErrs := make([]error, len(lns))
	defer func() { stopSrv(); srvWG.Wait() }()
	for k, gi := range s.Groups {
		if ep != nil {
			break
		}
		g := r.plan.Groups[gi]
		exp := handshake.Expect{Group: g, Key: r.plan.CertKey, Chain: r.spec.CertChain}
		srv := &handshake.Server{TLS: handshake.ServerTLSConfig(r.bundle, g, nil), Expect: exp, Timeout: r.plan.Timeout}
		srvWG.Add(1)
		go func() { defer srvWG.Done(); srvErrs[k] = srv.Serve(srvCtx, lns[k], slog.add) }()
	}

	// Capture on A's TUN device for the whole series. On TUN every
	// packet is seen once, so the loopback outgoing filter must be off.
	// Hidden until Run places it (committed gzip'd or in the store); a
	// failed series removes it, a failed run removes the run folder.
	capPath := filepath.Join(r.dir, ".capture-"+s.ID+".pcapng")
	keepCapture := false
	defer func() {
		if !keepCapture {
			os.Remove(capPath)
		}
	}()
	var capt *capture.Capture
	off := false
	th.Do(func() {
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

	if ep != nil {
		if epCli, err = startEndpointClient(ep, r.pem.roots, r.plan.Timeout, capt.KeyLog(), th.Do); err != nil {
			return res, fmt.Errorf("%s in %s: %w", s.ID, epA.Namespace, err)
		}
		defer epCli.close()
	}
	toolchain := runtime.Version()
	if ep != nil {
		toolchain = ep.GoVersion
	}
	clients := make([]*handshake.Client, len(r.plan.Groups))
	for _, gi := range s.Groups {
		g := r.plan.Groups[gi]
		exp := handshake.Expect{Group: g, Key: r.plan.CertKey, Chain: r.spec.CertChain}
		clients[gi] = &handshake.Client{TLS: handshake.ClientTLSConfig(r.bundle.Roots, "localhost", []tls.CurveID{g}, capt.KeyLog()), Expect: exp, Timeout: r.plan.Timeout}
	}

	se := r.est.Series[idx]
	attempt := func(gi int) (Row, error) {
		if err := context.Cause(scCtx); err != nil && scCtx.Err() != nil {
			return Row{}, err
		}
		var cr handshake.ClientRecord
		var derr error
		r.quiet.RLock()
		t0 := time.Now()
		if epCli != nil {
			g := r.plan.Groups[gi].String()
			if testHookDialGroup != nil {
				g = testHookDialGroup(g)
			}
			cr, derr = epCli.dial(scCtx, port(gi), g)
		} else {
			th.Do(func() { cr, derr = clients[gi].Dial(scCtx, port(gi)) })
		}
		r.quiet.RUnlock()
		row := Row{Series: s.ID, Scenario: s.Link.Name, Round: s.Round, Group: r.plan.Groups[gi].String(), StartNs: t0.UnixNano(), Client: cr.Local, Server: port(gi), ClientNs: cr.DurationNs, Toolchain: toolchain}
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
				return row, fmt.Errorf("handshake %s/%d: %w (not a network failure: fix the configuration)", row.Group, len(res.rows)+1, derr)
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

	var rows []Row // time order
	record := func(gi, seq int) error {
		row, err := attempt(gi)
		if err != nil {
			return err
		}
		row.Seq, row.Index = seq, s.Offset+len(rows)
		rows = append(rows, row)
		done := r.progress(idx)
		if r.cfg.afterAttempt != nil {
			r.cfg.afterAttempt(done, link, func(e error) { killLink(e) })
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
	res.hsStart = time.Now()
	r.mu.Lock()
	r.progs[idx].hsStart = res.hsStart
	r.mu.Unlock()
	switch r.plan.Order {
	case Serial:
		for _, gi := range s.Groups {
			if err := warm(gi); err != nil {
				return res, err
			}
			for seq := range s.Round {
				if err := record(gi, seq); err != nil {
					return res, err
				}
			}
		}
	case Interleaved:
		for _, gi := range s.Groups {
			if err := warm(gi); err != nil {
				return res, err
			}
		}
		// The pair order of an interleaved series: PCG(seeds.order, the
		// series' seed), so it too is independent of the schedule.
		rng := rand.New(rand.NewPCG(r.spec.Seeds.Order, sc.Seed))
		order := slices.Clone(s.Groups)
		for seq := range s.Round {
			rng.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
			for _, gi := range order {
				if err := record(gi, seq); err != nil {
					return res, err
				}
			}
		}
	}
	res.hsEnd = time.Now()

	stopSrv()
	srvWG.Wait()
	if epSrv != nil {
		err := epSrv.close()
		epSrv = nil
		if err != nil && link.Err() == nil {
			return res, fmt.Errorf("endpoint server: %w", err)
		}
	}
	// A dead link is the cause of whatever else failed after it (server
	// reads, the capture's "network is down"): report it first.
	if lerr := link.Err(); lerr != nil {
		return res, fmt.Errorf("the link emulator stopped mid-run: %w", lerr)
	}
	for k, e := range srvErrs {
		if e != nil {
			return res, fmt.Errorf("server for %s: %w", r.plan.Groups[s.Groups[k]], e)
		}
	}
	if err := slog.err(); err != nil {
		return res, err
	}
	capStopped = true
	cst, err := capt.Stop()
	if lerr := link.Err(); lerr != nil {
		return res, fmt.Errorf("the link emulator stopped mid-run: %w", lerr)
	}
	if err != nil {
		return res, err
	}
	if err := cst.Valid(); err != nil {
		return res, err
	}
	if err := context.Cause(scCtx); scCtx.Err() != nil {
		return res, err
	}
	res.linkStats = link.Stats()
	if err := link.Close(); err != nil {
		return res, err
	}
	res.late, res.toolchain = link.LateEvents(), toolchain
	sum, err := repro.HashFile(capPath)
	if err != nil {
		return res, fmt.Errorf("hash the capture: %w", err)
	}
	fi, err := os.Stat(capPath)
	if err != nil {
		return res, err
	}
	keepCapture = true
	res.capPath, res.capBytes = capPath, fi.Size()
	res.capture = captureInfo{SHA256: sum, Packets: cst.Packets, KernelSeen: cst.KernelSeen, KernelDrops: cst.KernelDrops, Truncated: cst.Truncated}
	// Record order inside the series: by group (spec order), then seq.
	// A serial series is already in it; an interleaved one is in time order.
	slices.SortStableFunc(rows, func(a, b Row) int {
		return cmp.Or(cmp.Compare(r.groupIndex(a.Group), r.groupIndex(b.Group)), cmp.Compare(a.Seq, b.Seq))
	})
	res.rows = rows
	res.end = time.Now()
	r.mu.Lock()
	r.progs[idx].finished = true
	r.mu.Unlock()
	fmt.Fprintf(r.cfg.Log, "net:run: [%d/%d] %s: done, %d handshakes in %v (minimum %v)\n",
		idx+1, n, s.ID, len(rows), res.hsEnd.Sub(res.hsStart).Round(time.Millisecond), se.Minimum.Round(time.Millisecond))
	return res, nil
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
	var spent, expected float64
	left := make([]time.Duration, len(r.est.Series))
	series := make([]Series, len(r.est.Series))
	for i, se := range r.est.Series {
		series[i] = se.Series
		p := r.progs[i]
		perConn := float64(se.Expected) / float64(max(1, se.Connections))
		if !p.hsStart.IsZero() && p.done > 0 {
			spent += float64(now.Sub(p.hsStart))
			expected += float64(p.done) * perConn
		}
		if !p.finished {
			left[i] = time.Duration(float64(se.Expected) * (1 - float64(p.done)/float64(max(1, se.Handshakes()))))
		}
	}
	speed := 1.0
	if expected > 0 {
		speed = min(max(spent/expected, 0.5), 10)
	}
	for i := range left {
		left[i] = time.Duration(float64(left[i]) * speed)
	}
	_, _, eta := schedule(series, r.est.Order, left, r.plan.Parallel)
	fmt.Fprintf(r.cfg.Log, "net:run: %d/%d handshakes (%.1f %%), last from %s, elapsed %v, ETA %v (speed %.2f x the model)\n",
		r.done, total, 100*float64(r.done)/float64(max(total, 1)), r.est.Series[idx].ID, elapsed.Round(time.Second), eta.Round(time.Second), speed)
	return r.done
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
