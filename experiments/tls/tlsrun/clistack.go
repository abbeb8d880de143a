package tlsrun

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"pqrepro/datasets/tlsdata"
	"pqrepro/experiments/instruments/handshake"
	"pqrepro/experiments/tls/bridgenet"
	"pqrepro/experiments/tls/openssl"
)

// The openssl-cli stack (tlsdata.StackOpenSSLCLI): the OpenSSL build's
// own s_server and s_client with the [cli] command lines, one s_server
// per configuration for the whole run, one s_client process per
// connection. On loopback and on the bridge both run natively, each
// started on a thread inside its namespace; on the docker path s_server
// runs inside the server container (docker exec) and every s_client in
// the client container's network namespace (dockerpath.go).

// cellSupported says whether a path can run a stack: the docker path runs
// the OpenSSL tools only (its image holds the openssl program, neither Go
// nor the harness), the remote path the stacks its SSH host can start
// (not the CLI).
func cellSupported(stack, path string) error {
	switch {
	case path == PathDocker && stack != StackOpenSSLCLI:
		return fmt.Errorf("the docker path runs the %s stack only (its image holds the openssl program)", StackOpenSSLCLI)
	case path == PathRemote && stack == StackOpenSSLCLI:
		return fmt.Errorf("the remote path cannot start the %s stack on its host", StackOpenSSLCLI)
	}
	return nil
}

// cells returns [matrix] cells parsed, nil when the spec lists none (every
// combination).
func (s *Spec) cells() []Cell {
	var out []Cell
	for _, c := range s.Matrix.Cells {
		if cl, ok := parseCell(c); ok {
			out = append(out, cl)
		}
	}
	return out
}

// parseCell reads "stack/path/keyshare"; ok is false for another form.
func parseCell(s string) (c Cell, ok bool) {
	parts := strings.Split(s, "/")
	if len(parts) != 3 {
		return Cell{}, false
	}
	return Cell{Stack: parts[0], Path: parts[1], KeyShare: parts[2]}, true
}

// cellListed says whether the spec's cells (all when none are listed)
// include c.
func (s *Spec) cellListed(c Cell) bool {
	cs := s.cells()
	return len(cs) == 0 || slices.Contains(cs, c)
}

// validateCells checks [matrix] cells and [cli].
func (s *Spec) validateCells() []error {
	var errs []error
	for i, c := range s.Matrix.Cells {
		where := fmt.Sprintf("[matrix] cells: %q", c)
		cl, ok := parseCell(c)
		if !ok {
			errs = append(errs, fmt.Errorf("%s: want stack/path/keyshare, e.g. openssl-cli/docker/direct", where))
			continue
		}
		if !slices.Contains(s.stacks(), cl.Stack) {
			errs = append(errs, fmt.Errorf("%s: stack %q is not one of [matrix] stacks %v", where, cl.Stack, s.stacks()))
		}
		if !slices.Contains(s.keyShares(), handshake.KeyShare(cl.KeyShare)) {
			errs = append(errs, fmt.Errorf("%s: key-share mode %q is not one of [matrix] keyshares %v", where, cl.KeyShare, s.keyShares()))
		}
		if !slices.Contains(tlsdata.KnownPaths, cl.Path) {
			errs = append(errs, fmt.Errorf("%s: path %q is not one of %v", where, cl.Path, tlsdata.KnownPaths))
		} else if err := cellSupported(cl.Stack, cl.Path); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", where, err))
		}
		if slices.Contains(s.Matrix.Cells[:i], c) {
			errs = append(errs, fmt.Errorf("%s: listed twice", where))
		}
	}
	if pc := s.Paper.Cell; len(s.Matrix.Cells) > 0 && pc.Stack != "" && pc.Path != "" && pc.KeyShare != "" && !s.cellListed(pc) {
		errs = append(errs, fmt.Errorf("[paper.cell] %s is not one of [matrix] cells", pc))
	}
	if fb := s.Paper.Fallback; fb != (Cell{}) {
		switch {
		case fb.Stack == "" || fb.Path == "" || fb.KeyShare == "":
			errs = append(errs, fmt.Errorf("[paper.fallback] %s: name its stack, path and keyshare", fb))
		case !s.cellListed(fb):
			errs = append(errs, fmt.Errorf("[paper.fallback] %s is not one of [matrix] cells", fb))
		case fb.Path == s.Paper.Cell.Path:
			errs = append(errs, fmt.Errorf("[paper.fallback] %s is on the primary cell's path %s: a host that cannot run that path cannot run it either", fb, fb.Path))
		}
	}
	if slices.Contains(s.stacks(), StackOpenSSLCLI) {
		if s.Matrix.Chain || (s.Paper.ChainVariants && s.stacks()[0] == StackOpenSSLCLI) {
			errs = append(errs, fmt.Errorf("the openssl-cli stack runs leaf certificates only ([cli] server sends -cert's first certificate): set [matrix] chain and [paper] chain_variants to false"))
		}
		if err := openssl.CheckCommandLine("s_server", s.CLI.Server, openssl.ServerPlaces); err != nil {
			errs = append(errs, fmt.Errorf("[cli] server: %w", err))
		}
		if err := openssl.CheckCommandLine("s_client", s.CLI.Client, openssl.ClientPlaces); err != nil {
			errs = append(errs, fmt.Errorf("[cli] client: %w", err))
		}
	}
	return errs
}

