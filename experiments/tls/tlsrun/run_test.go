package tlsrun

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"pqrepro/datasets/tlsdata"
	"pqrepro/experiments/instruments/capture"
	"pqrepro/experiments/instruments/rederive"
	"pqrepro/experiments/instruments/runlife"
	"pqrepro/experiments/tls/tlsjoin"
	"pqrepro/internal/provenance"
	"pqrepro/internal/repro"
)

// needRoot skips a test that captures packets when it cannot.
func needRoot(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("skipped: the run captures on lo with an AF_PACKET socket, which needs root or CAP_NET_RAW (CI runs tests as root; locally use sudo -E go test)")
	}
}

// testEnv is a repository root in a temporary folder: a spec, data/ and a
// store, all empty until a run writes them.
type testEnv struct {
	root, spec string
	store      *repro.Store
	log        bytes.Buffer
}

func newEnv(t *testing.T, body string) *testEnv {
	e := &testEnv{root: t.TempDir()}
	e.spec = writeSpec(t, e.root, body)
	e.store = &repro.Store{Dir: filepath.Join(e.root, "store")}
	return e
}

func (e *testEnv) config(now time.Time) RunConfig {
	return RunConfig{
		Config: runlife.Config{Root: e.root, Profile: "quick", Log: &e.log, Verbose: true, Now: func() time.Time { return now }},
		Store:  e.store, ProgressEvery: time.Millisecond,
	}
}

// runStats are the run-wide figures a committed run's meta.json records
// in measured (runMeta), which the tests compare with what they see.
type runStats struct {
	Connections int     `json:"connections"`
	Measured    int     `json:"connections_measured"`
	Rate        float64 `json:"handshake_rate_per_s"`
	CaptureSHA  string  `json:"capture_sha256"`
	CaptureSize int64   `json:"capture_bytes"`
	Packets     uint64  `json:"packets_captured"`
	KernelDrops uint64  `json:"kernel_drops"`
}

// readStats reads the run-wide figures of the run committed in dir.
func readStats(tb testing.TB, dir string) runStats {
	tb.Helper()
	b, err := os.ReadFile(filepath.Join(dir, provenance.FileName))
	if err != nil {
		tb.Fatal(err)
	}
	var m struct {
		Measured runStats `json:"measured"`
	}
	if err := json.Unmarshal(b, &m); err != nil {
		tb.Fatalf("%s: %v", dir, err)
	}
	return m.Measured
}

// entries lists a directory, "" for a missing one.
func entries(t *testing.T, dir string) string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return ""
	}
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	return strings.Join(names, " ")
}

