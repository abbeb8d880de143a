package capture

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"time"
	"unsafe"

	"github.com/google/gopacket"
	"github.com/google/gopacket/layers"
	"github.com/google/gopacket/pcapgo"
	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"
)

// Options configure a live capture.
type Options struct {
	// Interface is e.g. "lo", a veth or a TUN device, in the network
	// namespace of the thread that calls Start.
	Interface string
	Path      string // the pcapng file to write (atomically, on Stop)
	// SnapLen is the capture length; 0 means 262144, above lo's 65536 MTU
	// so that no loopback frame is cut.
	SnapLen int
	// DropOutgoing filters out PACKET_OUTGOING copies with a BPF program.
	// On lo every frame is seen twice (once outgoing, once incoming), on
	// TUN and veth only once per direction. nil means: true exactly when the
	// interface is a loopback device (IFF_LOOPBACK).
	DropOutgoing *bool
	// Ports, when not empty, keeps only TCP segments (IPv4 or IPv6) whose
	// source or destination port is listed, with a kernel BPF filter, so
	// that a capture on lo holds the run's connections and not every
	// other process's loopback traffic. At most MaxPorts ports; see
	// filterProgram for exactly what passes (non-first IPv4 fragments
	// and IPv6 extension headers do not).
	Ports []uint16
	// RcvBuf is the socket receive buffer in bytes (SO_RCVBUFFORCE); 0 means 64 MiB.
	RcvBuf int
}

// Stats is what a capture measured about itself.
type Stats struct {
	Packets     uint64 // packets written
	KernelSeen  uint64 // tp_packets of PACKET_STATISTICS
	KernelDrops uint64 // tp_drops: packets the kernel dropped for lack of buffer
	Truncated   uint64 // packets cut by the snap length
	SecretBytes int    // bytes of key log written as a Decryption Secrets Block
}

// Valid says whether the capture can be used for measurement: a capture
// with kernel drops or cut packets is missing data and is not valid.
func (s Stats) Valid() error {
	if s.KernelDrops > 0 {
		return fmt.Errorf("capture invalid: the kernel dropped %d of %d packets; lower the handshake rate or raise RcvBuf", s.KernelDrops, s.KernelSeen)
	}
	if s.Truncated > 0 {
		return fmt.Errorf("capture invalid: %d packets were cut by the snap length; raise SnapLen", s.Truncated)
	}
	return nil
}

// Capture is a running AF_PACKET capture. It reads with its own small
// AF_PACKET socket instead of pcapgo.EthernetHandle because that handle
// cannot be woken from a blocking read (no timeout, its descriptor is
// private), so Stop and Ctrl-C would hang until the next packet, and it
// leaves the receive buffer at the kernel default, where bursts of ML-DSA
// flights drop. Writing uses pcapgo.NgWriter.
type Capture struct {
	o        Options
	fd       int
	linkType layers.LinkType
	spool    *os.File
	spoolHdr int64
	w        *pcapgo.NgWriter
	stats    Stats
	secrets  syncBuf
	stop     chan struct{}
	done     chan error
	once     sync.Once
	result   error
}

type syncBuf struct {
	mu sync.Mutex
	b  []byte
}

func (s *syncBuf) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.b = append(s.b, p...)
	return len(p), nil
}

func (s *syncBuf) bytes() []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]byte(nil), s.b...)
}

// ErrNeedRoot is returned (wrapped) when the process may not open packet sockets.
var ErrNeedRoot = errors.New("capturing packets needs root or CAP_NET_RAW: run it with sudo (sudo -E go test ..., sudo pqrepro ...)")

