package tlsrun

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"pqrepro/experiments/instruments/capture"
	"pqrepro/experiments/instruments/handshake"
	"pqrepro/experiments/instruments/sshhost"
	"pqrepro/experiments/tls/openssl"
	"pqrepro/experiments/tls/tlsjoin"
	"pqrepro/internal/provenance"
)

// RemoteSpec is the [remote] table: the second host of the remote path.
type RemoteSpec = sshhost.Spec

// RemoteCaptureName is the remote path's capture in meta.json Files.
var RemoteCaptureName = tlsjoin.CaptureFor(PathRemote)

// RemoteStacks are the stacks besides Go's that the remote host's serve
// role runs for this study: `pqrepro remote serve` passes them to
// sshhost.RunRole.
//
// The study names them, not sshhost, so that the instrument knows no
// study's TLS implementation.
var RemoteStacks = sshhost.Stacks{StackOpenSSL: remoteOpenSSLServer}

// remoteOpenSSLServer is configuration i's server on the OpenSSL harness,
// its PEM files in a folder of its own under the system's temporary
// folder. The folder is removed when the role exits normally;
// the watchdog's exit leaves it, a few kilobytes of deterministic test keys.
func remoteOpenSSLServer(harness string, i int, b *handshake.Bundle, g tls.CurveID, exp handshake.Expect) (sshhost.Serve, error) {
	if harness == "" {
		return nil, errors.New("the openssl stack needs -harness (the deployed OpenSSL harness)")
	}
	dir, err := os.MkdirTemp("", fmt.Sprintf("pqrepro-remote-%d-", i))
	if err != nil {
		return nil, err
	}
	files, err := openssl.WriteCerts(dir, b)
	if err != nil {
		return nil, err
	}
	srv := &openssl.Server{Binary: harness, Files: files, Groups: openssl.ServerGroups(g), Expect: exp}
	return func(ctx context.Context, ln net.Listener, report func(handshake.ServerRecord)) error {
		defer os.RemoveAll(dir)
		return srv.Serve(ctx, ln, report)
	}, nil
}

func (s *Spec) usesPath(p string) bool {
	if slices.Contains(s.Matrix.Paths, p) {
		return true
	}
	for _, prof := range s.Profiles {
		if slices.Contains(prof.Paths, p) {
			return true
		}
	}
	return false
}

func (s *Spec) validateRemote() []error {
	if err := s.Remote.Validate(); err != nil {
		return []error{err}
	}
	if s.usesPath(PathRemote) && s.Remote.Host == "" {
		return []error{errors.New(`the "remote" path needs [remote] host = "user@host" (an SSH destination)`)}
	}
	return nil
}

// remotePath is the remote path (PathRemote): servers on a second host.
// It holds the host's deployed binary, its serve role with one TLS server
// per remote configuration, and its records; the clients and the capture
// are here.
type remotePath struct {
	logger
	host    *sshhost.Host
	proc    *sshhost.Process
	prov    sshhost.Provenance
	dep     sshhost.Deployed
	harness sshhost.Deployed // the OpenSSL harness there, zero without
	ip      string           // the servers' address on the host
	iface   string           // the interface here that reaches it (the capture's)
	addrs   []string
	recs    []chan handshake.ServerRecord
	next    int           // the next remote configuration listen hands out
	deploy  time.Duration // build + copy + start until ready
}

// remoteListener stands for a server of the serve role: Addr is where it
// listens on the remote host; Accept waits until Close. Its serve
// replaces the configuration's stack's.
type remoteListener struct {
	i      int
	addr   *net.TCPAddr
	closed chan struct{}
	rp     *remotePath
}

func (l *remoteListener) Accept() (net.Conn, error) { <-l.closed; return nil, net.ErrClosed }
func (l *remoteListener) Close() error {
	select {
	case <-l.closed:
	default:
		close(l.closed)
	}
	return nil
}
func (l *remoteListener) Addr() net.Addr { return l.addr }