func TestRunEndToEnd(t *testing.T) {
	needRoot(t)
	e := newEnv(t, tinySpec)
	specBefore, _ := os.ReadFile(e.spec)
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	// Other loopback traffic during the run (as from parallel tests): the
	// capture's port filter must keep it out of the file.
	noise, stopNoise := loopbackNoise(t)
	res, err := Run(context.Background(), e.config(now))
	stopNoise()
	if err != nil {
		t.Fatalf("%v\nlog:\n%s", err, e.log.String())
	}
	if *noise == 0 {
		t.Fatal("no loopback noise was made during the run: the filter check below proves nothing")
	}
	const id = "20261130T120000Z-quick"
	wantDir := filepath.Join(e.root, "data", "tls", id)
	if res.RunID != id || res.Dir != wantDir {
		t.Fatalf("run %s in %s, want %s in %s", res.RunID, res.Dir, id, wantDir)
	}
	if got := entries(t, filepath.Join(e.root, "data", "tls")); got != id {
		t.Errorf("data/tls holds %q, want only the run (no .incomplete leftovers)", got)
	}
	if got := entries(t, wantDir); got != "MANIFEST.sha256 capture.pcapng.gz configs.json inproc.csv.gz meta.json records.csv.gz" {
		t.Errorf("run folder holds %q", got)
	}

	// records.csv.gz: 2 configurations x 3 rounds x (1 warm-up) + 2 x 5 measured.
	recs := readRunRecords(t, wantDir)
	if st := readStats(t, res.Dir); len(recs) != 16 || st.Connections != 16 || st.Measured != 10 {
		t.Fatalf("%d records (meta.json: %d, %d measured), want 16 with 10 measured", len(recs), st.Connections, st.Measured)
	}
	perConfig := map[string][2]int{}
	for i, r := range recs {
		if r.Seq != i {
			t.Errorf("row %d has seq %d", i, r.Seq)
		}
		if !r.Complete || r.NegotiatedGroup != r.Group || r.HRR || r.ThsNs == nil || *r.ThsNs <= 0 ||
			r.InprocClientNs == nil || r.InprocServerNs == nil || r.SynNs == nil || r.FinNs == nil {
			t.Errorf("row %d incomplete or wrong: %+v", i, r)
			continue
		}
		// Ths (ClientHello .. client Finished) lies inside the client's
		// dial .. handshake-complete interval.
		if *r.ThsNs > *r.InprocClientNs {
			t.Errorf("row %d: Ths %d ns > client timer %d ns", i, *r.ThsNs, *r.InprocClientNs)
		}
		if r.Chain || r.CertKey != "ed25519" || r.Client == "" || r.Server == "" {
			t.Errorf("row %d: %+v", i, r)
		}
		n := perConfig[r.Config]
		if r.Warmup {
			n[0]++
		} else {
			n[1]++
		}
		perConfig[r.Config] = n
	}
	for _, c := range []string{"ed25519/X25519", "ed25519/MLKEM1024"} {
		if perConfig[c] != [2]int{3, 5} {
			t.Errorf("%s: %d warm-ups and %d measured, want 3 and 5", c, perConfig[c][0], perConfig[c][1])
		}
	}
	// The rows follow the plan: the first row of every block is a warm-up.
	tiny := loadTiny(t, tinySpec)
	steps, _ := Plan(tiny, "quick")
	cfgs := tiny.Configs()
	for i, st := range steps {
		if recs[i].Warmup != st.Warmup || recs[i].Config != cfgs[st.Config].Name {
			t.Fatalf("row %d: %s warm-up %v, plan says %+v", i, recs[i].Config, recs[i].Warmup, st)
		}
	}

	// meta.json.
	m, err := provenance.Read(wantDir)
	if err != nil {
		t.Fatal(err)
	}
	if m.Study != "tls" || m.RunID != id || m.Profile != "quick" || m.Board != "host" || m.Spec != "experiments/tls.toml" {
		t.Errorf("meta: %+v", m)
	}
	if m.SpecSHA != repro.HashBytes(specBefore) {
		t.Errorf("meta spec_sha256 %s is not the hash of the spec the run started from", m.SpecSHA)
	}
	if m.Seeds["order"] != 7 || m.Seeds["certificates"] != 3 || !m.Start.Equal(now) || !m.End.Equal(now) {
		t.Errorf("meta seeds %v start %s end %s", m.Seeds, m.Start, m.End)
	}
	if m.Host.Cores == 0 || m.Go.Version == "" {
		t.Errorf("meta host/go not collected: %+v %+v", m.Host, m.Go)
	}
	for _, k := range []string{"kernel_drops", "packets_captured", "handshake_rate_per_s", "capture_sha256", "capture_bytes", "connections"} {
		if _, ok := m.Measured[k]; !ok {
			t.Errorf("meta measured lacks %s: %v", k, m.Measured)
		}
	}
	if m.Measured["kernel_drops"] != float64(0) || m.Measured["connections"] != float64(16) {
		t.Errorf("meta measured %v", m.Measured)
	}
	for _, name := range []string{tlsdata.RecordsFile, ConfigsFile, tlsjoin.InprocFile, CaptureName + rederive.GzipExt} {
		sum, err := repro.HashFile(filepath.Join(wantDir, name))
		if err != nil || m.Files[name] != sum {
			t.Errorf("meta files[%s] = %s, file hashes to %s (%v)", name, m.Files[name], sum, err)
		}
	}

	// The capture: small, so committed gzip'd in the run folder and not
	// in the store; its uncompressed bytes have the recorded hash and
	// hold the key log.
	sum := m.Files[CaptureName]
	st := readStats(t, res.Dir)
	if sum == "" || sum != st.CaptureSHA {
		t.Fatalf("capture hash: files %s, measured %s", sum, st.CaptureSHA)
	}
	if got := entries(t, filepath.Join(e.store.Dir, "sha256")); got != "" {
		t.Errorf("the store holds %q; a small capture belongs in the run folder", got)
	}
	cf, err := rederive.OpenFile(filepath.Join(wantDir, CaptureName+rederive.GzipExt), sum)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := io.ReadAll(cf)
	if cerr := cf.Close(); err != nil || cerr != nil {
		t.Fatal(err, cerr)
	}
	if st.CaptureSize != int64(len(raw)) {
		t.Errorf("capture size %d, recorded %d", len(raw), st.CaptureSize)
	}
	cres, err := capture.Read(bytes.NewReader(raw), capture.ReadOptions{})
	if err != nil || len(cres.Secrets) == 0 {
		t.Fatalf("committed capture: %v, %d secret bytes (want the key log as a DSB)", err, len(cres.Secrets))
	}
	// Only the run's connections are in it: every packet belongs to one of
	// the 16 TLS connections, none to the noise made on another port.
	inConns := 0
	for _, r := range cres.Records {
		inConns += r.PacketsC2S + r.PacketsS2C
	}
	if len(cres.Records) != 16 || uint64(inConns) != st.Packets {
		t.Errorf("capture holds %d packets, %d of them in %d connections: want only the run's 16 connections (%d noise exchanges ran)", st.Packets, inConns, len(cres.Records), *noise)
	}

	// The pin (with the SHA-256 of the manifest Commit wrote), and
	// nothing else in the spec changed.
	manifest, err := repro.HashFile(filepath.Join(wantDir, repro.ManifestFile))
	if err != nil {
		t.Fatal(err)
	}
	after, _ := os.ReadFile(e.spec)
	if want := strings.Replace(string(specBefore), "[runs]\n", "[runs]\nquick = \""+id+"@sha256:"+manifest+"\"\n", 1); string(after) != want {
		t.Errorf("spec after the run:\n%s\nwant:\n%s", after, want)
	}
	for _, line := range []string{"plan: profile quick, 2 configurations", "capture: started on lo", "0 kernel drops", "committed in", "pinned for the quick profile"} {
		if !strings.Contains(e.log.String(), line) {
			t.Errorf("log lacks %q:\n%s", line, e.log.String())
		}
	}

	checkRederive(t, e.root, "data/tls/"+id)

	// A second run in the same second: refused, the first untouched.
	recBefore, _ := os.ReadFile(filepath.Join(wantDir, tlsdata.RecordsFile))
	if _, err := Run(context.Background(), e.config(now)); err == nil || !strings.Contains(err.Error(), "never overwritten") {
		t.Errorf("second run with the same ID: %v", err)
	}
	recAfter, _ := os.ReadFile(filepath.Join(wantDir, tlsdata.RecordsFile))
	specAfter2, _ := os.ReadFile(e.spec)
	if !bytes.Equal(recBefore, recAfter) || !bytes.Equal(after, specAfter2) {
		t.Error("a refused run changed the earlier run or the spec")
	}
}

