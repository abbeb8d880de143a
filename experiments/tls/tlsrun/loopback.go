package tlsrun

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"

	"pqrepro/experiments/instruments/capture"
	"pqrepro/experiments/tls/bridgenet"
	"pqrepro/experiments/tls/openssl"
)

// Interface is where the loopback path captures: its servers listen on
// 127.0.0.1. The bridge path captures on bridgenet.Info.ClientIface.
const Interface = "lo"

// loopbackPath is the loopback path (PathLoopback): servers on
// 127.0.0.1, clients in this process's namespace, the capture on lo.
type loopbackPath struct{ logger }

func (*loopbackPath) name() string       { return PathLoopback }
func (*loopbackPath) serverAddr() string { return "127.0.0.1" }
func (*loopbackPath) client(f func())    { f() }
func (*loopbackPath) close()             {}
func (*loopbackPath) info() map[string]any {
	return loopbackInfo()
}

func (*loopbackPath) listen(Config) (net.Listener, error) {
	return net.Listen("tcp", "127.0.0.1:0")
}

// launchers run s_server and s_client natively, here.
func (*loopbackPath) launchers(native openssl.Launcher) (server, client openssl.Launcher, bindIP string) {
	return native, native, "127.0.0.1"
}

// capture captures on lo the loopback servers' ports only: lo carries
// every process's loopback traffic, which would bloat the file and could
// cause drops.
func (p *loopbackPath) capture(ctx context.Context, dir string, servers []*server) (*pathCapture, error) {
	ports := serverPorts(servers, PathLoopback)
	if len(ports) > capture.MaxPorts {
		ports = nil // too many for one filter: the reader ignores the rest
	}
	pc := &pathCapture{path: PathLoopback, iface: Interface, name: CaptureName, file: filepath.Join(dir, CaptureName)}
	c, err := capture.Start(ctx, capture.Options{Interface: Interface, Path: pc.file, Ports: ports})
	if err != nil {
		return nil, fmt.Errorf("tls:run: %w", err)
	}
	pc.c = c
	if ports != nil {
		p.logf("capture: started on %s, TCP ports %s only", Interface, portRange(servers))
	} else {
		p.logf("capture: started on %s, all traffic (%d servers exceed the filter's %d ports)", Interface, len(servers), capture.MaxPorts)
	}
	return pc, nil
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
