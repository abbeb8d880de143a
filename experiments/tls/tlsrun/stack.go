package tlsrun

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"slices"

	"pqrepro/datasets/tlsdata"
	"pqrepro/experiments/instruments/handshake"
	"pqrepro/experiments/tls/openssl"
	"pqrepro/internal/deps"
	"pqrepro/internal/spec"
)

// The stacks a run can measure: both ends of every connection are the
// same implementation.
const (
	StackGo      = tlsdata.StackGo      // Go's crypto/tls (experiments/instruments/handshake)
	StackOpenSSL = tlsdata.StackOpenSSL // OpenSSL 3.5 built from Debian's source (experiments/tls/openssl), our harness
	// StackOpenSSLCLI: the same build's s_server and s_client, one client
	// process per connection (clistack.go).
	StackOpenSSLCLI = tlsdata.StackOpenSSLCLI
)

// usesOpenSSL says whether a stack runs the OpenSSL build.
func usesOpenSSL(stack string) bool { return stack == StackOpenSSL || stack == StackOpenSSLCLI }

func (s *Spec) stacks() []string {
	if len(s.Matrix.Stacks) == 0 {
		return []string{StackGo}
	}
	return s.Matrix.Stacks
}

func (s *Spec) keyShares() []handshake.KeyShare {
	if len(s.Matrix.KeyShares) == 0 {
		return []handshake.KeyShare{handshake.Direct}
	}
	out := make([]handshake.KeyShare, len(s.Matrix.KeyShares))
	for i, k := range s.Matrix.KeyShares {
		out[i] = handshake.KeyShare(k)
	}
	return out
}

func (s *Spec) validateStacks() []error {
	var errs []error
	for i, st := range s.Matrix.Stacks {
		if !slices.Contains(tlsdata.Stacks, st) {
			errs = append(errs, fmt.Errorf("[matrix] stacks: unknown stack %q: use %v", st, tlsdata.Stacks))
		} else if slices.Index(s.Matrix.Stacks, st) != i {
			errs = append(errs, fmt.Errorf("[matrix] stacks: %s listed twice", st))
		}
	}
	for i, k := range s.Matrix.KeyShares {
		if !slices.Contains(handshake.KeyShares, handshake.KeyShare(k)) {
			errs = append(errs, fmt.Errorf("[matrix] keyshares: unknown key-share mode %q: use %v", k, handshake.KeyShares))
		} else if slices.Index(s.Matrix.KeyShares, k) != i {
			errs = append(errs, fmt.Errorf("[matrix] keyshares: %s listed twice", k))
		}
	}
	if len(errs) == 0 && len(s.Paper.Configs) > 0 {
		for _, p := range s.Paper.Configs {
			g, err := parseGroup(p.Group)
			if err != nil {
				continue // reported by Validate
			}
			if err := supported(s.stacks()[0], s.keyShares()[0], g); err != nil {
				errs = append(errs, fmt.Errorf("[[paper.configs]] %q: %w", p.Name, err))
			}
		}
	}
	return errs
}

// supported says whether a stack can make a configuration: Go's client
// cannot be made to take the HelloRetryRequest path for X25519MLKEM768
// (handshake.GoHRRGroups).
func supported(stack string, ks handshake.KeyShare, g tls.CurveID) error {
	if stack == StackGo && ks == handshake.HRR {
		_, err := handshake.GoHRRGroups(g)
		return err
	}
	return nil
}

// Skipped lists the combinations Configs and Units leave out, with the
// reason. Configs leaves out what a stack cannot make, Units the stack x
// path combinations a path cannot run.
func (s *Spec) Skipped() []string {
	var out []string
	for _, st := range s.stacks() {
		for _, p := range s.allPaths() {
			if err := cellSupported(st, p); err != nil {
				out = append(out, fmt.Sprintf("%s on %s: %v", st, p, err))
			}
		}
	}
	for _, st := range s.stacks() {
		for _, ks := range s.keyShares() {
			for _, g := range s.Matrix.Groups {
				id, err := parseGroup(g)
				if err != nil {
					continue
				}
				if err := supported(st, ks, id); err != nil {
					out = append(out, fmt.Sprintf("%s/%s/%s: %v", st, ks, id, err))
				}
			}
		}
	}
	return out
}

// id is the configuration's records ID (tlsdata.ConfigID).
func (c Config) id() string {
	st := ""
	if usesOpenSSL(c.Stack) {
		st = c.Stack
	}
	return tlsdata.ConfigID{CertKey: string(c.Key), Group: c.Group.String(), Chain: c.Chain, HRR: c.KeyShare == handshake.HRR, Stack: st, Groups: c.ClientGroups}.ID()
}

