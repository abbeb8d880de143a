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

// startDocker starts the docker path when a unit runs on it.
func (r *runner) startDocker(ctx context.Context) error {
	if !hasPath(r.configs, PathDocker) {
		return nil
	}
	n, err := dockernet.Start(ctx, dockernet.Options{
		Prefix: DockerPrefix, Root: r.buildRoot(), Program: r.stk.program, CertDir: r.stk.certDir,
		MTU: r.spec.Bridge.MTU, Offloads: r.spec.Bridge.Offloads, Log: r.cfg.Log, Verbose: r.cfg.Verbose,
	})
	if err != nil {
		return fmt.Errorf("tls:run: the docker path: %w", err)
	}
	r.dock = n
	// The containers' processes (s_server runs there) are the
	// experiment's in the quiet check, not another job's.
	r.unincludeDocker = quiet.IncludeProcesses(n.Processes)
	i := n.Info
	r.logf("docker path: daemon %s, image %s, network %s (MTU %d), client %s, server %s",
		i.DaemonVersion, i.Image, i.Network, i.MTU, i.ClientAddr, i.ServerAddr)
	return nil
}

// buildRoot is where caches live (RunConfig.BuildRoot, else Root).
func (r *runner) buildRoot() string {
	if r.cfg.BuildRoot != "" {
		return r.cfg.BuildRoot
	}
	return r.cfg.Root
}

// closeDocker removes the docker path's containers, network and image
// and stops the daemon it started; a failure is logged (the run's
// outcome is decided) and `go run mage.go clean` removes what is left.
func (r *runner) closeDocker() {
	if r.dock == nil {
		return
	}
	if r.unincludeDocker != nil {
		r.unincludeDocker()
	}
	if err := r.dock.Close(); err != nil {
		r.logf("WARNING: %v (go run mage.go clean removes what is left)", err)
		return
	}
	r.vlogf("docker path: containers, network, image and daemon removed")
}

// dockerLaunchers run s_server in the server container and s_client
// natively in the client container's namespace (dial).
func (r *runner) dockerLaunchers(native openssl.Launcher) (server, client openssl.Launcher, bindIP string, err error) {
	if r.dock == nil {
		return server, client, "", fmt.Errorf("the docker path is not running")
	}
	server = openssl.Launcher{
		Argv: r.dock.ServerArgv,
		Listening: func(addr string) (up bool, err error) {
			r.dock.Server.Do(func() { up, err = openssl.ListeningTCP(addr) })
			return up, err
		},
		File: func(p string) string {
			rel, err := filepath.Rel(r.stk.certDir, p)
			if err != nil || strings.HasPrefix(rel, "..") {
				return p
			}
			return filepath.Join(dockernet.CertMount, rel)
		},
	}
	return server, native, r.dock.Info.ClientAddr, nil
}

// listenDocker reserves configuration c's port in the server container's
// namespace; the Serve of the CLI closes it and s_server binds the same
// address inside the container.
func (r *runner) listenDocker() (ln net.Listener, err error) {
	r.dock.Server.Do(func() { ln, err = net.Listen("tcp", net.JoinHostPort(r.dock.Info.ServerAddr, "0")) })
	return ln, err
}

// startDockerCapture starts the capture on the client container's eth0.
func (r *runner) startDockerCapture(ctx context.Context, dir string) (*pathCapture, error) {
	if r.dock == nil {
		return nil, nil
	}
	iface := r.dock.Info.ClientIface
	pc := &pathCapture{path: PathDocker, iface: iface, name: DockerCaptureName, file: filepath.Join(dir, DockerCaptureName)}
	keep := false
	var err error
	r.dock.Client.Do(func() {
		pc.c, err = capture.Start(ctx, capture.Options{Interface: iface, Path: pc.file, DropOutgoing: &keep})
	})
	if err != nil {
		return nil, fmt.Errorf("tls:run: docker path: %w", err)
	}
	r.logf("capture: started on %s in the client container %s", iface, r.dock.Info.ClientContainer)
	return pc, nil
}

// dockerInfo is meta.json's measured.paths entry of the docker path.
func (r *runner) dockerInfo() map[string]any {
	i := r.dock.Info
	return map[string]any{
		"path": PathDocker, "interface": i.ClientIface, "daemon": i.DaemonVersion, "daemon_started": i.DaemonStarted,
		"image": i.Image, "image_files": i.ImageFiles, "compose_file_sha256": i.ComposeSHA256, "compose": i.Compose,
		"network": i.Network, "bridge": i.Bridge, "mtu": i.MTU, "offloads": i.Offloads,
		"congestion_control": i.CongestionControl["client"], "congestion_control_server": i.CongestionControl["server"],
		"client_addr": i.ClientAddr, "server_addr": i.ServerAddr, "containers": []string{i.ClientContainer, i.ServerContainer},
	}
}
