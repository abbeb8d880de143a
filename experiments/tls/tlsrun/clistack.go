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
	"strings"
	"time"

	"pqrepro/datasets/tlsdata"
	"pqrepro/experiments/instruments/handshake"
	"pqrepro/experiments/tls/openssl"
)

// The openssl-cli stack (tlsdata.StackOpenSSLCLI): the OpenSSL build's
// own s_server and s_client with the [cli] command lines, one s_server
// per configuration for the whole run, one s_client process per
// connection. On loopback and on the bridge both run natively, each
// started on a thread inside its namespace; on the docker path s_server
// runs inside the server container (docker exec) and every s_client in
// the client container's network namespace (dockerpath.go).

// cellSupported says whether a path can run a stack. The docker path runs
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
func (s *Spec) cells() []tlsdata.Cell {
	var out []tlsdata.Cell
	for _, c := range s.Matrix.Cells {
		if cl, ok := parseCell(c); ok {
			out = append(out, cl)
		}
	}
	return out
}

// parseCell reads "stack/path/keyshare"; ok is false for another form.
func parseCell(s string) (c tlsdata.Cell, ok bool) {
	parts := strings.Split(s, "/")
	if len(parts) != 3 {
		return tlsdata.Cell{}, false
	}
	return tlsdata.Cell{Stack: parts[0], Path: parts[1], KeyShare: parts[2]}, true
}

// cellListed says whether the spec's cells (all when none are listed)
// include c.
func (s *Spec) cellListed(c tlsdata.Cell) bool {
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
	if fb := s.Paper.Fallback; fb != (tlsdata.Cell{}) {
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

// cliStack is the openssl-cli stack of a run: the build's openssl
// program, the [cli] command lines, and the s_server processes to wait for.
type cliStack struct {
	logger
	program, version string   // the build's openssl program and its version
	server, client   []string // [cli] server and client
	certDir          string   // the run's PEM files (stackState.certDir)
	up               []cliUp  // the s_server processes wait waits for
}

// cliUp is one s_server the run waits for before its first connection.
type cliUp struct {
	name   string
	up     chan struct{}
	server int // index in runner.servers
}

// prepareCLI checks that the build has its openssl program when a
// configuration uses the openssl-cli stack, logs its version and makes
// the run's cliStack.
func (r *runner) prepareCLI(ctx context.Context) error {
	if !slices.ContainsFunc(r.configs, func(c Config) bool { return c.Stack == StackOpenSSLCLI }) {
		return nil
	}
	bin := r.stk.build.Program()
	v, err := openssl.ProgramVersion(ctx, bin)
	if err != nil {
		return fmt.Errorf("tls:run: the openssl-cli stack: %w (delete %s and run go run mage.go tls:openssl)", err, filepath.Dir(r.stk.build.Dir))
	}
	r.cli = &cliStack{logger: r.logger, program: bin, version: v, server: r.spec.CLI.Server, client: r.spec.CLI.Client, certDir: r.stk.certDir}
	r.logf("openssl-cli: %s (%s), s_server: %s", v, bin, strings.Join(r.spec.CLI.Server, " "))
	r.logf("openssl-cli: s_client per connection: %s", strings.Join(r.spec.CLI.Client, " "))
	if slices.ContainsFunc(r.configs, Config.isEmulated) {
		return r.cli.checkOfferedGroups(ctx, r.configs)
	}
	return nil
}

// ends makes configuration c's s_server and its s_client factory on path
// p; i is the server's index in runner.servers.
func (k *cliStack) ends(i int, c Config, p path, b *handshake.Bundle, exp handshake.Expect, decoy tls.CurveID) (serve func(context.Context, net.Listener, func(handshake.ServerRecord)) error, newClient func(io.Writer) dialer, err error) {
	dir := filepath.Join(k.certDir, fmt.Sprint(i))
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
	host, ok := p.(cliPath)
	if !ok {
		return nil, nil, fmt.Errorf("the openssl-cli stack cannot run on the %s path", c.pathName())
	}
	if err := checkCertFiles(c, files); err != nil {
		return nil, nil, err
	}
	groups, err := clientGroupsArg(c, decoy)
	if err != nil {
		return nil, nil, err
	}
	server, client, bindIP := host.launchers(openssl.Native(k.program))
	srv := &openssl.CLIServer{Launcher: server, Args: k.server, Files: files, Groups: openssl.ServerGroups(c.Group), Expect: exp, Up: make(chan struct{})}
	if c.Chain {
		// -cert reads the leaf only: the CA goes in -cert_chain.
		srv.ChainFile = files.CA
	}
	k.up = append(k.up, cliUp{name: c.Name + " on " + c.pathName(), up: srv.Up, server: i})
	return srv.Serve, func(keyLog io.Writer) dialer {
		return &openssl.CLIClient{Launcher: client, Args: k.client, CA: files.CA, Groups: groups,
			Expect: exp, BindIP: bindIP, KeyDir: k.certDir, KeyLog: keyLog}
	}, nil
}

// meta is what meta.json records about the openssl-cli stack.
func (k *cliStack) meta(m map[string]string) {
	m["openssl.program"] = k.version
	m["openssl.cli_server"] = strings.Join(k.server, " ")
	m["openssl.cli_client"] = strings.Join(k.client, " ")
}

// wait waits until every s_server listens (CLIServer.Up), or fails with
// the first that stopped or did not come up in time.
func (k *cliStack) wait(ctx context.Context, servers []*server) error {
	if len(k.up) == 0 {
		return nil
	}
	t0 := time.Now()
	timeout := time.After(30 * time.Second)
	for _, u := range k.up {
		select {
		case <-u.up:
		case <-ctx.Done():
			return ctx.Err()
		case err := <-servers[u.server].done:
			servers[u.server].done <- err // for stopServers
			return fmt.Errorf("tls:run: openssl s_server for %s stopped before it listened: %v", u.name, err)
		case <-timeout:
			return fmt.Errorf("tls:run: openssl s_server for %s not listening after 30 s", u.name)
		}
	}
	k.vlogf("openssl-cli: %d s_server processes listening after %s", len(k.up), time.Since(t0).Round(time.Millisecond))
	return nil
}
