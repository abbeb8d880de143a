package sshhost

import (
	"bufio"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"net"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"pqrepro/experiments/instruments/handshake"
)

// This file is the remote side: `pqrepro remote <role>` (cmd/pqrepro)
// calls RunRole.

// ServerConfig is one TLS server of the serve role. That is, the same
// fields as a Study A configuration, so that both sides make the same
// certificates (handshake.MakeCerts is deterministic in Seed).
type ServerConfig struct {
	Group string `json:"group"` // handshake.ParseGroup
	Cert  string `json:"cert"`  // handshake.ParseCertKey
	Chain bool   `json:"chain"`
	HRR   bool   `json:"hrr"`
	Seed  uint64 `json:"seed"`
	// Stack is "go" (or empty: crypto/tls in the role's process) or a
	// name of the role's Stacks (a harness program given by -harness,
	// serving the role's listener).
	Stack string `json:"stack,omitempty"`
}

// Serve serves TLS handshakes on ln until ctx ends, reporting each
// connection; handshake.Server.Serve is one.
type Serve = func(ctx context.Context, ln net.Listener, report func(handshake.ServerRecord)) error

// A Stack makes configuration i's server on a TLS implementation other
// than crypto/tls.
//
// It runs harness (-harness, the deployed program) serving bundle b's
// certificates on group g, expecting exp of each handshake.
type Stack func(harness string, i int, b *handshake.Bundle, g tls.CurveID, exp handshake.Expect) (Serve, error)

// Stacks are the serve role's TLS implementations besides "go", by the
// name a ServerConfig's Stack gives.
//
// The caller passes them to RunRole, so that this package knows no
// study's TLS implementation: a study's runner names its stacks, and
// cmd/pqrepro, which both ends run, hands them over.
type Stacks map[string]Stack

// RunRole runs role ("serve" or "clock") with its flags over stdin and
// stdout, with the serve role's stacks besides "go".
//
// It reads the heartbeat (serve) or the clock's requests (clock) from
// stdin and writes Msg lines (serve) or times (clock) to stdout. It
// returns the process's exit status.
func RunRole(role string, args []string, stacks Stacks, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("remote "+role, flag.ContinueOnError)
	fs.SetOutput(stderr)
	watchdog := fs.Duration("watchdog", 6*time.Second, "exit when stdin brings nothing for this long (the SSH session's heartbeat)")
	configs := fs.String("configs", "[]", "serve: JSON list of server configurations")
	addr := fs.String("addr", "", "serve: IP address to listen on (default: this end of $SSH_CONNECTION)")
	harness := fs.String("harness", "", "serve: the deployed harness program for configurations of a stack other than go")
	if err := fs.Parse(args); err != nil || fs.NArg() != 0 {
		return 2
	}
	switch role {
	case "clock":
		return clockRole(stdin, stdout)
	case "serve":
		var cs []ServerConfig
		if err := json.Unmarshal([]byte(*configs), &cs); err != nil {
			fmt.Fprintf(stderr, "pqrepro remote serve: -configs: %v\n", err)
			return 2
		}
		ip := *addr
		if ip == "" {
			ip = sshServerIP(os.Getenv("SSH_CONNECTION"))
		}
		if ip == "" {
			fmt.Fprintln(stderr, "pqrepro remote serve: no -addr and no SSH_CONNECTION to listen on")
			return 2
		}
		if err := serveRole(stdin, stdout, ip, cs, stacks, *harness, *watchdog); err != nil {
			fmt.Fprintf(stderr, "pqrepro remote serve: %v\n", err)
			return 1
		}
		return 0
	}
	fmt.Fprintf(stderr, "pqrepro remote: unknown role %q (serve, clock)\n", role)
	return 2
}

// sshServerIP is the server's address in SSH_CONNECTION ("client-ip
// client-port server-ip server-port", sshd(8)). It is the address the client
// reached, so the TLS servers listen where the client can reach them.
func sshServerIP(conn string) string {
	f := strings.Fields(conn)
	if len(f) != 4 {
		return ""
	}
	return f[2]
}

