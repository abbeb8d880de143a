package handshake

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"os"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestMatrix(t *testing.T) {
	for _, g := range Groups {
		for _, k := range CertKeys {
			for _, chain := range []bool{false, true} {
				t.Run(fmt.Sprintf("%s/%s/chain=%v", g, k, chain), func(t *testing.T) {
					var kl bytes.Buffer
					var progress []int
					recs, err := Run(context.Background(), Config{
						Group: g, Cert: CertConfig{Key: k, Chain: chain, Seed: 7},
						N: 2, Warmup: 1, KeyLog: &kl,
						Progress: func(done, total int) { progress = append(progress, done) },
					})
					if err != nil {
						t.Fatal(err)
					}
					if len(recs) != 2 || len(progress) != 3 || progress[2] != 3 {
						t.Fatalf("got %d records, progress %v; want 2 records, progress 1..3", len(recs), progress)
					}
					for i, r := range recs {
						if r.Seq != i || r.Group != g || r.GroupName != g.String() || r.HRR || r.Key != k || r.Chain != chain {
							t.Errorf("record %d = %+v", i, r)
						}
						if r.ClientNs <= 0 || r.ServerNs <= 0 || r.ServerNs > r.ClientNs*10 {
							t.Errorf("record %d: implausible timers client %d ns server %d ns", i, r.ClientNs, r.ServerNs)
						}
					}
					// 3 connections x 4 TLS 1.3 secrets (handshake and traffic, both directions).
					if n := strings.Count(kl.String(), "\n"); n != 12 {
						t.Errorf("key log has %d lines, want 12", n)
					}
				})
			}
		}
	}
}

func TestHelloRetryRequest(t *testing.T) {
	// The client offers X25519MLKEM768 and MLKEM1024 and sends one key
	// share, for X25519MLKEM768 (first in Go's fixed order; no X25519
	// fallback share because X25519 is not offered). The server only has
	// MLKEM1024, so it must ask again.
	recs, err := Run(context.Background(), Config{
		Group: tls.MLKEM1024, ClientGroups: []tls.CurveID{tls.MLKEM1024, tls.X25519MLKEM768},
		ExpectHRR: true, Cert: CertConfig{Key: Ed25519}, N: 2,
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range recs {
		if !r.HRR || r.Group != tls.MLKEM1024 {
			t.Errorf("record %+v: want HRR to MLKEM1024", r)
		}
	}
}

func TestMismatchFails(t *testing.T) {
	cases := []struct {
		name string
		cfg  Config
		want string
	}{
		{"unexpected HRR", Config{Group: tls.MLKEM1024, ClientGroups: []tls.CurveID{tls.MLKEM1024, tls.X25519MLKEM768}, Cert: CertConfig{Key: Ed25519}, N: 1}, "HelloRetryRequest=true, want false"},
		{"missing HRR", Config{Group: tls.X25519, ExpectHRR: true, Cert: CertConfig{Key: Ed25519}, N: 1}, "HelloRetryRequest=false, want true"},
		{"no common group", Config{Group: tls.MLKEM1024, ClientGroups: []tls.CurveID{tls.X25519}, Cert: CertConfig{Key: Ed25519}, N: 1, Timeout: 5 * time.Second}, "handshake"},
		{"bad cert key", Config{Group: tls.X25519, Cert: CertConfig{Key: "rsa"}, N: 1}, "unknown certificate key"},
		{"no group", Config{Cert: CertConfig{Key: Ed25519}, N: 1}, "no key-exchange group"},
		{"bad validity", Config{Group: tls.X25519, Cert: CertConfig{Key: Ed25519, NotBefore: time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC), NotAfter: time.Date(2029, 1, 1, 0, 0, 0, 0, time.UTC)}, N: 1}, "NotAfter"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Run(context.Background(), c.cfg)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v, want it to contain %q", err, c.want)
			}
		})
	}
}

