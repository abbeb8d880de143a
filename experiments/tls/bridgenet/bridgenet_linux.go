// Package bridgenet builds Study A's container-like network path. It is a
// client and a server network namespace, each with one veth device whose
// peer is a port of a Linux bridge, MTU 1500, as Docker's default bridge
// network joins two containers (docker0, one veth pair per container,
// 172.17.0.0/16, MTU 1500; Docker documentation, "Bridge network
// driver").
//
//	netns <prefix><pid>-<n>-c     netns <prefix><pid>-<n>-b           netns <prefix><pid>-<n>-s
//	  "<prefix>-eth0" 172.17.0.2 ==== "<prefix>-vc" [bridge "<prefix>-br0"] "<prefix>-vs" ==== "<prefix>-eth0" 172.17.0.3
//
// One difference from Docker, on purpose: the bridge lives in a namespace
// of its own rather than in the host's, so that nothing this package
// creates touches the host's interfaces, and removing the three namespaces
// removes every device (a crash leaves only named namespaces, which
// linkemu.Clean with the same prefix removes). The forwarding path
// (veth -> bridge -> veth, one softirq hop) is the same.
//
// Namespaces and devices are made with iproute2 (`ip`); offloads are read
// and set with the SIOCETHTOOL ioctl. Start records what it built (MTU,
// offloads, congestion control) in Info, for meta.json.
package bridgenet

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"pqrepro/experiments/instruments/netns"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"pqrepro/internal/deps"
)

// Defaults of Options.
const (
	DefaultPrefix = "pqb"
	DefaultMTU    = 1500 // Docker's default bridge network
	// NetnsDir is where iproute2 keeps named namespaces.
	NetnsDir = "/run/netns"
	// Addresses of the client and server, Docker's first two container
	// addresses on its default bridge (the bridge itself is 172.17.0.1).
	ClientAddr = "172.17.0.2"
	ServerAddr = "172.17.0.3"
)

// ErrRemoved is returned (wrapped) by Err when a namespace, the bridge or
// a veth device of the network disappeared while it was up.
var ErrRemoved = errors.New("the bridge network was removed while in use")

// Options configures Start.
type Options struct {
	// Prefix starts every namespace and device name; "" is DefaultPrefix.
	// Device names are "<prefix>-br0", "-vc", "-vs", "-eth0": at most 10
	// characters of prefix fit Linux's 15.
	Prefix string
	// MTU of the bridge and every veth device; 0 is DefaultMTU.
	MTU int
	// Offloads keeps the veth devices' TSO, GSO and GRO as the kernel
	// (and Docker) leaves them; false turns all three off on every veth,
	// so that a capture sees frames of at most MTU bytes (see Info).
	Offloads bool
	// Poll is how often the watcher checks that the network is intact;
	// 0 is 50 ms.
	Poll time.Duration
}

// Offload is one device's segmentation and receive offloads, read back
// from the kernel after Start set them.
type Offload struct {
	TSO bool `json:"tso"` // tx-tcp-segmentation
	GSO bool `json:"gso"` // generic-segmentation-offload
	GRO bool `json:"gro"` // generic-receive-offload
}

// Info is what the network is, as read back from the kernel.
type Info struct {
	Path       string             `json:"path"` // "bridge"
	Namespaces []string           `json:"namespaces"`
	Bridge     string             `json:"bridge"`
	MTU        int                `json:"mtu"`      // the client device's MTU
	Offloads   map[string]Offload `json:"offloads"` // by "<namespace side>/<device>": c/<prefix>-eth0, b/<prefix>-vc, ...
	// OffloadsDefault says whether the offloads were left as the kernel
	// made them (Docker's behaviour) or turned off for the capture.
	OffloadsDefault bool `json:"offloads_default"`
	// CongestionControl is net.ipv4.tcp_congestion_control in the client
	// and server namespaces.
	CongestionControl map[string]string `json:"congestion_control"`
	ClientAddr        string            `json:"client_addr"`
	ServerAddr        string            `json:"server_addr"`
	ClientIface       string            `json:"client_iface"`
	// TCPNoDelay is TCP_NODELAY as read from a connection the client
	// namespace dialled with Go's net package (which sets it by default).
	TCPNoDelay bool `json:"tcp_nodelay"`
}

// Net is a running bridge network.
type Net struct {
	// Client and Server run functions inside the client and server
	// namespaces: sockets created there belong to them.
	Client, Server *Thread
	Info           Info

	opts   Options
	names  [3]string // c, b, s namespace names
	bridge *Thread
	dev    struct{ br, vc, vs, eth string }

	stop     chan struct{}
	watchWG  sync.WaitGroup
	done     chan struct{}
	err      atomic.Pointer[error]
	closeMu  sync.Mutex
	closed   bool
	closeErr error
}

