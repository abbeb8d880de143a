package tlsrun

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"pqrepro/datasets/tlsdata"
	"pqrepro/experiments/instruments/capture"
	"pqrepro/experiments/instruments/handshake"
	"pqrepro/experiments/instruments/rederive"
	"pqrepro/experiments/instruments/runlife"
	"pqrepro/experiments/instruments/sshhost"
	"pqrepro/experiments/tls/bridgenet"
	"pqrepro/experiments/tls/dockernet"
	"pqrepro/experiments/tls/openssl"
	"pqrepro/experiments/tls/tlsjoin"
	"pqrepro/internal/atomicfile"
	"pqrepro/internal/deps"
	"pqrepro/internal/provenance"
	"pqrepro/internal/repro"
	"pqrepro/internal/spec"
	"pqrepro/internal/tcpstack"
)

// Files of a run folder besides RecordsFile (record.go) and meta.json.
const (
	// ConfigsFile lists the run's configurations (name, key, group, chain,
	// the paper's label, baseline) as JSON, in Spec.Configs order.
	ConfigsFile = "configs.json"
	// CaptureName is the loopback capture's name in meta.json Files.
	// Files gives the SHA-256
	// of its uncompressed bytes); the file is committed in the run folder
	// as CaptureName.gz when it is small (rederive.InRepoMaxBytes), else
	// kept in the content store under that SHA-256.
	CaptureName = tlsjoin.CaptureName
)

// ErrInterrupted is wrapped by the error of a run whose context ended
// before it was complete. The capture was closed,
// the incomplete run removed and not registered. It is
// runlife.ErrInterrupted, the same for every study.
var ErrInterrupted = runlife.ErrInterrupted

// ErrInvalid is wrapped by the error of a run whose data cannot be used.
// That is a run with kernel packet drops, a connection missing from the
// capture); the run is removed and not registered.
var ErrInvalid = errors.New("run invalid, removed and not registered")

// RunConfig configures Run: the run lifecycle's settings and Study A's own.
type RunConfig struct {
	// Config is the run lifecycle's (runlife.Config; Run sets Study).
	// The spec's seeds are the run's seeds (write another spec to inject
	// others). Verbose adds per-configuration detail to the log. Now names
	// the run and stamps meta.json; the handshake timers, the measured
	// rate and the progress throttle always use the real monotonic clock:
	// they measure the machine.
	runlife.Config

	// Store receives the capture; nil is repro.OpenStore(Root).
	Store *repro.Store
	// CaptureInRepoMax is the size up to which captures stay in the run.
	// Captures of at most this many bytes in total
	// (uncompressed) are committed gzip'd in the run folder, larger ones go
	// to Store; 0 means rederive.InRepoMaxBytes, negative means always Store.
	CaptureInRepoMax int64
	// Progress, when set, is called after every connection (done counts
	// warm-ups too).
	Progress func(done, total int)
	// ProgressEvery is the interval of progress lines; 0 is 2 s.
	ProgressEvery time.Duration
	// BuildRoot is the root whose .cache/openssl holds the OpenSSL build
	// (experiments/tls/openssl) when a configuration uses that stack; "" is
	// Root.
	BuildRoot string
	// RemoteSSH, when set, replaces how the remote path's host is reached
	// ([remote] of the spec); tests use it for a private ssh_config and
	// no agent. The static pqrepro for the host is built from BuildRoot.
	RemoteSSH *sshhost.Options
}

// Requirements lists what Run needs installed for the spec under root. That
// is iproute2 when a profile of the spec runs the bridge path
// (bridgenet.Requirements); Debian's docker.io and docker-compose when it
// runs the docker path (dockernet.Requirements); what building OpenSSL
// needs when the spec measures the openssl stack (stack.go); beyond that Go
// and root (or CAP_NET_RAW) for the AF_PACKET capture, which is not
// something a package installs, so Run checks it itself (CheckPermission).
func Requirements(root string) []deps.Requirement {
	reqs := stackRequirements(root)
	s, err := LoadSpec(filepath.Join(root, spec.Path(Study)))
	if err != nil {
		return reqs // Run reports the spec's problem
	}
	for _, p := range append([]string{""}, slices.Sorted(maps.Keys(s.Profiles))...) {
		if slices.Contains(s.Paths(p), PathRemote) {
			reqs = append(reqs, sshhost.Requirements()...)
			break
		}
	}
	if slices.Contains(s.allPaths(), PathDocker) {
		reqs = append(reqs, dockernet.Requirements()...)
	}
	for _, p := range append([]string{""}, slices.Sorted(maps.Keys(s.Profiles))...) {
		if slices.Contains(s.Paths(p), PathBridge) || slices.Contains(s.Paths(p), PathDocker) {
			return append(reqs, bridgenet.Requirements()...)
		}
	}
	return reqs
}

