// Command endpoint is Study B's TLS client and server as a program of its
// own, so that the same source can be built with the Go toolchain the
// original study used (Go 1.24) and with the project's (go.mod here says
// go 1.24 and imports nothing but the standard library). The runner
// (experiments/net/netrun) builds it once per toolchain, starts the server
// in one namespace of an emulated link and the client in the other, and
// talks to both over a line protocol, CSV on stdout:
//
//	endpoint server -cert F -key F -timeout D [-cc NAME] -listen ADDR=GROUP[/staple=N] ...
//	    prints  ready,ADDR,GROUP   per listener, then  ready
//	    then    accept,CLIENT,LOCAL,ACCEPT_UNIX_NS,DURATION_NS,GROUP,HRR,ERROR,CC
//	            per connection; runs until stdin is closed
//	endpoint client -roots F -servername S -timeout D [-cc NAME]
//	    reads   dial ADDR GROUP [SIZE]   lines on stdin, makes one
//	            connection each (the only group offered: GROUP), and prints
//	            keylog,LINE          (NSS key log lines, for the capture)
//	            conn,LOCAL,SERVER,START_UNIX_NS,DURATION_NS,GROUP,HRR,CLASS,ERROR,RESPONSE_BYTES,TTLB_NS,CC
//	endpoint probe -cert F -key F -roots F -servername S -n N -warmup W -groups G,G
//	    prints  probe,GROUP,N,MEDIAN_NS,P25_NS,P75_NS  per group, then  done
//	            (the handshake's CPU time without a network, probe.go)
//	endpoint version
//	    prints  version,GOVERSION
//
// DURATION_NS is dial start to client handshake complete (client) or
// accept to server handshake complete (server), on the monotonic clock,
// as experiments/instruments/handshake measures them. GROUP and HRR are read from the
// ServerHello on the wire (hello.go). CLASS names a network failure
// (timeout, reset, refused, unreachable, eof; close-CLASS when only the
// orderly close failed); an error with an empty CLASS is a configuration
// error. Every connection is a fresh full TLS 1.3 handshake without
// tickets, closed with close_notify and FIN like experiments/instruments/handshake.
//
// The transfer block (our extension, issue 34: time to last byte). With
// SIZE the client, after its handshake, sends one request record, the
// line "size SIZE\n" (request.go), and the server answers with SIZE bytes
// of application data and closes (close_notify, FIN); the client reads to
// the server's close_notify. RESPONSE_BYTES is what it read, TTLB_NS dial
// start to the last byte of the response on the monotonic clock (empty
// without SIZE). A response that ends short of SIZE (or runs long) is an
// error of class response-eof (response-timeout, response-reset: the
// handshake completed) with RESPONSE_BYTES saying how far it came: an
// incomplete connection, never a time to last byte. Without SIZE the
// connection is the handshake-only one of the rounds, byte for byte.
//
// The padded arm (analysis/ttlb/mechanism2.txt). A listener given as
// ADDR=GROUP/staple=N staples an OCSP response of N zero bytes to its
// certificate (tls.Certificate.OCSPStaple): Go's client asks for one in
// every ClientHello (status_request, RFC 6066 8) and Go's TLS 1.3 server
// then sends it in the Certificate message's first entry (RFC 8446
// 4.4.2.1), so that listener's server flight is N + 8 bytes larger
// while the ClientHello, the key exchange and the client's work stay
// those of GROUP. The client does not check the staple. Other listeners
// staple nothing.
//
// Congestion control (issue 41, cc_linux.go). With -cc NAME every socket
// the server listens on, or the client dials from, is set to NAME
// (TCP_CONGESTION, before listen or connect; an accepted connection
// inherits its listener's); without it the namespace's default applies.
// CC is what the connection's socket reads back (getsockopt
// TCP_CONGESTION) after the handshake, outside the timed span; a server
// connection that reads back another than NAME is reported with an
// error.
package main

import (
	"bufio"
	"cmp"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/csv"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// out is stdout as CSV, shared by the goroutines that report.
type out struct {
	mu sync.Mutex
	w  *csv.Writer
}

func (o *out) line(cells ...string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.w.Write(cells)
	o.w.Flush()
}

// keyLog turns crypto/tls's key log lines into keylog records.
type keyLog struct{ o *out }

func (k keyLog) Write(p []byte) (int, error) {
	for _, l := range strings.Split(strings.TrimRight(string(p), "\n"), "\n") {
		if l != "" {
			k.o.line("keylog", l)
		}
	}
	return len(p), nil
}

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: endpoint server|client|probe|version [flags]")
		os.Exit(2)
	}
	o := &out{w: csv.NewWriter(os.Stdout)}
	var err error
	switch os.Args[1] {
	case "server":
		err = server(o, os.Args[2:])
	case "client":
		err = client(o, os.Args[2:])
	case "probe":
		err = probe(o, os.Args[2:])
	case "version":
		o.line("version", runtime.Version())
	default:
		err = fmt.Errorf("unknown command %q: want server, client, probe or version", os.Args[1])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "endpoint:", err)
		os.Exit(1)
	}
}