// startRemote deploys pqrepro to the remote host and starts its servers.
// It builds the static binary for the host's architecture, copies it
// there (sshhost.Deploy), records the host's provenance and starts the
// serve role with every remote configuration.
func (r *runner) startRemote(ctx context.Context) (_ path, err error) {
	opt := r.spec.Remote.Options()
	if r.cfg.RemoteSSH != nil {
		opt = *r.cfg.RemoteSSH
	}
	h, err := sshhost.New(opt)
	if err != nil {
		return nil, fmt.Errorf("tls:run: %w", err)
	}
	var cs []sshhost.ServerConfig
	for _, c := range r.configs {
		if c.Path == PathRemote {
			cs = append(cs, sshhost.ServerConfig{Group: c.Group.String(), Cert: string(c.Key), Chain: c.Chain, HRR: c.KeyShare == handshake.HRR, Seed: r.spec.Seeds.Certificates, Stack: c.stackName()})
		}
	}
	srv, err := sshhost.StartServers(ctx, h, r.buildRoot(), r.stk.harness, cs)
	if err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("tls:run: %w (%w)", ErrInterrupted, ctx.Err())
		}
		return nil, fmt.Errorf("tls:run: remote path: %w", err)
	}
	rp := &remotePath{logger: r.logger, host: h, proc: srv.Proc, prov: srv.Prov, dep: srv.Dep, harness: srv.Harness, addrs: srv.Addrs, deploy: srv.Ready}
	defer func() {
		if err != nil {
			rp.close()
		}
	}()
	rp.ip, _, _ = net.SplitHostPort(rp.addrs[0])
	if rp.iface, err = ifaceTo(rp.ip); err != nil {
		return nil, fmt.Errorf("tls:run: remote path: %w", err)
	}
	rp.recs = make([]chan handshake.ServerRecord, len(cs))
	for i := range rp.recs {
		rp.recs[i] = make(chan handshake.ServerRecord, 8)
	}
	go rp.dispatch()
	copied := "already there"
	if rp.dep.Copied {
		copied = "copied"
	}
	r.logf("remote path: %s (%s, %s, %s), binary %s (%s, sha256:%s), serve pid %d, %d servers on %s, clock offset %+.3f ms +- %.3f ms, captured on %s; ready in %s",
		h.Dest(), rp.prov.Hostname, rp.prov.Kernel, rp.prov.OS, rp.dep.Path, copied, rp.dep.SHA256[:16], rp.proc.PID, len(cs), rp.ip,
		float64(rp.prov.Clock.OffsetNs)/1e6, float64(rp.prov.Clock.BoundNs)/1e6, rp.iface, rp.deploy.Round(time.Millisecond))
	if srv.Harness.Path != "" {
		r.logf("remote path: OpenSSL harness %s (sha256:%s)", srv.Harness.Path, srv.Harness.SHA256[:16])
	}
	return rp, nil
}

// dispatch hands the serve role's records to their servers.
func (rp *remotePath) dispatch() {
	for m := range rp.proc.Msgs() {
		if m.Type != "rec" || m.I < 0 || m.I >= len(rp.recs) {
			continue
		}
		rec := handshake.ServerRecord{Client: m.Client, Accept: time.Unix(0, m.AcceptNs), DurationNs: m.ServerNs}
		if m.Err != "" {
			rec.Err = errors.New("remote server: " + m.Err)
		}
		select {
		case rp.recs[m.I] <- rec:
		case <-rp.proc.Done():
			return
		}
	}
}

// ifaceTo is the local interface whose address routes to ip (the kernel's
// choice for a UDP socket connected there; no packet is sent).
func ifaceTo(ip string) (string, error) {
	c, err := net.Dial("udp", net.JoinHostPort(ip, "9"))
	if err != nil {
		return "", fmt.Errorf("no route to %s: %w", ip, err)
	}
	local := c.LocalAddr().(*net.UDPAddr).IP
	c.Close()
	ifs, err := net.Interfaces()
	if err != nil {
		return "", err
	}
	for _, ifc := range ifs {
		addrs, _ := ifc.Addrs()
		for _, a := range addrs {
			if n, ok := a.(*net.IPNet); ok && n.IP.Equal(local) {
				return ifc.Name, nil
			}
		}
	}
	return "", fmt.Errorf("no interface holds %s, the address that reaches %s", local, ip)
}

func (*remotePath) name() string { return PathRemote }

// serverAddr is the remote servers' address and host, for the log.
func (rp *remotePath) serverAddr() string {
	return rp.ip + " (remote, " + strings.TrimSpace(rp.host.Dest()) + ")"
}

