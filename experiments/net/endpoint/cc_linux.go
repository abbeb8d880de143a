package main

import (
	"fmt"
	"net"
	"strings"
	"syscall"
	"unsafe"
)

// setCC returns a Control function that sets a socket's congestion control
// (TCP_CONGESTION) before it connects or listens. It is nil for "", which
// leaves the namespace's default; a listener passes its setting to the
// connections it accepts.
func setCC(name string) func(network, address string, c syscall.RawConn) error {
	if name == "" {
		return nil
	}
	return func(network, address string, c syscall.RawConn) error {
		var serr error
		if err := c.Control(func(fd uintptr) {
			serr = syscall.SetsockoptString(int(fd), syscall.IPPROTO_TCP, syscall.TCP_CONGESTION, name)
		}); err != nil {
			return err
		}
		if serr != nil {
			return fmt.Errorf("setsockopt TCP_CONGESTION %q: %w (one outside net.ipv4.tcp_allowed_congestion_control needs root)", name, serr)
		}
		return nil
	}
}

// congestion reads the congestion control a connection runs under
// (getsockopt TCP_CONGESTION); "" when c is not a TCP socket or the read
// fails.
func congestion(c net.Conn) string {
	tc, ok := c.(*net.TCPConn)
	if !ok {
		return ""
	}
	rc, err := tc.SyscallConn()
	if err != nil {
		return ""
	}
	buf := make([]byte, 16) // TCP_CA_NAME_MAX
	n := uint32(len(buf))
	var errno syscall.Errno
	if err := rc.Control(func(fd uintptr) {
		_, _, errno = syscall.Syscall6(syscall.SYS_GETSOCKOPT, fd, syscall.IPPROTO_TCP, syscall.TCP_CONGESTION,
			uintptr(unsafe.Pointer(&buf[0])), uintptr(unsafe.Pointer(&n)), 0)
	}); err != nil || errno != 0 {
		return ""
	}
	return strings.TrimRight(string(buf[:min(int(n), len(buf))]), "\x00")
}
