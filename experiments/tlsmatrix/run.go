package tlsmatrix

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"time"

	"golang.org/x/sys/unix"

	"pqrepro/experiments/capture"
	"pqrepro/experiments/handshake"
	"pqrepro/experiments/rederive"
	"pqrepro/experiments/tlsjoin"
	"pqrepro/internal/atomicfile"
	"pqrepro/internal/deps"
	"pqrepro/internal/provenance"
	"pqrepro/internal/repro"
	"pqrepro/internal/spec"
)

// Files of a run folder besides RecordsFile (record.go) and meta.json.
const (
	// ConfigsFile lists the run's configurations (name, key, group, chain,
	// the paper's label, baseline) as JSON, in Spec.Configs order.
	ConfigsFile = "configs.json"
	// CaptureName is the capture's name in meta.json Files (the SHA-256
	// of its uncompressed bytes); the file is committed in the run folder
	// as CaptureName.gz when it is small (rederive.InRepoMaxBytes), else
	// kept in the content store under that SHA-256.
	CaptureName = tlsjoin.CaptureName
)

// Interface is where the run captures: all servers listen on 127.0.0.1.
const Interface = "lo"

// ErrInterrupted is returned (wrapped, with the context's error) when the
// run's context ends before the run is complete.
var ErrInterrupted = errors.New("run interrupted: the capture was closed, the incomplete run removed and not registered; earlier runs and the spec are untouched")

// ErrInvalid is returned (wrapped) when the run completed but its data
// cannot be used (kernel packet drops, a connection missing from the
// capture); the run is removed and not registered.
var ErrInvalid = errors.New("run invalid, removed and not registered")

// RunConfig configures Run.
type RunConfig struct {
	// Root is the repository root; the spec, data/ and the store are
	// below it unless overridden.
	Root string
	// Git is the state of the repository the run was started from
	// (provenance.RepoGit at the repository root, taken by the pipeline
	// when the run starts); nil means the state of Root.
	Git *provenance.Git
	// Profile names the spec's profile (quick, full).
	Profile string
	// Log receives one line per step and throttled progress; nil is
	// io.Discard. Verbose adds per-configuration detail.
	Log     io.Writer
	Verbose bool
	// Now names the run (its ID is the UTC start time) and stamps
	// meta.json's start and end; nil is time.Now. The handshake timers,
	// the measured rate and the progress throttle always use the real
	// monotonic clock: they measure the machine.
	Now func() time.Time

	// SpecPath is the spec; "" is Root/experiments/tls.toml. The spec's
	// seeds are the run's seeds (write another spec to inject others).
	SpecPath string
	// DataDir is where runs go; "" is Root/data.
	DataDir string
	// Store receives the capture; nil is repro.OpenStore(Root).
	Store *repro.Store
	// CaptureInRepoMax: captures of at most this many bytes in total
	// (uncompressed) are committed gzip'd in the run folder, larger ones go
	// to Store; 0 means rederive.InRepoMaxBytes, negative means always Store.
	CaptureInRepoMax int64
	// Progress, when set, is called after every connection (done counts
	// warm-ups too).
	Progress func(done, total int)
	// ProgressEvery is the interval of progress lines; 0 is 2 s.
	ProgressEvery time.Duration
	// BuildRoot is the root whose .cache/openssl holds the OpenSSL build
	// (experiments/openssl) when a configuration uses that stack; "" is
	// Root.
	BuildRoot string
}

// RunResult describes a committed run.
type RunResult struct {
	RunID       string
	Dir         string        // the run folder, data/tls/<run-id>
	Configs     int           // configurations
	Connections int           // connections made, warm-ups included
	Measured    int           // connections not flagged as warm-up
	Wall        time.Duration // from the first dial to the last connection's close
	Rate        float64       // Connections / Wall, handshakes per second
	Total       time.Duration // the whole run, certificates to pin
	Capture     capture.Stats
	CaptureSHA  string // SHA-256 of the pcapng (uncompressed), as meta.json names it
	CaptureSize int64  // bytes, uncompressed
}

// Requirements lists what Run needs installed: nothing beyond Go and root
// (or CAP_NET_RAW) for the AF_PACKET capture, which is not something a
// package installs, so Run checks it itself (CheckPermission); and when
// the spec under root measures the openssl stack, what building OpenSSL
// needs (stack.go).
func Requirements(root string) []deps.Requirement { return stackRequirements(root) }

