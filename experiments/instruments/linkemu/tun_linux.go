package linkemu

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// DefaultTunPath is the TUN clone device (Documentation/networking/tuntap.rst).
const DefaultTunPath = "/dev/net/tun"

// checkTunAccess opens the clone device once, before anything is created,
// so that the error can say exactly why the emulator cannot run here.
func checkTunAccess(path string) error {
	fd, err := unix.Open(path, unix.O_RDWR|unix.O_CLOEXEC, 0)
	if err == nil {
		unix.Close(fd)
		return nil
	}
	var st unix.Stat_t
	statErr := unix.Stat(path, &st)
	switch {
	case errors.Is(err, unix.ENOENT):
		return fmt.Errorf("open %s: %w: the kernel has no TUN device node here (load the tun module, or in a container bind-mount /dev/net/tun)", path, err)
	case errors.Is(err, unix.EACCES) || errors.Is(err, unix.EPERM):
		detail := ""
		if statErr == nil {
			detail = fmt.Sprintf("; it is mode %04o owned by uid %d gid %d and this process runs as uid %d gid %d",
				st.Mode&0o7777, st.Uid, st.Gid, os.Geteuid(), os.Getegid())
		}
		return fmt.Errorf("open %s: %w%s: run as root, or make the device usable by this user (e.g. mode 0666, as many distributions ship it) and run inside 'unshare -Urnm'", path, err, detail)
	case errors.Is(err, unix.ENODEV) || errors.Is(err, unix.ENXIO):
		return fmt.Errorf("open %s: %w: the device node exists but the kernel has no TUN driver (CONFIG_TUN); modprobe tun", path, err)
	}
	return fmt.Errorf("open %s: %w", path, err)
}

// tunConfig is what configureTun sets on a new device.
type tunConfig struct {
	path   string // clone device
	name   string // interface name wanted
	mtu    int
	txqlen int
	addr   netip.Prefix // IPv4 address and subnet of this end
}

// createTun must run on a thread inside the target namespace. It brings up
// lo, creates a TUN device (IFF_TUN|IFF_NO_PI: raw IP packets, no 4-byte
// packet-information header), disables IPv6 on it so that the kernel sends
// no router solicitations or MLD reports over the emulated link, and sets
// MTU, transmit queue length, IPv4 address and netmask (which installs the
// connected route to the peer), then brings it up. The returned descriptor
// is non-blocking; the forwarder polls it together with its stop eventfd.
func createTun(c tunConfig) (int, string, error) {
	fd, err := unix.Open(c.path, unix.O_RDWR|unix.O_CLOEXEC|unix.O_NONBLOCK, 0)
	if err != nil {
		return -1, "", fmt.Errorf("open %s: %w", c.path, err)
	}
	ok := false
	defer func() {
		if !ok {
			unix.Close(fd)
		}
	}()
	ifr, err := unix.NewIfreq(c.name)
	if err != nil {
		return -1, "", fmt.Errorf("tun name %q: %w", c.name, err)
	}
	ifr.SetUint16(unix.IFF_TUN | unix.IFF_NO_PI)
	if err := unix.IoctlIfreq(fd, unix.TUNSETIFF, ifr); err != nil {
		return -1, "", fmt.Errorf("TUNSETIFF %s: %w (needs CAP_NET_ADMIN in the namespace's user namespace)", c.name, err)
	}
	name := ifr.Name()

	sock, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return -1, "", fmt.Errorf("socket for interface ioctls: %w", err)
	}
	defer unix.Close(sock)

	if err := setUp(sock, "lo"); err != nil {
		return -1, "", err
	}
	v6 := "/proc/sys/net/ipv6/conf/" + name + "/disable_ipv6"
	if err := os.WriteFile(v6, []byte("1\n"), 0); err != nil && !errors.Is(err, os.ErrNotExist) {
		return -1, "", fmt.Errorf("disable IPv6 on %s: %w", name, err)
	}
	set := func(req uint, what string, fill func(*unix.Ifreq) error) error {
		r, _ := unix.NewIfreq(name)
		if err := fill(r); err != nil {
			return fmt.Errorf("%s on %s: %w", what, name, err)
		}
		if err := unix.IoctlIfreq(sock, req, r); err != nil {
			return fmt.Errorf("%s on %s: %w", what, name, err)
		}
		return nil
	}
	addr := c.addr.Addr().As4()
	bits := c.addr.Bits()
	m := uint32(0xffffffff) << (32 - bits)
	netmask := []byte{byte(m >> 24), byte(m >> 16), byte(m >> 8), byte(m)}
	steps := []struct {
		req  uint
		what string
		fill func(*unix.Ifreq) error
	}{
		{unix.SIOCSIFMTU, "set mtu", func(r *unix.Ifreq) error { r.SetUint32(uint32(c.mtu)); return nil }},
		{unix.SIOCSIFADDR, "set address " + c.addr.String(), func(r *unix.Ifreq) error { return r.SetInet4Addr(addr[:]) }},
		{unix.SIOCSIFNETMASK, "set netmask", func(r *unix.Ifreq) error { return r.SetInet4Addr(netmask) }},
	}
	for _, s := range steps {
		if err := set(s.req, s.what, s.fill); err != nil {
			return -1, "", err
		}
	}
	if err := setTxQueueLen(sock, name, c.txqlen); err != nil {
		return -1, "", err
	}
	if err := setUp(sock, name); err != nil {
		return -1, "", err
	}
	ok = true
	return fd, name, nil
}