// CheckPermission returns a clear error (wrapping capture.ErrNeedRoot) when
// the process may not open an AF_PACKET socket. It opens one with protocol
// 0, which receives nothing, and closes it: no file is created.
func CheckPermission() error {
	fd, err := unix.Socket(unix.AF_PACKET, unix.SOCK_RAW|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		if errors.Is(err, unix.EPERM) || errors.Is(err, unix.EACCES) {
			return fmt.Errorf("tls:run: %w (for example `sudo -E mage tls:run`); nothing was created", capture.ErrNeedRoot)
		}
		return fmt.Errorf("tls:run: open a packet socket: %w; nothing was created", err)
	}
	unix.Close(fd)
	return nil
}

// testHookCaptureStats lets tests fake what the kernel reported (drops
// cannot be provoked reliably); nil outside tests.
var testHookCaptureStats func(*capture.Stats)

// runner is the state of one Run. It holds the plan, the servers and the
// paths they run on, the stacks they use, and what the run measured
// besides.
type runner struct {
	logger
	cfg     RunConfig
	spec    *Spec
	configs []Config
	plan    []Step
	servers []*server
	// paths are the run's paths (paths.go), in startPaths' order.
	paths []path
	stk   stackState    // stack.go
	cli   *cliStack     // the openssl-cli stack (clistack.go), nil without
	life  *runlife.Life // the run's lifecycle; its MachineLine goes on progress lines
	// skippedPaths are the paths the profile names that this host cannot
	// run, with the reason (meta.json notes).
	skippedPaths []string
	// host is the host's cryptography measured before and after the
	// handshakes (clistack.go measureHost), hostErrs what failed.
	host     map[string]*openssl.HostCrypto
	hostErrs []string
	tcpStack map[string]tcpstack.Stack // measured.tcp_stack, read when the paths are up
}

// startPaths starts every path a unit runs on, in this order (the
// captures', the log's and meta.json's), each with its own type. On an
// error the paths started so far stay in r.paths for closePaths.
func (r *runner) startPaths(ctx context.Context) error {
	for _, p := range []struct {
		name  string
		start func(context.Context) (path, error)
	}{
		{PathLoopback, func(context.Context) (path, error) { return &loopbackPath{r.logger}, nil }},
		{PathBridge, r.startBridge},
		{PathDocker, r.startDocker},
		{PathRemote, r.startRemote},
	} {
		if !hasPath(r.configs, p.name) {
			continue
		}
		started, err := p.start(ctx)
		if err != nil {
			return err
		}
		r.paths = append(r.paths, started)
	}
	return r.startEmulated(ctx)
}

// closePaths closes the started paths, the last started first.
func (r *runner) closePaths() {
	for i := len(r.paths) - 1; i >= 0; i-- {
		r.paths[i].close()
	}
}

// path is the run's path named name ("" is loopback), nil when the run
// has none.
func (r *runner) path(name string) path {
	if name == "" {
		name = PathLoopback
	}
	for _, p := range r.paths {
		if p.name() == name {
			return p
		}
	}
	return nil
}