func TestCertKeyCheckedByClient(t *testing.T) {
	b, err := MakeCerts(CertConfig{Key: Ed25519})
	if err != nil {
		t.Fatal(err)
	}
	// A client expecting ML-DSA-87 must reject an Ed25519 server.
	exp := Expect{Group: tls.X25519, Key: Ed25519}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ln, addr := listen(t)
	srv := &Server{TLS: ServerTLSConfig(b, tls.X25519, nil), Expect: exp}
	go srv.Serve(ctx, ln, func(ServerRecord) {})
	wrong := exp
	wrong.Key = MLDSA87
	cli := &Client{TLS: ClientTLSConfig(b.Roots, "localhost", []tls.CurveID{tls.X25519}, nil), Expect: wrong, Timeout: 5 * time.Second}
	_, err = cli.Dial(ctx, addr)
	if err == nil || !strings.Contains(err.Error(), "certificate key ed25519, want mldsa87") {
		t.Fatalf("err = %v", err)
	}
}

func TestCertsDeterministic(t *testing.T) {
	for _, k := range CertKeys {
		a, err := MakeCerts(CertConfig{Key: k, Chain: true, Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		b, _ := MakeCerts(CertConfig{Key: k, Chain: true, Seed: 1})
		c, _ := MakeCerts(CertConfig{Key: k, Chain: true, Seed: 2})
		for i := range a.Server.Certificate {
			if !bytes.Equal(a.Server.Certificate[i], b.Server.Certificate[i]) {
				t.Errorf("%s cert %d differs for the same seed", k, i)
			}
			if bytes.Equal(a.Server.Certificate[i], c.Server.Certificate[i]) {
				t.Errorf("%s cert %d equal for different seeds", k, i)
			}
		}
		if got, err := CertKeyOf(a.Leaf); err != nil || got != k {
			t.Errorf("CertKeyOf = %v, %v; want %s", got, err, k)
		}
	}
}

type stepClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *stepClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(time.Millisecond)
	return c.t
}

func TestInjectedClock(t *testing.T) {
	clk := &stepClock{t: time.Unix(1e9, 0)}
	recs, err := Run(context.Background(), Config{Group: tls.X25519, Cert: CertConfig{Key: Ed25519}, N: 1, Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	// Each timer is a difference of two clock reads; with a clock that
	// steps 1 ms per read, both must be whole positive milliseconds.
	r := recs[0]
	if r.ClientNs <= 0 || r.ClientNs%1e6 != 0 || r.ServerNs <= 0 || r.ServerNs%1e6 != 0 || r.StartUnixNs <= 1e18 {
		t.Fatalf("timers not from the injected clock: %+v", r)
	}
}

func TestCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	recs, err := Run(ctx, Config{Group: tls.X25519, Cert: CertConfig{Key: Ed25519}, N: 1000,
		Progress: func(done, total int) {
			if done == 3 {
				cancel()
			}
		}})
	if !errors.Is(err, context.Canceled) || len(recs) != 3 {
		t.Fatalf("got %d records, err %v; want 3 and context.Canceled", len(recs), err)
	}
}

func TestParse(t *testing.T) {
	for in, want := range map[string]tls.CurveID{"x25519mlkem768": tls.X25519MLKEM768, "MLKEM1024": tls.MLKEM1024, "0x11ed": tls.SecP384r1MLKEM1024} {
		if g, err := ParseGroup(in); err != nil || g != want {
			t.Errorf("ParseGroup(%q) = %v, %v", in, g, err)
		}
	}
	if _, err := ParseGroup("nope"); err == nil {
		t.Error("ParseGroup(nope) succeeded")
	}
	for in, want := range map[string]CertKey{"ML-DSA-87": MLDSA87, "ecdsa-p256": ECDSAP256, "Ed25519": Ed25519} {
		if k, err := ParseCertKey(in); err != nil || k != want {
			t.Errorf("ParseCertKey(%q) = %v, %v", in, k, err)
		}
	}
	if _, err := ParseCertKey("rsa"); err == nil {
		t.Error("ParseCertKey(rsa) succeeded")
	}
}

func ExampleRun() {
	recs, err := Run(context.Background(), Config{
		Group: tls.X25519MLKEM768,
		Cert:  CertConfig{Key: MLDSA65, Chain: true, Seed: 1},
		N:     3, Warmup: 1,
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, r := range recs {
		fmt.Println(r.Seq, r.GroupName, r.Key, r.HRR)
	}
	// Output:
	// 0 X25519MLKEM768 mldsa65 false
	// 1 X25519MLKEM768 mldsa65 false
	// 2 X25519MLKEM768 mldsa65 false
}

// TestGoHRRGroups runs one handshake per group the HRR key-share mode
// supports for Go and checks that each takes the HelloRetryRequest path.
func TestGoHRRGroups(t *testing.T) {
	for _, g := range Groups {
		groups, err := GoHRRGroups(g)
		if g == tls.X25519MLKEM768 {
			if err == nil {
				t.Fatalf("GoHRRGroups(%s) = %v, want an error", g, groups)
			}
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		if _, err := Run(context.Background(), Config{Group: g, ClientGroups: groups, ExpectHRR: true, Cert: CertConfig{Key: Ed25519}, N: 1}); err != nil {
			t.Errorf("%s via %v: %v", g, groups, err)
		}
	}
}

// TestCauseOfClosedByContext: a read that fails with net.ErrClosed because
// Dial's context closed the connection carries the context's error, so that
// a caller classifies a per-connection timeout as a timeout (the race of the
// AfterFunc close against the deadline once made a lossy-link test fail with
// "use of closed network connection").
func TestCauseOfClosedByContext(t *testing.T) {
	closed := fmt.Errorf("read tcp: %w", net.ErrClosed)
	expired, cancel := context.WithTimeout(context.Background(), -time.Second)
	defer cancel()
	cancelled, cancel2 := context.WithCancel(context.Background())
	cancel2()
	other := errors.New("bad record MAC")
	for _, tc := range []struct {
		name string
		ctx  context.Context
		err  error
		want []error
	}{
		{"timeout closed the connection", expired, closed, []error{context.DeadlineExceeded, net.ErrClosed}},
		{"cancel closed the connection", cancelled, closed, []error{context.Canceled, net.ErrClosed}},
		{"live context keeps the error", context.Background(), closed, []error{net.ErrClosed}},
		{"other error untouched", expired, other, []error{other}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := causeOf(tc.ctx, tc.err)
			for _, w := range tc.want {
				if !errors.Is(got, w) {
					t.Errorf("causeOf = %v, want it to wrap %v", got, w)
				}
			}
			if tc.ctx == context.Background() && errors.Is(got, context.DeadlineExceeded) {
				t.Errorf("causeOf = %v wraps a deadline the context never had", got)
			}
		})
	}
}

// TestDialTimeoutWaitingForClose: a server that completes the handshake and
// never closes makes Dial fail after its timeout with an error that is a
// deadline, whichever of the deadline and the context's close wins.
func TestDialTimeoutWaitingForClose(t *testing.T) {
	b, err := MakeCerts(CertConfig{Key: Ed25519, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	var held []net.Conn
	var mu sync.Mutex
	defer func() {
		mu.Lock()
		defer mu.Unlock()
		for _, c := range held {
			c.Close()
		}
	}()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			tc := tls.Server(c, ServerTLSConfig(b, tls.X25519, nil))
			go tc.Handshake() // then hold the connection open: no close_notify, no FIN
			mu.Lock()
			held = append(held, c)
			mu.Unlock()
		}
	}()
	for i := 0; i < 20; i++ {
		cl := Client{Timeout: 50 * time.Millisecond, TLS: ClientTLSConfig(b.Roots, "localhost", []tls.CurveID{tls.X25519}, nil), Expect: Expect{Group: tls.X25519, Key: Ed25519}}
		_, err := cl.Dial(context.Background(), ln.Addr().String())
		if err == nil {
			t.Fatal("Dial returned without the server's close")
		}
		if !errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, os.ErrDeadlineExceeded) {
			t.Fatalf("attempt %d: %v is not a deadline", i, err)
		}
	}
}
