package tlsrun

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"pqrepro/datasets/tlsdata"
	"pqrepro/experiments/instruments/capture"
	"pqrepro/experiments/instruments/handshake"
	"pqrepro/experiments/tls/bridgenet"
	"pqrepro/experiments/tls/openssl"
	"pqrepro/internal/repro"
)

func TestSpecStacks(t *testing.T) {
	body := strings.Replace(tinySpec, `cert_keys = ["ed25519"]`, "cert_keys = [\"ed25519\"]\nstacks = [\"go\", \"openssl\"]\nkeyshares = [\"direct\", \"hrr\"]", 1)
	body = strings.Replace(body, `groups = ["X25519", "MLKEM1024"]`, `groups = ["X25519", "X25519MLKEM768", "MLKEM1024"]`, 1)
	s, err := LoadSpec(writeSpec(t, t.TempDir(), body))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, c := range s.Configs() {
		names = append(names, c.Name+"="+c.Paper)
	}
	// Go cannot take the HRR path for X25519MLKEM768: left out, and said.
	want := "ed25519/X25519=baseline ed25519/X25519MLKEM768= ed25519/MLKEM1024=pq-kem " +
		"ed25519/X25519/hrr= ed25519/MLKEM1024/hrr= " +
		"ed25519/X25519/openssl= ed25519/X25519MLKEM768/openssl= ed25519/MLKEM1024/openssl= " +
		"ed25519/X25519/hrr/openssl= ed25519/X25519MLKEM768/hrr/openssl= ed25519/MLKEM1024/hrr/openssl="
	if got := strings.Join(names, " "); got != want {
		t.Fatalf("configs\n%s\nwant\n%s", got, want)
	}
	if sk := s.Skipped(); len(sk) != 1 || !strings.HasPrefix(sk[0], "go/hrr/X25519MLKEM768: ") {
		t.Fatalf("skipped %q", sk)
	}

	// The default is the Go stack with direct key shares, as before.
	s, _ = LoadSpec(writeSpec(t, t.TempDir(), tinySpec))
	for _, c := range s.Configs() {
		if c.Stack != StackGo || c.KeyShare != handshake.Direct || strings.Count(c.Name, "/") != 1 {
			t.Errorf("default config %+v", c)
		}
	}

	for _, tc := range []struct{ add, want string }{
		{`stacks = ["rustls"]`, `unknown stack "rustls"`},
		{`stacks = ["go", "go"]`, "go listed twice"},
		{`keyshares = ["psk"]`, `unknown key-share mode "psk"`},
		{`keyshares = ["hrr", "hrr"]`, "hrr listed twice"},
	} {
		_, err := LoadSpec(writeSpec(t, t.TempDir(), strings.Replace(tinySpec, `cert_keys = ["ed25519"]`, "cert_keys = [\"ed25519\"]\n"+tc.add, 1)))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want %q", tc.add, err, tc.want)
		}
	}
	// A paper configuration the first stack and mode cannot make.
	bad := strings.Replace(tinySpec, `cert_keys = ["ed25519"]`, "cert_keys = [\"ed25519\"]\nkeyshares = [\"hrr\"]", 1)
	bad = strings.Replace(bad, "group = \"MLKEM1024\"\n", "group = \"X25519MLKEM768\"\n", 1)
	if _, err := LoadSpec(writeSpec(t, t.TempDir(), bad)); err == nil || !strings.Contains(err.Error(), `"pq-kem"`) {
		t.Errorf("err = %v, want the pq-kem paper configuration refused", err)
	}
}

func TestJoinHRR(t *testing.T) {
	r := joinFixture()
	r.configs[1].KeyShare = handshake.HRR
	r.configs[1].Name = "ed25519/MLKEM1024/hrr"
	conns := []conn{mkConn(0, 0, 50000, 0, time.Millisecond), mkConn(1, 1, 50001, 2*time.Millisecond, time.Millisecond)}
	hrr := mkCap("127.0.0.1:50001", "127.0.0.1:4002", "MLKEM1024", 2010*time.Microsecond)
	hrr.HRR = true
	if _, _, err := r.join(conns, []capture.Record{mkCap("127.0.0.1:50000", "127.0.0.1:4001", "X25519", 10*time.Microsecond), hrr}); err != nil {
		t.Fatal(err)
	}
	// The capture shows no HRR for the hrr configuration, and one for the
	// direct one: both fail.
	direct := mkCap("127.0.0.1:50000", "127.0.0.1:4001", "X25519", 10*time.Microsecond)
	direct.HRR = true
	hrr.HRR = false
	_, _, err := r.join(conns, []capture.Record{direct, hrr})
	if err == nil || !strings.Contains(err.Error(), "none was expected") || !strings.Contains(err.Error(), "expects one") {
		t.Fatalf("err = %v", err)
	}
}