// Run records one Study A dataset into data/tls/<run-id>/ and pins it
// for the profile in the spec.
//
// The steps (the package documentation tells them in full): the spec and
// the permission to capture; the stacks and paths; one server per
// configuration and path; the run folder (runlife); one capture per path;
// every connection of Plan, one after another; inproc.csv.gz and
// configs.json; records.csv.gz by tlsjoin.DeriveRecords; the captures, in
// the run folder or the content store; meta.json; commit and pin. The
// result is nil when no run was committed; a run committed but not pinned
// has one, beside the error.
//
// Any failure, a kernel packet drop, a connection the capture does not
// match, the end of ctx (Ctrl-C; the pipeline cancels it on SIGINT and
// SIGTERM), or a bridge network that someone removes mid-run (the error
// wraps bridgenet.ErrRemoved) removes the incomplete run folder: no run is
// registered, the spec's pins and earlier runs are untouched, and every
// namespace and device the run made is deleted. Errors before the run
// folder exists (spec, profile, permission, port) leave nothing behind.
func Run(ctx context.Context, cfg RunConfig) (res *runlife.Result, err error) {
	cfg.Study = Study
	l, err := runlife.New(cfg.Config)
	if err != nil {
		return nil, err
	}
	// A failure while ctx ends (a child process killed by the
	// cancellation, say) is an interruption, and says so.
	defer func() {
		if err != nil && !errors.Is(err, runlife.ErrInterrupted) {
			if ierr := l.Interrupted(ctx); ierr != nil {
				err = fmt.Errorf("%w; as it stopped: %v", ierr, err)
			}
		}
	}()
	cfg.Config = l.Config // the defaults filled
	r := &runner{logger: logger{w: l.Log, verbose: l.Verbose}, cfg: cfg, life: l}
	store := cfg.Store
	if store == nil {
		store = repro.OpenStore(cfg.Root, "")
	}
	t0 := time.Now()

	// 1. Everything that can fail without creating anything.
	prof, err := r.load()
	if err != nil {
		return nil, err
	}

	// 2. The OpenSSL build in the cache when a configuration uses it, the
	// bridge path's namespaces (removed on every path out), then
	// certificates and servers (CPU and sockets, no files).
	if err := r.prepareStacks(ctx); err != nil {
		return nil, err
	}
	defer r.stopStacks()
	err = r.startPaths(ctx)
	defer r.closePaths()
	if err != nil {
		return nil, err
	}
	if r.tcpStack, err = r.readTCPStacks(); err != nil {
		return nil, err
	}
	if err := r.startServers(); err != nil {
		return nil, err
	}
	defer r.stopServers()
	if r.cli != nil {
		if err := r.cli.wait(ctx, r.servers); err != nil {
			return nil, err
		}
	}
	r.logServers()

	// 3. The run folder: removed on every path that does not commit it.
	// Begin's pre-flight samples the machine before the host
	// cryptography is measured: openssl speed keeps both cores busy for
	// about 13 s, and its 1-minute load, which the pre-flight cannot
	// tell from another job's, made quiet machines look busy. Inside
	// the run its processes are the run's own.
	if err := l.Begin(ctx); err != nil {
		return nil, err
	}
	defer l.Abort()
	r.measureHost(ctx, "before")
	run := l.Run
	r.logf("run %s: recording into %s", run.ID, run.Dir)

	// The captures get a context that is not cancelled with ctx, so that
	// Stop (below, on every path) drains the socket and writes a
	// complete file even after Ctrl-C. One capture per path.
	caps, err := r.startCaptures(context.WithoutCancel(ctx), run.Dir)
	defer stopCaptures(caps)
	if err != nil {
		return nil, err
	}
	conns, wall, st, err := r.handshakes(ctx, caps)
	if err != nil {
		return nil, err
	}
	rate := float64(len(conns)) / wall.Seconds()
	r.logf("handshakes: %d in %s, %.0f/s", len(conns), wall.Round(time.Millisecond), rate)
	r.measureHost(ctx, "after")

	// 4. What the process measured and the records derived from it.
	files := map[string]string{}
	recs, js, err := r.deriveRecords(ctx, conns, caps, files)
	if err != nil {
		return nil, err
	}

	// 5. The dataset.
	if err := r.writeDataset(recs, js, files); err != nil {
		return nil, err
	}
	if err := r.storeCaptures(caps, files, store, l.CaptureLimit(ctx, r.cfg.CaptureInRepoMax)); err != nil {
		return nil, err
	}
	meta := r.runMeta(ctx, prof, caps, files, st, js, len(recs), wall, rate)

	// 6. Register: meta.json, commit, then pin.
	if err := l.Commit(ctx, meta); err != nil {
		return l.Result(), err // a run that is committed but not pinned stays
	}
	r.logf("run %s committed in %s and %s (%s)", run.ID, run.Final, l.PinState(), time.Since(t0).Round(time.Second))
	return l.Result(), nil
}

