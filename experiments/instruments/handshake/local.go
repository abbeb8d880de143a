package handshake

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"time"
)

// Config is one configuration of Study A run locally: a server and a client
// in this process, connected over a real TCP socket.
type Config struct {
	Group tls.CurveID // the only group the server supports; the expected negotiated group
	// ClientGroups is what the client offers; nil means exactly {Group}.
	// Offering more than one group can force a HelloRetryRequest, see ExpectHRR.
	ClientGroups []tls.CurveID
	// ExpectHRR says whether each handshake must include a HelloRetryRequest.
	// Go 1.27 sends one key share: for the first offered group in its fixed
	// order X25519MLKEM768, SecP256r1MLKEM768, SecP384r1MLKEM1024, MLKEM1024,
	// X25519, P-256, P-384, P-521 (plus the hybrid's classical share when that
	// classical group is offered too). If the server's group has no share, it
	// answers with a HelloRetryRequest (RFC 8446 4.1.4).
	ExpectHRR bool
	Cert      CertConfig
	N         int    // measured connections
	Warmup    int    // connections made first and discarded
	Addr      string // listen address; "" means 127.0.0.1:0
	// KeyLog receives the NSS key log lines of every connection (warm-up
	// included), for the capture's Decryption Secrets Block.
	KeyLog   io.Writer
	Progress func(done, total int) // called after each connection, may be nil
	Clock    Clock                 // nil means RealClock
	Timeout  time.Duration         // per connection; 0 means 30 s
}

// ConnRecord is one measured connection, joined from both sides.
type ConnRecord struct {
	Seq         int         `json:"seq"`    // 0-based, after the warm-up
	Client      string      `json:"client"` // ip:port
	Server      string      `json:"server"` // ip:port
	StartUnixNs int64       `json:"start_unix_ns"`
	Group       tls.CurveID `json:"-"`
	GroupName   string      `json:"group"`
	HRR         bool        `json:"hrr"`
	Key         CertKey     `json:"cert_key"`
	Chain       bool        `json:"chain"`
	ClientNs    int64       `json:"client_ns"` // dial start to client handshake complete
	ServerNs    int64       `json:"server_ns"` // accept to server handshake complete
}

func (c *Config) clientGroups() []tls.CurveID {
	if len(c.ClientGroups) == 0 {
		return []tls.CurveID{c.Group}
	}
	return c.ClientGroups
}

// Run makes cfg.Warmup + cfg.N connections one after another against a
// server on cfg.Addr and returns the N measured records. Any failed or
// mismatching connection stops the run with an error; a cancelled ctx stops
// it with ctx.Err() and the records made so far.
func Run(ctx context.Context, cfg Config) ([]ConnRecord, error) {
	if cfg.N < 0 || cfg.Warmup < 0 {
		return nil, fmt.Errorf("handshake run: N=%d and Warmup=%d must not be negative", cfg.N, cfg.Warmup)
	}
	if cfg.Group == 0 {
		return nil, errors.New("handshake run: no key-exchange group set")
	}
	b, err := MakeCerts(cfg.Cert)
	if err != nil {
		return nil, fmt.Errorf("handshake run: %w", err)
	}
	addr := cfg.Addr
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("listen %s: %w", addr, err)
	}
	exp := Expect{Group: cfg.Group, HRR: cfg.ExpectHRR, Key: cfg.Cert.Key, Chain: cfg.Cert.Chain}
	srv := &Server{TLS: ServerTLSConfig(b, cfg.Group, nil), Expect: exp, Clock: cfg.Clock, Timeout: cfg.Timeout}
	cli := &Client{TLS: ClientTLSConfig(b.Roots, "localhost", cfg.clientGroups(), cfg.KeyLog), Expect: exp, Clock: cfg.Clock, Timeout: cfg.Timeout}

	srvCtx, stopSrv := context.WithCancel(context.Background())
	results := make(chan ServerRecord, 4)
	srvDone := make(chan error, 1)
	go func() { srvDone <- srv.Serve(srvCtx, ln, func(r ServerRecord) { results <- r }) }()
	defer func() { stopSrv(); <-srvDone }()

	total := cfg.Warmup + cfg.N
	recs := make([]ConnRecord, 0, cfg.N)
	for i := 0; i < total; i++ {
		if err := ctx.Err(); err != nil {
			return recs, err
		}
		cr, err := cli.Dial(ctx, ln.Addr().String())
		if err != nil {
			return recs, fmt.Errorf("connection %d of %d: %w", i+1, total, err)
		}
		var sr ServerRecord
		select {
		case sr = <-results:
		case err := <-srvDone:
			return recs, fmt.Errorf("connection %d: server stopped: %v", i+1, err)
		case <-ctx.Done():
			return recs, ctx.Err()
		}
		if sr.Err != nil {
			return recs, fmt.Errorf("connection %d of %d: %w", i+1, total, sr.Err)
		}
		if sr.Client != cr.Local {
			return recs, fmt.Errorf("connection %d: server saw client %s, client is %s (stray connection on %s?)", i+1, sr.Client, cr.Local, ln.Addr())
		}
		if i >= cfg.Warmup {
			recs = append(recs, ConnRecord{
				Seq: i - cfg.Warmup, Client: cr.Local, Server: cr.Server,
				StartUnixNs: cr.Start.UnixNano(), Group: cr.Group, GroupName: cr.Group.String(),
				HRR: cr.HRR, Key: cr.Key, Chain: cfg.Cert.Chain,
				ClientNs: cr.DurationNs, ServerNs: sr.DurationNs,
			})
		}
		if cfg.Progress != nil {
			cfg.Progress(i+1, total)
		}
	}
	return recs, nil
}
