package netrun

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"pqrepro/datasets/netdata"
	"runtime"
	"strconv"
	"time"

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