// dialer makes one client connection: handshake.Client and
// openssl.Client.
type dialer interface {
	Dial(ctx context.Context, addr string) (handshake.ClientRecord, error)
}

// stackState is what the run's OpenSSL configurations share: the build,
// the harness binary, a private folder for the PEM files, and the clients
// to stop.
type stackState struct {
	build   *openssl.Build
	harness string
	certDir string
	clients []*openssl.Client
}

// prepareStacks builds (once, cached) OpenSSL and its harness when a
// configuration uses it.
func (r *runner) prepareStacks(ctx context.Context) error {
	if !slices.ContainsFunc(r.configs, func(c Config) bool { return usesOpenSSL(c.Stack) }) {
		return nil
	}
	root := r.cfg.BuildRoot
	if root == "" {
		root = r.cfg.Root
	}
	b, err := openssl.Ensure(ctx, root, r.cfg.Log)
	if err != nil {
		return fmt.Errorf("tls:run: %w", err)
	}
	bin, err := b.Harness(ctx, r.cfg.Log)
	if err != nil {
		return fmt.Errorf("tls:run: %w", err)
	}
	dir, err := makeCertDir()
	if err != nil {
		return fmt.Errorf("tls:run: %w", err)
	}
	// Readable by a container's user through the docker path's mount.
	if err := os.Chmod(dir, 0o755); err != nil {
		return fmt.Errorf("tls:run: %w", err)
	}
	r.stk = stackState{build: b, harness: bin, certDir: dir}
	r.logf("openssl: OpenSSL %s (Debian %s, %s) harness %s", b.OpenSSLVersion, b.Version, b.Configure, filepath.Base(filepath.Dir(bin)))
	return r.prepareCLI(ctx)
}

// stopStacks ends the OpenSSL clients and removes the PEM files.
func (r *runner) stopStacks() {
	for _, c := range r.stk.clients {
		c.Close()
	}
	if r.stk.certDir != "" {
		os.RemoveAll(r.stk.certDir)
	}
}

// stackMeta is what meta.json records about the stacks.
func (r *runner) stackMeta() map[string]string {
	if r.stk.build == nil {
		return nil
	}
	m := r.stk.build.Meta()
	m["openssl.harness_sha256"] = openssl.HarnessSHA256()
	if r.cli != nil {
		r.cli.meta(m)
	}
	return m
}

// newEnds makes a configuration's server and its client factory for its
// stack and key-share mode.
func (r *runner) newEnds(i int, c Config, b *handshake.Bundle, exp handshake.Expect) (serve func(context.Context, net.Listener, func(handshake.ServerRecord)) error, newClient func(io.Writer) dialer, err error) {
	var decoy tls.CurveID
	if c.KeyShare == handshake.HRR {
		if decoy, err = handshake.Decoy(c.Group); err != nil {
			return nil, nil, err
		}
	}
	if c.Stack == StackOpenSSLCLI {
		if r.cli == nil {
			return nil, nil, fmt.Errorf("the %s stack was not prepared", StackOpenSSLCLI)
		}
		return r.cli.ends(i, c, r.path(c.Path), b, exp, decoy)
	}
	if c.Stack != StackOpenSSL {
		groups := []tls.CurveID{c.Group}
		if c.KeyShare == handshake.HRR {
			if groups, err = handshake.GoHRRGroups(c.Group); err != nil {
				return nil, nil, err
			}
		}
		srv := &handshake.Server{TLS: handshake.ServerTLSConfig(b, c.Group, nil), Expect: exp}
		return srv.Serve, func(keyLog io.Writer) dialer {
			return &handshake.Client{TLS: handshake.ClientTLSConfig(b.Roots, "localhost", groups, keyLog), Expect: exp}
		}, nil
	}
	dir := filepath.Join(r.stk.certDir, fmt.Sprint(i))
	if err := os.Mkdir(dir, 0o700); err != nil {
		return nil, nil, err
	}
	files, err := openssl.WriteCerts(dir, b)
	if err != nil {
		return nil, nil, err
	}
	srv := &openssl.Server{Binary: r.stk.harness, Files: files, Groups: openssl.ServerGroups(c.Group), Expect: exp}
	return srv.Serve, func(keyLog io.Writer) dialer {
		cl := &openssl.Client{Binary: r.stk.harness, CA: files.CA, Groups: openssl.ClientGroups(c.Group, decoy), Expect: exp, KeyLog: keyLog}
		r.stk.clients = append(r.stk.clients, cl)
		return cl
	}, nil
}

