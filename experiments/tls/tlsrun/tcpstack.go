package tlsrun

import (
	"fmt"

	"pqrepro/experiments/instruments/linkemu"
	"pqrepro/experiments/instruments/netns"
	"pqrepro/experiments/instruments/tcpns"
	"pqrepro/internal/tcpstack"
)

// readTCPStacks reads the TCP stack where each path's clients and servers
// run, for meta.json's measured.tcp_stack.
//
// Keys are "<path>/client" and "<path>/server". A path whose servers run
// in the clients' namespace (loopback) or on another host (remote) has
// only "<path>/client". A stack that cannot be read is an error before
// any handshake.
func (r *runner) readTCPStacks() (map[string]tcpstack.Stack, error) {
	out := map[string]tcpstack.Stack{}
	type side struct {
		side, iface string
		in          tcpns.In
	}
	for _, p := range r.paths {
		iface, _ := p.info()["interface"].(string)
		sides := []side{{"client", iface, func(fn func() error) (err error) { p.client(func() { err = fn() }); return err }}}
		if th, siface := serverThread(p); th != nil {
			sides = append(sides, side{"server", siface, tcpns.Thread(th)})
		}
		for _, sd := range sides {
			st, err := tcpns.Read(sd.in, []string{sd.iface})
			if err != nil {
				return nil, fmt.Errorf("%s path, %s side: %w", p.name(), sd.side, err)
			}
			out[p.name()+"/"+sd.side] = st
		}
	}
	return out, nil
}

// serverThread is the thread in the namespace where path p's servers run
// and their interface. It is nil when they run in the clients' namespace or
// on another host.
func serverThread(p path) (*netns.Thread, string) {
	switch p := p.(type) {
	case *bridgePath:
		return p.net.Server, p.net.Info.ClientIface // the same device name on both sides
	case *dockerPath:
		return p.dock.Server, p.dock.Info.ClientIface
	case *emulatedPath:
		return p.srv, p.link.Endpoint(linkemu.B).Iface
	}
	return nil, ""
}