// load reads the spec and plans the profile's connections, checks the
// permission to capture and logs the plan: everything that can fail
// without creating anything. It returns the profile.
func (r *runner) load() (Profile, error) {
	l, cfg := r.life, r.cfg
	var err error
	if r.spec, err = LoadSpec(l.SpecPath); err != nil {
		return Profile{}, l.Wrap(err)
	}
	if slices.Contains(r.spec.Paths(cfg.Profile), PathDocker) {
		if why := dockerUnavailable(); why != nil {
			// Without Docker the docker cells are left out, said here and
			// in meta.json, and the pre-stated fallback is the primary
			// cell; never a silent skip.
			without, err := r.spec.WithoutPath(PathDocker)
			if err != nil {
				return Profile{}, l.Errorf("the docker path cannot run (%v) and %w", why, err)
			}
			r.spec = without
			r.skippedPaths = append(r.skippedPaths, fmt.Sprintf("%s: %v; the primary cell is %s ([paper.fallback])", PathDocker, why, r.spec.PrimaryCell(cfg.Profile)))
			r.logf("left out: every cell on the %s path: %v; primary cell %s ([paper.fallback])", PathDocker, why, r.spec.PrimaryCell(cfg.Profile))
		}
	}
	if r.plan, err = Plan(r.spec, cfg.Profile); err != nil {
		return Profile{}, l.Wrap(err)
	}
	r.configs = r.spec.Units(cfg.Profile)
	prof, _ := r.spec.Profile(cfg.Profile)
	if err := CheckPermission(); err != nil {
		return Profile{}, err
	}
	est, _ := Estimate(r.spec, cfg.Profile)
	r.logf("plan: profile %s, %d configurations x (%d rounds x %d warm-ups + %d measured) = %d connections, estimated %s",
		cfg.Profile, len(r.configs), (prof.N+prof.Block-1)/prof.Block, prof.Warmup, prof.N, len(r.plan), est.Round(time.Second))

	if prof.OtherCellsN > 0 || prof.OtherCells == OtherCellsPaper {
		r.logf("plan: primary cell %s at n = %d; other cells: %s configurations at n = %d", r.spec.PrimaryCell(cfg.Profile), prof.N, cmp.Or(prof.OtherCells, OtherCellsMatrix), cmp.Or(prof.OtherCellsN, prof.N))
	}
	if d := r.spec.emulatedDelays(cfg.Profile); len(d) > 0 {
		r.logf("plan: emulated cells: %d configurations on %d links (one-way delays %v ms) at n = %d each (emulated_n; the line above counts them at the profile's n)",
			len(r.spec.emulatedUnits(cfg.Profile)), len(d), d, prof.EmulatedN)
	}
	for _, s := range r.spec.Skipped() {
		r.logf("left out: %s", s)
	}
	return prof, nil
}

// logServers logs how many servers listen, on which addresses and ports.
func (r *runner) logServers() {
	var addrs []string
	for _, p := range r.paths {
		addrs = append(addrs, p.serverAddr())
	}
	r.logf("servers: %d on %s (ports %s)", len(r.servers), strings.Join(addrs, " and "), portRange(r.servers))
}

// handshakes makes every connection of the plan while the captures run.
// Then it stops the captures and checks the run: not interrupted,
// its bridge network and remote host still there, no connection or
// capture error, no packet the kernel dropped. It returns the
// connections, their wall time and the captures' summed statistics.
func (r *runner) handshakes(ctx context.Context, caps []*pathCapture) ([]conn, time.Duration, capture.Stats, error) {
	l, run := r.life, r.life.Run
	// A path that breaks (a bridge network someone removes, a container
	// that dies, a dropped SSH session) ends the connections.
	connCtx, stopConns := context.WithCancelCause(ctx)
	defer stopConns(nil)
	for _, p := range r.paths {
		if w, ok := p.(watchedPath); ok {
			go func() {
				select {
				case <-w.done():
					stopConns(w.failure(nil))
				case <-connCtx.Done():
				}
			}()
		}
	}
	conns, wall, loopErr := r.connect(connCtx, keyLogs(caps))
	stopCaptures(caps)
	st, capErr := r.captureStats(caps)
	if ctx.Err() != nil {
		return nil, 0, st, l.Errorf("run %s after %d of %d connections: %w (%w)", run.ID, len(conns), len(r.plan), ErrInterrupted, ctx.Err())
	}
	for _, p := range r.paths {
		if w, ok := p.(watchedPath); ok {
			if err := w.failure(loopErr); err != nil {
				return nil, 0, st, l.Errorf("run %s after %d of %d connections: %w", run.ID, len(conns), len(r.plan), err)
			}
		}
	}
	if loopErr != nil {
		return nil, 0, st, l.Errorf("run %s: %w; the run was removed", run.ID, loopErr)
	}
	if capErr != nil {
		return nil, 0, st, l.Errorf("run %s: capture: %w; the run was removed", run.ID, capErr)
	}
	if err := st.Valid(); err != nil {
		return nil, 0, st, l.Errorf("run %s: %w: %w", run.ID, ErrInvalid, err)
	}
	return conns, wall, st, nil
}