// previousRun makes an earlier run and its pin, to show that a failed run
// leaves them alone.
func (e *testEnv) previousRun(t *testing.T) (marker []byte, spec []byte) {
	t.Helper()
	dir := filepath.Join(e.root, "data", "tls", "20260101T000000Z-quick")
	os.MkdirAll(dir, 0o755)
	marker = []byte("earlier run\n")
	os.WriteFile(filepath.Join(dir, tlsdata.RecordsFile), marker, 0o644)
	spec, _ = os.ReadFile(e.spec)
	spec = bytes.Replace(spec, []byte("[runs]\n"), []byte("[runs]\nquick = \"20260101T000000Z-quick\"\n"), 1)
	os.WriteFile(e.spec, spec, 0o644)
	return marker, spec
}

func (e *testEnv) checkUntouched(t *testing.T, marker, spec []byte) {
	t.Helper()
	if got := entries(t, filepath.Join(e.root, "data", "tls")); got != "20260101T000000Z-quick" {
		t.Errorf("data/tls holds %q, want only the earlier run", got)
	}
	if b, _ := os.ReadFile(filepath.Join(e.root, "data", "tls", "20260101T000000Z-quick", tlsdata.RecordsFile)); !bytes.Equal(b, marker) {
		t.Error("the earlier run was changed")
	}
	if b, _ := os.ReadFile(e.spec); !bytes.Equal(b, spec) {
		t.Errorf("the spec was changed:\n%s", b)
	}
	if got := entries(t, filepath.Join(e.store.Dir, "sha256")); got != "" {
		t.Errorf("the store holds %q, want no blob from a failed run", got)
	}
}

