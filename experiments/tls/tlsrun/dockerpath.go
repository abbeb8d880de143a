package tlsrun

import (
	"context"
	"fmt"
	"net"
	"path/filepath"
	"strings"

	"pqrepro/experiments/instruments/capture"
	"pqrepro/experiments/tls/dockernet"
	"pqrepro/experiments/tls/openssl"
	"pqrepro/experiments/tls/tlsjoin"
	"pqrepro/internal/quiet"
)

// The docker path (PathDocker): a private Docker daemon, two containers
// of an image holding only the openssl program and the libraries it
// links, on a Compose bridge network (experiments/tls/dockernet). s_server
// runs inside the server container (docker exec, one per configuration);
// every s_client starts on a thread that has joined the client
// container's network namespace, so its packets leave through the
// container's eth0 and the Compose bridge exactly as a client in the
// container's would (its program is read from this host's file system,
// the one difference from `docker exec`, outside the handshake). The
// capture runs on the client container's eth0 inside that namespace.

// DockerPrefix starts the names of the docker path's project, network,
// containers and image: <prefix><pid> (dockernet.Options.Prefix).
var DockerPrefix = dockernet.DefaultPrefix

// DockerCaptureName is the docker path's capture in meta.json's files.
var DockerCaptureName = tlsjoin.CaptureFor(PathDocker)

// dockerUnavailable says why this host cannot run the docker path (no
// Docker engine to install or start), nil when it can; tests replace it.
var dockerUnavailable = dockernet.Available

// dockerPath is the docker path (PathDocker): a private daemon's client
// and server containers on a Compose network (experiments/tls/dockernet).
type dockerPath struct {
	logger
	dock    *dockernet.Net
	certDir string // the openssl-cli stack's PEM files, mounted read-only in the server container
	// uninclude removes the containers' processes from the quiet
	// check's experiment (quiet.IncludeProcesses).
	uninclude func()
}

// startDocker starts the docker path's daemon, image and containers.
func (r *runner) startDocker(ctx context.Context) (path, error) {
	var program string // the docker path runs the openssl-cli stack only (cellSupported)
	if r.cli != nil {
		program = r.cli.program
	}
	n, err := dockernet.Start(ctx, dockernet.Options{
		Prefix: DockerPrefix, Root: r.buildRoot(), Program: program, CertDir: r.stk.certDir,
		MTU: r.spec.Bridge.MTU, Offloads: r.spec.Bridge.Offloads, Log: r.cfg.Log, Verbose: r.cfg.Verbose,
	})
	if err != nil {
		return nil, fmt.Errorf("tls:run: the docker path: %w", err)
	}
	// The containers' processes (s_server runs there) are the
	// experiment's in the quiet check, not another job's.
	p := &dockerPath{logger: r.logger, dock: n, certDir: r.stk.certDir, uninclude: quiet.IncludeProcesses(n.Processes)}
	i := n.Info
	r.logf("docker path: daemon %s, image %s, network %s (MTU %d), client %s, server %s",
		i.DaemonVersion, i.Image, i.Network, i.MTU, i.ClientAddr, i.ServerAddr)
	return p, nil
}

// buildRoot is where caches live (RunConfig.BuildRoot, else Root).
func (r *runner) buildRoot() string {
	if r.cfg.BuildRoot != "" {
		return r.cfg.BuildRoot
	}
	return r.cfg.Root
}

func (*dockerPath) name() string         { return PathDocker }
func (p *dockerPath) serverAddr() string { return p.dock.Info.ServerAddr }

// client runs f on a thread in the client container's network namespace.
func (p *dockerPath) client(f func()) { p.dock.Client.Do(f) }

// close removes the docker path's containers, network and image and
// stops the daemon it started; `go run mage.go clean` removes what a
// failure leaves.
func (p *dockerPath) close() {
	if p.uninclude != nil {
		p.uninclude()
	}
	if err := p.dock.Close(); err != nil {
		p.logf("WARNING: %v (go run mage.go clean removes what is left)", err)
		return
	}
	p.vlogf("docker path: containers, network, image and daemon removed")
}

// launchers run s_server in the server container and s_client
// natively in the client container's namespace (client).
func (p *dockerPath) launchers(native openssl.Launcher) (server, client openssl.Launcher, bindIP string) {
	server = openssl.Launcher{
		Argv: p.dock.ServerArgv,
		Listening: func(addr string) (up bool, err error) {
			p.dock.Server.Do(func() { up, err = openssl.ListeningTCP(addr) })
			return up, err
		},
		File: func(f string) string {
			rel, err := filepath.Rel(p.certDir, f)
			if err != nil || strings.HasPrefix(rel, "..") {
				return f
			}
			return filepath.Join(dockernet.CertMount, rel)
		},
	}
	return server, native, p.dock.Info.ClientAddr
}

// listen reserves configuration c's port in the server container's
// namespace. The Serve of the CLI closes it and s_server binds the same
// address inside the container.
func (p *dockerPath) listen(Config) (ln net.Listener, err error) {
	p.dock.Server.Do(func() { ln, err = net.Listen("tcp", net.JoinHostPort(p.dock.Info.ServerAddr, "0")) })
	return ln, err
}

// capture captures on the client container's eth0.
func (p *dockerPath) capture(ctx context.Context, dir string, _ []*server) (*pathCapture, error) {
	iface := p.dock.Info.ClientIface
	pc := &pathCapture{path: PathDocker, iface: iface, name: DockerCaptureName, file: filepath.Join(dir, DockerCaptureName)}
	keep := false
	var err error
	p.dock.Client.Do(func() {
		pc.c, err = capture.Start(ctx, capture.Options{Interface: iface, Path: pc.file, DropOutgoing: &keep})
	})
	if err != nil {
		return nil, fmt.Errorf("tls:run: docker path: %w", err)
	}
	p.logf("capture: started on %s in the client container %s", iface, p.dock.Info.ClientContainer)
	return pc, nil
}

func (p *dockerPath) done() <-chan struct{} { return p.dock.Done() }

// failure is the containers' error: a container that died or a network
// someone removed.
func (p *dockerPath) failure(error) error {
	if err := p.dock.Err(); err != nil {
		return fmt.Errorf("docker path: %w; the run was removed and its containers, network and image are being removed", err)
	}
	return nil
}

// info is measured.paths.docker.
func (p *dockerPath) info() map[string]any {
	i := p.dock.Info
	return map[string]any{
		"path": PathDocker, "interface": i.ClientIface, "daemon": i.DaemonVersion, "daemon_started": i.DaemonStarted,
		"image": i.Image, "image_files": i.ImageFiles, "compose_file_sha256": i.ComposeSHA256, "compose": i.Compose,
		"network": i.Network, "bridge": i.Bridge, "mtu": i.MTU, "offloads": i.Offloads,
		"congestion_control": i.CongestionControl["client"], "congestion_control_server": i.CongestionControl["server"],
		"client_addr": i.ClientAddr, "server_addr": i.ServerAddr, "containers": []string{i.ClientContainer, i.ServerContainer},
	}
}