// CheckPermission returns a clear error (wrapping capture.ErrNeedRoot) when
// the process may not open an AF_PACKET socket. It opens one with protocol
// 0, which receives nothing, and closes it: no file is created.
func CheckPermission() error {
	fd, err := unix.Socket(unix.AF_PACKET, unix.SOCK_RAW|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		if errors.Is(err, unix.EPERM) || errors.Is(err, unix.EACCES) {
			return fmt.Errorf("tls run: %w (for example `sudo -E mage tls:run`); nothing was created", capture.ErrNeedRoot)
		}
		return fmt.Errorf("tls run: open a packet socket: %w; nothing was created", err)
	}
	unix.Close(fd)
	return nil
}

// testHookCaptureStats lets tests fake what the kernel reported (drops
// cannot be provoked reliably); nil outside tests.
var testHookCaptureStats func(*capture.Stats)

// runner is the state of one Run.
type runner struct {
	cfg     RunConfig
	log     io.Writer
	now     func() time.Time
	spec    *Spec
	configs []Config
	plan    []Step
	servers []*server
	stk     stackState // stack.go
}

func (r *runner) logf(format string, a ...any) { fmt.Fprintf(r.log, "tls: "+format+"\n", a...) }

func (r *runner) vlogf(format string, a ...any) {
	if r.cfg.Verbose {
		r.logf(format, a...)
	}
}