func TestRunCancelled(t *testing.T) {
	needRoot(t)
	e := newEnv(t, strings.Replace(tinySpec, "n = 5", "n = 400", 1))
	marker, spec := e.previousRun(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cfg := e.config(time.Date(2026, 11, 30, 12, 0, 1, 0, time.UTC))
	var stopped int
	cfg.Progress = func(done, total int) {
		if done == 7 {
			stopped = total
			cancel() // as Ctrl-C would, mid-run
		}
	}
	_, err := Run(ctx, cfg)
	if !errors.Is(err, ErrInterrupted) || !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want ErrInterrupted and context.Canceled", err)
	}
	if stopped == 0 || !strings.Contains(err.Error(), "after 7 of") {
		t.Errorf("err = %v, want it to say how far the run got", err)
	}
	if !strings.Contains(e.log.String(), "capture: stopped") {
		t.Errorf("the capture was not stopped:\n%s", e.log.String())
	}
	e.checkUntouched(t, marker, spec)
}

func TestRunKernelDropsInvalid(t *testing.T) {
	needRoot(t)
	e := newEnv(t, tinySpec)
	marker, spec := e.previousRun(t)
	testHookCaptureStats = func(s *capture.Stats) { s.KernelDrops = 3 }
	defer func() { testHookCaptureStats = nil }()
	_, err := Run(context.Background(), e.config(time.Date(2026, 11, 30, 12, 0, 2, 0, time.UTC)))
	if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "dropped 3") {
		t.Fatalf("err = %v, want ErrInvalid naming the drops", err)
	}
	e.checkUntouched(t, marker, spec)
}

func TestRunBadSpecCreatesNothing(t *testing.T) {
	// No root needed: the spec is checked before the permission.
	for _, tc := range []struct{ name, old, new, want string }{
		{"unknown group", `"MLKEM1024"]`, `"MLKEM512"]`, "MLKEM512"},
		{"n = 0", "n = 5", "n = 0", "n = 0"},
		{"misspelt key", "block = 2", "blocks = 2", "profiles.quick.blocks"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, strings.Replace(tinySpec, tc.old, tc.new, 1))
			before, _ := os.ReadFile(e.spec)
			_, err := Run(context.Background(), e.config(time.Now()))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want %q", err, tc.want)
			}
			if got := entries(t, e.root); got != "experiments" {
				t.Errorf("root holds %q after a spec error, want only experiments", got)
			}
			if after, _ := os.ReadFile(e.spec); !bytes.Equal(before, after) {
				t.Error("the spec was changed")
			}
		})
	}
	e := newEnv(t, tinySpec)
	cfg := e.config(time.Now())
	cfg.Profile = "full"
	if _, err := Run(context.Background(), cfg); err == nil || !strings.Contains(err.Error(), `unknown profile "full"`) {
		t.Errorf("unknown profile: %v", err)
	}
	cfg.Profile = ""
	if _, err := Run(context.Background(), cfg); err == nil {
		t.Error("no profile accepted")
	}
	if got := entries(t, e.root); got != "experiments" {
		t.Errorf("root holds %q", got)
	}
}