// clockRole answers every line of stdin with this host's clock
// (Unix nanoseconds): the remote end of ClockOffset.
func clockRole(stdin io.Reader, stdout io.Writer) int {
	sc := bufio.NewScanner(stdin)
	for sc.Scan() {
		if _, err := fmt.Fprintf(stdout, "%d\n", time.Now().UnixNano()); err != nil {
			return 1
		}
	}
	return 0
}

// watch closes dead when stdin ends or brings nothing for d.
func watch(stdin io.Reader, d time.Duration) <-chan struct{} {
	dead := make(chan struct{})
	beat := make(chan struct{}, 1)
	go func() {
		buf := make([]byte, 64)
		for {
			if _, err := stdin.Read(buf); err != nil {
				close(beat)
				return
			}
			select {
			case beat <- struct{}{}:
			default:
			}
		}
	}()
	go func() {
		defer close(dead)
		t := time.NewTimer(d)
		for {
			select {
			case _, ok := <-beat:
				if !ok {
					return
				}
				t.Reset(d)
			case <-t.C:
				return
			}
		}
	}()
	return dead
}

// serveRole listens once per configuration on ip (port chosen by the
// kernel) until the watchdog fires. It writes its PID, one listen line per
// server and ready, then one rec line per connection.
func serveRole(stdin io.Reader, stdout io.Writer, ip string, cs []ServerConfig, stacks Stacks, harness string, wd time.Duration) error {
	var mu sync.Mutex
	enc := json.NewEncoder(stdout)
	emit := func(m Msg) {
		mu.Lock()
		defer mu.Unlock()
		if err := enc.Encode(m); err != nil {
			os.Exit(3) // the session is gone
		}
	}
	emit(Msg{Type: "pid", PID: os.Getpid()})
	dead := watch(stdin, wd)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { <-dead; cancel() }()
	errs := make(chan error, len(cs))
	var wg sync.WaitGroup
	for i, c := range cs {
		g, err := handshake.ParseGroup(c.Group)
		if err != nil {
			return fmt.Errorf("config %d: %w", i, err)
		}
		k, err := handshake.ParseCertKey(c.Cert)
		if err != nil {
			return fmt.Errorf("config %d: %w", i, err)
		}
		b, err := handshake.MakeCerts(handshake.CertConfig{Key: k, Chain: c.Chain, Seed: c.Seed})
		if err != nil {
			return fmt.Errorf("config %d: %w", i, err)
		}
		exp := handshake.Expect{Group: g, Key: k, Chain: c.Chain, HRR: c.HRR}
		serve := (&handshake.Server{TLS: handshake.ServerTLSConfig(b, g, nil), Expect: exp}).Serve
		if c.Stack != "" && c.Stack != "go" {
			stack, ok := stacks[c.Stack]
			if !ok {
				return fmt.Errorf("config %d: unknown stack %q (%s)", i, c.Stack, strings.Join(append([]string{"go"}, slices.Sorted(maps.Keys(stacks))...), ", "))
			}
			if serve, err = stack(harness, i, b, g, exp); err != nil {
				return fmt.Errorf("config %d: %w", i, err)
			}
		}
		ln, err := net.Listen("tcp", net.JoinHostPort(ip, "0"))
		if err != nil {
			return fmt.Errorf("config %d: %w", i, err)
		}
		emit(Msg{Type: "listen", I: i, Addr: ln.Addr().String()})
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- serve(ctx, ln, func(r handshake.ServerRecord) {
				m := Msg{Type: "rec", I: i, Client: r.Client, AcceptNs: r.Accept.UnixNano(), ServerNs: r.DurationNs}
				if r.Err != nil {
					m.Err = r.Err.Error()
				}
				emit(m)
			})
		}()
	}
	emit(Msg{Type: "ready"})
	wg.Wait()
	close(errs)
	var all []error
	for err := range errs {
		if err != nil && !errors.Is(err, context.Canceled) {
			all = append(all, err)
		}
	}
	return errors.Join(all...)
}
