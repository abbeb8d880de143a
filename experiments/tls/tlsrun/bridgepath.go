package tlsrun

import (
	"context"
	"fmt"
	"net"
	"os/exec"
	"path/filepath"
	"strings"

	"pqrepro/experiments/instruments/capture"
	"pqrepro/experiments/tls/bridgenet"
	"pqrepro/experiments/tls/openssl"
	"pqrepro/experiments/tls/tlsjoin"
)

// BridgeCaptureName is the bridge path's capture in meta.json Files
// (kept like CaptureName, which is the loopback path's; tlsjoin.CaptureFor
// names every path's).
const BridgeCaptureName = tlsjoin.BridgeCaptureName

// NetnsPrefix starts the names of the namespaces and devices of the
// bridge path: <prefix><pid>-<n>-{c,b,s} (bridgenet.Options.Prefix).
var NetnsPrefix = "pqrb"

// bridgePath is the bridge path (PathBridge): client and server in two
// namespaces joined through a Linux bridge (experiments/tls/bridgenet).
type bridgePath struct {
	logger
	net *bridgenet.Net
}

// startBridge builds the bridge network.
func (r *runner) startBridge(ctx context.Context) (path, error) {
	n, err := bridgenet.Start(ctx, bridgenet.Options{Prefix: NetnsPrefix, MTU: r.spec.Bridge.MTU, Offloads: r.spec.Bridge.Offloads})
	if err != nil {
		return nil, fmt.Errorf("tls:run: %w", err)
	}
	r.logf("bridge path: namespaces %s, bridge %s, MTU %d, offloads %s, congestion control %s",
		strings.Join(n.Names(), ", "), n.Info.Bridge, n.Info.MTU, offloadWord(r.spec.Bridge.Offloads), n.Info.CongestionControl["c"])
	return &bridgePath{logger: r.logger, net: n}, nil
}

func offloadWord(keep bool) string {
	if keep {
		return "as the kernel sets them (Docker's default)"
	}
	return "TSO/GSO/GRO off"
}

func (*bridgePath) name() string       { return PathBridge }
func (*bridgePath) serverAddr() string { return bridgenet.ServerAddr }

// client runs f on the client namespace's thread.
func (p *bridgePath) client(f func()) { p.net.Client.Do(f) }

// listen reserves a port on the server namespace's address.
func (p *bridgePath) listen(Config) (ln net.Listener, err error) {
	p.net.Server.Do(func() { ln, err = net.Listen("tcp", net.JoinHostPort(bridgenet.ServerAddr, "0")) })
	return ln, err
}

// launchers start s_server on the server namespace's thread; s_client
// starts in dial, on the client namespace's thread, so the process it
// starts is born there.
func (p *bridgePath) launchers(native openssl.Launcher) (server, client openssl.Launcher, bindIP string) {
	server = native
	server.Start = func(cmd *exec.Cmd) (err error) {
		p.net.Server.Do(func() { err = cmd.Start() })
		return err
	}
	server.Listening = func(addr string) (up bool, err error) {
		p.net.Server.Do(func() { up, err = openssl.ListeningTCP(addr) })
		return up, err
	}
	return server, native, bridgenet.ClientAddr
}

// capture captures the client's side of the bridge, inside its
// namespace, as a capture in the client container would see it. A veth
// sees every frame once, so outgoing frames are kept.
func (p *bridgePath) capture(ctx context.Context, dir string, _ []*server) (*pathCapture, error) {
	iface := p.net.Info.ClientIface
	pc := &pathCapture{path: PathBridge, iface: iface, name: BridgeCaptureName, file: filepath.Join(dir, BridgeCaptureName)}
	keep := false
	var err error
	p.net.Client.Do(func() {
		pc.c, err = capture.Start(ctx, capture.Options{Interface: iface, Path: pc.file, DropOutgoing: &keep})
	})
	if err != nil {
		return nil, fmt.Errorf("tls:run: bridge path: %w", err)
	}
	p.logf("capture: started on %s in namespace %s", iface, p.net.Names()[0])
	return pc, nil
}

func (p *bridgePath) done() <-chan struct{} { return p.net.Done() }

// failure is the network's error: someone removed a namespace or device
// mid-run (bridgenet.ErrRemoved).
func (p *bridgePath) failure(error) error {
	if err := p.net.Err(); err != nil {
		return fmt.Errorf("%w; the run was removed and every namespace and device it created is being removed", err)
	}
	return nil
}

// info is measured.paths.bridge.
func (p *bridgePath) info() map[string]any {
	i := p.net.Info
	return map[string]any{
		"path": PathBridge, "interface": i.ClientIface, "namespaces": i.Namespaces, "bridge": i.Bridge,
		"mtu": i.MTU, "offloads": i.Offloads, "offloads_kernel_default": i.OffloadsDefault,
		"congestion_control": i.CongestionControl["c"], "congestion_control_server": i.CongestionControl["s"],
		"client_addr": i.ClientAddr, "server_addr": i.ServerAddr, "tcp_nodelay": i.TCPNoDelay,
	}
}

// close removes the bridge network.
func (p *bridgePath) close() {
	if err := p.net.Close(); err != nil {
		p.logf("WARNING: %v", err)
		return
	}
	p.vlogf("bridge path: namespaces and devices removed")
}