// write writes one file of the run folder atomically and records its
// SHA-256 in files.
func (r *runner) write(files map[string]string, name string, b []byte) error {
	run := r.life.Run
	if err := atomicfile.WriteFile(filepath.Join(run.Dir, name), b, 0o644); err != nil {
		return r.life.Errorf("run %s: %w", run.ID, err)
	}
	files[name] = repro.HashBytes(b)
	return nil
}

// writeDataset writes the dataset, records.csv.gz, with the header the
// join's captures call for (tlsjoin.MarshalRecords).
func (r *runner) writeDataset(recs []tlsdata.Record, js tlsjoin.Stats, files map[string]string) error {
	recBytes, err := tlsjoin.MarshalRecords(recs, js)
	if err != nil {
		return r.life.Errorf("run %s: %w", r.life.Run.ID, err)
	}
	if err := r.write(files, tlsdata.RecordsFile, recBytes); err != nil {
		return err
	}
	r.logf("wrote %s (%d rows), %s and %s", tlsdata.RecordsFile, len(recs), tlsjoin.InprocFile, ConfigsFile)
	return nil
}

// deriveRecords writes inproc.csv.gz and configs.json and derives the
// records from them and the captures. It hashes the captures and calls
// tlsjoin.DeriveRecords: the function the build's
// tls:records stage calls on the committed run, so the two cannot
// disagree.
func (r *runner) deriveRecords(ctx context.Context, conns []conn, caps []*pathCapture, files map[string]string) ([]tlsdata.Record, tlsjoin.Stats, error) {
	l, run := r.life, r.life.Run
	inproc, err := tlsjoin.MarshalInproc(r.inproc(conns))
	if err != nil {
		return nil, tlsjoin.Stats{}, l.Errorf("run %s: %w", run.ID, err)
	}
	if err := r.write(files, tlsjoin.InprocFile, inproc); err != nil {
		return nil, tlsjoin.Stats{}, err
	}
	cj, err := json.MarshalIndent(r.configs, "", "  ")
	if err != nil {
		return nil, tlsjoin.Stats{}, err
	}
	if err := r.write(files, ConfigsFile, append(cj, '\n')); err != nil {
		return nil, tlsjoin.Stats{}, err
	}
	for _, pc := range caps {
		fi, err := os.Stat(pc.file)
		if err != nil {
			return nil, tlsjoin.Stats{}, l.Errorf("run %s: %w", run.ID, err)
		}
		pc.size = fi.Size()
		if pc.sum, err = repro.HashFile(pc.file); err != nil {
			return nil, tlsjoin.Stats{}, l.Errorf("run %s: %w", run.ID, err)
		}
	}
	recs, js, err := tlsjoin.DeriveRecords(append(cj, '\n'), inproc, func(name string) (io.ReadCloser, error) {
		for _, pc := range caps {
			if pc.name == name {
				return rederive.OpenFile(pc.file, pc.sum)
			}
		}
		return nil, fmt.Errorf("no capture %s was made: %w", name, tlsjoin.ErrNoCapture)
	})
	if err != nil {
		return nil, tlsjoin.Stats{}, l.Errorf("run %s: %w: %w", run.ID, ErrInvalid, err)
	}
	if err := l.Interrupted(ctx); err != nil {
		return nil, tlsjoin.Stats{}, err
	}
	r.logf("capture: %d connections read, %d joined to the run's connections (%d client Finished confirmed by decryption)", js.CaptureConnections, len(recs), js.Verified)
	r.logServerEnd(caps, js)
	return recs, js, nil
}

