package netrun

import (
	"cmp"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"pqrepro/datasets/netdata"
	"reflect"
	"slices"
	"time"

	"pqrepro/experiments/instruments/handshake"
	"pqrepro/experiments/instruments/linkemu"
	"pqrepro/experiments/instruments/rederive"
	"pqrepro/experiments/instruments/runlife"
	"pqrepro/experiments/instruments/sshhost"
	"pqrepro/experiments/instruments/tcpns"
	"pqrepro/experiments/net/netjoin"
	"pqrepro/internal/atomicfile"
	"pqrepro/internal/repro"
	"pqrepro/internal/tcpstack"
)

// RunConfig says where and how to run the experiment: the run
// lifecycle's settings and Study B's own.
type RunConfig struct {
	// Config is the run lifecycle's (runlife.Config; Run sets Study).
	// meta.json names the spec relative to Root; a committed run is pinned
	// in the spec's [runs] table. Now names the run and stamps meta.json;
	// the handshake timers always use the real monotonic clock.
	runlife.Config

	// Store keeps the packet captures; nil means repro.OpenStore(Root).
	Store *repro.Store
	// CaptureInRepoMax is the size up to which captures stay in the run.
	// Captures of at most this many bytes in total
	// (uncompressed) are committed gzip'd in the run folder, larger ones go
	// to Store; 0 means rederive.InRepoMaxBytes, negative means always Store.
	CaptureInRepoMax int64
	// ProgressEvery throttles progress lines; 0 means 5 s.
	ProgressEvery time.Duration
	// LinkOptions are the emulator's host settings (prefix, netns dir).
	LinkOptions linkemu.Options
	// RemoteSSH, when set, replaces how the spec's [remote] host is
	// reached (tests: a private ssh_config, no agent). BuildRoot is the
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

// Run records Study B: the profile's scenarios into a new run folder
// data/net/<run-id>/, pinned in the spec.
//
// The folder holds inproc.csv.gz (what the process measured),
// records.csv.gz (derived from it and the captures by netjoin.DeriveRows,
// the function the build's net:records stage calls again) and meta.json;
// one pcapng per series is kept gzip'd in the run folder when they are
// small (rederive.InRepoMaxBytes in all) or in the content store. On any
// failure, cancellation (Ctrl-C) or a link that stops mid-run, the
// namespaces are removed, the run folder is aborted and nothing is
// pinned. The result is nil when no run was committed; a run committed
// but not pinned has one, beside the error.
//
// Its steps: the plan (loadPlan), the endpoint builds (buildEndpoints),
// the remote host (watchRemote), the run folder, the series (runAll),
// what they produced (collect), the records (writeRecords), the transfer
// block's trimmed captures (trimTransfer), the captures (storeCaptures),
// meta.json (runMeta), then commit and pin.
func Run(ctx context.Context, cfg RunConfig) (*runlife.Result, error) {
	if geteuid() != 0 {
		return nil, ErrNeedRoot
	}
	l, cfg, err := openLife(cfg)
	if err != nil {
		return nil, err
	}
	sp, plan, est, err := loadPlan(cfg)
	if err != nil {
		return nil, err
	}
	bundle, err := handshake.MakeCerts(handshake.CertConfig{Key: plan.CertKey, Chain: sp.CertChain, Seed: sp.Seeds.Certificates})
	if err != nil {
		return nil, fmt.Errorf("net:run: certificates: %w", err)
	}
	eps, pemDir, err := buildEndpoints(ctx, cfg, plan)
	if pemDir != "" {
		defer os.RemoveAll(pemDir)
	}
	if err != nil {
		return nil, err
	}
	buildRoot := cmp.Or(cfg.BuildRoot, cfg.Root)
	rem, err := startRemote(ctx, sp, plan, cfg.RemoteSSH, buildRoot, cfg.Log)
	if err != nil {
		return nil, l.Errorf("%w; nothing was recorded", err)
	}
	defer func() {
		if serr := rem.stop(); serr != nil {
			fmt.Fprintf(cfg.Log, "net:run: WARNING: %v\n", serr)
		}
	}()
	ctx, stopRun := watchRemote(ctx, rem)
	defer stopRun(nil)
	if err := l.Begin(ctx); err != nil {
		return nil, err
	}
	defer l.Abort()
	run := l.Run

	r := &runner{cfg: cfg, spec: sp, plan: plan, est: est, bundle: bundle, dir: run.Dir, started: time.Now(), progs: make([]seriesProgress, len(est.Series)), eps: eps, life: l}
	if pemDir != "" {
		if r.pem.cert, r.pem.key, r.pem.roots, err = endpointFiles(pemDir, bundle); err != nil {
			return nil, fmt.Errorf("net:run: %w", err)
		}
	}
	r.rem = rem
	probeBefore, idleBefore, errBefore := r.probe(ctx, "before")
	results, err := r.runAll(ctx)
	if rerr := rem.failure(err); rerr != nil {
		return nil, rerr
	}
	if err != nil {
		return nil, fmt.Errorf("net:run: %w", err)
	}
	probeAfter, idleAfter, errAfter := r.probe(ctx, "after")
	out := collect(est, results)
	if p := r.probeMeta(probeBefore, probeAfter, idleBefore, idleAfter, errBefore, errAfter); p != nil {
		out.measured["host_probe"] = p
	}
	sched := r.scheduleMeta(results)
	if err := r.writeRecords(ctx, results, out); err != nil {
		return nil, err
	}
	if err := r.trimTransfer(ctx, out, l.CaptureLimit(ctx, r.cfg.CaptureInRepoMax)); err != nil {
		return nil, err
	}
	where, err := r.storeCaptures(out, l.CaptureLimit(ctx, r.cfg.CaptureInRepoMax))
	if err != nil {
		return nil, err
	}
	m, attempts, oks := r.runMeta(ctx, out, sched, where)
	if err := ctx.Err(); err != nil {
		if rerr := rem.failure(err); rerr != nil {
			return nil, rerr
		}
	}
	if err := l.Commit(ctx, m); err != nil {
		return l.Result(), err
	}
	wall := time.Duration(sched.WallS * 1e9)
	fmt.Fprintf(cfg.Log, "net:run: %d of %d handshakes ok; wall %v, theoretical minimum %v serial (ratio %.3f), %v as scheduled (ratio %.3f); run %s %s\n",
		oks, attempts, wall.Round(time.Millisecond), est.Minimum.Round(time.Millisecond), sched.WallS/max(est.Minimum.Seconds(), 1e-9),
		est.ScheduledMinimum.Round(time.Millisecond), sched.WallS/max(est.ScheduledMinimum.Seconds(), 1e-9), run.ID, l.PinState())
	return l.Result(), nil
}

// openLife starts the run's lifecycle (runlife) and returns cfg with its
// paths resolved, its defaults filled in and its log safe for the series'
// goroutines.
func openLife(cfg RunConfig) (*runlife.Life, RunConfig, error) {
	cfg.Study = Study
	l, err := runlife.New(cfg.Config)
	if err != nil {
		return nil, cfg, err
	}
	cfg.Config = l.Config // the defaults filled
	if cfg.Store == nil {
		cfg.Store = repro.OpenStore(cfg.Root, "")
	}
	cfg.Log = &lockedWriter{w: l.Log} // series log from their own goroutines
	if cfg.ProgressEvery == 0 {
		cfg.ProgressEvery = 5 * time.Second
	}
	return l, cfg, nil
}

// loadPlan reads the spec, plans the profile, estimates its time and logs
// them. It is everything that can fail before
// anything is built.
func loadPlan(cfg RunConfig) (*Spec, Plan, Estimation, error) {
	sp, err := LoadSpec(cfg.SpecPath)
	if err != nil {
		return nil, Plan{}, Estimation{}, fmt.Errorf("net:run: %w", err)
	}
	plan, err := sp.Plan(cfg.Profile)
	if err != nil {
		return nil, Plan{}, Estimation{}, fmt.Errorf("net:run: %w", err)
	}
	est, err := Estimate(sp, cfg.Profile)
	if err != nil {
		return nil, Plan{}, Estimation{}, fmt.Errorf("net:run: %w", err)
	}
	if err := checkTransferCC(plan, tcpns.Reader{}); err != nil {
		return nil, Plan{}, Estimation{}, fmt.Errorf("net:run: %w", err)
	}
	fmt.Fprintf(cfg.Log, "net:run: profile %s, order %s, groups %v, cert %s, rounds %v\n", plan.Profile, plan.Order, plan.Groups, plan.CertKey, plan.Rounds)
	for _, sc := range plan.Scenarios {
		fmt.Fprintf(cfg.Log, "net:run:   %s\n", sc)
	}
	fmt.Fprintf(cfg.Log, "net:run: %s\n", est)
	fmt.Fprintf(cfg.Log, "net:run: schedule (planned start .. end from the first series' start):\n")
	est.WritePlan(cfg.Log)
	return sp, plan, est, nil
}

// checkTransferCC checks the transfer block's congestion controls against
// the kernel r reads, before anything is built or created. They are set
// per socket (as root, any the kernel has), so each must be available
// (tcpns.Reader.Check): an unknown one, or one the kernel lacks, is an
// error naming the available ones. A plan without them checks nothing.
func checkTransferCC(plan Plan, r tcpns.Reader) error {
	if len(plan.TransferCC) == 0 {
		return nil
	}
	if err := r.Check(plan.TransferCC, false); err != nil {
		return fmt.Errorf("profiles.%s.transfer_cc: %w", plan.Profile, err)
	}
	return nil
}

// buildEndpoints builds the plan's endpoints and their certificates'
// temporary folder. It runs before the run folder exists (builds are
// cached): a build that fails creates no run. pemDir is "" without
// toolchains; the caller removes it otherwise, also on error.
func buildEndpoints(ctx context.Context, cfg RunConfig, plan Plan) (eps map[string]*Endpoint, pemDir string, err error) {
	eps = map[string]*Endpoint{}
	if len(plan.Toolchains) == 0 {
		return eps, "", nil
	}
	for _, tc := range plan.Toolchains {
		if eps[tc], err = BuildEndpoint(ctx, cfg.Root, tc, cfg.Log); err != nil {
			return nil, "", fmt.Errorf("net:run: %w", err)
		}
		fmt.Fprintf(cfg.Log, "net:run: endpoint %s: %s (source sha256 %s)\n", tc, eps[tc].Path, eps[tc].SourceSHA[:16])
	}
	if pemDir, err = os.MkdirTemp("", "pqrepro-net-pem-"); err != nil {
		return nil, "", fmt.Errorf("net:run: %w", err)
	}
	return eps, pemDir, nil
}

// watchRemote returns a context that a dropped SSH session or a dead
// remote server cancels. Its cause is rem's error; it is ctx itself when
// the run has no remote host.
func watchRemote(ctx context.Context, rem *remoteServers) (context.Context, context.CancelCauseFunc) {
	done := rem.done()
	if done == nil {
		return ctx, func(error) {}
	}
	ctx, stopRun := context.WithCancelCause(ctx)
	go func() {
		select {
		case <-done:
			stopRun(rem.err())
		case <-ctx.Done():
		}
	}()
	return ctx, stopRun
}

// runOutputs is what the series produced, gathered by series ID for
// meta.json, and the run folder's files with their SHA-256.
type runOutputs struct {
	rows, ctlRows []netdata.Row
	xferRows      []netdata.Row // the transfer block's (our extension)
	xferInproc    []byte        // transfer-inproc.csv.gz and transfer.csv.gz as written
	xferRecs      []byte
	measured      map[string]any
	selfTests     map[string]linkemu.SelfTestReport
	linkStats     map[string]linkemu.Stats
	captures      map[string]captureInfo
	tcpStack      map[string]tcpstack.Stack // measured.tcp_stack (mergeTCPStack)
	files         map[string]string
	capPaths      map[string]string
	capBytes      int64
}

// collect gathers the series' results in the estimate's order. They are
// the measured rows apart from the serial controls', and each series' link
// self-test, link statistics and capture.
func collect(est Estimation, results []seriesResult) *runOutputs {
	out := &runOutputs{
		measured:  map[string]any{},
		selfTests: map[string]linkemu.SelfTestReport{},
		linkStats: map[string]linkemu.Stats{},
		captures:  map[string]captureInfo{},
		files:     map[string]string{},
		capPaths:  map[string]string{},
	}
	for i, se := range est.Series {
		res := results[i]
		switch {
		case se.Control:
			out.ctlRows = append(out.ctlRows, res.rows...)
		case se.Block:
			out.xferRows = append(out.xferRows, res.rows...)
		default:
			out.rows = append(out.rows, res.rows...)
		}
		out.selfTests[se.ID] = res.selfTest
		out.linkStats[se.ID] = res.linkStats
		out.capPaths[se.ID] = res.capPath
		out.capBytes += res.capBytes
		out.files[netdata.CaptureName(se.ID)] = res.capture.SHA256
		out.tcpStack = mergeTCPStack(out.tcpStack, se.ID, res.tcpStack)
	}
	return out
}

// mergeTCPStack adds one series' TCP stacks (by side) to the run's
// measured.tcp_stack and returns it.
//
// A side's first stack is kept under the side's name ("a", "b"); a later
// series whose stack differs adds its own under "<series>/<side>", so that
// one entry per side says it all when every series had the same stack.
func mergeTCPStack(all map[string]tcpstack.Stack, series string, st map[string]tcpstack.Stack) map[string]tcpstack.Stack {
	if all == nil {
		all = map[string]tcpstack.Stack{}
	}
	for _, side := range slices.Sorted(maps.Keys(st)) {
		prev, seen := all[side]
		switch {
		case !seen:
			all[side] = st[side]
		case !reflect.DeepEqual(prev, st[side]):
			all[series+"/"+side] = st[side]
		}
	}
	return all
}

// writeRecords writes inproc.csv.gz and the records derived from it and
// the captures. They are derived by netjoin.DeriveRows: the
// function the build's net:records stage calls on the committed run. It
// also writes the measurement hygiene (hygiene.go) and fills each series'
// capture join counts.
func (r *runner) writeRecords(ctx context.Context, results []seriesResult, out *runOutputs) error {
	inproc, err := netdata.EncodeInproc(out.rows)
	if err != nil {
		return fmt.Errorf("net:run: %w", err)
	}
	if err := atomicfile.WriteFile(filepath.Join(r.dir, rederive.InprocFile), inproc, 0o644); err != nil {
		return fmt.Errorf("net:run: %w", err)
	}
	out.files[rederive.InprocFile] = repro.HashBytes(inproc)
	recBytes, joins, err := netjoin.DeriveRows(ctx, inproc, r.plan.Timeout, func(series string) (io.ReadCloser, error) {
		return rederive.OpenFile(out.capPaths[series], out.files[netdata.CaptureName(series)])
	})
	if err != nil {
		return fmt.Errorf("net:run: %w", err)
	}
	// Measurement hygiene (hygiene.go): the serial controls' rows and
	// the late-packet record.
	ctlJoins, err := r.writeHygiene(ctx, results, out.ctlRows, out.capPaths, out.files, out.measured)
	if err != nil {
		return fmt.Errorf("net:run: %w", err)
	}
	xferJoins, err := r.writeTransfer(ctx, out)
	if err != nil {
		return fmt.Errorf("net:run: %w", err)
	}
	for i, se := range r.est.Series {
		ji, ok := joins[se.ID]
		switch {
		case se.Control:
			ji, ok = ctlJoins[se.ID]
		case se.Block:
			ji, ok = xferJoins[se.ID]
		}
		ci := results[i].capture
		if ok {
			ci.Connections, ci.Joined, ci.Unmatched = ji.Connections, ji.Joined, ji.Unmatched
		}
		out.captures[se.ID] = ci
	}
	if err := atomicfile.WriteFile(filepath.Join(r.dir, netdata.RecordsFile), recBytes, 0o644); err != nil {
		return fmt.Errorf("net:run: %w", err)
	}
	out.files[netdata.RecordsFile] = repro.HashBytes(recBytes)
	return nil
}

// writeTransfer writes the transfer block's files (our extension, issue 34).
// They are transfer-inproc.csv.gz and transfer.csv.gz derived from it and the
// block's captures by netjoin.DeriveRows, the function records.csv.gz is
// derived with. It says in measured.transfer what they are. A run without the
// block writes neither and nothing in meta.json changes.
func (r *runner) writeTransfer(ctx context.Context, out *runOutputs) (map[string]netjoin.JoinInfo, error) {
	if len(out.xferRows) == 0 {
		return nil, nil
	}
	inproc, err := netdata.EncodeInproc(out.xferRows)
	if err != nil {
		return nil, err
	}
	recs, joins, err := netjoin.DeriveRows(ctx, inproc, r.plan.Timeout, func(series string) (io.ReadCloser, error) {
		return rederive.OpenFile(out.capPaths[series], out.files[netdata.CaptureName(series)])
	})
	if err != nil {
		return nil, fmt.Errorf("transfer block: %w", err)
	}
	out.xferInproc, out.xferRecs = inproc, recs
	for name, b := range map[string][]byte{netdata.TransferInprocFile: inproc, netdata.TransferFile: recs} {
		if err := atomicfile.WriteFile(filepath.Join(r.dir, name), b, 0o644); err != nil {
			return nil, err
		}
		out.files[name] = repro.HashBytes(b)
	}
	tm := map[string]any{
		"file":           netdata.TransferFile,
		"response_bytes": r.plan.TransferSizes,
		"round":          r.plan.TransferRound,
		"note":           "our extension (issue 34), not the original's design: after the handshake the client sends one request and the server answers with response_bytes bytes; run as a block after every round's series; its rows are in " + netdata.TransferFile + ", never records.csv.gz",
	}
	if r.plan.Controlled() {
		tm["order"] = r.plan.transferOrder()
		tm["order_seed"] = r.spec.Seeds.Order
		tm["congestion_control"] = r.plan.TransferCC
		tm["controlled_note"] = "the controlled block (issue 41): with order interleaved a series holds both groups, each pair of connections in a random order from PCG(order_seed, the series' link seed), the same for every congestion control and toolchain of a (scenario, size); size 0 is the handshake-only connection, inside the block; each listed congestion control is set on every socket of its series by the endpoint (TCP_CONGESTION), none listed leaves the namespace's default; the cc column is what each connection's client socket read back (the server's is checked to match), position its place in the series' time order"
	}
	if r.plan.TransferPaddedArm {
		tm["padded_arm"] = map[string]any{
			"arm":       PaddedArm,
			"group":     tls.X25519.String(),
			"pad_bytes": r.plan.TransferPadBytes,
			"pad_parts": map[string]int{"hybrid_server_share": HybridServerShareBytes, "x25519_share": X25519ShareBytes, "status_request_framing": StatusRequestFramingBytes},
			"port":      r.spec.Port + len(r.plan.Groups),
			"how":       paddedHow,
			"note":      "analysis/ttlb/mechanism2.txt: the arm's rows have group " + PaddedArm + " (cap_group, read from the capture, is X25519); every triple of positions 3k..3k+2 holds the three arms in a random order from PCG(order_seed, the series' link seed)",
		}
	}
	out.measured["transfer"] = tm
	return joins, nil
}

// storeCaptures commits small captures with the run, compressed, and puts
// large ones (above limit, rederive.InRepoLimit; a repeat run's always:
// runlife.Life.CaptureLimit) in the content store. meta.json names each by the SHA-256 of
// its uncompressed bytes either way. It returns where they went, for
// meta.json's notes.
func (r *runner) storeCaptures(out *runOutputs, limit int64) (where string, err error) {
	inRepo := out.capBytes <= rederive.InRepoLimit(limit)
	for _, se := range r.est.Series {
		p := out.capPaths[se.ID]
		if inRepo {
			name := netdata.CaptureName(se.ID) + rederive.GzipExt
			dst := filepath.Join(r.dir, filepath.FromSlash(name))
			if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
				return "", fmt.Errorf("net:run: %w", err)
			}
			sum, err := rederive.Gzip(p, dst)
			if err != nil {
				return "", fmt.Errorf("net:run: %w", err)
			}
			out.files[name] = sum
		} else if _, err := r.cfg.Store.Put(p); err != nil {
			return "", fmt.Errorf("net:run: store the capture of %s: %w", se.ID, err)
		}
		if err := os.Remove(p); err != nil {
			return "", fmt.Errorf("net:run: %w", err)
		}
	}
	where = "in the content store under their SHA-256 (repro.Store)"
	if inRepo {
		where = "committed in the run folder as captures/<series>.pcapng.gz (meta.json names the uncompressed bytes' SHA-256)"
	}
	return where, nil
}
