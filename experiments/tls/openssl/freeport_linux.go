package openssl

import (
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// FreePort asks the kernel for a TCP port on ip (IPv4) the way connect
// would pick one. That is, a socket without SO_REUSEADDR bound to port 0,
// read back and closed. Without SO_REUSEADDR the kernel skips every port
// that has a socket in TIME_WAIT (inet_csk_get_port), so the 4-tuple
// s_client then binds with -bind cannot collide with a connection of the
// run that has just closed. Go's net.Listen sets SO_REUSEADDR, hence the
// raw socket.
func FreePort(ip string) (int, error) {
	a := net.ParseIP(ip).To4()
	if a == nil {
		return 0, fmt.Errorf("free port: %q is not an IPv4 address", ip)
	}
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		return 0, fmt.Errorf("free port: socket: %w", err)
	}
	defer syscall.Close(fd)
	sa := &syscall.SockaddrInet4{}
	copy(sa.Addr[:], a)
	if err := syscall.Bind(fd, sa); err != nil {
		return 0, fmt.Errorf("free port: bind %s:0: %w", ip, err)
	}
	got, err := syscall.Getsockname(fd)
	if err != nil {
		return 0, fmt.Errorf("free port: getsockname: %w", err)
	}
	return got.(*syscall.SockaddrInet4).Port, nil
}

// ListeningTCP reports whether a TCP socket listens on addr (an IPv4
// ip:port) in the calling thread's network namespace.
//
// It reads /proc/thread-self/net/tcp (state 0A is TCP_LISTEN).
// s_server -brief prints nothing when it starts listening, so its
// Serve polls this.
func ListeningTCP(addr string) (bool, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return false, err
	}
	ip := net.ParseIP(host).To4()
	if ip == nil {
		return false, fmt.Errorf("%q is not an IPv4 address", addr)
	}
	p, err := strconv.Atoi(port)
	if err != nil {
		return false, err
	}
	// /proc/net/tcp prints the address as the little-endian uint32 in hex.
	want := fmt.Sprintf("%02X%02X%02X%02X:%04X", ip[3], ip[2], ip[1], ip[0], p)
	raw, err := os.ReadFile("/proc/thread-self/net/tcp")
	if err != nil {
		return false, err
	}
	for _, line := range strings.Split(string(raw), "\n")[1:] {
		f := strings.Fields(line)
		if len(f) > 3 && f[1] == want && f[3] == "0A" {
			return true, nil
		}
	}
	return false, nil
}
