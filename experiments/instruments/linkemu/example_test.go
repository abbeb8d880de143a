package linkemu_test

import (
	"context"
	"io"
	"net"
	"os"
	"testing"
	"time"

	"pqrepro/experiments/instruments/linkemu"
)

// TestUsageStartVerified is the package's usage, run: a 25 ms each-way
// link with 1 % loss at 10 Mbit/s is self-tested, then a listener in
// namespace B takes a connection dialled from namespace A. It was a
// compile-only Example; as a test it runs where namespaces and TUN
// devices can be made (CI runs as root) and skips elsewhere.
func TestUsageStartVerified(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skipf("needs root to create network namespaces and TUN devices (running as uid %d)", os.Geteuid())
	}
	if _, err := os.Stat(linkemu.DefaultTunPath); err != nil {
		t.Skipf("no TUN device: %v", err)
	}
	sc := linkemu.Symmetric("wan", linkemu.Direction{
		Delay: 25 * time.Millisecond, Jitter: 2 * time.Millisecond,
		Loss: 1, Rate: 10_000_000, Queue: 64_000,
	}, 42)
	l, rep, err := linkemu.StartVerified(context.Background(), sc, linkemu.Options{}, linkemu.SelfTestConfig{})
	if err != nil {
		t.Fatal(err) // *linkemu.AccuracyError when the link is off
	}
	defer l.Close()
	if rep.P50Ms < 50 {
		t.Errorf("self-test rtt p50 %.1f ms on a 25 ms each-way link, want at least 50", rep.P50Ms)
	}

	var ln net.Listener
	if err := l.RunIn(linkemu.B, func() (err error) {
		ln, err = net.Listen("tcp", net.JoinHostPort(l.Endpoint(linkemu.B).Addr.String(), "4433"))
		return err
	}); err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		if s, err := ln.Accept(); err == nil {
			s.Write([]byte("ok"))
			s.Close()
		}
	}()
	var conn net.Conn
	if err := l.RunIn(linkemu.A, func() (err error) {
		conn, err = net.Dial("tcp", ln.Addr().String())
		return err
	}); err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(10 * time.Second))
	if b, err := io.ReadAll(conn); err != nil || string(b) != "ok" {
		t.Errorf("read %q, %v across the link, want \"ok\"", b, err)
	}
	select {
	case <-l.Done(): // the forwarder died or the context ended
		t.Error(l.Err())
	default:
	}
}