// storeCaptures keeps the captures gzip'd in the run when small, else in
// the content store. Above limit (a repeat run's always:
// runlife.Life.CaptureLimit) they go to the store (the rule is on their
// total, so a run's captures are all in one place). meta.json names each by
// the SHA-256 of its uncompressed bytes either way.
func (r *runner) storeCaptures(caps []*pathCapture, files map[string]string, store *repro.Store, limit int64) error {
	l, run := r.life, r.life.Run
	var capTotal int64 // bytes of every capture, uncompressed
	for _, pc := range caps {
		capTotal += pc.size
	}
	inRepo := capTotal <= rederive.InRepoLimit(limit)
	for _, pc := range caps {
		if inRepo {
			gzSum, err := rederive.Gzip(pc.file, pc.file+rederive.GzipExt)
			if err != nil {
				return l.Errorf("run %s: %w", run.ID, err)
			}
			files[pc.name+rederive.GzipExt] = gzSum
			pc.where = "in the run folder as " + pc.name + rederive.GzipExt
		} else {
			if _, err := store.Put(pc.file); err != nil {
				return l.Errorf("run %s: %w", run.ID, err)
			}
			pc.where = fmt.Sprintf("in the content store under sha256/%s/%s", pc.sum[:2], pc.sum[2:])
		}
		if err := os.Remove(pc.file); err != nil {
			return l.Errorf("run %s: %w", run.ID, err)
		}
		files[pc.name] = pc.sum
		r.logf("capture %s: %d bytes, sha256:%s, %s", pc.name, pc.size, pc.sum, pc.where)
	}
	return nil
}

// runMeta makes the run's meta.json. It holds seeds, tools, files, what
// was measured (the capture's counts, the joins, the handshake rate, each
// path's capture) and the notes on order, primary cell and captures.
func (r *runner) runMeta(ctx context.Context, prof Profile, caps []*pathCapture, files map[string]string, st capture.Stats, js tlsjoin.Stats, nrecs int, wall time.Duration, rate float64) provenance.Meta {
	// The first capture's (loopback's when the run has that path) in the
	// run-wide fields; measured.paths has every path's.
	sum, capBytes := caps[0].sum, caps[0].size

	meta := r.life.Meta(ctx, nil)
	meta.Seeds = map[string]uint64{"order": r.spec.Seeds.Order, "certificates": r.spec.Seeds.Certificates}
	meta.Board = "host"
	for k, v := range r.stackMeta() {
		if meta.Tools == nil {
			meta.Tools = map[string]string{}
		}
		meta.Tools[k] = v
	}
	meta.Files = files
	meta.Measured = map[string]any{
		"kernel_drops":             st.KernelDrops,
		"kernel_packets_seen":      st.KernelSeen,
		"packets_captured":         st.Packets,
		"packets_truncated":        st.Truncated,
		"key_log_bytes":            st.SecretBytes,
		"capture_sha256":           sum,
		"capture_bytes":            capBytes,
		"capture_connections":      js.CaptureConnections,
		"connections":              nrecs,
		"connections_measured":     js.Measured,
		"retransmissions":          js.Retrans,
		"client_finished_verified": js.Verified,
		"handshake_wall_s":         round3(wall.Seconds()),
		"handshake_rate_per_s":     round3(rate),
		"interface":                caps[0].iface,
		"paths":                    r.pathsMeta(caps, files),
	}
	meta.Measured["tcp_stack"] = r.tcpStack
	if so := r.socketOptions(); len(so) > 0 {
		meta.Measured["socket_options"] = so
	}
	if hc := r.hostCrypto(); hc != nil {
		meta.Measured["host_crypto"] = hc
	}
	meta.Notes = []string{
		fmt.Sprintf("order: %d rounds of blocks of %d measured connections per configuration, each block after %d discarded warm-ups, configurations shuffled per round (seed order=%d)", (prof.N+prof.Block-1)/prof.Block, prof.Block, prof.Warmup, r.spec.Seeds.Order),
		fmt.Sprintf("primary cell (stack/path/keyshare, [paper.cell]): %s", r.spec.PrimaryCell(r.cfg.Profile)),
		"Ths = client Finished (first encrypted client record after the ServerHello) minus ClientHello, first captured segment of each, on lo (loopback path) or on the client's veth in its namespace (bridge path)",
	}
	if slices.ContainsFunc(r.configs, Config.isEmulated) {
		meta.Notes = append(meta.Notes, "emulated paths (emulated-<one-way delay>ms): the openssl-cli stack through the user-space link emulator, captured on the client's TUN device in its namespace and on the server's in its own (measured.paths.<path>.server_capture, the srv_ columns); each link self-tested before the run (measured.paths.<path>.self_test), its median RTT in every record's link_rtt_ns; round_trips counted from the capture (experiments/instruments/capture, Record.RoundTrips)")
	}
	for _, sp := range r.skippedPaths {
		meta.Notes = append(meta.Notes, "left out: "+sp)
	}
	for _, pc := range caps {
		meta.Notes = append(meta.Notes, fmt.Sprintf("capture: %s (%s path) is %s; records.csv.gz is derived from the captures and %s by experiments/tls/tlsjoin (the build's tls:records stage re-derives it)", pc.name, pc.path, pc.where, tlsjoin.InprocFile))
	}
	// After the notes above, which replace Collect's: a path's provenance
	// and notes (the remote host's) are added to them, not overwritten.
	for _, p := range r.paths {
		if mp, ok := p.(metaPath); ok {
			mp.meta(&meta)
		}
	}
	return meta
}

