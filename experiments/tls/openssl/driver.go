package openssl

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"pqrepro/experiments/instruments/handshake"
)

// CertFiles are a handshake.Bundle written as PEM for the harness.
type CertFiles struct {
	Chain string // the server's certificates, leaf first
	Key   string // the leaf's private key, PKCS#8
	CA    string // the client's trust anchor: the CA, or the self-signed leaf
}

// WriteCerts writes b's certificates and key into dir as PEM. The keys
// and certificates are the Go certificate factory's (deterministic for a
// seed), so both stacks present byte-identical certificates; OpenSSL 3.5
// reads Go's ML-DSA PKCS#8 (the seed form of draft-ietf-lamps-dilithium-
// certificates) and X.509 encodings.
func WriteCerts(dir string, b *handshake.Bundle) (CertFiles, error) {
	key, err := x509.MarshalPKCS8PrivateKey(b.Server.PrivateKey)
	if err != nil {
		return CertFiles{}, fmt.Errorf("PKCS#8 encoding of the %s key: %w", b.Key, err)
	}
	var chain bytes.Buffer
	for _, der := range b.Server.Certificate {
		pem.Encode(&chain, &pem.Block{Type: "CERTIFICATE", Bytes: der})
	}
	ca := b.Server.Certificate[len(b.Server.Certificate)-1]
	f := CertFiles{Chain: filepath.Join(dir, "chain.pem"), Key: filepath.Join(dir, "key.pem"), CA: filepath.Join(dir, "ca.pem")}
	for path, data := range map[string][]byte{
		f.Chain: chain.Bytes(),
		f.Key:   pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: key}),
		f.CA:    pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ca}),
	} {
		if err := os.WriteFile(path, data, 0o600); err != nil {
			return CertFiles{}, err
		}
	}
	return f, nil
}

// GroupName is a group as OpenSSL's groups lists spell it.
func GroupName(g tls.CurveID) string {
	switch g {
	case tls.CurveP256:
		return "P-256"
	case tls.CurveP384:
		return "P-384"
	}
	return g.String()
}

// GroupList is one groups list for a client that names groups in order.
// The client sends its one key share for the first (RFC 8446 4.2.8).
func GroupList(gs []tls.CurveID) string {
	names := make([]string, len(gs))
	for i, g := range gs {
		names[i] = GroupName(g)
	}
	return strings.Join(names, ":")
}

// ServerGroups is the server's groups list: exactly the configured group.
func ServerGroups(g tls.CurveID) string { return GroupName(g) }

// ClientGroups is the client's groups list. Without a decoy it offers the
// target group with its key share. With a decoy (a group the server does
// not support) the client offers both but sends its only key share for
// the decoy ('*' marks key shares in OpenSSL 3.5's list syntax), so the
// server must answer with a HelloRetryRequest for the target (RFC 8446
// 4.1.4).
func ClientGroups(target, decoy tls.CurveID) string {
	if decoy == 0 {
		return GroupName(target)
	}
	return "*" + GroupName(decoy) + ":" + GroupName(target)
}

// groupID maps a name SSL_group_to_name prints to Go's CurveID.
func groupID(name string) (tls.CurveID, bool) {
	for _, g := range []tls.CurveID{tls.X25519, tls.X25519MLKEM768, tls.SecP256r1MLKEM768, tls.SecP384r1MLKEM1024, tls.MLKEM1024, tls.CurveP256, tls.CurveP384, tls.CurveP521} {
		if strings.EqualFold(name, g.String()) || strings.EqualFold(name, GroupName(g)) {
			return g, true
		}
	}
	switch strings.ToLower(name) {
	case "secp256r1", "prime256v1":
		return tls.CurveP256, true
	case "secp384r1":
		return tls.CurveP384, true
	case "secp521r1":
		return tls.CurveP521, true
	}
	return 0, false
}

// check compares what the harness reported for one connection with e.
func check(e handshake.Expect, version, group string, hrr, resumed bool) error {
	var errs []error
	if version != "TLSv1.3" {
		errs = append(errs, fmt.Errorf("version %s, want TLSv1.3", version))
	}
	if resumed {
		errs = append(errs, errors.New("session was resumed, want a fresh full handshake"))
	}
	if g, ok := groupID(group); !ok || g != e.Group {
		errs = append(errs, fmt.Errorf("negotiated group %q, want %s", group, e.Group))
	}
	if hrr != e.HRR {
		errs = append(errs, fmt.Errorf("HelloRetryRequest=%v, want %v", hrr, e.HRR))
	}
	return errors.Join(errs...)
}

// proc is a running harness process and its output lines.
type proc struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	lines  chan string
	stderr *bytes.Buffer
	done   chan struct{} // closed when stdout ended
	ready  string        // OpenSSL_version of the process
}