// Requirements lists what Start needs: iproute2's ip.
func Requirements() []deps.Requirement {
	return []deps.Requirement{{Name: "ip", Why: "Study A's bridge path creates namespaces, a bridge and veth pairs", Present: deps.Command("ip"), Apt: []string{"iproute2"}}}
}

var seq atomic.Int64

// Start builds the bridge path and checks that it carries TCP.
//
// It creates the namespaces, the bridge and the veth pairs, sets MTU and
// offloads, brings everything up, checks that the server answers a TCP
// connection from the client namespace and starts the watcher. On any
// error everything it created is removed. ctx bounds the setup only.
func Start(ctx context.Context, o Options) (n *Net, err error) {
	if o.Prefix == "" {
		o.Prefix = DefaultPrefix
	}
	if len(o.Prefix) > 10 || strings.ContainsAny(o.Prefix, "/ \t") {
		return nil, fmt.Errorf("bridge network: prefix %q: want at most 10 characters, no spaces or slashes", o.Prefix)
	}
	if o.MTU == 0 {
		o.MTU = DefaultMTU
	}
	if o.MTU < 1280 || o.MTU > 65535 {
		return nil, fmt.Errorf("bridge network: MTU %d out of range 1280..65535", o.MTU)
	}
	if o.Poll <= 0 {
		o.Poll = 50 * time.Millisecond
	}
	if _, err := exec.LookPath("ip"); err != nil {
		return nil, fmt.Errorf("bridge network: %w: install iproute2 (apt-get install iproute2)", err)
	}
	base := fmt.Sprintf("%s%d-%d-", o.Prefix, os.Getpid(), seq.Add(1))
	n = &Net{opts: o, names: [3]string{base + "c", base + "b", base + "s"}, stop: make(chan struct{}), done: make(chan struct{})}
	n.dev.br, n.dev.vc, n.dev.vs, n.dev.eth = o.Prefix+"-br0", o.Prefix+"-vc", o.Prefix+"-vs", o.Prefix+"-eth0"
	// The returns below set n to nil on an error before this runs: tear
	// down what was built through its own reference.
	built := n
	defer func() {
		if err != nil {
			built.teardown()
			n = nil
		}
	}()
	c, b, s := n.names[0], n.names[1], n.names[2]
	mtu := strconv.Itoa(o.MTU)
	steps := [][]string{
		{"netns", "add", c}, {"netns", "add", b}, {"netns", "add", s},
		{"-n", b, "link", "add", n.dev.br, "mtu", mtu, "type", "bridge"},
		{"-n", b, "link", "add", n.dev.vc, "mtu", mtu, "type", "veth", "peer", "name", n.dev.eth, "netns", c, "mtu", mtu},
		{"-n", b, "link", "add", n.dev.vs, "mtu", mtu, "type", "veth", "peer", "name", n.dev.eth, "netns", s, "mtu", mtu},
		{"-n", b, "link", "set", n.dev.vc, "master", n.dev.br},
		{"-n", b, "link", "set", n.dev.vs, "master", n.dev.br},
		{"-n", c, "addr", "add", ClientAddr + "/16", "dev", n.dev.eth},
		{"-n", s, "addr", "add", ServerAddr + "/16", "dev", n.dev.eth},
	}
	for _, st := range steps {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("bridge network: setup interrupted: %w", err)
		}
		if err := ip(st...); err != nil {
			return nil, err
		}
	}
	if n.Client, err = NewThread(filepath.Join(NetnsDir, c)); err != nil {
		return nil, err
	}
	if n.Server, err = NewThread(filepath.Join(NetnsDir, s)); err != nil {
		return nil, err
	}
	if n.bridge, err = NewThread(filepath.Join(NetnsDir, b)); err != nil {
		return nil, err
	}
	n.Info = Info{Path: "bridge", Namespaces: n.names[:], Bridge: n.dev.br, OffloadsDefault: o.Offloads,
		Offloads: map[string]Offload{}, CongestionControl: map[string]string{},
		ClientAddr: ClientAddr, ServerAddr: ServerAddr, ClientIface: n.dev.eth}
	sides := []struct {
		side string
		th   *Thread
		devs []string
	}{{"c", n.Client, []string{n.dev.eth}}, {"b", n.bridge, []string{n.vcvs()[0], n.vcvs()[1]}}, {"s", n.Server, []string{n.dev.eth}}}
	for _, sd := range sides {
		var ferr error
		sd.th.Do(func() {
			for _, d := range sd.devs {
				if !o.Offloads {
					if ferr = DisableOffloads(d); ferr != nil {
						return
					}
				}
				var off Offload
				if off, ferr = ReadOffload(d); ferr != nil {
					return
				}
				n.Info.Offloads[sd.side+"/"+d] = off
			}
		})
		if ferr != nil {
			return nil, fmt.Errorf("bridge network: offloads in %s: %w", sd.side, ferr)
		}
	}
	up := [][]string{
		{"-n", b, "link", "set", n.dev.br, "up"}, {"-n", b, "link", "set", n.dev.vc, "up"}, {"-n", b, "link", "set", n.dev.vs, "up"},
		{"-n", c, "link", "set", "lo", "up"}, {"-n", c, "link", "set", n.dev.eth, "up"},
		{"-n", s, "link", "set", "lo", "up"}, {"-n", s, "link", "set", n.dev.eth, "up"},
	}
	for _, st := range up {
		if err := ip(st...); err != nil {
			return nil, err
		}
	}
	for side, th := range map[string]*Thread{"c": n.Client, "s": n.Server} {
		var cc []byte
		var rerr error
		th.Do(func() { cc, rerr = os.ReadFile("/proc/sys/net/ipv4/tcp_congestion_control") })
		if rerr != nil {
			return nil, fmt.Errorf("bridge network: read congestion control in %s: %w", side, rerr)
		}
		n.Info.CongestionControl[side] = strings.TrimSpace(string(cc))
	}
	var ierr error
	n.Client.Do(func() {
		var ifc *net.Interface
		if ifc, ierr = net.InterfaceByName(n.dev.eth); ierr == nil {
			n.Info.MTU = ifc.MTU
		}
	})
	if ierr != nil {
		return nil, fmt.Errorf("bridge network: %w", ierr)
	}
	if err := n.probe(ctx); err != nil {
		return nil, err
	}
	n.watchWG.Add(1)
	go n.watch()
	return n, nil
}