func round3(v float64) float64 { return float64(int64(v*1000+0.5)) / 1000 }

// server is one configuration's server and client, up for the whole run.
type server struct {
	cfg     Config
	path    path // where it listens and where its client dials from
	ln      net.Listener
	addr    string
	expect  handshake.Expect
	serve   func(context.Context, net.Listener, func(handshake.ServerRecord)) error
	client  func(keyLog io.Writer) dialer // stack.go
	cli     dialer
	results chan handshake.ServerRecord
	done    chan error
	stop    context.CancelFunc
	bundle  *handshake.Bundle
	certLen int // bytes of the DER certificates the server sends
}

// startServers reserves every configuration's port, then starts the
// servers. The order matters: an openssl-cli server closes its reserved
// listener so that s_server can bind the same address, and a port
// reserved after that in the same namespace could be handed the freed
// port by the kernel (a quick run on the docker path failed with
// s_server's "BIO_bind: Address already in use" when reservations and
// starts interleaved). On an error nothing is left listening or serving.
func (r *runner) startServers() (err error) {
	var starts []func()
	defer func() {
		if err != nil {
			for _, s := range r.servers {
				s.stop()
				s.ln.Close()
			}
			r.servers = nil
		}
	}()
	for _, c := range r.configs {
		b, err := handshake.MakeCerts(handshake.CertConfig{Key: c.Key, Chain: c.Chain, Seed: r.spec.Seeds.Certificates})
		if err != nil {
			return fmt.Errorf("tls:run: certificates for %s: %w", c.Name, err)
		}
		p := r.path(c.Path)
		if p == nil {
			return fmt.Errorf("tls:run: listen for %s: the run has no %s path", c.Name, c.pathName())
		}
		ln, err := p.listen(c)
		if err != nil {
			return fmt.Errorf("tls:run: listen for %s: %w", c.Name, err)
		}
		exp := handshake.Expect{Group: c.Group, Key: c.Key, Chain: c.Chain, HRR: c.KeyShare == handshake.HRR || tlsdata.ExpectHRR(c.ClientGroups, c.Group.String())}
		serve, client, err := r.newEnds(len(r.servers), c, b, exp)
		if err != nil {
			ln.Close()
			return fmt.Errorf("tls:run: %s: %w", c.Name, err)
		}
		if rl, ok := ln.(*remoteListener); ok {
			serve = rl.serve // the serve role's records, not a local server
		}
		s := &server{
			cfg: c, path: p, ln: ln, addr: ln.Addr().String(), bundle: b, expect: exp, serve: serve, client: client,
			results: make(chan handshake.ServerRecord, 8),
			done:    make(chan error, 1),
		}
		for _, der := range b.Server.Certificate {
			s.certLen += len(der)
		}
		ctx, cancel := context.WithCancel(context.Background())
		s.stop = cancel
		// A record nobody takes (a stray connection, or one cut short by
		// Ctrl-C) must not block the connection's goroutine, or Serve
		// would wait for it forever when the servers stop.
		report := func(rec handshake.ServerRecord) {
			select {
			case s.results <- rec:
			case <-ctx.Done():
			}
		}
		starts = append(starts, func() {
			if testHookServeStart != nil {
				testHookServeStart()
			}
			go func() { s.done <- s.serve(ctx, ln, report) }()
		})
		r.servers = append(r.servers, s)
		r.vlogf("server %-32s on %s (certificates %d bytes)", c.Name, s.addr, s.certLen)
	}
	for _, start := range starts {
		start()
	}
	return nil
}