type listenFlag []string

func (l *listenFlag) String() string     { return strings.Join(*l, " ") }
func (l *listenFlag) Set(v string) error { *l = append(*l, v); return nil }

func tlsBase() *tls.Config {
	return &tls.Config{MinVersion: tls.VersionTLS13, MaxVersion: tls.VersionTLS13, SessionTicketsDisabled: true}
}

func server(o *out, args []string) error {
	fs := flag.NewFlagSet("server", flag.ContinueOnError)
	certF := fs.String("cert", "", "certificate chain, PEM")
	keyF := fs.String("key", "", "private key, PEM")
	timeout := fs.Duration("timeout", 30*time.Second, "per connection")
	cc := fs.String("cc", "", "congestion control of every socket (TCP_CONGESTION); empty: the namespace's default")
	var listens listenFlag
	fs.Var(&listens, "listen", "ADDR=GROUP, repeated")
	if err := fs.Parse(args); err != nil {
		return err
	}
	cert, err := tls.LoadX509KeyPair(*certF, *keyF)
	if err != nil {
		return err
	}
	if len(listens) == 0 {
		return errors.New("server: no -listen ADDR=GROUP")
	}
	var lns []net.Listener
	var wg sync.WaitGroup
	for _, l := range listens {
		addr, gname, staple, err := parseListen(l)
		if err != nil {
			return err
		}
		g, _ := parseGroup(gname)
		lc := net.ListenConfig{Control: setCC(*cc)}
		ln, err := lc.Listen(context.Background(), "tcp", addr)
		if err != nil {
			return err
		}
		lns = append(lns, ln)
		cfg := serverConfig(cert, tls.CurveID(g), staple)
		o.line("ready", ln.Addr().String(), gname)
		wg.Add(1)
		go func() {
			defer wg.Done()
			serve(o, ln, cfg, *timeout, *cc)
		}()
	}
	o.line("ready")
	io.Copy(io.Discard, os.Stdin) // until the runner closes stdin
	for _, ln := range lns {
		ln.Close()
	}
	wg.Wait()
	return nil
}

// parseListen reads a -listen value, ADDR=GROUP or ADDR=GROUP/staple=N,
// N the OCSP staple's length in bytes (0 staples nothing).
func parseListen(l string) (addr, group string, staple int, err error) {
	addr, rest, ok := strings.Cut(l, "=")
	group, opt, hasOpt := strings.Cut(rest, "/")
	if _, gerr := parseGroup(group); !ok || gerr != nil {
		return "", "", 0, fmt.Errorf("-listen %q: want ADDR=GROUP[/staple=N] (%v)", l, gerr)
	}
	if hasOpt {
		v, found := strings.CutPrefix(opt, "staple=")
		n, perr := strconv.Atoi(v)
		if !found || perr != nil || n < 0 || n > 1<<16 {
			return "", "", 0, fmt.Errorf("-listen %q: want staple=N with N in 0..65536 bytes after the group", l)
		}
		staple = n
	}
	return addr, group, staple, nil
}

// serverConfig is a listener's TLS configuration: TLS 1.3 with group g
// only, and an OCSP staple of staple zero bytes when staple > 0.
//
// The staple is a copy's, so listeners never share it; Go's TLS 1.3
// server sends it only to a client that asked (status_request), which
// Go's client always does.
func serverConfig(cert tls.Certificate, g tls.CurveID, staple int) *tls.Config {
	cfg := tlsBase()
	if staple > 0 {
		cert.OCSPStaple = make([]byte, staple)
	}
	cfg.Certificates = []tls.Certificate{cert}
	cfg.CurvePreferences = []tls.CurveID{g}
	return cfg
}

// serve handles ln's connections; want, when set, is the congestion
// control each must read back.
func serve(o *out, ln net.Listener, cfg *tls.Config, timeout time.Duration, want string) {
	var wg sync.WaitGroup
	defer wg.Wait()
	for {
		raw, err := ln.Accept()
		if err != nil {
			return
		}
		t0 := time.Now()
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer raw.Close()
			raw.SetDeadline(time.Now().Add(timeout))
			sn := &helloSniffer{}
			tc := tls.Server(&sniffConn{Conn: raw, s: sn, writes: true}, cfg)
			err := tc.Handshake()
			d := time.Since(t0)
			group, hrr, serr := sn.result()
			msg, ns := "", int64(0)
			if err != nil {
				msg = "server handshake: " + err.Error()
			} else {
				ns = d.Nanoseconds()
				if serr != nil {
					msg = serr.Error()
				}
			}
			cc := congestion(raw)
			if want != "" && cc != want && msg == "" {
				msg = fmt.Sprintf("the connection runs under congestion control %q, want %q", cc, want)
			}
			o.line("accept", raw.RemoteAddr().String(), raw.LocalAddr().String(), strconv.FormatInt(t0.UnixNano(), 10), strconv.FormatInt(ns, 10), group, strconv.FormatBool(hrr), msg, cc)
			if err == nil {
				respond(tc) // a request, or nothing until the client's close_notify/FIN
				tc.Close()
			}
		}()
	}
}