// Start opens the capture socket and starts reading. Nothing is written
// to Path until Stop; if Start fails no file is left behind. When ctx ends
// the capture stops reading; call Stop to write the file.
//
// Start captures in the network namespace of the calling OS thread: to
// capture inside another namespace, lock a goroutine to its thread
// (runtime.LockOSThread), setns(2) into the namespace and call Start
// there. The interface's index, device type and loopback flag come from
// the kernel through the capture socket itself, so no sysfs of that
// namespace needs to be mounted.
func Start(ctx context.Context, o Options) (*Capture, error) {
	if o.SnapLen == 0 {
		o.SnapLen = 262144
	}
	if o.RcvBuf == 0 {
		o.RcvBuf = 64 << 20
	}
	// The socket belongs to the network namespace of the calling thread
	// (a caller inside another namespace must hold its thread with
	// runtime.LockOSThread), and every question about the interface goes
	// to the kernel through it, so the answers are that namespace's.
	//
	// Protocol 0: the socket receives nothing until bind names the protocol
	// (ETH_P_ALL) and the interface (packet(7)), so no packet of another
	// interface, and none that the filter would refuse, is queued before
	// the filter and the binding are in place.
	fd, err := unix.Socket(unix.AF_PACKET, unix.SOCK_RAW|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		if errors.Is(err, unix.EPERM) || errors.Is(err, unix.EACCES) {
			return nil, fmt.Errorf("open AF_PACKET socket: %v: %w", err, ErrNeedRoot)
		}
		return nil, fmt.Errorf("open AF_PACKET socket: %w", err)
	}
	c := &Capture{o: o, fd: fd, stop: make(chan struct{}), done: make(chan error, 1)}
	fail := func(what string, err error) (*Capture, error) {
		unix.Close(fd)
		if c.spool != nil {
			c.spool.Close()
			os.Remove(c.spool.Name())
		}
		return nil, fmt.Errorf("capture on %s: %s: %w", o.Interface, what, err)
	}
	ifc, err := ifaceInfo(fd, o.Interface)
	if err != nil {
		unix.Close(fd)
		return nil, err
	}
	if c.linkType, err = linkTypeOf(ifc.arphrd); err != nil {
		return fail("link type", err)
	}
	drop := ifc.loopback
	if o.DropOutgoing != nil {
		drop = *o.DropOutgoing
	}
	prog, err := filterProgram(uint32(c.linkType), drop, o.Ports, o.SnapLen)
	if err != nil {
		return fail("packet filter", err)
	}
	// The filter goes on before bind so that no unfiltered packet is queued.
	if prog != nil {
		if err := attachFilter(fd, prog); err != nil {
			return fail("attach packet filter", err)
		}
	}
	if err := unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_RCVBUFFORCE, o.RcvBuf); err != nil {
		unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_RCVBUF, o.RcvBuf)
	}
	if err := unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_TIMESTAMPNS, 1); err != nil {
		return fail("enable nanosecond timestamps", err)
	}
	if _, err := awaitArrivalStamps(time.Second); err != nil {
		return fail("wait for arrival timestamps", err)
	}
	tv := unix.NsecToTimeval(int64(20 * time.Millisecond))
	if err := unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &tv); err != nil {
		return fail("set read timeout", err)
	}
	if err := unix.Bind(fd, &unix.SockaddrLinklayer{Protocol: htons(unix.ETH_P_ALL), Ifindex: ifc.index}); err != nil {
		return fail("bind", err)
	}
	// Reading PACKET_STATISTICS resets the kernel's counters: count from here.
	unix.GetsockoptTpacketStats(fd, unix.SOL_PACKET, unix.PACKET_STATISTICS)
	c.spool, err = os.CreateTemp(filepath.Dir(o.Path), "."+filepath.Base(o.Path)+".spool-*")
	if err != nil {
		return fail("create spool file", err)
	}
	c.w, err = pcapgo.NewNgWriterInterface(c.spool, c.ngInterface(), ngOptions())
	if err != nil {
		return fail("start pcapng", err)
	}
	if err := c.w.Flush(); err != nil {
		return fail("start pcapng", err)
	}
	c.spoolHdr, _ = c.spool.Seek(0, io.SeekCurrent)
	go func() { c.done <- c.loop(ctx) }()
	return c, nil
}

func ngOptions() pcapgo.NgWriterOptions {
	return pcapgo.NgWriterOptions{SectionInfo: pcapgo.NgSectionInfo{Application: "pqrepro capture"}}
}

func (c *Capture) ngInterface() pcapgo.NgInterface {
	return pcapgo.NgInterface{Name: c.o.Interface, LinkType: c.linkType, SnapLength: uint32(c.o.SnapLen), TimestampResolution: 9}
}

func htons(v uint16) uint16 { return v<<8 | v>>8 }