// Run records one Study A dataset: it validates the spec, checks the
// permission to capture, makes the certificates and starts one server per
// configuration on its own 127.0.0.1 port (all up for the whole run), then
// creates the run folder, starts ONE capture on lo, makes every connection
// of Plan one after another (one client, sequential, like the paper's
// repeated connections), stops the capture, writes what the process
// measured (inproc.csv.gz) and configs.json, derives records.csv.gz from
// them and the capture with tlsjoin.DeriveRecords (the function the
// build's tls:records stage calls again), keeps the pcapng (with the key
// log as a Decryption Secrets Block) gzip'd in the run folder when it is
// small (rederive.InRepoMaxBytes) or in the content store, writes
// meta.json, commits the run folder to data/tls/<run-id>/ and pins the run
// for the profile in the spec.
//
// Any failure, a kernel packet drop, a connection the capture does not
// match, or the end of ctx (Ctrl-C) removes the incomplete run folder: no
// run is registered, the spec's pins and earlier runs are untouched.
// Errors before the run folder exists (spec, profile, permission, port)
// leave nothing behind at all.
func Run(ctx context.Context, cfg RunConfig) (res *RunResult, err error) {
	if cfg.Root == "" {
		cfg.Root = "."
	}
	r := &runner{cfg: cfg, log: cfg.Log, now: cfg.Now}
	if r.log == nil {
		r.log = io.Discard
	}
	if r.now == nil {
		r.now = time.Now
	}
	specPath := cfg.SpecPath
	if specPath == "" {
		specPath = filepath.Join(cfg.Root, spec.Path(Study))
	}
	dataDir := cfg.DataDir
	if dataDir == "" {
		dataDir = filepath.Join(cfg.Root, "data")
	}
	store := cfg.Store
	if store == nil {
		store = repro.OpenStore(cfg.Root)
	}
	t0 := time.Now()

	// 1. Everything that can fail without creating anything.
	specBytes, err := os.ReadFile(specPath)
	if err != nil {
		return nil, fmt.Errorf("tls run: read spec: %w", err)
	}
	if r.spec, err = LoadSpec(specPath); err != nil {
		return nil, fmt.Errorf("tls run: %w", err)
	}
	if cfg.Profile == "" {
		return nil, errors.New("tls run: no profile given: use quick or full")
	}
	if r.plan, err = Plan(r.spec, cfg.Profile); err != nil {
		return nil, fmt.Errorf("tls run: %w", err)
	}
	r.configs = r.spec.Configs()
	prof, _ := r.spec.Profile(cfg.Profile)
	if err := CheckPermission(); err != nil {
		return nil, err
	}
	est, _ := Estimate(r.spec, cfg.Profile)
	r.logf("plan: profile %s, %d configurations x (%d rounds x %d warm-ups + %d measured) = %d connections, estimated %s",
		cfg.Profile, len(r.configs), (prof.N+prof.Block-1)/prof.Block, prof.Warmup, prof.N, len(r.plan), est.Round(time.Second))

	for _, s := range r.spec.Skipped() {
		r.logf("left out: %s", s)
	}

	// 2. Certificates and servers (CPU and sockets; the OpenSSL build
	// in the cache when a configuration uses it).
	if err := r.prepareStacks(ctx); err != nil {
		return nil, err
	}
	defer r.stopStacks()
	if err := r.startServers(); err != nil {
		return nil, err
	}
	defer r.stopServers()
	r.logf("servers: %d on 127.0.0.1 (ports %s)", len(r.servers), r.portRange())

	// 3. The run folder: removed on every path that does not commit it.
	start := r.now()
	run, err := repro.NewRun(dataDir, Study, cfg.Profile, start)
	if err != nil {
		return nil, fmt.Errorf("tls run: %w", err)
	}
	defer func() {
		if err != nil {
			run.Abort()
		}
	}()
	r.logf("run %s: recording into %s", run.ID, run.Dir)

	capPath := filepath.Join(run.Dir, CaptureName)
	// The capture gets a context that is not cancelled with ctx, so that
	// Stop (below, on every path) drains the socket and writes a
	// complete file even after Ctrl-C.
	// Only the servers' ports: lo carries every process's loopback
	// traffic, which would bloat the file and could cause drops.
	ports := r.serverPorts()
	if len(ports) > capture.MaxPorts {
		ports = nil // too many for one filter: the reader ignores the rest
	}
	c, err := capture.Start(context.WithoutCancel(ctx), capture.Options{Interface: Interface, Path: capPath, Ports: ports})
	if err != nil {
		return nil, fmt.Errorf("tls run: %w", err)
	}
	if ports != nil {
		r.logf("capture: started on %s, TCP ports %s only", Interface, r.portRange())
	} else {
		r.logf("capture: started on %s, all traffic (%d servers exceed the filter's %d ports)", Interface, len(r.servers), capture.MaxPorts)
	}

	conns, wall, loopErr := r.connect(ctx, c.KeyLog())
	st, capErr := c.Stop()
	if testHookCaptureStats != nil {
		testHookCaptureStats(&st)
	}
	r.logf("capture: stopped: %d packets, %d kernel drops, %d key log bytes", st.Packets, st.KernelDrops, st.SecretBytes)
	if ctx.Err() != nil {
		return nil, fmt.Errorf("tls run %s after %d of %d connections: %w (%w)", run.ID, len(conns), len(r.plan), ErrInterrupted, ctx.Err())
	}
	if loopErr != nil {
		return nil, fmt.Errorf("tls run %s: %w; the run was removed", run.ID, loopErr)
	}
	if capErr != nil {
		return nil, fmt.Errorf("tls run %s: capture: %w; the run was removed", run.ID, capErr)
	}
	if err := st.Valid(); err != nil {
		return nil, fmt.Errorf("tls run %s: %w: %w", run.ID, ErrInvalid, err)
	}
	rate := float64(len(conns)) / wall.Seconds()
	r.logf("handshakes: %d in %s, %.0f/s", len(conns), wall.Round(time.Millisecond), rate)

	// 4. What the process measured (inproc.csv.gz) and the configurations,
	// then the records derived from them and the capture by
	// tlsjoin.DeriveRecords: the function the build's tls:records stage
	// calls on the committed run, so the two cannot disagree.
	files := map[string]string{}
	write := func(name string, b []byte) error {
		if err := atomicfile.WriteFile(filepath.Join(run.Dir, name), b, 0o644); err != nil {
			return fmt.Errorf("tls run %s: %w", run.ID, err)
		}
		files[name] = repro.HashBytes(b)
		return nil
	}
	inproc, err := tlsjoin.MarshalInproc(r.inproc(conns))
	if err != nil {
		return nil, fmt.Errorf("tls run %s: %w", run.ID, err)
	}
	if err := write(tlsjoin.InprocFile, inproc); err != nil {
		return nil, err
	}
	cj, err := json.MarshalIndent(r.configs, "", "  ")
	if err != nil {
		return nil, err
	}
	if err := write(ConfigsFile, append(cj, '\n')); err != nil {
		return nil, err
	}
	fi, err := os.Stat(capPath)
	if err != nil {
		return nil, fmt.Errorf("tls run %s: %w", run.ID, err)
	}
	sum, err := repro.HashFile(capPath)
	if err != nil {
		return nil, fmt.Errorf("tls run %s: %w", run.ID, err)
	}
	rc, err := rederive.OpenFile(capPath, sum)
	if err != nil {
		return nil, fmt.Errorf("tls run %s: %w", run.ID, err)
	}
	recs, js, err := tlsjoin.DeriveRecords(append(cj, '\n'), inproc, rc)
	rc.Close()
	if err != nil {
		return nil, fmt.Errorf("tls run %s: %w: %w", run.ID, ErrInvalid, err)
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("tls run %s: %w (%w)", run.ID, ErrInterrupted, err)
	}
	r.logf("capture: %d connections read, %d joined to the run's connections (%d client Finished confirmed by decryption)", js.CaptureConnections, len(recs), js.Verified)

	// 5. The dataset.
	recBytes, err := MarshalRecords(recs)
	if err != nil {
		return nil, fmt.Errorf("tls run %s: %w", run.ID, err)
	}
	if err := write(RecordsFile, recBytes); err != nil {
		return nil, err
	}
	r.logf("wrote %s (%d rows), %s and %s", RecordsFile, len(recs), tlsjoin.InprocFile, ConfigsFile)

	// A small capture is committed with the run, compressed; a large one
	// goes to the content store. meta.json names it by the SHA-256 of its
	// uncompressed bytes either way.
	where := ""
	if fi.Size() <= rederive.InRepoLimit(cfg.CaptureInRepoMax) {
		gzSum, err := rederive.Gzip(capPath, capPath+rederive.GzipExt)
		if err != nil {
			return nil, fmt.Errorf("tls run %s: %w", run.ID, err)
		}
		files[CaptureName+rederive.GzipExt] = gzSum
		where = "in the run folder as " + CaptureName + rederive.GzipExt
	} else {
		if _, err := store.Put(capPath); err != nil {
			return nil, fmt.Errorf("tls run %s: %w", run.ID, err)
		}
		where = fmt.Sprintf("in the content store under sha256/%s/%s", sum[:2], sum[2:])
	}
	if err := os.Remove(capPath); err != nil {
		return nil, fmt.Errorf("tls run %s: %w", run.ID, err)
	}
	files[CaptureName] = sum
	r.logf("capture: %d bytes, sha256:%s, %s", fi.Size(), sum, where)

	meta := provenance.Collect(ctx, provenance.Options{Root: cfg.Root, Git: cfg.Git})
	meta.Study = Study
	meta.RunID = run.ID
	meta.Spec = spec.Path(Study)
	if cfg.SpecPath != "" {
		meta.Spec = filepath.ToSlash(relOrBase(cfg.Root, specPath))
	}
	meta.SpecSHA = repro.HashBytes(specBytes)
	meta.Profile = cfg.Profile
	meta.Seeds = map[string]uint64{"order": r.spec.Seeds.Order, "certificates": r.spec.Seeds.Certificates}
	meta.Start = start.UTC()
	meta.End = r.now().UTC()
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
		"capture_bytes":            fi.Size(),
		"capture_connections":      js.CaptureConnections,
		"connections":              len(recs),
		"connections_measured":     js.Measured,
		"retransmissions":          js.Retrans,
		"client_finished_verified": js.Verified,
		"handshake_wall_s":         round3(wall.Seconds()),
		"handshake_rate_per_s":     round3(rate),
		"interface":                Interface,
	}
	meta.Notes = []string{
		fmt.Sprintf("order: %d rounds of blocks of %d measured connections per configuration, each block after %d discarded warm-ups, configurations shuffled per round (seed order=%d)", (prof.N+prof.Block-1)/prof.Block, prof.Block, prof.Warmup, r.spec.Seeds.Order),
		"Ths = client Finished (first encrypted client record after the ServerHello) minus ClientHello, first captured segment of each, on lo",
		fmt.Sprintf("capture: %s is %s; records.csv.gz is derived from it and %s by experiments/tlsjoin (the build's tls:records stage re-derives it)", CaptureName, where, tlsjoin.InprocFile),
	}
	if err := provenance.Write(run.Dir, meta); err != nil {
		return nil, fmt.Errorf("tls run %s: %w", run.ID, err)
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("tls run %s: %w (%w)", run.ID, ErrInterrupted, err)
	}

	// 6. Register: commit, then pin. NewRun's folder is private (0700)
	// while it is written; a published run is readable like the rest of data/.
	if err := os.Chmod(run.Dir, 0o755); err != nil {
		return nil, fmt.Errorf("tls run %s: %w", run.ID, err)
	}
	if err := run.Commit(); err != nil {
		return nil, fmt.Errorf("tls run: %w", err)
	}
	res = &RunResult{
		RunID: run.ID, Dir: run.Final, Configs: len(r.configs), Connections: len(recs), Measured: js.Measured,
		Wall: wall, Rate: rate, Total: time.Since(t0), Capture: st, CaptureSHA: sum, CaptureSize: fi.Size(),
	}
	if err := spec.Pin(specPath, cfg.Profile, spec.Sealed(run.ID, run.Manifest)); err != nil {
		// The run is committed and stays; only the pin is missing.
		return res, fmt.Errorf("tls run %s is in %s but could not be pinned: %w; add %s = %q under [runs] in %s by hand",
			run.ID, run.Final, err, cfg.Profile, spec.Sealed(run.ID, run.Manifest), specPath)
	}
	r.logf("run %s committed in %s and pinned for the %s profile in %s (%s)", run.ID, run.Final, cfg.Profile, specPath, res.Total.Round(time.Second))
	return res, nil
}

