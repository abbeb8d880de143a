package dockernet

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"pqrepro/experiments/instruments/netns"
	"pqrepro/experiments/tls/bridgenet"
)

// container is what docker inspect says about one of the two.
type container struct {
	Name  string
	State struct {
		Pid     int
		Running bool
	}
	NetworkSettings struct {
		Networks map[string]struct{ IPAddress string }
	}
}

// joinContainers finds the two containers, their addresses and network,
// and starts a thread in each one's network namespace.
func (n *Net) joinContainers(ctx context.Context) error {
	byService := map[string]container{}
	for _, svc := range []string{"client", "server"} {
		out, err := n.tools.docker(ctx, n.st.socket(), "ps", "-q", "--filter", "label=com.docker.compose.project="+n.st.Project, "--filter", "label=com.docker.compose.service="+svc)
		if err != nil {
			return err
		}
		ids := strings.Fields(out)
		if len(ids) != 1 {
			return fmt.Errorf("compose project %s: %d running %s containers, want 1", n.st.Project, len(ids), svc)
		}
		js, err := n.tools.docker(ctx, n.st.socket(), "inspect", ids[0])
		if err != nil {
			return err
		}
		var cs []container
		if err := json.Unmarshal([]byte(js), &cs); err != nil || len(cs) != 1 {
			return fmt.Errorf("docker inspect %s: %v", ids[0], err)
		}
		c := cs[0]
		if !c.State.Running || c.State.Pid <= 0 || len(c.NetworkSettings.Networks) != 1 {
			return fmt.Errorf("container %s: running %v, pid %d, %d networks: want running on one network", c.Name, c.State.Running, c.State.Pid, len(c.NetworkSettings.Networks))
		}
		byService[svc] = c
	}
	for name, nw := range byService["client"].NetworkSettings.Networks {
		n.Info.Network, n.Info.ClientAddr = name, nw.IPAddress
	}
	for _, nw := range byService["server"].NetworkSettings.Networks {
		n.Info.ServerAddr = nw.IPAddress
	}
	n.Info.ClientContainer = strings.TrimPrefix(byService["client"].Name, "/")
	n.Info.ServerContainer = strings.TrimPrefix(byService["server"].Name, "/")
	n.Info.ClientIface = Iface
	var err error
	n.containerPIDs = []int{byService["client"].State.Pid, byService["server"].State.Pid}
	if n.Client, err = netns.NewThread(fmt.Sprintf("/proc/%d/ns/net", byService["client"].State.Pid)); err != nil {
		return fmt.Errorf("the client container's namespace: %w", err)
	}
	if n.Server, err = netns.NewThread(fmt.Sprintf("/proc/%d/ns/net", byService["server"].State.Pid)); err != nil {
		return fmt.Errorf("the server container's namespace: %w", err)
	}
	n.logf(false, "docker path: network %s, client %s (%s), server %s (%s)", n.Info.Network, n.Info.ClientContainer, n.Info.ClientAddr, n.Info.ServerContainer, n.Info.ServerAddr)
	return nil
}

// settings sets and reads back offloads, reads MTU and congestion control.
func (n *Net) settings(ctx context.Context) error {
	off := Offloads{Default: n.opts.Offloads, Devices: map[string]bridgenet.Offload{}}
	n.Info.CongestionControl = map[string]string{}
	for _, side := range []struct {
		name string
		th   *netns.Thread
	}{{"client", n.Client}, {"server", n.Server}} {
		var idx, mtu int
		var o bridgenet.Offload
		var cc []byte
		var err error
		side.th.Do(func() {
			var ifc *net.Interface
			if ifc, err = net.InterfaceByName(Iface); err != nil {
				return
			}
			idx, mtu = ifc.Index, ifc.MTU
			if !n.opts.Offloads {
				if err = bridgenet.DisableOffloads(Iface); err != nil {
					return
				}
			}
			if o, err = bridgenet.ReadOffload(Iface); err != nil {
				return
			}
			cc, err = os.ReadFile("/proc/sys/net/ipv4/tcp_congestion_control")
		})
		if err != nil {
			return fmt.Errorf("the %s container's %s: %w", side.name, Iface, err)
		}
		off.Devices[side.name+"/"+Iface] = o
		n.Info.CongestionControl[side.name] = strings.TrimSpace(string(cc))
		if side.name == "client" {
			n.Info.MTU = mtu
		}
		peer, err := hostPeer(n.Info.Bridge, idx)
		if err != nil {
			return fmt.Errorf("the %s container's host-side veth: %w", side.name, err)
		}
		if !n.opts.Offloads {
			if err := bridgenet.DisableOffloads(peer); err != nil {
				return fmt.Errorf("host-side veth %s: %w", peer, err)
			}
		}
		if o, err = bridgenet.ReadOffload(peer); err != nil {
			return fmt.Errorf("host-side veth %s: %w", peer, err)
		}
		off.Devices["host/"+peer] = o
	}
	n.Info.Offloads = off
	if n.Info.MTU != n.opts.MTU {
		return fmt.Errorf("the client container's %s has MTU %d, want %d (compose.yaml's driver option)", Iface, n.Info.MTU, n.opts.MTU)
	}
	n.logf(true, "docker path: MTU %d, offloads %+v, congestion control %v", n.Info.MTU, off, n.Info.CongestionControl)
	return nil
}

// sysNet is where the host's devices are listed (tests replace it).
var sysNet = "/sys/class/net"

// hostPeer is the port of bridge whose veth peer has index peerIndex in
// its container (a veth's iflink is its peer's index).
func hostPeer(bridge string, peerIndex int) (string, error) {
	ports, err := os.ReadDir(filepath.Join(sysNet, bridge, "brif"))
	if err != nil {
		return "", err
	}
	var found []string
	for _, p := range ports {
		b, err := os.ReadFile(filepath.Join(sysNet, p.Name(), "iflink"))
		if err == nil && strings.TrimSpace(string(b)) == strconv.Itoa(peerIndex) {
			found = append(found, p.Name())
		}
	}
	if len(found) != 1 {
		return "", fmt.Errorf("bridge %s has %d ports linked to index %d, want 1", bridge, len(found), peerIndex)
	}
	return found[0], nil
}

// probe waits until a TCP connection from the client container reaches a
// listener in the server container's namespace.
func (n *Net) probe(ctx context.Context) error {
	if err := netns.Probe(ctx, n.Client, n.Server, n.Info.ServerAddr, 10*time.Second, nil); err != nil {
		return fmt.Errorf("the server container: %w", err)
	}
	return nil
}
