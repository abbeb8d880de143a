package main

import (
	"context"
	"net"
	"os"
	"slices"
	"strings"
	"testing"
)

// TestSocketCongestion sets the congestion control of a listener and of a
// dialer on real sockets and reads it back with getsockopt
// (TCP_CONGESTION): the accepted connection inherits its listener's, the
// dialed one has its own, and a name the kernel lacks fails the dial.
// Root, because one outside net.ipv4.tcp_allowed_congestion_control may
// be set only with CAP_NET_ADMIN (CI runs as root).
func TestSocketCongestion(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("skipped: setting a congestion control outside the allowed list needs root (CI runs as root)")
	}
	b, err := os.ReadFile("/proc/sys/net/ipv4/tcp_available_congestion_control")
	if err != nil {
		t.Skipf("skipped: %v", err)
	}
	avail := strings.Fields(string(b))
	if !slices.Contains(avail, "reno") || len(avail) < 2 {
		t.Skipf("skipped: want reno and another congestion control, the kernel has %v", avail)
	}
	other := avail[slices.IndexFunc(avail, func(n string) bool { return n != "reno" })]
	lc := net.ListenConfig{Control: setCC(other)}
	ln, err := lc.Listen(context.Background(), "tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan string, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			accepted <- "accept: " + err.Error()
			return
		}
		defer c.Close()
		accepted <- congestion(c)
	}()
	d := net.Dialer{Control: setCC("reno")}
	c, err := d.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if got := congestion(c); got != "reno" {
		t.Errorf("dialed socket reads %q, want reno", got)
	}
	if got := <-accepted; got != other {
		t.Errorf("accepted socket reads %q, want its listener's %q", got, other)
	}
	bad := net.Dialer{Control: setCC("nosuchcc")}
	if c, err := bad.Dial("tcp", ln.Addr().String()); err == nil || !strings.Contains(err.Error(), "TCP_CONGESTION") {
		if c != nil {
			c.Close()
		}
		t.Errorf("unknown congestion control: err %v, want the setsockopt's", err)
	}
}