// prepareCLI checks that the build has its openssl program when a
// configuration uses the openssl-cli stack and logs its version.
func (r *runner) prepareCLI(ctx context.Context) error {
	if !slices.ContainsFunc(r.configs, func(c Config) bool { return c.Stack == StackOpenSSLCLI }) {
		return nil
	}
	bin := r.stk.build.Program()
	v, err := openssl.ProgramVersion(ctx, bin)
	if err != nil {
		return fmt.Errorf("tls:run: the openssl-cli stack: %w (delete %s and run go run mage.go tls:openssl)", err, filepath.Dir(r.stk.build.Dir))
	}
	r.stk.program, r.stk.programVersion = bin, v
	r.logf("openssl-cli: %s (%s), s_server: %s", v, bin, strings.Join(r.spec.CLI.Server, " "))
	r.logf("openssl-cli: s_client per connection: %s", strings.Join(r.spec.CLI.Client, " "))
	return nil
}

// newCLIEnds is newEnds for the openssl-cli stack.
func (r *runner) newCLIEnds(i int, c Config, b *handshake.Bundle, exp handshake.Expect, decoy tls.CurveID) (serve func(context.Context, net.Listener, func(handshake.ServerRecord)) error, newClient func(io.Writer) dialer, err error) {
	dir := filepath.Join(r.stk.certDir, fmt.Sprint(i))
	if err := os.Mkdir(dir, 0o755); err != nil {
		return nil, nil, err
	}
	files, err := openssl.WriteCerts(dir, b)
	if err != nil {
		return nil, nil, err
	}
	if c.Path == PathDocker {
		// The server container's user reads the files through the
		// read-only mount.
		for _, f := range []string{files.Chain, files.Key, files.CA} {
			os.Chmod(f, 0o644)
		}
	}
	server, client, bindIP, err := r.cliLaunchers(c.Path)
	if err != nil {
		return nil, nil, err
	}
	srv := &openssl.CLIServer{Launcher: server, Args: r.spec.CLI.Server, Files: files, Groups: openssl.ServerGroups(c.Group), Expect: exp, Up: make(chan struct{})}
	r.stk.cliUp = append(r.stk.cliUp, cliUp{name: c.Name + " on " + c.pathName(), up: srv.Up, server: i})
	return srv.Serve, func(keyLog io.Writer) dialer {
		return &openssl.CLIClient{Launcher: client, Args: r.spec.CLI.Client, CA: files.CA, Groups: openssl.ClientGroups(c.Group, decoy),
			Expect: exp, BindIP: bindIP, KeyDir: r.stk.certDir, KeyLog: keyLog}
	}, nil
}

// cliLaunchers are where a path runs s_server and s_client, and the
// client's address.
func (r *runner) cliLaunchers(path string) (server, client openssl.Launcher, bindIP string, err error) {
	native := openssl.Native(r.stk.program)
	switch path {
	case PathLoopback, "":
		return native, native, "127.0.0.1", nil
	case PathBridge:
		server = native
		server.Start = func(cmd *exec.Cmd) (err error) {
			r.net.Server.Do(func() { err = cmd.Start() })
			return err
		}
		server.Listening = func(addr string) (up bool, err error) {
			r.net.Server.Do(func() { up, err = openssl.ListeningTCP(addr) })
			return up, err
		}
		// Dial runs on the client namespace's thread (dial), so the
		// process it starts is born there.
		return server, native, bridgenet.ClientAddr, nil
	case PathDocker:
		return r.dockerLaunchers(native)
	}
	return server, client, "", fmt.Errorf("the openssl-cli stack cannot run on the %s path", path)
}

// cliMeta is what meta.json records about the openssl-cli stack.
func (r *runner) cliMeta(m map[string]string) {
	if r.stk.program == "" {
		return
	}
	m["openssl.program"] = r.stk.programVersion
	m["openssl.cli_server"] = strings.Join(r.spec.CLI.Server, " ")
	m["openssl.cli_client"] = strings.Join(r.spec.CLI.Client, " ")
}

// socketOptions is meta.json's measured.socket_options: per stack of the
// run, whether each side sets TCP_NODELAY on its connection, which
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

// cliUp is one s_server the run waits for before its first connection.
type cliUp struct {
	name   string
	up     chan struct{}
	server int // index in runner.servers
}

// waitCLI waits until every s_server listens (CLIServer.Up), or fails
// with the first that stopped or did not come up in time.
func (r *runner) waitCLI(ctx context.Context) error {
	if len(r.stk.cliUp) == 0 {
		return nil
	}
	t0 := time.Now()
	timeout := time.After(30 * time.Second)
	for _, u := range r.stk.cliUp {
		select {
		case <-u.up:
		case <-ctx.Done():
			return ctx.Err()
		case err := <-r.servers[u.server].done:
			r.servers[u.server].done <- err // for stopServers
			return fmt.Errorf("tls:run: openssl s_server for %s stopped before it listened: %v", u.name, err)
		case <-timeout:
			return fmt.Errorf("tls:run: openssl s_server for %s not listening after 30 s", u.name)
		}
	}
	r.vlogf("openssl-cli: %d s_server processes listening after %s", len(r.stk.cliUp), time.Since(t0).Round(time.Millisecond))
	return nil
}