// iface is what the kernel says about a network interface.
type iface struct {
	index    int    // ifindex, for bind
	arphrd   uint16 // device type, ARPHRD_* of linux/if_arp.h
	loopback bool   // IFF_LOOPBACK
}

// ifaceInfo asks the kernel about the interface name through fd, with the
// ioctls of netdevice(7). They are SIOCGIFINDEX (ifr_ifindex), SIOCGIFHWADDR
// (the ARPHRD type is the sa_family of ifr_hwaddr) and SIOCGIFFLAGS
// (ifr_flags). The kernel resolves the name in fd's network namespace, the one
// the creating thread was in. (Reading /sys/class/net/NAME/type instead would
// see the namespace of whoever mounted /sys, usually the host's, so a TUN
// device inside a link emulator's namespace would not be found.)
func ifaceInfo(fd int, name string) (iface, error) {
	var r iface
	ifr, err := unix.NewIfreq(name)
	if err != nil {
		return r, fmt.Errorf("capture on %q: %w (interface names have at most %d bytes)", name, err, unix.IFNAMSIZ-1)
	}
	if err := unix.IoctlIfreq(fd, unix.SIOCGIFINDEX, ifr); err != nil {
		if errors.Is(err, unix.ENODEV) {
			return r, fmt.Errorf("capture on %q: no such network interface in this network namespace (list interfaces with 'ip link'; inside a namespace, start the capture from a thread locked into it): %w", name, err)
		}
		return r, fmt.Errorf("capture on %q: interface index (SIOCGIFINDEX): %w", name, err)
	}
	r.index = int(ifr.Uint32())
	if ifr, err = unix.NewIfreq(name); err == nil {
		err = unix.IoctlIfreq(fd, unix.SIOCGIFHWADDR, ifr)
	}
	if err != nil {
		return r, fmt.Errorf("capture on %q: device type (SIOCGIFHWADDR): %w", name, err)
	}
	r.arphrd = ifr.Uint16()
	if ifr, err = unix.NewIfreq(name); err == nil {
		err = unix.IoctlIfreq(fd, unix.SIOCGIFFLAGS, ifr)
	}
	if err != nil {
		return r, fmt.Errorf("capture on %q: interface flags (SIOCGIFFLAGS): %w", name, err)
	}
	r.loopback = ifr.Uint16()&unix.IFF_LOOPBACK != 0
	return r, nil
}

// linkTypeOf maps the interface's ARPHRD type to a pcap link type. Ethernet
// (1) and loopback (772) frames carry an Ethernet header on AF_PACKET,
// ARPHRD_NONE (65534, TUN) frames are raw IP.
func linkTypeOf(arphrd uint16) (layers.LinkType, error) {
	switch arphrd {
	case unix.ARPHRD_ETHER, unix.ARPHRD_LOOPBACK:
		return layers.LinkTypeEthernet, nil
	case unix.ARPHRD_NONE:
		return layers.LinkType(LinkRaw), nil
	}
	return 0, fmt.Errorf("ARPHRD type %d is not supported (Ethernet, loopback, TUN are)", arphrd)
}

// attachFilter attaches a classic BPF program with SO_ATTACH_FILTER.
func attachFilter(fd int, prog []bpf.Instruction) error {
	raw, err := bpf.Assemble(prog)
	if err != nil {
		return err
	}
	sf := make([]unix.SockFilter, len(raw))
	for i, r := range raw {
		sf[i] = unix.SockFilter{Code: r.Op, Jt: r.Jt, Jf: r.Jf, K: r.K}
	}
	return unix.SetsockoptSockFprog(fd, unix.SOL_SOCKET, unix.SO_ATTACH_FILTER, &unix.SockFprog{Len: uint16(len(sf)), Filter: &sf[0]})
}

// KeyLog is a writer for tls.Config.KeyLogWriter: the secrets go into the
// capture file as a Decryption Secrets Block.
func (c *Capture) KeyLog() io.Writer { return &c.secrets }

// drainMax bounds how long a stopping capture keeps reading, should the
// packet timestamps not tell (a wall-clock step backwards during the drain).
const drainMax = 10 * time.Second