// client runs f here: the remote path's clients are this process's.
func (*remotePath) client(f func()) { f() }

// close stops the serve role (nothing of the run stays running on
// the host; the binary stays in [remote] dir for the next run).
func (rp *remotePath) close() {
	if rp.proc == nil {
		return
	}
	if err := rp.proc.Stop(); err != nil {
		rp.logf("WARNING: remote path: %v", err)
		return
	}
	rp.vlogf("remote path: serve pid %d on %s stopped", rp.proc.PID, rp.host.Dest())
}

// listen gives the next remote configuration its listener.
func (rp *remotePath) listen(Config) (net.Listener, error) {
	if rp.next >= len(rp.addrs) {
		return nil, errors.New("more remote configurations than the serve role started")
	}
	a, err := net.ResolveTCPAddr("tcp", rp.addrs[rp.next])
	if err != nil {
		return nil, err
	}
	rp.next++
	return &remoteListener{i: rp.next - 1, addr: a, closed: make(chan struct{}), rp: rp}, nil
}

// serve is a remote configuration's serve function. It reports the
// serve role's records for the listener's server until ctx ends, and
// fails when the SSH session ends first.
func (l *remoteListener) serve(ctx context.Context, _ net.Listener, report func(handshake.ServerRecord)) error {
	defer l.Close()
	rp := l.rp
	for {
		select {
		case rec := <-rp.recs[l.i]:
			report(rec)
		case <-rp.proc.Done():
			return rp.proc.Err()
		case <-ctx.Done():
			return nil
		}
	}
}

func (rp *remotePath) done() <-chan struct{} { return rp.proc.Done() }

// failure is why the remote path broke, nil while it works. After a
// failed connection (loopErr) it waits up to remoteSettle for the SSH
// session to tell: a dead link or server often shows first as a refused
// or reset connection, and ssh notices a silent link within
// ServerAliveInterval x ServerAliveCountMax (6 s).
func (rp *remotePath) failure(loopErr error) error {
	if loopErr != nil {
		select {
		case <-rp.proc.Done():
		case <-time.After(remoteSettle):
		}
	}
	if err := rp.proc.Err(); err != nil {
		return fmt.Errorf("remote path: %w; the run was removed and not registered, the remote server is stopped", err)
	}
	return nil
}

const remoteSettle = 10 * time.Second

// capture captures the remote path on the interface that reaches the
// host, the remote servers' ports only.
func (rp *remotePath) capture(ctx context.Context, dir string, servers []*server) (*pathCapture, error) {
	pc := &pathCapture{path: PathRemote, iface: rp.iface, name: RemoteCaptureName, file: filepath.Join(dir, RemoteCaptureName)}
	ports := serverPorts(servers, PathRemote)
	if len(ports) > capture.MaxPorts {
		ports = nil
	}
	keep := false
	c, err := capture.Start(ctx, capture.Options{Interface: pc.iface, Path: pc.file, Ports: ports, DropOutgoing: &keep})
	if err != nil {
		return nil, fmt.Errorf("tls:run: remote path: %w", err)
	}
	pc.c = c
	rp.logf("capture: started on %s (toward %s)", pc.iface, rp.ip)
	return pc, nil
}

// info is meta.json's measured.paths.remote.
func (rp *remotePath) info() map[string]any {
	info := map[string]any{"path": PathRemote, "interface": rp.iface, "server_addr": rp.ip, "host": rp.host.Dest()}
	if ifc, err := net.InterfaceByName(rp.iface); err == nil {
		info["mtu"] = ifc.MTU
	}
	return info
}

// meta records the remote host's provenance in meta.json.
func (rp *remotePath) meta(m *provenance.Meta) {
	m.Measured["remote_host"] = rp.prov
	if rp.harness.SHA256 != "" {
		m.Measured["remote_harness"] = rp.harness
	}
	m.Measured["remote_deploy_s"] = round3(rp.deploy.Seconds())
	m.Notes = append(m.Notes, fmt.Sprintf("remote path: servers on %s over SSH (pqrepro remote serve, binary sha256:%s built for %s here with %s), client and capture on this host; the servers' accept times are the remote clock's (offset estimate in measured.remote_host.clock)",
		rp.host.Dest(), rp.dep.SHA256, rp.prov.Arch, runtime.Version()))
}
