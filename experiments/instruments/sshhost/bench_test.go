package sshhost_test

import (
	"context"
	"crypto/tls"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"pqrepro/experiments/instruments/handshake"
	"pqrepro/experiments/instruments/sshhost"
	"pqrepro/experiments/instruments/sshhost/sshtest"
)

// BenchmarkDeployStart measures what a remote run costs before its first
// handshake: copying the binary (a fresh remote folder each time) or
// finding it there, then starting the serve role until it is ready, and
// stopping it:
//
//	go test -run '^$' -bench DeployStart -benchtime 5x ./experiments/instruments/sshhost
func BenchmarkDeployStart(b *testing.B) {
	sh := sshtest.Start(b)
	bin := binary(b)
	for _, fresh := range []bool{true, false} {
		name := "cached"
		if fresh {
			name = "copy"
		}
		b.Run(name, func(b *testing.B) {
			for i := 0; b.Loop(); i++ {
				o := sh.Options()
				if fresh {
					o.Dir = filepath.Join(sh.RemoteDir, strconv.Itoa(i))
				}
				h, err := sshhost.New(o)
				if err != nil {
					b.Fatal(err)
				}
				d, err := h.Deploy(context.Background(), bin, "")
				if err != nil {
					b.Fatal(err)
				}
				p, _ := startServe(b, h, d, `[{"group":"X25519","cert":"ed25519","seed":1}]`)
				b.StopTimer()
				if err := p.Stop(); err != nil {
					b.Fatal(err)
				}
				if fresh {
					os.RemoveAll(o.Dir)
				}
				b.StartTimer()
			}
		})
	}
}

// BenchmarkHandshakes compares full handshakes (Ed25519 + X25519, one
// client, serially, no capture) to a server on loopback in this process
// with the serve role on the namespace host across the veth (MTU 1500):
//
//	go test -run '^$' -bench Handshakes -benchtime 2000x ./experiments/instruments/sshhost
func BenchmarkHandshakes(b *testing.B) {
	cfg := handshake.CertConfig{Key: "ed25519", Seed: 1}
	bnd, err := handshake.MakeCerts(cfg)
	if err != nil {
		b.Fatal(err)
	}
	exp := handshake.Expect{Group: tls.X25519, Key: "ed25519"}
	cli := &handshake.Client{TLS: handshake.ClientTLSConfig(bnd.Roots, "localhost", []tls.CurveID{tls.X25519}, nil), Expect: exp}
	run := func(b *testing.B, addr string, drain func()) {
		t0 := time.Now()
		n := 0
		for b.Loop() {
			if _, err := cli.Dial(context.Background(), addr); err != nil {
				b.Fatal(err)
			}
			drain()
			n++
		}
		b.ReportMetric(float64(n)/time.Since(t0).Seconds(), "handshakes/s")
	}
	b.Run("loopback", func(b *testing.B) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			b.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		recs := make(chan handshake.ServerRecord, 1)
		srv := &handshake.Server{TLS: handshake.ServerTLSConfig(bnd, tls.X25519, nil), Expect: exp}
		done := make(chan error)
		go func() { done <- srv.Serve(ctx, ln, func(r handshake.ServerRecord) { recs <- r }) }()
		run(b, ln.Addr().String(), func() { <-recs })
		cancel()
		<-done
	})
	b.Run("remote", func(b *testing.B) {
		_, h := newHost(b)
		d, err := h.Deploy(context.Background(), binary(b), "")
		if err != nil {
			b.Fatal(err)
		}
		p, addrs := startServe(b, h, d, `[{"group":"X25519","cert":"ed25519","seed":1}]`)
		run(b, addrs[0], func() { recv(b, p) })
	})
}