func client(o *out, args []string) error {
	fs := flag.NewFlagSet("client", flag.ContinueOnError)
	rootsF := fs.String("roots", "", "trust anchors, PEM")
	name := fs.String("servername", "localhost", "server name to verify")
	timeout := fs.Duration("timeout", 30*time.Second, "per connection")
	cc := fs.String("cc", "", "congestion control of every socket (TCP_CONGESTION); empty: the namespace's default")
	if err := fs.Parse(args); err != nil {
		return err
	}
	pem, err := os.ReadFile(*rootsF)
	if err != nil {
		return err
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(pem) {
		return fmt.Errorf("%s: no certificate", *rootsF)
	}
	sc := bufio.NewScanner(os.Stdin)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if (len(f) != 3 && len(f) != 4) || f[0] != "dial" {
			return fmt.Errorf("bad command %q: want dial ADDR GROUP [SIZE]", sc.Text())
		}
		size := -1 // handshake only
		if len(f) == 4 {
			n, err := parseSize(f[3])
			if err != nil {
				return fmt.Errorf("bad command %q: %w", sc.Text(), err)
			}
			size = n
		}
		g, err := parseGroup(f[2])
		if err != nil {
			return err
		}
		cfg := tlsBase()
		cfg.RootCAs, cfg.ServerName, cfg.CurvePreferences = roots, *name, []tls.CurveID{tls.CurveID(g)}
		cfg.KeyLogWriter = keyLog{o}
		dial(o, f[1], cfg, *timeout, size, *cc)
	}
	return sc.Err()
}

// dial makes one connection; size < 0 is the handshake-only connection,
// size >= 0 asks for a response of size bytes (transfer block). cc, when
// set, is the socket's congestion control.
func dial(o *out, addr string, cfg *tls.Config, timeout time.Duration, size int, cc string) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	var local, remote, group, class, msg, got, ttlb, ran string
	var ns int64
	var hrr bool
	start := time.Now()
	defer func() {
		o.line("conn", local, remote, strconv.FormatInt(start.UnixNano(), 10), strconv.FormatInt(ns, 10), group, strconv.FormatBool(hrr), class, msg, got, ttlb, ran)
	}()
	d := net.Dialer{Control: setCC(cc)}
	raw, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		class, msg = classify(err), "dial "+addr+": "+err.Error()
		return
	}
	defer raw.Close()
	defer func() { ran = congestion(raw) }() // after the timed span, before the close
	if dl, ok := ctx.Deadline(); ok {
		raw.SetDeadline(dl)
	}
	local, remote = raw.LocalAddr().String(), raw.RemoteAddr().String()
	sn := &helloSniffer{}
	tc := tls.Client(&sniffConn{Conn: raw, s: sn}, cfg)
	if err := tc.HandshakeContext(ctx); err != nil {
		group, hrr, _ = sn.result()
		class, msg = classify(err), "client handshake: "+err.Error()
		return
	}
	ns = time.Since(start).Nanoseconds()
	var serr error
	if group, hrr, serr = sn.result(); serr != nil {
		msg = serr.Error()
		return
	}
	if size >= 0 {
		n, last, err := fetch(tc, size)
		got = strconv.Itoa(n)
		if err != nil {
			// response-CLASS: the handshake completed, the response did
			// not; a short or long response is the network's or the
			// server's failure, not the configuration's.
			class, msg = "response-"+cmp.Or(classify(err), "eof"), fmt.Sprintf("response: %d of %d bytes: %v", n, size, err)
			return
		}
		ttlb = strconv.FormatInt(last.Sub(start).Nanoseconds(), 10)
	}
	if err := tc.CloseWrite(); err != nil {
		class, msg = "close-"+classify(err), "close_notify: "+err.Error()
		return
	}
	if _, err := io.Copy(io.Discard, tc); err != nil {
		class, msg = "close-"+classify(err), "wait for the server's close: "+err.Error()
	}
}

// classify names a network failure, "" for any other error; the same
// classes as experiments/net/netrun's in-process runner.
func classify(err error) string {
	var ne net.Error
	switch {
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, os.ErrDeadlineExceeded):
		return "timeout"
	case errors.As(err, &ne) && ne.Timeout():
		return "timeout"
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE):
		return "reset"
	case errors.Is(err, syscall.ECONNREFUSED):
		return "refused"
	case errors.Is(err, syscall.EHOSTUNREACH), errors.Is(err, syscall.ENETUNREACH):
		return "unreachable"
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return "eof"
	}
	return ""
}