func startProc(bin string, extra []*os.File, args ...string) (*proc, error) {
	cmd := exec.Command(bin, args...)
	cmd.ExtraFiles = extra
	p := &proc{cmd: cmd, lines: make(chan string, 64), stderr: &bytes.Buffer{}, done: make(chan struct{})}
	cmd.Stderr = &lockedBuffer{b: p.stderr}
	var err error
	if p.stdin, err = cmd.StdinPipe(); err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", filepath.Base(bin), err)
	}
	go func() {
		defer close(p.done)
		sc := bufio.NewScanner(out)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			p.lines <- sc.Text()
		}
	}()
	select {
	case l := <-p.lines:
		if v, ok := strings.CutPrefix(l, "ready,"); ok {
			p.ready = v
			return p, nil
		}
		p.kill()
		return nil, fmt.Errorf("%s %s: said %q before ready", filepath.Base(bin), args[0], l)
	case <-p.done:
		p.cmd.Wait()
		return nil, fmt.Errorf("%s %s exited at start: %s", filepath.Base(bin), args[0], strings.TrimSpace(p.stderr.String()))
	case <-time.After(10 * time.Second):
		p.kill()
		return nil, fmt.Errorf("%s %s: not ready after 10 s", filepath.Base(bin), args[0])
	}
}

func (p *proc) kill() {
	p.cmd.Process.Kill()
	p.cmd.Wait()
}

// stop closes the process's standard input, which ends it, and waits.
func (p *proc) stop() error {
	p.stdin.Close()
	select {
	case <-p.done:
	case <-time.After(10 * time.Second):
		p.cmd.Process.Kill()
	}
	if err := p.cmd.Wait(); err != nil {
		return fmt.Errorf("%w: %s", err, strings.TrimSpace(p.stderr.String()))
	}
	return nil
}

type lockedBuffer struct {
	mu sync.Mutex
	b  *bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.b.Len() > 64<<10 {
		return len(p), nil
	}
	return l.b.Write(p)
}

// Server is one configuration's OpenSSL server: the harness accepts on a
// listener that Serve hands to it, exactly like handshake.Server.
type Server struct {
	Binary string    // the harness (Build.Harness)
	Files  CertFiles // WriteCerts
	Groups string    // OpenSSL groups list (ServerGroups)
	Expect handshake.Expect
	// Version is the OpenSSL version the process reported, set once
	// Serve has started it.
	Version string
}

// Serve runs the harness on ln until ctx is cancelled; each connection's
// record, checked against Expect, goes to report. It closes ln when it
// returns. An error is returned when the harness fails to start or dies.
func (s *Server) Serve(ctx context.Context, ln net.Listener, report func(handshake.ServerRecord)) error {
	defer ln.Close()
	tl, ok := ln.(*net.TCPListener)
	if !ok {
		return fmt.Errorf("openssl server: listener %T is not TCP", ln)
	}
	f, err := tl.File()
	if err != nil {
		return fmt.Errorf("openssl server: %w", err)
	}
	p, err := startProc(s.Binary, []*os.File{f}, "server", "-fd", "3", "-cert", s.Files.Chain, "-key", s.Files.Key, "-groups", s.Groups)
	f.Close()
	if err != nil {
		return fmt.Errorf("openssl server: %w", err)
	}
	s.Version = p.ready
	for {
		select {
		case <-ctx.Done():
			if err := p.stop(); err != nil {
				return fmt.Errorf("openssl server: %w", err)
			}
			return nil
		case <-p.done:
			for len(p.lines) > 0 {
				report(s.record(<-p.lines))
			}
			err := p.cmd.Wait()
			return fmt.Errorf("openssl server exited (%v): %s", err, strings.TrimSpace(p.stderr.String()))
		case l := <-p.lines:
			report(s.record(l))
		}
	}
}

// record parses a server line:
// server,<peer>,<accept_unix_ns>,<ns>,<version>,<group>,<hrr>,<resumed>,<status>,<message>
func (s *Server) record(line string) handshake.ServerRecord {
	f := strings.SplitN(line, ",", 10)
	if len(f) != 10 || f[0] != "server" {
		return handshake.ServerRecord{Err: fmt.Errorf("openssl server: unexpected output %q", line)}
	}
	acc, err1 := strconv.ParseInt(f[2], 10, 64)
	ns, err2 := strconv.ParseInt(f[3], 10, 64)
	if err := errors.Join(err1, err2); err != nil {
		return handshake.ServerRecord{Client: f[1], Err: fmt.Errorf("openssl server: output %q: %w", line, err)}
	}
	rec := handshake.ServerRecord{Client: f[1], Accept: time.Unix(0, acc), DurationNs: ns}
	if f[8] != "ok" {
		rec.Err = fmt.Errorf("openssl server handshake with %s: %s", f[1], f[9])
	} else if err := check(s.Expect, f[4], f[5], f[6] == "1", f[7] == "1"); err != nil {
		rec.Err = fmt.Errorf("openssl server connection from %s: %w", f[1], err)
	}
	return rec
}

