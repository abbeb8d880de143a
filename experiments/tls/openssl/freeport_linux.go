package openssl

import (
	"fmt"
	"net"
	"syscall"
)

// FreePort asks the kernel for a TCP port on ip (IPv4) the way connect
// would pick one: a socket without SO_REUSEADDR bound to port 0, read back
// and closed. Without SO_REUSEADDR the kernel skips every port that has a
// socket in TIME_WAIT (inet_csk_get_port), so the 4-tuple s_client then
// binds with -bind cannot collide with a connection of the run that has
// just closed. Go's net.Listen sets SO_REUSEADDR, hence the raw socket.
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