// TestRunNotRoot runs Run without the permission to capture: as a normal
// user directly, and as root on one OS thread whose effective user ID is
// dropped (setresuid on that thread alone clears its effective
// capabilities; the thread is never given back to the scheduler).
func TestRunNotRoot(t *testing.T) {
	e := newEnv(t, tinySpec)
	for _, d := range []string{filepath.Dir(e.root), e.root, filepath.Dir(e.spec)} {
		os.Chmod(d, 0o777) // the unprivileged thread must read the spec and could create data/
	}
	cfg := e.config(time.Now())
	var err error
	if os.Geteuid() != 0 {
		_, err = Run(context.Background(), cfg)
	} else {
		done := make(chan error, 1)
		go func() {
			runtime.LockOSThread() // never unlocked: the thread exits with the goroutine
			if _, _, errno := unix.RawSyscall(unix.SYS_SETRESUID, ^uintptr(0), 65534, ^uintptr(0)); errno != 0 {
				done <- errno
				return
			}
			_, err := Run(context.Background(), cfg)
			done <- err
		}()
		err = <-done
	}
	if !errors.Is(err, capture.ErrNeedRoot) || !strings.Contains(err.Error(), "sudo") || !strings.Contains(err.Error(), "nothing was created") {
		t.Fatalf("err = %v, want capture.ErrNeedRoot saying to use sudo", err)
	}
	if got := entries(t, e.root); got != "experiments" {
		t.Errorf("root holds %q without permission, want only experiments", got)
	}
}

// TestRunStrayConnection makes a TLS connection to one of the run's
// servers from outside the run, mid-run: the run must fail (whichever
// check sees it first) without hanging, and register nothing.
func TestRunStrayConnection(t *testing.T) {
	needRoot(t)
	e := newEnv(t, tinySpec)
	marker, spec := e.previousRun(t)
	cfg := e.config(time.Date(2026, 11, 30, 12, 0, 3, 0, time.UTC))
	var stray string
	cfg.Progress = func(done, total int) {
		if done != 2 {
			return
		}
		m := regexp.MustCompile(`server ed25519/X25519 +on (127\.0\.0\.1:\d+)`).FindStringSubmatch(e.log.String())
		if m == nil {
			t.Errorf("no server address in the log:\n%s", e.log.String())
			return
		}
		c, err := tls.Dial("tcp", m[1], &tls.Config{InsecureSkipVerify: true, CurvePreferences: []tls.CurveID{tls.X25519}})
		if err != nil {
			t.Errorf("stray connection: %v", err)
			return
		}
		stray = c.LocalAddr().String()
		c.Close()
	}
	done := make(chan error, 1)
	go func() { _, err := Run(context.Background(), cfg); done <- err }()
	var err error
	select {
	case err = <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("the run hangs after a stray connection")
	}
	t.Log(err)
	if err == nil || stray == "" || !strings.Contains(err.Error(), stray) {
		t.Fatalf("err = %v, want it to name the stray client %s", err, stray)
	}
	e.checkUntouched(t, marker, spec)
}

// loopbackNoise makes TCP exchanges with an echo server on another
// 127.0.0.1 port until stop is called, and counts them.
func loopbackNoise(t *testing.T) (*int, func()) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() { defer c.Close(); io.Copy(c, c) }()
		}
	}()
	n := new(int)
	quit, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-quit:
				return
			default:
			}
			c, err := net.DialTimeout("tcp", ln.Addr().String(), time.Second)
			if err != nil {
				continue
			}
			c.SetDeadline(time.Now().Add(time.Second))
			if _, err := c.Write([]byte("noise")); err == nil {
				if _, err := io.ReadFull(c, make([]byte, 5)); err == nil {
					*n++
				}
			}
			c.Close()
			time.Sleep(2 * time.Millisecond)
		}
	}()
	return n, func() { close(quit); <-done; ln.Close() }
}