// Client is one configuration's OpenSSL client: one harness process,
// started on the first Dial, that makes one connection per Dial.
type Client struct {
	Binary string
	CA     string // trust anchor PEM (CertFiles.CA)
	Groups string // OpenSSL groups list (ClientGroups)
	Expect handshake.Expect
	// KeyLog receives the NSS key log lines of every connection.
	KeyLog  io.Writer
	Timeout time.Duration // per connection; 0 means 30 s

	p *proc
}

// Dial makes one connection to addr (an IPv4 ip:port): TCP connect, full
// handshake, then close_notify and FIN both ways. It returns the client's
// record, with an error when the handshake failed or the connection is
// not the one Expect describes.
func (c *Client) Dial(ctx context.Context, addr string) (handshake.ClientRecord, error) {
	if c.p == nil {
		p, err := startProc(c.Binary, nil, "client", "-ca", c.CA, "-groups", c.Groups, "-name", "localhost")
		if err != nil {
			return handshake.ClientRecord{}, fmt.Errorf("openssl client: %w", err)
		}
		c.p = p
	}
	if _, err := fmt.Fprintf(c.p.stdin, "dial %s\n", addr); err != nil {
		return handshake.ClientRecord{}, fmt.Errorf("openssl client: %w: %s", err, c.p.stderr.String())
	}
	timeout := c.Timeout
	if timeout == 0 {
		timeout = 30 * time.Second
	}
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			c.Close()
			return handshake.ClientRecord{}, ctx.Err()
		case <-timer.C:
			c.Close()
			return handshake.ClientRecord{}, fmt.Errorf("openssl client: no answer for %s within %s", addr, timeout)
		case <-c.p.done:
			for len(c.p.lines) > 0 { // the last lines before it ended
				if l := <-c.p.lines; strings.HasPrefix(l, "client,") {
					return c.record(l)
				}
			}
			err := fmt.Errorf("openssl client exited: %s", strings.TrimSpace(c.p.stderr.String()))
			c.Close()
			return handshake.ClientRecord{}, err
		case l := <-c.p.lines:
			if k, ok := strings.CutPrefix(l, "keylog,"); ok {
				if c.KeyLog != nil {
					io.WriteString(c.KeyLog, k+"\n")
				}
				continue
			}
			return c.record(l)
		}
	}
}

// record parses a client line:
// client,<local>,<server>,<start_unix_ns>,<ns>,<version>,<group>,<hrr>,<resumed>,<cert_key>,<certs>,<status>,<message>
func (c *Client) record(line string) (handshake.ClientRecord, error) {
	f := strings.SplitN(line, ",", 13)
	if len(f) != 13 || f[0] != "client" {
		return handshake.ClientRecord{}, fmt.Errorf("openssl client: unexpected output %q", line)
	}
	start, err1 := strconv.ParseInt(f[3], 10, 64)
	ns, err2 := strconv.ParseInt(f[4], 10, 64)
	certs, err3 := strconv.Atoi(f[10])
	if err := errors.Join(err1, err2, err3); err != nil {
		return handshake.ClientRecord{}, fmt.Errorf("openssl client: output %q: %w", line, err)
	}
	rec := handshake.ClientRecord{Local: f[1], Server: f[2], Start: time.Unix(0, start), DurationNs: ns,
		HRR: f[7] == "1", Key: handshake.CertKey(f[9])}
	rec.Group, _ = groupID(f[6])
	what := fmt.Sprintf("openssl client connection %s -> %s", rec.Local, rec.Server)
	if f[11] != "ok" {
		return rec, fmt.Errorf("%s: %s", what, f[12])
	}
	errs := []error{check(c.Expect, f[5], f[6], rec.HRR, f[8] == "1")}
	if want := 1 + btoi(c.Expect.Chain); certs != want {
		errs = append(errs, fmt.Errorf("%d certificates sent, want %d (chain=%v)", certs, want, c.Expect.Chain))
	}
	if rec.Key != c.Expect.Key {
		errs = append(errs, fmt.Errorf("certificate key %s, want %s", rec.Key, c.Expect.Key))
	}
	if err := errors.Join(errs...); err != nil {
		return rec, fmt.Errorf("%s: %w", what, err)
	}
	return rec, nil
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// Close ends the client's process.
func (c *Client) Close() error {
	if c.p == nil {
		return nil
	}
	p := c.p
	c.p = nil
	return p.stop()
}