func (n *Net) vcvs() [2]string { return [2]string{n.dev.vc, n.dev.vs} }

// probe waits until a TCP connection from the client namespace reaches a
// listener in the server namespace and reads TCP_NODELAY from it. The bridge
// ports take a moment to forward after they come up.
func (n *Net) probe(ctx context.Context) error {
	err := netns.Probe(ctx, n.Client, n.Server, ServerAddr, 5*time.Second, func(c net.Conn) (err error) {
		n.Info.TCPNoDelay, err = NoDelay(c)
		return err
	})
	if err != nil {
		return fmt.Errorf("bridge network: the server namespace: %w", err)
	}
	return nil
}

// watch polls the network until Close and records the first sign that a
// part of it was removed by someone else.
func (n *Net) watch() {
	defer n.watchWG.Done()
	t := time.NewTicker(n.opts.Poll)
	defer t.Stop()
	for {
		select {
		case <-n.stop:
			return
		case <-t.C:
		}
		if err := n.check(); err != nil {
			e := fmt.Errorf("%w: %v", ErrRemoved, err)
			n.err.Store(&e)
			close(n.done)
			return
		}
	}
}

// check says what is missing: a namespace name, the bridge, or a port.
func (n *Net) check() error {
	for _, name := range n.names {
		if _, err := os.Stat(filepath.Join(NetnsDir, name)); err != nil {
			return fmt.Errorf("namespace %s is gone", name)
		}
	}
	var err error
	n.bridge.Do(func() {
		for _, d := range []string{n.dev.br, n.dev.vc, n.dev.vs} {
			ifc, e := net.InterfaceByName(d)
			if e != nil {
				err = fmt.Errorf("device %s in namespace %s is gone", d, n.names[1])
				return
			}
			if ifc.Flags&net.FlagUp == 0 {
				err = fmt.Errorf("device %s in namespace %s is down", d, n.names[1])
				return
			}
		}
	})
	return err
}

// Done is closed when the watcher found the network damaged; Err then
// says how.
func (n *Net) Done() <-chan struct{} { return n.done }

// Err is nil while the network is intact, else an error wrapping
// ErrRemoved.
func (n *Net) Err() error {
	if p := n.err.Load(); p != nil {
		return *p
	}
	return nil
}

