package openssl

import (
	"bytes"
	"context"
	"crypto/tls"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"pqrepro/experiments/instruments/handshake"
)

// harness returns the compiled harness of the cached OpenSSL build, or
// skips: the build takes minutes, so tests use the one the cache holds
// (go run mage.go tls:openssl makes it) and build it themselves only when
// PQREPRO_OPENSSL_BUILD=1.
func harness(t testing.TB) string {
	t.Helper()
	root, _ := filepath.Abs("../../..")
	b, err := Cached(root)
	if err != nil && os.Getenv("PQREPRO_OPENSSL_BUILD") == "1" {
		b, err = Ensure(context.Background(), root, testLog{t})
	}
	if err != nil {
		t.Skipf("the OpenSSL build is not in the cache and this test does not build it (minutes): run `go run mage.go tls:openssl` once or set PQREPRO_OPENSSL_BUILD=1: %v", err)
	}
	if _, err := exec.LookPath("gcc"); err != nil {
		t.Skip("gcc not installed (apt-get install -y gcc): cannot compile the harness")
	}
	bin, err := b.Harness(context.Background(), testLog{t})
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

type testLog struct{ t testing.TB }

func (l testLog) Write(p []byte) (int, error) {
	l.t.Log(strings.TrimSpace(string(p)))
	return len(p), nil
}

// pair is a running OpenSSL server and a client for one configuration.
type pair struct {
	srv     *Server
	cli     *Client
	addr    string
	results chan handshake.ServerRecord
	stop    func()
	keyLog  *bytes.Buffer
}

func startPair(t testing.TB, bin string, key handshake.CertKey, chain bool, group tls.CurveID, clientGroups string, exp handshake.Expect) *pair {
	t.Helper()
	b, err := handshake.MakeCerts(handshake.CertConfig{Key: key, Chain: chain, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	files, err := WriteCerts(t.TempDir(), b)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &pair{addr: ln.Addr().String(), results: make(chan handshake.ServerRecord, 16), keyLog: &bytes.Buffer{}}
	p.srv = &Server{Binary: bin, Files: files, Groups: ServerGroups(group), Expect: exp}
	p.cli = &Client{Binary: bin, CA: files.CA, Groups: clientGroups, Expect: exp, KeyLog: p.keyLog, Timeout: 10 * time.Second}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	var serveErr error
	go func() {
		defer wg.Done()
		serveErr = p.srv.Serve(ctx, ln, func(r handshake.ServerRecord) { p.results <- r })
	}()
	p.stop = func() {
		p.cli.Close()
		cancel()
		wg.Wait()
		if serveErr != nil {
			t.Errorf("server: %v", serveErr)
		}
	}
	t.Cleanup(p.stop)
	return p
}

// dial makes one connection and returns the client's and server's errors.
func (p *pair) dial(t testing.TB) (handshake.ClientRecord, error, error) {
	cr, cerr := p.cli.Dial(context.Background(), p.addr)
	select {
	case sr := <-p.results:
		return cr, cerr, sr.Err
	case <-time.After(10 * time.Second):
		t.Fatal("no server record")
	}
	return cr, cerr, nil
}

// TestHandshakes makes one handshake per configuration of the matrix on
// both key-share paths, with the Go-made deterministic certificates.
func TestHandshakes(t *testing.T) {
	bin := harness(t)
	for _, key := range handshake.CertKeys {
		for _, g := range []tls.CurveID{tls.X25519, tls.X25519MLKEM768, tls.MLKEM1024, tls.SecP384r1MLKEM1024} {
			for _, ks := range handshake.KeyShares {
				t.Run(string(key)+"/"+g.String()+"/"+string(ks), func(t *testing.T) {
					exp := handshake.Expect{Group: g, Key: key, HRR: ks == handshake.HRR}
					groups := ClientGroups(g, 0)
					if ks == handshake.HRR {
						d, err := handshake.Decoy(g)
						if err != nil {
							t.Fatal(err)
						}
						groups = ClientGroups(g, d)
					}
					p := startPair(t, bin, key, false, g, groups, exp)
					cr, cerr, serr := p.dial(t)
					if cerr != nil || serr != nil {
						t.Fatalf("client: %v; server: %v", cerr, serr)
					}
					if cr.Group != g || cr.HRR != exp.HRR || cr.Key != key || cr.DurationNs <= 0 || cr.Start.IsZero() {
						t.Fatalf("record %+v", cr)
					}
					if !strings.Contains(p.keyLog.String(), "CLIENT_HANDSHAKE_TRAFFIC_SECRET ") {
						t.Fatalf("key log %q", p.keyLog.String())
					}
				})
			}
		}
	}
}

func TestChain(t *testing.T) {
	bin := harness(t)
	exp := handshake.Expect{Group: tls.X25519, Key: handshake.MLDSA65, Chain: true}
	p := startPair(t, bin, handshake.MLDSA65, true, tls.X25519, "X25519", exp)
	if _, cerr, serr := p.dial(t); cerr != nil || serr != nil {
		t.Fatalf("client: %v; server: %v", cerr, serr)
	}
}

// TestWrongConnectionFails: a connection that is not the configured one
// is an error on the side that sees it, never a sample.
func TestWrongConnectionFails(t *testing.T) {
	bin := harness(t)
	for _, tc := range []struct {
		name         string
		group        tls.CurveID // the server's
		clientGroups string
		exp          handshake.Expect
		want         string
	}{
		{"wrong group", tls.X25519, "X25519", handshake.Expect{Group: tls.MLKEM1024, Key: handshake.Ed25519}, `negotiated group "x25519", want MLKEM1024`},
		{"unexpected HRR", tls.MLKEM1024, ClientGroups(tls.MLKEM1024, tls.X25519MLKEM768), handshake.Expect{Group: tls.MLKEM1024, Key: handshake.Ed25519}, "HelloRetryRequest=true, want false"},
		{"missing HRR", tls.MLKEM1024, "MLKEM1024", handshake.Expect{Group: tls.MLKEM1024, Key: handshake.Ed25519, HRR: true}, "HelloRetryRequest=false, want true"},
		{"wrong certificate", tls.X25519, "X25519", handshake.Expect{Group: tls.X25519, Key: handshake.MLDSA87}, "certificate key ed25519, want mldsa87"},
		{"wrong chain", tls.X25519, "X25519", handshake.Expect{Group: tls.X25519, Key: handshake.Ed25519, Chain: true}, "1 certificates sent, want 2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := startPair(t, bin, handshake.Ed25519, false, tc.group, tc.clientGroups, tc.exp)
			_, cerr, serr := p.dial(t)
			if cerr == nil || !strings.Contains(strings.ToLower(cerr.Error()), strings.ToLower(tc.want)) {
				t.Fatalf("client error %v, want %q", cerr, tc.want)
			}
			if tc.name != "wrong certificate" && tc.name != "wrong chain" && serr == nil {
				t.Fatal("the server accepted the connection")
			}
		})
	}
}

func TestHandshakeFailureReported(t *testing.T) {
	bin := harness(t)
	// No group in common: the handshake fails on both sides.
	exp := handshake.Expect{Group: tls.X25519, Key: handshake.Ed25519}
	p := startPair(t, bin, handshake.Ed25519, false, tls.X25519, "MLKEM1024", exp)
	_, cerr, serr := p.dial(t)
	if cerr == nil || serr == nil {
		t.Fatalf("client %v, server %v: want both to fail", cerr, serr)
	}
}

// BenchmarkHandshake measures back-to-back OpenSSL handshakes (Ed25519 +
// X25519) through the Go driver, both processes on loopback.
func BenchmarkHandshake(b *testing.B) {
	bin := harness(b)
	exp := handshake.Expect{Group: tls.X25519, Key: handshake.Ed25519}
	p := startPair(b, bin, handshake.Ed25519, false, tls.X25519, "X25519", exp)
	var ns []int64
	for b.Loop() {
		cr, cerr, serr := p.dial(b)
		if cerr != nil || serr != nil {
			b.Fatalf("client: %v; server: %v", cerr, serr)
		}
		ns = append(ns, cr.DurationNs)
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "handshakes/s")
	b.ReportMetric(medianUs(ns), "client-median-µs")
}

// BenchmarkHandshakeGo is BenchmarkHandshake with Go's crypto/tls on both
// ends (experiments/instruments/handshake), for comparison on the same machine.
func BenchmarkHandshakeGo(b *testing.B) {
	bundle, err := handshake.MakeCerts(handshake.CertConfig{Key: handshake.Ed25519, Seed: 1})
	if err != nil {
		b.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	exp := handshake.Expect{Group: tls.X25519, Key: handshake.Ed25519}
	srv := &handshake.Server{TLS: handshake.ServerTLSConfig(bundle, tls.X25519, nil), Expect: exp}
	cli := &handshake.Client{TLS: handshake.ClientTLSConfig(bundle.Roots, "localhost", []tls.CurveID{tls.X25519}, nil), Expect: exp}
	results := make(chan handshake.ServerRecord, 16)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, ln, func(r handshake.ServerRecord) { results <- r }) }()
	defer func() { cancel(); <-done }()
	var ns []int64
	for b.Loop() {
		cr, err := cli.Dial(context.Background(), ln.Addr().String())
		if err != nil {
			b.Fatal(err)
		}
		if r := <-results; r.Err != nil {
			b.Fatal(r.Err)
		}
		ns = append(ns, cr.DurationNs)
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "handshakes/s")
	b.ReportMetric(medianUs(ns), "client-median-µs")
}

// medianUs is the median of ns in microseconds.
func medianUs(ns []int64) float64 {
	if len(ns) == 0 {
		return 0
	}
	slices.Sort(ns)
	return float64(ns[len(ns)/2]) / 1e3
}
