package main

import (
	"context"
	"crypto/tls"
	"flag"
	"fmt"
	"io"

	"pqrepro/experiments/instruments/handshake"
	"pqrepro/internal/interrupt"
)

func init() {
	register("dial", "TLS 1.3 client for one Study A configuration (for another namespace)", runDial)
}

func runDial(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("dial", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var h handshakeFlags
	h.register(fs, "127.0.0.1:8443")
	fs.StringVar(&h.clientGroups, "client-groups", "", "comma-separated groups the client offers (default: just --group); use with --hrr")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	g, k, err := h.parse()
	if err != nil || fs.NArg() != 0 || h.n < 1 {
		fmt.Fprintf(stderr, "pqrepro dial: bad arguments (need -n >= 1): %v\n", err)
		return 2
	}
	groups := []tls.CurveID{g}
	if h.clientGroups != "" {
		groups = nil
		for _, s := range splitComma(h.clientGroups) {
			cg, err := handshake.ParseGroup(s)
			if err != nil {
				fmt.Fprintf(stderr, "pqrepro dial: %v\n", err)
				return 2
			}
			groups = append(groups, cg)
		}
	}
	b, err := handshake.MakeCerts(handshake.CertConfig{Key: k, Chain: h.chain, Seed: h.seed})
	if err != nil {
		fmt.Fprintf(stderr, "pqrepro dial: %v\n", err)
		return 1
	}
	kl, closeKL, err := h.keyLog()
	if err != nil {
		fmt.Fprintf(stderr, "pqrepro dial: %v\n", err)
		return 1
	}
	defer closeKL()
	ctx, stop := interrupt.Context(context.Background())
	defer stop()
	cli := &handshake.Client{TLS: handshake.ClientTLSConfig(b.Roots, "localhost", groups, kl), Timeout: h.timeout,
		Expect: handshake.Expect{Group: g, HRR: h.hrr, Key: k, Chain: h.chain}}
	fmt.Fprintln(stdout, "seq,client,server,start_unix_ns,client_ns,group,hrr,cert_key")
	for i := 0; i < h.n; i++ {
		r, err := cli.Dial(ctx, h.addr)
		if err != nil {
			fmt.Fprintf(stderr, "pqrepro dial: connection %d of %d: %v\n", i+1, h.n, err)
			return 1
		}
		fmt.Fprintf(stdout, "%d,%s,%s,%d,%d,%s,%v,%s\n", i, r.Local, r.Server, r.Start.UnixNano(), r.DurationNs, r.Group, r.HRR, r.Key)
		if (i+1)%1000 == 0 {
			fmt.Fprintf(stderr, "pqrepro dial: %d/%d\n", i+1, h.n)
		}
	}
	return 0
}

func splitComma(s string) []string {
	var out []string
	start := 0
	for i := 0; i <= len(s); i++ {
		if i == len(s) || s[i] == ',' {
			if i > start {
				out = append(out, s[start:i])
			}
			start = i + 1
		}
	}
	return out
}