// checkRederive runs the build's records stage (experiments/instruments/rederive with
// tlsjoin.Derive, what pipeline builds) on a run the runner made:
// it must re-derive the recorded records byte for byte from the committed
// capture; records that the capture does not give must fail naming the
// file and the record; a truncated capture must fail as such.
func checkRederive(t *testing.T, root, runDir string) {
	t.Helper()
	const out = "results/records/tls-quick.csv.gz"
	var notes bytes.Buffer
	build := func() error {
		st := rederive.Stage(rederive.Spec{Name: "tls:records-quick", RunDir: runDir, Out: out, Derive: tlsjoin.Derive, Code: []string{"experiments/tls/tlsjoin"}})
		e := &repro.Engine{Root: root, CodeRoot: repoRoot(t), Stages: []*repro.Stage{st}, Log: &notes}
		_, err := e.Build(context.Background())
		return err
	}
	if err := build(); err != nil {
		t.Fatalf("records stage on the runner's run: %v", err)
	}
	rec, _ := os.ReadFile(filepath.Join(root, runDir, tlsdata.RecordsFile))
	got, _ := os.ReadFile(filepath.Join(root, out))
	if !bytes.Equal(rec, got) || !strings.Contains(notes.String(), "re-derived from ") || !strings.Contains(notes.String(), "byte for byte") {
		t.Fatalf("records stage: output equal %v, notes:\n%s", bytes.Equal(rec, got), notes.String())
	}

	// The instrument changed (simulated by records the packets do not
	// give: one Ths off by a nanosecond).
	recs, err := tlsdata.ReadRecords(bytes.NewReader(rec), tlsdata.RecordsFile)
	if err != nil {
		t.Fatal(err)
	}
	*recs[3].ThsNs++
	*recs[3].ClientFinishedNs++
	bad, _ := tlsdata.MarshalRecords(recs)
	recPath := filepath.Join(root, runDir, tlsdata.RecordsFile)
	os.Chmod(recPath, 0o644)
	if err := os.WriteFile(recPath, bad, 0o644); err != nil {
		t.Fatal(err)
	}
	err = build()
	var me *rederive.MismatchError
	if !errors.As(err, &me) || me.Path != runDir+"/"+tlsdata.RecordsFile || me.Line != 5 || !strings.Contains(err.Error(), "instrument") {
		t.Errorf("records that the capture does not give: err = %v, want a mismatch at record 4 (line 5) of %s", err, tlsdata.RecordsFile)
	}
	if err := os.WriteFile(recPath, rec, 0o644); err != nil {
		t.Fatal(err)
	}

	// A truncated capture in git: a clear error, not other records.
	capPath := filepath.Join(root, runDir, CaptureName+rederive.GzipExt)
	whole, _ := os.ReadFile(capPath)
	if err := os.WriteFile(capPath, whole[:len(whole)/2], 0o644); err != nil {
		t.Fatal(err)
	}
	err = build()
	var ce *rederive.CorruptError
	if !errors.As(err, &ce) || !strings.Contains(err.Error(), "truncated or corrupt") || !strings.Contains(err.Error(), CaptureName) {
		t.Errorf("truncated capture: err = %v, want a *rederive.CorruptError", err)
	}
	if err := os.WriteFile(capPath, whole, 0o644); err != nil {
		t.Fatal(err)
	}
}

// readRunRecords reads the records.csv.gz of the run folder dir.
func readRunRecords(t *testing.T, dir string) []tlsdata.Record {
	t.Helper()
	f, err := os.Open(filepath.Join(dir, tlsdata.RecordsFile))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := tlsdata.ReadRecords(f, tlsdata.RecordsFile)
	if err != nil {
		t.Fatal(err)
	}
	return recs
}

// repoRoot is the module root, for the stage's code hash.
func repoRoot(t *testing.T) string {
	t.Helper()
	wd, _ := os.Getwd()
	return filepath.Join(wd, "..", "..", "..")
}

// A repeat run (PQREPRO_PIN=no) is committed without a pin, and its
// capture goes to the content store, not into the run folder (Git).
func TestRunRepeatKeepsItsCaptureInTheStore(t *testing.T) {
	needRoot(t)
	e := newEnv(t, tinySpec)
	specBefore, _ := os.ReadFile(e.spec)
	cfg := e.config(time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC))
	cfg.NoPin = true
	res, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatalf("%v\nlog:\n%s", err, e.log.String())
	}
	if got := entries(t, res.Dir); got != "MANIFEST.sha256 configs.json inproc.csv.gz meta.json records.csv.gz" {
		t.Errorf("the repeat run's folder holds %q (its capture belongs in the store)", got)
	}
	if _, err := os.Stat(e.store.Path(readStats(t, res.Dir).CaptureSHA)); err != nil {
		t.Errorf("the capture is not in the content store: %v", err)
	}
	if b, _ := os.ReadFile(e.spec); string(b) != string(specBefore) {
		t.Errorf("a repeat run changed the spec:\n%s", b)
	}
	if !strings.Contains(e.log.String(), "not pinned (PQREPRO_PIN=no: a repeat run)") {
		t.Errorf("the log does not say the run is not pinned:\n%s", e.log.String())
	}
}