// loop reads packets until the capture stops, then drains. It keeps reading
// the packets queued before the stop, and ends at the first read timeout
// (20 ms without a packet) or at the first packet the kernel timestamped
// after the stop was seen. Without that second rule, traffic that never
// pauses (other processes on lo, with no port filter) would keep the drain
// going, and Stop waiting, for as long as the traffic lasts.
func (c *Capture) loop(ctx context.Context) error {
	buf := make([]byte, c.o.SnapLen)
	oob := make([]byte, unix.CmsgSpace(int(unsafe.Sizeof(unix.Timespec{})))+64)
	stopping := false
	var stopAt time.Time
	for {
		if !stopping {
			select {
			case <-c.stop:
				stopping = true
			case <-ctx.Done():
				stopping = true
			default:
			}
			if stopping {
				stopAt = time.Now()
			}
		} else if time.Since(stopAt) > drainMax {
			return nil
		}
		n, oobn, _, _, err := unix.Recvmsg(c.fd, buf, oob, unix.MSG_TRUNC)
		if err != nil {
			if errors.Is(err, unix.EAGAIN) || errors.Is(err, unix.EINTR) {
				if stopping {
					return nil // drained: a full timeout without packets after stop
				}
				continue
			}
			return fmt.Errorf("read packet: %w", err)
		}
		ts, ok := stampOf(oob[:oobn])
		if !ok {
			ts = time.Now()
		}
		if stopping && ts.After(stopAt) {
			return nil // drained: everything queued before the stop is read
		}
		capLen := min(n, len(buf))
		if capLen < n {
			c.stats.Truncated++
		}
		ci := gopacket.CaptureInfo{Timestamp: ts, CaptureLength: capLen, Length: n, InterfaceIndex: 0}
		if err := c.w.WritePacket(ci, buf[:capLen]); err != nil {
			return fmt.Errorf("write packet to %s: %w", c.spool.Name(), err)
		}
		c.stats.Packets++
	}
}

// Stop ends the capture, reads the remaining queued packets, reads the
// kernel's counters and writes the pcapng file atomically. That is,
// section header, interface, the Decryption Secrets Block with the key
// log, the packets, and an Interface Statistics Block with the kernel drop
// count. Stop is safe to call more than once.
func (c *Capture) Stop() (Stats, error) {
	c.once.Do(func() {
		close(c.stop)
		loopErr := <-c.done
		st, err := unix.GetsockoptTpacketStats(c.fd, unix.SOL_PACKET, unix.PACKET_STATISTICS)
		if err == nil {
			c.stats.KernelSeen += uint64(st.Packets)
			c.stats.KernelDrops += uint64(st.Drops)
		}
		unix.Close(c.fd)
		c.result = errors.Join(loopErr, c.finish())
	})
	return c.stats, c.result
}

func (c *Capture) finish() error {
	defer func() {
		c.spool.Close()
		os.Remove(c.spool.Name())
	}()
	if err := c.w.Flush(); err != nil {
		return fmt.Errorf("flush %s: %w", c.spool.Name(), err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(c.o.Path), "."+filepath.Base(c.o.Path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("write capture: %w", err)
	}
	defer os.Remove(tmp.Name()) // no-op after the rename
	bw := bufio.NewWriterSize(tmp, 1<<20)
	w, err := pcapgo.NewNgWriterInterface(bw, c.ngInterface(), ngOptions())
	if err == nil {
		err = w.Flush()
	}
	sec := c.secrets.bytes()
	if err == nil && len(sec) > 0 {
		err = WriteDSB(bw, sec)
		c.stats.SecretBytes = len(sec)
	}
	if err == nil {
		_, err = c.spool.Seek(c.spoolHdr, io.SeekStart)
	}
	if err == nil {
		_, err = io.Copy(bw, c.spool)
	}
	if err == nil {
		err = w.WriteInterfaceStats(0, pcapgo.NgInterfaceStatistics{
			LastUpdate: time.Now(), PacketsReceived: c.stats.KernelSeen, PacketsDropped: c.stats.KernelDrops,
		})
	}
	if err == nil {
		err = w.Flush()
	}
	if err == nil {
		err = bw.Flush()
	}
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), c.o.Path)
	}
	if err != nil {
		return fmt.Errorf("write capture %s: %w", c.o.Path, err)
	}
	return nil
}