// stackName is the records' stack column.
func (c Config) stackName() string {
	if c.Stack == "" {
		return StackGo
	}
	return c.Stack
}

// stackRequirements are the OpenSSL build's requirements when the spec
// under root lists the openssl stack (an unreadable spec needs nothing
// here: Run reports it).
// NeedsOpenSSL reports whether root's spec runs an OpenSSL stack, whose
// build (openssl.Ensure) a fresh machine makes once before the run.
func NeedsOpenSSL(root string) bool {
	s, err := LoadSpec(filepath.Join(root, spec.Path(Study)))
	return err == nil && slices.ContainsFunc(s.Matrix.Stacks, usesOpenSSL)
}

func stackRequirements(root string) []deps.Requirement {
	s, err := LoadSpec(filepath.Join(root, spec.Path(Study)))
	if err != nil || !slices.ContainsFunc(s.Matrix.Stacks, usesOpenSSL) {
		return nil
	}
	return openssl.Requirements()
}

// socketOptions is meta.json's measured.socket_options: TCP_NODELAY per
// stack and side. Whether each side sets it on its connection
// decides whether Nagle's algorithm can hold back a flight's last
// segment (a ServerHello with ML-KEM-1024's 1,568-byte ciphertext crosses
// one 1,500-byte frame). Go's net package sets it on every TCP
// connection (read back: measured.paths tcp_nodelay); the harness sets it
// on both sides (harness/pqssl.c); s_client sets it when it connects
// (apps/lib/s_socket.c, init_client: BIO_SOCK_NODELAY) and s_server on no
// socket (apps/lib/s_socket.c, do_server: the accepted socket keeps the
// listener's options, which set only SO_REUSEADDR).
func (r *runner) socketOptions() map[string]any {
	out := map[string]any{}
	for _, st := range r.spec.stacks() {
		if !slices.ContainsFunc(r.configs, func(c Config) bool { return c.Stack == st }) {
			continue
		}
		switch st {
		case StackGo:
			out[st] = map[string]any{"client_tcp_nodelay": true, "server_tcp_nodelay": true, "source": "Go net package: TCPConn.SetNoDelay(true) on every connection"}
		case StackOpenSSL:
			out[st] = map[string]any{"client_tcp_nodelay": true, "server_tcp_nodelay": true, "source": "experiments/tls/openssl/harness/pqssl.c: setsockopt TCP_NODELAY on both sides"}
		case StackOpenSSLCLI:
			out[st] = map[string]any{"client_tcp_nodelay": true, "server_tcp_nodelay": false, "source": "OpenSSL 3.5 apps/lib/s_socket.c: init_client connects with BIO_SOCK_NODELAY; do_server accepts with the listener's options (SO_REUSEADDR only)"}
		}
	}
	return out
}

// measureHost is openssl.MeasureHost (about 13 s); most tests replace it
// with a fast fake (TestRunOpenSSLCLI runs the real one).
var measureHost = openssl.MeasureHost

// (*runner).measureHost measures the host's cryptography with the build's
// openssl program (openssl.MeasureHost), when the run has the build; when says
// "before" or "after" the handshakes. A failure is logged and recorded,
// not fatal: the handshakes do not depend on it.
func (r *runner) measureHost(ctx context.Context, when string) {
	if r.stk.build == nil {
		return
	}
	h, err := measureHost(ctx, r.stk.build.Program())
	if err != nil {
		r.logf("WARNING: host cryptography %s the handshakes not measured: %v", when, err)
		r.hostErrs = append(r.hostErrs, when+": "+err.Error())
		return
	}
	if r.host == nil {
		r.host = map[string]*openssl.HostCrypto{}
	}
	r.host[when] = h
	r.logf("host cryptography %s the handshakes: P-384 ECDH %.3f ms, ML-KEM-1024 encaps %.3f ms, decaps %.3f ms, ML-DSA-87 sign %.3f ms (%s)",
		when, h.MsPerOp["ecdh-p384"], h.MsPerOp["mlkem1024-encaps"], h.MsPerOp["mlkem1024-decaps"], h.MsPerOp["mldsa87-sign"], h.CPUSettings)
}

// hostCrypto is meta.json's measured.host_crypto.
func (r *runner) hostCrypto() map[string]any {
	if r.host == nil && r.hostErrs == nil {
		return nil
	}
	out := map[string]any{"implementations": openssl.Implementations}
	for k, v := range r.host {
		out[k] = v
	}
	if len(r.hostErrs) > 0 {
		out["errors"] = r.hostErrs
	}
	return out
}