// testHookServeStart, when set, runs as each server starts (tests).
var testHookServeStart func()

// record waits for the server's record of a connection. A server that
// stops first is an error; its end stays in s.done, because stopServers
// waits for every server's end (taking it here hung a run whose remote
// server's SSH session dropped: TestRunRemoteFaults/connection_dropped).
func (s *server) record(ctx context.Context) (handshake.ServerRecord, error) {
	select {
	case sr := <-s.results:
		return sr, nil
	case err := <-s.done:
		s.done <- err // for stopServers
		return handshake.ServerRecord{}, fmt.Errorf("server stopped: %v", err)
	case <-ctx.Done():
		return handshake.ServerRecord{}, context.Cause(ctx)
	}
}

func (r *runner) stopServers() {
	for _, s := range r.servers {
		s.stop()
	}
	for _, s := range r.servers {
		<-s.done
	}
}

// conn is one connection as the process saw it.
type conn struct {
	seq    int
	step   Step
	client handshake.ClientRecord
	server handshake.ServerRecord
}

// connect makes the plan's connections one after another. It returns the
// connections made, the wall time from the first dial to the end of the
// last connection, and the first error; a cancelled ctx stops it between
// or during connections.
func (r *runner) connect(ctx context.Context, keyLogs map[string]io.Writer) ([]conn, time.Duration, error) {
	for _, s := range r.servers {
		// Direct: exactly one group offered, the server's, so no
		// HelloRetryRequest; hrr: a decoy's key share first (stack.go).
		// Each path's clients log their keys into that path's capture.
		s.cli = s.client(keyLogs[s.cfg.Path])
	}
	every := r.cfg.ProgressEvery
	if every <= 0 {
		every = 2 * time.Second
	}
	total := len(r.plan)
	conns := make([]conn, 0, total)
	begin := time.Now()
	last := begin
	for i, st := range r.plan {
		if err := ctx.Err(); err != nil {
			return conns, time.Since(begin), err
		}
		s := r.servers[st.Config]
		var cr handshake.ClientRecord
		var err error
		s.path.client(func() { cr, err = s.cli.Dial(ctx, s.addr) })
		if err != nil {
			return conns, time.Since(begin), fmt.Errorf("connection %d of %d (%s): %w", i+1, total, s.cfg.Name, err)
		}
		sr, err := s.record(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return conns, time.Since(begin), context.Cause(ctx)
			}
			return conns, time.Since(begin), fmt.Errorf("connection %d (%s): %w", i+1, s.cfg.Name, err)
		}
		if sr.Err != nil {
			return conns, time.Since(begin), fmt.Errorf("connection %d of %d (%s): %w", i+1, total, s.cfg.Name, sr.Err)
		}
		// The CLI's s_server does not report its peer (Client ""): the
		// capture's 4-tuple is the check there.
		if sr.Client != "" && sr.Client != cr.Local {
			return conns, time.Since(begin), fmt.Errorf("connection %d (%s): server saw client %s, client is %s (a stray connection to %s?)", i+1, s.cfg.Name, sr.Client, cr.Local, s.addr)
		}
		conns = append(conns, conn{seq: i, step: st, client: cr, server: sr})
		if r.cfg.Progress != nil {
			r.cfg.Progress(i+1, total)
		}
		if t := time.Now(); t.Sub(last) >= every && i+1 < total {
			last = t
			el := t.Sub(begin)
			rate := float64(i+1) / el.Seconds()
			eta := time.Duration(float64(total-i-1) / rate * float64(time.Second))
			r.logf("handshakes %d/%d (%.0f%%), %.0f/s, ETA %s; %s", i+1, total, 100*float64(i+1)/float64(total), rate, eta.Round(time.Second), r.life.MachineLine())
		}
	}
	wall := time.Since(begin)
	// Every server record must have been taken by a connection of the run.
	for _, s := range r.servers {
		select {
		case sr := <-s.results:
			return conns, wall, fmt.Errorf("server %s (%s) saw a connection from %s that the run did not make", s.addr, s.cfg.Name, sr.Client)
		default:
		}
	}
	return conns, wall, nil
}
