package tlsrun

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"

	"pqrepro/experiments/instruments/capture"
	"pqrepro/experiments/instruments/handshake"
	"pqrepro/experiments/tls/bridgenet"
	"pqrepro/experiments/tls/tlsjoin"
)

// BridgeCaptureName is the bridge path's capture in meta.json Files
// (kept like CaptureName, which is the loopback path's; tlsjoin.CaptureFor
// names every path's).
const BridgeCaptureName = tlsjoin.BridgeCaptureName

// NetnsPrefix starts the names of the namespaces and devices of the
// bridge path: <prefix><pid>-<n>-{c,b,s} (bridgenet.Options.Prefix).
var NetnsPrefix = "pqrb"

// pathCapture is one path's capture: on lo for loopback, on the client's
// veth inside the client namespace for bridge.
type pathCapture struct {
	path, iface, name, file string
	c                       *capture.Capture
	st                      capture.Stats
	stopped                 bool
	err                     error
	// After the run: size and SHA-256 of the uncompressed file, and
	// where it is kept (for the log and meta.json's notes).
	size       int64
	sum, where string
}

// startBridge builds the bridge network when a unit runs on it.
func (r *runner) startBridge(ctx context.Context) error {
	if !hasPath(r.configs, PathBridge) {
		return nil
	}
	n, err := bridgenet.Start(ctx, bridgenet.Options{Prefix: NetnsPrefix, MTU: r.spec.Bridge.MTU, Offloads: r.spec.Bridge.Offloads})
	if err != nil {
		return fmt.Errorf("tls:run: %w", err)
	}
	r.net = n
	r.logf("bridge path: namespaces %s, bridge %s, MTU %d, offloads %s, congestion control %s",
		strings.Join(n.Names(), ", "), n.Info.Bridge, n.Info.MTU, offloadWord(r.spec.Bridge.Offloads), n.Info.CongestionControl["c"])
	return nil
}

func offloadWord(keep bool) string {
	if keep {
		return "as the kernel sets them (Docker's default)"
	}
	return "TSO/GSO/GRO off"
}

// closeBridge removes the bridge network; a failure is logged, since it
// cannot change the run's outcome any more.
func (r *runner) closeBridge() {
	if r.net == nil {
		return
	}
	if err := r.net.Close(); err != nil {
		r.logf("WARNING: %v", err)
		return
	}
	r.vlogf("bridge path: namespaces and devices removed")
}

// listen opens configuration c's listener on its path.
func (r *runner) listen(c Config) (net.Listener, error) {
	if c.Path == PathRemote {
		return r.listenRemote()
	}
	if c.Path == PathDocker {
		return r.listenDocker()
	}
	if c.Path != PathBridge {
		return net.Listen("tcp", "127.0.0.1:0")
	}
	var ln net.Listener
	var err error
	r.net.Server.Do(func() { ln, err = net.Listen("tcp", net.JoinHostPort(bridgenet.ServerAddr, "0")) })
	return ln, err
}

// dial makes one connection of server s from its path's client side.
func (r *runner) dial(ctx context.Context, s *server) (cr handshake.ClientRecord, err error) {
	switch s.cfg.Path {
	case PathBridge:
		r.net.Client.Do(func() { cr, err = s.cli.Dial(ctx, s.addr) })
	case PathDocker:
		r.dock.Client.Do(func() { cr, err = s.cli.Dial(ctx, s.addr) })
	default:
		cr, err = s.cli.Dial(ctx, s.addr)
	}
	return cr, err
}

