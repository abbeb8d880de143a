package handshake

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"slices"
	"sync"
	"time"
)

// Clock gives the time for the in-process timers. Durations are taken as
// Now().Sub(earlier), so the real clock's monotonic reading is used.
type Clock interface{ Now() time.Time }

type realClock struct{}

func (realClock) Now() time.Time { return time.Now() }

// RealClock is the wall/monotonic clock of the process.
var RealClock Clock = realClock{}

// Expect is what every connection must show; a mismatch is an error, never a sample.
type Expect struct {
	Group tls.CurveID // the negotiated group (ConnectionState.CurveID)
	HRR   bool        // whether a HelloRetryRequest happened (ConnectionState.HelloRetryRequest)
	Key   CertKey     // the key type of the leaf certificate
	Chain bool        // whether the CA certificate was sent after the leaf
}

// Check compares a finished handshake's state with e. It is used by both
// the server (for its own state) and the client (for the peer's
// certificate).
func (e Expect) Check(cs tls.ConnectionState, certs [][]byte) error {
	var errs []error
	if cs.Version != tls.VersionTLS13 {
		errs = append(errs, fmt.Errorf("version 0x%04x, want TLS 1.3", cs.Version))
	}
	if cs.DidResume {
		errs = append(errs, errors.New("session was resumed, want a fresh full handshake"))
	}
	if cs.CurveID != e.Group {
		errs = append(errs, fmt.Errorf("negotiated group %s, want %s", cs.CurveID, e.Group))
	}
	if cs.HelloRetryRequest != e.HRR {
		errs = append(errs, fmt.Errorf("HelloRetryRequest=%v, want %v", cs.HelloRetryRequest, e.HRR))
	}
	wantN := 1
	if e.Chain {
		wantN = 2
	}
	if len(certs) != wantN {
		errs = append(errs, fmt.Errorf("%d certificates sent, want %d (chain=%v)", len(certs), wantN, e.Chain))
	}
	return errors.Join(errs...)
}

func lockedWriter(w io.Writer) io.Writer {
	if w == nil {
		return nil
	}
	return &syncWriter{w: w}
}

type syncWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}

// ServerTLSConfig is the server side of one configuration. That is, TLS 1.3
// only, exactly one group (the server must list MLKEM1024 explicitly: it is
// not in Go's default set), no session tickets.
func ServerTLSConfig(b *Bundle, group tls.CurveID, keyLog io.Writer) *tls.Config {
	return &tls.Config{
		MinVersion:             tls.VersionTLS13,
		MaxVersion:             tls.VersionTLS13,
		CurvePreferences:       []tls.CurveID{group},
		Certificates:           []tls.Certificate{b.Server},
		SessionTicketsDisabled: true,
		KeyLogWriter:           lockedWriter(keyLog),
	}
}

// ClientTLSConfig is the client side. That is, TLS 1.3 only, the given
// groups (one for a normal run; since Go 1.24 the order is ignored and the
// key share is sent for the first of the groups in Go's fixed preference
// order), no session cache, full certificate verification against roots.
func ClientTLSConfig(roots *x509.CertPool, serverName string, groups []tls.CurveID, keyLog io.Writer) *tls.Config {
	return &tls.Config{
		MinVersion:             tls.VersionTLS13,
		MaxVersion:             tls.VersionTLS13,
		CurvePreferences:       slices.Clone(groups),
		RootCAs:                roots,
		ServerName:             serverName,
		SessionTicketsDisabled: true,
		ClientSessionCache:     nil,
		KeyLogWriter:           lockedWriter(keyLog),
	}
}

// ServerRecord is the server's view of one connection.
type ServerRecord struct {
	Client     string    // the client's ip:port as accepted
	Accept     time.Time // when Accept returned
	DurationNs int64     // accept to server handshake complete (client Finished verified)
	Err        error
}

// Server accepts connections, completes a handshake on each, checks it
// against Expect, reports a ServerRecord, then waits for the client to close.
type Server struct {
	TLS     *tls.Config
	Expect  Expect
	Clock   Clock
	Timeout time.Duration // per connection; 0 means 30 s
}

// Serve runs until ctx is cancelled or ln fails. Each connection's record is
// passed to report (from the connection's goroutine). Serve closes ln when
// ctx ends, closes the connections still open and waits for their
// goroutines to finish.
func (s *Server) Serve(ctx context.Context, ln net.Listener, report func(ServerRecord)) error {
	clock := s.Clock
	if clock == nil {
		clock = RealClock
	}
	timeout := s.Timeout
	if timeout == 0 {
		timeout = 30 * time.Second
	}
	stop := context.AfterFunc(ctx, func() { ln.Close() })
	defer stop()
	var wg sync.WaitGroup
	defer wg.Wait()
	for {
		raw, err := ln.Accept()
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("accept on %s: %w", ln.Addr(), err)
		}
		t0 := clock.Now()
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer raw.Close()
			// When Serve stops, a connection still open is closed rather
			// than left to its deadline: its client may be gone for good
			// (a network removed mid-run), and its FIN with it.
			defer context.AfterFunc(ctx, func() { raw.Close() })()
			raw.SetDeadline(time.Now().Add(timeout)) // real time, whatever the injected clock says
			tc := tls.Server(raw, s.TLS)
			rec := ServerRecord{Client: raw.RemoteAddr().String(), Accept: t0}
			err := tc.HandshakeContext(ctx)
			t1 := clock.Now()
			if err != nil {
				rec.Err = fmt.Errorf("server handshake with %s: %w", rec.Client, err)
			} else {
				rec.DurationNs = t1.Sub(t0).Nanoseconds()
				cs := tc.ConnectionState()
				if err := s.Expect.Check(cs, cs.LocalCertificate); err != nil {
					rec.Err = fmt.Errorf("server connection from %s: %w", rec.Client, err)
				}
			}
			report(rec)
			if err == nil {
				io.Copy(io.Discard, tc) // until the client's close_notify/FIN
				tc.Close()
			}
		}()
	}
}

