package main

import (
	"context"
	"crypto/tls"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"time"

	"pqrepro/experiments/instruments/handshake"
	"pqrepro/internal/interrupt"
)

func init() {
	register("serve", "TLS 1.3 server for one Study A configuration (for another namespace)", runServe)
}

// handshakeFlags are the flags serve and dial share; both sides must agree.
type handshakeFlags struct {
	group, clientGroups, cert, keylog string
	chain, hrr                        bool
	seed                              uint64
	addr                              string
	n                                 int
	timeout                           time.Duration
}

func (h *handshakeFlags) register(fs *flag.FlagSet, addr string) {
	fs.StringVar(&h.group, "group", "X25519", "the key-exchange `group` (X25519, X25519MLKEM768, SecP256r1MLKEM768, SecP384r1MLKEM1024, MLKEM1024)")
	fs.StringVar(&h.cert, "cert", "ed25519", "certificate `key` (ed25519, ecdsa-p256, mldsa44, mldsa65, mldsa87)")
	fs.BoolVar(&h.chain, "chain", false, "send leaf + CA certificate instead of a self-signed leaf")
	fs.Uint64Var(&h.seed, "seed", 1, "seed of the deterministic certificates (same on both sides)")
	fs.StringVar(&h.addr, "addr", addr, "`host:port` to listen on / dial")
	fs.IntVar(&h.n, "n", 1, "number of connections (serve: 0 = until interrupted)")
	fs.BoolVar(&h.hrr, "hrr", false, "expect a HelloRetryRequest on every connection")
	fs.DurationVar(&h.timeout, "timeout", 30*time.Second, "per-connection timeout")
	fs.StringVar(&h.keylog, "keylog", "", "append NSS key log lines to `file`")
}

func (h *handshakeFlags) parse() (tls.CurveID, handshake.CertKey, error) {
	g, err := handshake.ParseGroup(h.group)
	if err != nil {
		return 0, "", err
	}
	k, err := handshake.ParseCertKey(h.cert)
	return g, k, err
}

func (h *handshakeFlags) keyLog() (io.Writer, func(), error) {
	if h.keylog == "" {
		return nil, func() {}, nil
	}
	f, err := os.OpenFile(h.keylog, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, nil, fmt.Errorf("open key log: %w", err)
	}
	return f, func() { f.Close() }, nil
}

func runServe(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var h handshakeFlags
	h.register(fs, "127.0.0.1:8443")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	g, k, err := h.parse()
	if err != nil || fs.NArg() != 0 {
		fmt.Fprintf(stderr, "pqrepro serve: %v\n", err)
		return 2
	}
	b, err := handshake.MakeCerts(handshake.CertConfig{Key: k, Chain: h.chain, Seed: h.seed})
	if err != nil {
		fmt.Fprintf(stderr, "pqrepro serve: %v\n", err)
		return 1
	}
	kl, closeKL, err := h.keyLog()
	if err != nil {
		fmt.Fprintf(stderr, "pqrepro serve: %v\n", err)
		return 1
	}
	defer closeKL()
	ln, err := net.Listen("tcp", h.addr)
	if err != nil {
		fmt.Fprintf(stderr, "pqrepro serve: %v\n", err)
		return 1
	}
	ctx, stop := interrupt.Context(context.Background())
	defer stop()
	srv := &handshake.Server{TLS: handshake.ServerTLSConfig(b, g, kl), Timeout: h.timeout,
		Expect: handshake.Expect{Group: g, HRR: h.hrr, Key: k, Chain: h.chain}}
	fmt.Fprintf(stderr, "pqrepro serve: listening on %s (%s, %s, chain=%v)\n", ln.Addr(), g, k, h.chain)
	fmt.Fprintln(stdout, "client,accept_unix_ns,server_ns,error")
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	recs := make(chan handshake.ServerRecord)
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, ln, func(r handshake.ServerRecord) { recs <- r }) }()
	failed, count := 0, 0
	for {
		select {
		case r := <-recs:
			count++
			msg := ""
			if r.Err != nil {
				failed++
				msg = r.Err.Error()
				fmt.Fprintf(stderr, "pqrepro serve: %v\n", r.Err)
			}
			fmt.Fprintf(stdout, "%s,%d,%d,%q\n", r.Client, r.Accept.UnixNano(), r.DurationNs, msg)
			if h.n > 0 && count >= h.n {
				cancel()
			}
		case err := <-done:
			if err != nil {
				fmt.Fprintf(stderr, "pqrepro serve: %v\n", err)
				return 1
			}
			if failed > 0 {
				fmt.Fprintf(stderr, "pqrepro serve: %d of %d connections failed their checks\n", failed, count)
				return 1
			}
			return 0
		}
	}
}