// startCaptures starts one capture per path of the run, into dir.
func (r *runner) startCaptures(ctx context.Context, dir string) ([]*pathCapture, error) {
	var caps []*pathCapture
	if hasPath(r.configs, PathLoopback) {
		// Only the loopback servers' ports: lo carries every process's
		// loopback traffic, which would bloat the file and could cause
		// drops.
		ports := r.serverPorts(PathLoopback)
		if len(ports) > capture.MaxPorts {
			ports = nil // too many for one filter: the reader ignores the rest
		}
		pc := &pathCapture{path: PathLoopback, iface: Interface, name: CaptureName, file: filepath.Join(dir, CaptureName)}
		c, err := capture.Start(ctx, capture.Options{Interface: Interface, Path: pc.file, Ports: ports})
		if err != nil {
			return caps, fmt.Errorf("tls:run: %w", err)
		}
		pc.c = c
		caps = append(caps, pc)
		if ports != nil {
			r.logf("capture: started on %s, TCP ports %s only", Interface, r.portRange())
		} else {
			r.logf("capture: started on %s, all traffic (%d servers exceed the filter's %d ports)", Interface, len(r.servers), capture.MaxPorts)
		}
	}
	if r.net != nil {
		// The client's side of the bridge, inside its namespace, as a
		// capture in the client container would see it. A veth sees every
		// frame once, so outgoing frames are kept.
		iface := r.net.Info.ClientIface
		pc := &pathCapture{path: PathBridge, iface: iface, name: BridgeCaptureName, file: filepath.Join(dir, BridgeCaptureName)}
		keep := false
		var err error
		r.net.Client.Do(func() {
			pc.c, err = capture.Start(ctx, capture.Options{Interface: iface, Path: pc.file, DropOutgoing: &keep})
		})
		if err != nil {
			return caps, fmt.Errorf("tls:run: bridge path: %w", err)
		}
		caps = append(caps, pc)
		r.logf("capture: started on %s in namespace %s", iface, r.net.Names()[0])
	}
	if pc, err := r.startDockerCapture(ctx, dir); err != nil {
		return caps, err
	} else if pc != nil {
		caps = append(caps, pc)
	}
	pc, err := r.startRemoteCapture(ctx, dir)
	if err != nil {
		return caps, err
	}
	if pc != nil {
		caps = append(caps, pc)
	}
	return caps, nil
}

// stopCaptures stops every capture not yet stopped (safe to call twice).
func stopCaptures(caps []*pathCapture) {
	for _, pc := range caps {
		if !pc.stopped {
			pc.stopped = true
			pc.st, pc.err = pc.c.Stop()
		}
	}
}

// keyLogs maps each path to its capture's key log.
func keyLogs(caps []*pathCapture) map[string]io.Writer {
	m := map[string]io.Writer{}
	for _, pc := range caps {
		m[pc.path] = pc.c.KeyLog()
	}
	return m
}

// loopbackInfo is what meta.json records about the loopback path, read
// from the kernel like bridgenet.Info.
func loopbackInfo() map[string]any {
	info := map[string]any{"path": PathLoopback, "interface": Interface}
	if ifc, err := net.InterfaceByName(Interface); err == nil {
		info["mtu"] = ifc.MTU
	}
	if o, err := bridgenet.ReadOffload(Interface); err == nil {
		info["offloads"] = map[string]bridgenet.Offload{Interface: o}
	}
	if cc, err := os.ReadFile("/proc/sys/net/ipv4/tcp_congestion_control"); err == nil {
		info["congestion_control"] = strings.TrimSpace(string(cc))
	}
	if nd, err := loopbackNoDelay(); err == nil {
		info["tcp_nodelay"] = nd
	}
	return info
}

// loopbackNoDelay reads TCP_NODELAY from a loopback connection made the
// way the runner's clients make theirs (Go's net.Dialer).
func loopbackNoDelay() (bool, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return false, err
	}
	defer ln.Close()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		return false, err
	}
	defer c.Close()
	return bridgenet.NoDelay(c)
}

// pathsMeta is meta.json's measured.paths: per path, MTU, offloads,
// congestion control, TCP_NODELAY and where it was captured.
func (r *runner) pathsMeta(caps []*pathCapture, sums map[string]string) map[string]any {
	out := map[string]any{}
	for _, pc := range caps {
		var info map[string]any
		if pc.path == PathBridge {
			i := r.net.Info
			info = map[string]any{
				"path": PathBridge, "interface": i.ClientIface, "namespaces": i.Namespaces, "bridge": i.Bridge,
				"mtu": i.MTU, "offloads": i.Offloads, "offloads_kernel_default": i.OffloadsDefault,
				"congestion_control": i.CongestionControl["c"], "congestion_control_server": i.CongestionControl["s"],
				"client_addr": i.ClientAddr, "server_addr": i.ServerAddr, "tcp_nodelay": i.TCPNoDelay,
			}
		} else if pc.path == PathRemote {
			info = r.remoteInfo()
		} else if pc.path == PathDocker {
			info = r.dockerInfo()
		} else {
			info = loopbackInfo()
		}
		info["capture"] = pc.name
		info["capture_sha256"] = sums[pc.name]
		info["packets_captured"] = pc.st.Packets
		info["kernel_drops"] = pc.st.KernelDrops
		out[pc.path] = info
	}
	return out
}