// setUp sets IFF_UP (and keeps the other flags) on an interface.
func setUp(sock int, name string) error {
	r, err := unix.NewIfreq(name)
	if err != nil {
		return fmt.Errorf("interface %q: %w", name, err)
	}
	if err := unix.IoctlIfreq(sock, unix.SIOCGIFFLAGS, r); err != nil {
		return fmt.Errorf("get flags of %s: %w", name, err)
	}
	r.SetUint16(r.Uint16() | unix.IFF_UP)
	if err := unix.IoctlIfreq(sock, unix.SIOCSIFFLAGS, r); err != nil {
		return fmt.Errorf("bring %s up: %w", name, err)
	}
	return nil
}

// setTxQueueLen sets the transmit queue length with an rtnetlink RTM_NEWLINK
// carrying IFLA_TXQLEN (rtnetlink(7)). For TUN that is the packets the kernel
// holds for the reader before it drops, default 500. The older SIOCSIFTXQLEN
// ioctl is refused with EPERM inside a user namespace on current kernels,
// netlink is not.
func setTxQueueLen(sock int, name string, qlen int) error {
	r, err := unix.NewIfreq(name)
	if err != nil {
		return err
	}
	if err := unix.IoctlIfreq(sock, unix.SIOCGIFINDEX, r); err != nil {
		return fmt.Errorf("index of %s: %w", name, err)
	}
	index := int32(r.Uint32())
	nl, err := unix.Socket(unix.AF_NETLINK, unix.SOCK_RAW|unix.SOCK_CLOEXEC, unix.NETLINK_ROUTE)
	if err != nil {
		return fmt.Errorf("netlink socket: %w", err)
	}
	defer unix.Close(nl)
	// nlmsghdr | ifinfomsg | rtattr(IFLA_TXQLEN, u32)
	const attrLen = unix.SizeofRtAttr + 4
	total := unix.SizeofNlMsghdr + unix.SizeofIfInfomsg + attrLen
	msg := make([]byte, total)
	ne := binary.NativeEndian
	ne.PutUint32(msg[0:4], uint32(total))
	ne.PutUint16(msg[4:6], unix.RTM_NEWLINK)
	ne.PutUint16(msg[6:8], unix.NLM_F_REQUEST|unix.NLM_F_ACK)
	ne.PutUint32(msg[8:12], 1) // sequence
	info := msg[unix.SizeofNlMsghdr:]
	info[0] = unix.AF_UNSPEC
	ne.PutUint32(info[4:8], uint32(index))
	attr := info[unix.SizeofIfInfomsg:]
	ne.PutUint16(attr[0:2], attrLen)
	ne.PutUint16(attr[2:4], unix.IFLA_TXQLEN)
	ne.PutUint32(attr[4:8], uint32(qlen))
	if err := unix.Sendto(nl, msg, 0, &unix.SockaddrNetlink{Family: unix.AF_NETLINK}); err != nil {
		return fmt.Errorf("set txqueuelen of %s: netlink send: %w", name, err)
	}
	buf := make([]byte, 4096)
	n, _, err := unix.Recvfrom(nl, buf, 0)
	if err != nil {
		return fmt.Errorf("set txqueuelen of %s: netlink receive: %w", name, err)
	}
	msgs, err := syscall.ParseNetlinkMessage(buf[:n])
	if err != nil {
		return fmt.Errorf("set txqueuelen of %s: %w", name, err)
	}
	for _, m := range msgs {
		if m.Header.Type == unix.NLMSG_ERROR && len(m.Data) >= 4 {
			if code := int32(ne.Uint32(m.Data[0:4])); code != 0 {
				return fmt.Errorf("set txqueuelen of %s to %d: %w", name, qlen, unix.Errno(-code))
			}
			return nil
		}
	}
	return fmt.Errorf("set txqueuelen of %s: no netlink acknowledgement", name)
}