// stackRun runs the tiny spec with the given [matrix] additions and
// returns the records; both key-share modes are checked on every row.
func stackRun(t *testing.T, add string, buildRoot string) []tlsdata.Record {
	t.Helper()
	e := newEnv(t, strings.Replace(tinySpec, `cert_keys = ["ed25519"]`, "cert_keys = [\"ed25519\"]\n"+add, 1))
	cfg := e.config(time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC))
	cfg.BuildRoot = buildRoot
	res, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatalf("%v\nlog:\n%s", err, e.log.String())
	}
	// Every client Finished, of both stacks, confirmed by decrypting it
	// with the key log the clients wrote.
	if !strings.Contains(e.log.String(), fmt.Sprintf("(%d client Finished confirmed by decryption)", readStats(t, res.Dir).Connections)) {
		t.Errorf("not every client Finished was decrypted:\n%s", e.log.String())
	}
	meta, err := os.ReadFile(filepath.Join(res.Dir, "meta.json"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(add, StackOpenSSL) != strings.Contains(string(meta), `"openssl.dsc_sha256": "`+openssl.DscSHA256+`"`) {
		t.Errorf("meta.json and the OpenSSL build:\n%s", meta)
	}
	f, err := os.Open(filepath.Join(res.Dir, tlsdata.RecordsFile))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := tlsdata.ReadRecords(f, tlsdata.RecordsFile)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range recs {
		wantHRR := strings.Contains(r.Config, "/hrr")
		if r.HRR != wantHRR || !r.Complete || r.NegotiatedGroup != r.Group {
			t.Errorf("row %d (%s): hrr=%v complete=%v group %s", r.Seq, r.Config, r.HRR, r.Complete, r.NegotiatedGroup)
		}
	}
	return recs
}

func TestRunHRRGo(t *testing.T) {
	needRoot(t)
	recs := stackRun(t, `keyshares = ["direct", "hrr"]`, "")
	if len(recs) != 32 {
		t.Fatalf("%d records, want 4 configurations x 8", len(recs))
	}
}

// TestRunOpenSSL runs both stacks and both key-share modes from one
// capture. It needs the OpenSSL build in this repository's cache.
func TestRunOpenSSL(t *testing.T) {
	needRoot(t)
	root, _ := filepath.Abs("../../..")
	if _, err := openssl.Cached(root); err != nil {
		t.Skipf("the OpenSSL build is not in the cache (go run mage.go tls:openssl makes it once): %v", err)
	}
	recs := stackRun(t, "stacks = [\"go\", \"openssl\"]\nkeyshares = [\"direct\", \"hrr\"]", root)
	n := map[string]int{}
	for _, r := range recs {
		n[r.Stack]++
		if (r.Stack == StackOpenSSL) != strings.HasSuffix(r.Config, "/openssl") {
			t.Errorf("row %d: stack %s, config %s", r.Seq, r.Stack, r.Config)
		}
	}
	if n[StackGo] != 32 || n[StackOpenSSL] != 32 {
		t.Fatalf("records per stack %v, want 32 each", n)
	}
}

// TestRunOpenSSLBridge runs both stacks and both key-share modes on both
// paths: the OpenSSL harness's client process is started from the client
// namespace and its server serves the listener made in the server
// namespace; each path's records are joined with its own capture, and
// the build's records stage re-derives all of them byte for byte.
func TestRunOpenSSLBridge(t *testing.T) {
	needBridge(t)
	useTestPrefix(t)
	root, _ := filepath.Abs("../../..")
	if _, err := openssl.Cached(root); err != nil {
		t.Skipf("the OpenSSL build is not in the cache (go run mage.go tls:openssl makes it once): %v", err)
	}
	add := "stacks = [\"go\", \"openssl\"]\nkeyshares = [\"direct\", \"hrr\"]\npaths = [\"loopback\", \"bridge\"]"
	e := newEnv(t, strings.Replace(tinySpec, `cert_keys = ["ed25519"]`, "cert_keys = [\"ed25519\"]\n"+add, 1))
	cfg := e.config(time.Date(2026, 11, 30, 12, 30, 0, 0, time.UTC))
	cfg.BuildRoot = root
	res, err := Run(context.Background(), cfg)
	checkNoLeftovers(t)
	if err != nil {
		t.Fatalf("%v\nlog:\n%s", err, e.log.String())
	}
	if !strings.Contains(e.log.String(), fmt.Sprintf("(%d client Finished confirmed by decryption)", readStats(t, res.Dir).Connections)) {
		t.Errorf("not every client Finished was decrypted:\n%s", e.log.String())
	}
	recs := readRunRecords(t, res.Dir)
	n := map[string]int{}
	for _, r := range recs {
		n[r.Stack+"/"+r.Path]++
		if r.HRR != strings.Contains(r.Config, "/hrr") || !r.Complete || r.NegotiatedGroup != r.Group {
			t.Errorf("row %d (%s on %s): hrr=%v complete=%v group %s", r.Seq, r.Config, r.Path, r.HRR, r.Complete, r.NegotiatedGroup)
		}
		if (r.Path == PathBridge) != strings.HasPrefix(r.Server, bridgenet.ServerAddr+":") {
			t.Errorf("row %d on %s: server %s", r.Seq, r.Path, r.Server)
		}
	}
	for _, k := range []string{"go/loopback", "go/bridge", "openssl/loopback", "openssl/bridge"} {
		if n[k] != 32 {
			t.Errorf("%s: %d records, want 32 (all: %v)", k, n[k], n)
		}
	}
	rel, _ := filepath.Rel(e.root, res.Dir)
	checkRederive(t, e.root, filepath.ToSlash(rel))
}

// BenchmarkRunStack records a 6-configuration matrix (Ed25519 and
// ML-DSA-87 x X25519, MLKEM1024, SecP384r1MLKEM1024; 4 blocks of 50 + 3
// warm-ups each, 1,272 connections) with each stack (openssl-cli: a new
// s_client process per connection), one capture per run,
// and reports the handshake rate of the run and the kernel's
// packet drops, which must be zero for a valid run. Needs root and, for
// openssl, the build in the cache.
//
//	go test -run '^$' -bench RunStack -benchtime 1x ./experiments/tls/tlsrun
func BenchmarkRunStack(b *testing.B) {
	if os.Geteuid() != 0 {
		b.Skip("needs root for the capture")
	}
	root, _ := filepath.Abs("../../..")
	const spec = `
[seeds]
order = 1
certificates = 1

[matrix]
groups = ["X25519", "MLKEM1024", "SecP384r1MLKEM1024"]
cert_keys = ["ed25519", "mldsa87"]
stacks = ["STACK"]

[paper]
baseline = "baseline"

[[paper.configs]]
name = "baseline"
cert_key = "ed25519"
group = "X25519"

[profiles.quick]
n = 200
block = 50
warmup = 3
`
	for _, stack := range []string{StackGo, StackOpenSSL, StackOpenSSLCLI} {
		b.Run(stack, func(b *testing.B) {
			if usesOpenSSL(stack) {
				if _, err := openssl.Cached(root); err != nil {
					b.Skipf("the OpenSSL build is not in the cache: %v", err)
				}
			}
			for b.Loop() {
				dir := b.TempDir()
				e := &testEnv{root: dir, spec: writeSpec(b, dir, strings.Replace(spec, "STACK", stack, 1)+cliTable), store: &repro.Store{Dir: filepath.Join(dir, "store")}}
				cfg := e.config(time.Now())
				cfg.Now, cfg.Verbose = nil, false
				cfg.BuildRoot = root
				res, err := Run(context.Background(), cfg)
				if err != nil {
					b.Fatalf("%v\n%s", err, e.log.String())
				}
				st := readStats(b, res.Dir)
				b.ReportMetric(st.Rate, "handshakes/s")
				b.ReportMetric(float64(st.KernelDrops), "kernel-drops")
				b.ReportMetric(float64(st.Connections), "connections")
			}
		})
	}
}

func TestRequirementsFollowStacks(t *testing.T) {
	dir := t.TempDir()
	writeSpec(t, dir, tinySpec)
	if r := Requirements(dir); len(r) != 0 {
		t.Fatalf("go-only spec requires %v", r)
	}
	writeSpec(t, dir, strings.Replace(tinySpec, `cert_keys = ["ed25519"]`, "cert_keys = [\"ed25519\"]\nstacks = [\"go\", \"openssl\"]", 1))
	if r := Requirements(dir); len(r) == 0 || r[0].Name != "dpkg-source" {
		t.Fatalf("openssl spec requires %v", r)
	}
}