func round3(v float64) float64 { return float64(int64(v*1000+0.5)) / 1000 }

func relOrBase(root, p string) string {
	if rel, err := filepath.Rel(root, p); err == nil && !filepath.IsAbs(rel) && (len(rel) < 2 || rel[:2] != "..") {
		return rel
	}
	return filepath.Base(p)
}

// server is one configuration's server and client, up for the whole run.
type server struct {
	cfg     Config
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

func (r *runner) startServers() error {
	for _, c := range r.configs {
		b, err := handshake.MakeCerts(handshake.CertConfig{Key: c.Key, Chain: c.Chain, Seed: r.spec.Seeds.Certificates})
		if err != nil {
			return fmt.Errorf("tls run: certificates for %s: %w", c.Name, err)
		}
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return fmt.Errorf("tls run: listen for %s: %w", c.Name, err)
		}
		exp := handshake.Expect{Group: c.Group, Key: c.Key, Chain: c.Chain, HRR: c.KeyShare == handshake.HRR}
		serve, client, err := r.newEnds(len(r.servers), c, b, exp)
		if err != nil {
			ln.Close()
			return fmt.Errorf("tls run: %s: %w", c.Name, err)
		}
		s := &server{
			cfg: c, ln: ln, addr: ln.Addr().String(), bundle: b, expect: exp, serve: serve, client: client,
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
		go func() { s.done <- s.serve(ctx, ln, report) }()
		r.servers = append(r.servers, s)
		r.vlogf("server %-32s on %s (certificates %d bytes)", c.Name, s.addr, s.certLen)
	}
	return nil
}

func (r *runner) stopServers() {
	for _, s := range r.servers {
		s.stop()
	}
	for _, s := range r.servers {
		<-s.done
	}
}

// serverPorts lists the servers' listening ports, for the capture filter.
func (r *runner) serverPorts() []uint16 {
	ports := make([]uint16, len(r.servers))
	for i, s := range r.servers {
		ports[i] = uint16(s.ln.Addr().(*net.TCPAddr).Port)
	}
	return ports
}

func (r *runner) portRange() string {
	lo, hi := 1<<16, 0
	for _, s := range r.servers {
		p := s.ln.Addr().(*net.TCPAddr).Port
		lo, hi = min(lo, p), max(hi, p)
	}
	return fmt.Sprintf("%d..%d", lo, hi)
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
func (r *runner) connect(ctx context.Context, keyLog io.Writer) ([]conn, time.Duration, error) {
	for _, s := range r.servers {
		// Direct: exactly one group offered, the server's, so no
		// HelloRetryRequest; hrr: a decoy's key share first (stack.go).
		s.cli = s.client(keyLog)
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
		cr, err := s.cli.Dial(ctx, s.addr)
		if err != nil {
			return conns, time.Since(begin), fmt.Errorf("connection %d of %d (%s): %w", i+1, total, s.cfg.Name, err)
		}
		var sr handshake.ServerRecord
		select {
		case sr = <-s.results:
		case err := <-s.done:
			return conns, time.Since(begin), fmt.Errorf("connection %d (%s): server stopped: %v", i+1, s.cfg.Name, err)
		case <-ctx.Done():
			return conns, time.Since(begin), ctx.Err()
		}
		if sr.Err != nil {
			return conns, time.Since(begin), fmt.Errorf("connection %d of %d (%s): %w", i+1, total, s.cfg.Name, sr.Err)
		}
		if sr.Client != cr.Local {
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
			r.logf("handshakes %d/%d (%.0f%%), %.0f/s, ETA %s", i+1, total, 100*float64(i+1)/float64(total), rate, eta.Round(time.Second))
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
