package main

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"flag"
	"fmt"
	"net"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"
)

// The probe: the host's CPU time inside Ths, measured without a network.
//
//	endpoint probe -cert F -key F -roots F -servername S -n N -warmup W -groups G,G
//	    prints  probe,GROUP,N,MEDIAN_NS,P25_NS,P75_NS   per group, then  done
//
// Each of the N handshakes per group is a full TLS 1.3 handshake of the
// same configurations as server and client (tlsBase, one group offered)
// over loopback TCP, in one process, the groups alternating handshake by
// handshake (the first group of a pair alternating too), after W warm-up
// handshakes per group. A handshake's time is the span Ths measures on
// the wire: from the start of the client's first write (the ClientHello)
// to the start of its last write of the handshake (the client Finished).
// It holds the server's key share, signature and flight and the client's
// decapsulation, verification and Finished (RFC 8446, Section 2), and no
// network but the loopback's few microseconds of system calls (not
// net.Pipe: its writes wait for the reader, which a socket's do not, and
// a failing client would wait on a server blocked in its flight's
// write). Over a link, Ths is that plus the round trips and the bytes'
// serialisation, which the analysis adds from the link (netstudy,
// NormalisedDifferences).

// probeMaxN bounds -n and -warmup: the probe is a measurement of seconds,
// not a benchmark run.
const probeMaxN = 100000

func probe(o *out, args []string) error {
	fs := flag.NewFlagSet("probe", flag.ContinueOnError)
	certF := fs.String("cert", "", "certificate chain, PEM")
	keyF := fs.String("key", "", "private key, PEM")
	rootsF := fs.String("roots", "", "trust anchors, PEM")
	name := fs.String("servername", "localhost", "server name to verify")
	n := fs.Int("n", 200, "handshakes per group")
	warmup := fs.Int("warmup", 10, "warm-up handshakes per group, not recorded")
	groupsF := fs.String("groups", "X25519,X25519MLKEM768", "groups, comma-separated")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *n < 1 || *n > probeMaxN || *warmup < 0 || *warmup > probeMaxN {
		return fmt.Errorf("probe: -n %d, -warmup %d: want 1 <= n <= %d and 0 <= warmup <= %d", *n, *warmup, probeMaxN, probeMaxN)
	}
	cert, err := tls.LoadX509KeyPair(*certF, *keyF)
	if err != nil {
		return fmt.Errorf("probe: %w", err)
	}
	pem, err := os.ReadFile(*rootsF)
	if err != nil {
		return fmt.Errorf("probe: %w", err)
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(pem) {
		return fmt.Errorf("probe: %s: no certificate", *rootsF)
	}
	names := strings.Split(*groupsF, ",")
	type pair struct{ server, client *tls.Config }
	cfgs := make([]pair, len(names))
	for i, gname := range names {
		g, err := parseGroup(gname)
		if err != nil {
			return fmt.Errorf("probe: -groups: %w", err)
		}
		s, c := tlsBase(), tlsBase()
		s.Certificates, s.CurvePreferences = []tls.Certificate{cert}, []tls.CurveID{tls.CurveID(g)}
		c.RootCAs, c.ServerName, c.CurvePreferences = roots, *name, []tls.CurveID{tls.CurveID(g)}
		cfgs[i] = pair{s, c}
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return fmt.Errorf("probe: %w", err)
	}
	defer ln.Close()
	times := make([][]time.Duration, len(names))
	for round := -*warmup; round < *n; round++ {
		for k := range names {
			i := k
			if round%2 != 0 {
				i = len(names) - 1 - k // alternate which group goes first
			}
			d, err := loopHandshake(ln, cfgs[i].server, cfgs[i].client)
			if err != nil {
				return fmt.Errorf("probe: %s handshake: %w", names[i], err)
			}
			if round >= 0 {
				times[i] = append(times[i], d)
			}
		}
	}
	for i, gname := range names {
		t := times[i]
		slices.Sort(t)
		o.line("probe", gname, strconv.Itoa(len(t)), ns(quantile(t, 0.5)), ns(quantile(t, 0.25)), ns(quantile(t, 0.75)))
	}
	o.line("done")
	return nil
}

func ns(d time.Duration) string { return strconv.FormatInt(d.Nanoseconds(), 10) }

// quantile is the p-quantile of sorted t. For the median of an even
// count it is the mean of the two middle values (type 7 at p = 0.5).
func quantile(t []time.Duration, p float64) time.Duration {
	h := p * float64(len(t)-1)
	lo := int(h)
	if lo+1 >= len(t) {
		return t[len(t)-1]
	}
	return t[lo] + time.Duration((h-float64(lo))*float64(t[lo+1]-t[lo]))
}

// loopHandshake makes one handshake between server and client over a
// loopback TCP connection to ln. It returns the span from the start of
// the client's first write to the start of its last one.
func loopHandshake(ln net.Listener, server, client *tls.Config) (time.Duration, error) {
	deadline := time.Now().Add(30 * time.Second)
	type accepted struct {
		c   net.Conn
		err error
	}
	acc := make(chan accepted, 1)
	go func() {
		c, err := ln.Accept()
		acc <- accepted{c, err}
	}()
	c, err := net.DialTimeout("tcp", ln.Addr().String(), time.Until(deadline))
	if err != nil {
		return 0, err
	}
	defer c.Close()
	a := <-acc
	if a.err != nil {
		return 0, a.err
	}
	s := a.c
	defer s.Close()
	c.SetDeadline(deadline)
	s.SetDeadline(deadline)
	serr := make(chan error, 1)
	go func() {
		err := tls.Server(s, server).Handshake()
		if err != nil {
			s.Close() // the client's read ends
		}
		serr <- err
	}()
	tc := &writeTimes{Conn: c}
	cerr := tls.Client(tc, client).Handshake()
	if cerr != nil {
		c.Close() // the server's read ends
	}
	if err := errors.Join(cerr, <-serr); err != nil {
		return 0, err
	}
	if tc.writes < 2 {
		return 0, fmt.Errorf("the client wrote %d times: want its ClientHello and its Finished", tc.writes)
	}
	return tc.last.Sub(tc.first), nil
}

// writeTimes is a conn that notes when its first and its last Write
// began.
type writeTimes struct {
	net.Conn
	first, last time.Time
	writes      int
}

func (w *writeTimes) Write(p []byte) (int, error) {
	now := time.Now()
	if w.writes == 0 {
		w.first = now
	}
	w.last = now
	w.writes++
	return w.Conn.Write(p)
}