// NoDelay reads TCP_NODELAY of a TCP connection from the kernel.
func NoDelay(c net.Conn) (bool, error) {
	tc, ok := c.(*net.TCPConn)
	if !ok {
		return false, fmt.Errorf("not a TCP connection: %T", c)
	}
	rc, err := tc.SyscallConn()
	if err != nil {
		return false, err
	}
	var v int
	var gerr error
	if err := rc.Control(func(fd uintptr) { v, gerr = unix.GetsockoptInt(int(fd), unix.IPPROTO_TCP, unix.TCP_NODELAY) }); err != nil {
		return false, err
	}
	if gerr != nil {
		return false, fmt.Errorf("getsockopt TCP_NODELAY: %w", gerr)
	}
	return v != 0, nil
}

// Names returns the namespaces' names (client, bridge, server).
func (n *Net) Names() []string { return n.names[:] }

// Close stops the watcher and the threads and deletes the three
// namespaces, which deletes the bridge and the veth devices with them. It
// may be called more than once; it returns the first call's error.
func (n *Net) Close() error {
	n.closeMu.Lock()
	defer n.closeMu.Unlock()
	if n.closed {
		return n.closeErr
	}
	n.closed = true
	close(n.stop)
	n.watchWG.Wait()
	n.closeErr = n.teardown()
	return n.closeErr
}

// teardown closes the threads (which hold the namespaces) and deletes
// every namespace name; the kernel then destroys the devices.
func (n *Net) teardown() error {
	for _, th := range []*Thread{n.Client, n.Server, n.bridge} {
		if th != nil {
			th.Close()
		}
	}
	var errs []error
	for _, name := range n.names {
		p := filepath.Join(NetnsDir, name)
		if _, err := os.Stat(p); errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err := ip("netns", "del", name); err != nil {
			errs = append(errs, err)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("bridge network cleanup: %w; remove the namespaces by hand with `ip netns del`", err)
	}
	return nil
}

func ip(args ...string) error {
	cmd := exec.Command("ip", args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("ip %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return nil
}

// Thread is a goroutine locked to an OS thread that joined a network
// namespace for good (netns.Thread).
type Thread = netns.Thread

// NewThread starts a Thread in the namespace at nsPath.
func NewThread(nsPath string) (*Thread, error) { return netns.NewThread(nsPath) }

// Legacy ethtool commands (linux/ethtool.h); the kernel maps them onto
// the netdev features tx-tcp-segmentation, tx-generic-segmentation and
// rx-gro.
const (
	ethtoolGTSO = 0x1e
	ethtoolSTSO = 0x1f
	ethtoolGGSO = 0x23
	ethtoolSGSO = 0x24
	ethtoolGGRO = 0x2b
	ethtoolSGRO = 0x2c
)

type ethtoolValue struct{ cmd, data uint32 }

type ifreqData struct {
	name [unix.IFNAMSIZ]byte
	data unsafe.Pointer
	_    [16]byte
}

// ethtool runs one ethtool_value command on dev in the calling thread's
// namespace.
func ethtool(dev string, cmd, data uint32) (uint32, error) {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return 0, fmt.Errorf("ethtool socket: %w", err)
	}
	defer unix.Close(fd)
	v := ethtoolValue{cmd: cmd, data: data}
	var ifr ifreqData
	copy(ifr.name[:], dev)
	ifr.data = unsafe.Pointer(&v)
	_, _, errno := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), unix.SIOCETHTOOL, uintptr(unsafe.Pointer(&ifr)))
	runtime.KeepAlive(&v)
	if errno != 0 {
		return 0, fmt.Errorf("ethtool %#x on %s: %w", cmd, dev, errno)
	}
	return v.data, nil
}

func ethtoolSet(dev string, cmd, data uint32) error {
	_, err := ethtool(dev, cmd, data)
	return err
}

// DisableOffloads turns TSO, GSO and GRO off on dev in the calling
// thread's network namespace.
//
// The docker path's devices use it too. With offloads off a capture
// there sees frames of at most the MTU.
func DisableOffloads(dev string) error {
	for _, cmd := range []uint32{ethtoolSTSO, ethtoolSGSO, ethtoolSGRO} {
		if err := ethtoolSet(dev, cmd, 0); err != nil {
			return err
		}
	}
	return nil
}

// ReadOffload reads dev's TSO, GSO and GRO in the calling thread's
// network namespace.
func ReadOffload(dev string) (Offload, error) {
	var o Offload
	for _, f := range []struct {
		cmd uint32
		p   *bool
	}{{ethtoolGTSO, &o.TSO}, {ethtoolGGSO, &o.GSO}, {ethtoolGGRO, &o.GRO}} {
		v, err := ethtool(dev, f.cmd, 0)
		if err != nil {
			return o, err
		}
		*f.p = v != 0
	}
	return o, nil
}