// ClientRecord is the client's view of one connection.
type ClientRecord struct {
	Local      string    // the client's ip:port
	Server     string    // the server's ip:port
	Start      time.Time // just before dialing
	DurationNs int64     // dial start to client handshake complete (client Finished sent)
	Group      tls.CurveID
	HRR        bool
	Key        CertKey
}

// Client dials and handshakes one connection at a time.
type Client struct {
	TLS     *tls.Config
	Expect  Expect
	Clock   Clock
	Timeout time.Duration // per connection; 0 means 30 s
}

// Dial makes one connection to addr. TCP connect, full handshake, checks,
// then an orderly close (close_notify and FIN, then wait for the server's
// FIN) so that every connection in a capture ends the same way.
func (c *Client) Dial(ctx context.Context, addr string) (ClientRecord, error) {
	clock := c.Clock
	if clock == nil {
		clock = RealClock
	}
	timeout := c.Timeout
	if timeout == 0 {
		timeout = 30 * time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var rec ClientRecord
	rec.Start = clock.Now()
	var d net.Dialer
	raw, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return rec, fmt.Errorf("dial %s: %w (is the server running?)", addr, err)
	}
	defer raw.Close()
	// Cancelling ctx ends the connection at once, also while it waits for
	// the server's close (which no deadline but the timeout would end).
	defer context.AfterFunc(ctx, func() { raw.Close() })()
	if dl, ok := ctx.Deadline(); ok {
		raw.SetDeadline(dl)
	}
	// Cancelling ctx ends every read and write at once, including the
	// wait for the server's close after the handshake: an interrupted run
	// must not wait out the per-connection timeout (Mage gives a
	// cancelled target 5 s in all).
	defer context.AfterFunc(ctx, func() { raw.SetDeadline(time.Unix(1, 0)) })()
	rec.Local, rec.Server = raw.LocalAddr().String(), raw.RemoteAddr().String()
	tc := tls.Client(raw, c.TLS)
	if err := tc.HandshakeContext(ctx); err != nil {
		return rec, fmt.Errorf("client handshake %s -> %s: %w", rec.Local, addr, causeOf(ctx, err))
	}
	t1 := clock.Now()
	rec.DurationNs = t1.Sub(rec.Start).Nanoseconds()
	cs := tc.ConnectionState()
	rec.Group, rec.HRR = cs.CurveID, cs.HelloRetryRequest
	var certs [][]byte
	for _, pc := range cs.PeerCertificates {
		certs = append(certs, pc.Raw)
	}
	if err := c.Expect.Check(cs, certs); err != nil {
		return rec, fmt.Errorf("client connection %s -> %s: %w", rec.Local, addr, err)
	}
	if len(cs.PeerCertificates) == 0 {
		return rec, fmt.Errorf("client connection %s -> %s: no peer certificate", rec.Local, addr)
	}
	k, err := CertKeyOf(cs.PeerCertificates[0])
	if err != nil {
		return rec, fmt.Errorf("client connection %s -> %s: %w", rec.Local, addr, err)
	}
	rec.Key = k
	if k != c.Expect.Key {
		return rec, fmt.Errorf("client connection %s -> %s: certificate key %s, want %s", rec.Local, addr, k, c.Expect.Key)
	}
	if err := tc.CloseWrite(); err != nil {
		return rec, fmt.Errorf("close_notify to %s: %w", addr, err)
	}
	if _, err := io.Copy(io.Discard, tc); err != nil {
		return rec, fmt.Errorf("wait for server close %s: %w", addr, causeOf(ctx, err))
	}
	return rec, nil
}

// causeOf names why a read or write on a connection that Dial's context
// closed failed. When the context ended (the per-connection timeout or the
// caller's cancellation) and its AfterFunc closed the connection before
// the deadline fired, the read returns net.ErrClosed, which says nothing
// about the cause; the context's error (context.DeadlineExceeded for the
// timeout) is wrapped with it so that callers can classify the failure.
func causeOf(ctx context.Context, err error) error {
	if ce := ctx.Err(); ce != nil && errors.Is(err, net.ErrClosed) {
		return fmt.Errorf("%w (%w)", ce, err)
	}
	return err
}
