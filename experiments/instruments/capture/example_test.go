package capture_test

import (
	"context"
	"io"
	"net"
	"os"
	"path/filepath"
	"testing"

	"pqrepro/experiments/instruments/capture"
)

// TestUsageStart is the package's usage, run: capture one server's
// traffic on lo, keeping only its port, then check the capture is
// valid. It was a compile-only Example; as a test it runs where
// AF_PACKET is allowed (CI runs as root) and skips elsewhere.
func TestUsageStart(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("skipped: live capture on lo needs root or CAP_NET_RAW (CI runs tests as root; locally run with sudo -E go test)")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	port := uint16(ln.Addr().(*net.TCPAddr).Port)

	c, err := capture.Start(context.Background(), capture.Options{
		Interface: "lo",
		Path:      filepath.Join(t.TempDir(), "run.pcapng"),
		Ports:     []uint16{port},
	})
	if err != nil {
		t.Fatal(err) // wraps capture.ErrNeedRoot without root
	}
	// One connection to the port: a TLS run would pass
	// tls.Config{KeyLogWriter: c.KeyLog()} here.
	go func() {
		if s, err := ln.Accept(); err == nil {
			io.Copy(io.Discard, s)
			s.Close()
		}
	}()
	conn, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	conn.Write([]byte("hello"))
	conn.Close()

	st, err := c.Stop()
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Valid(); err != nil {
		t.Fatal(err) // kernel drops or cut packets
	}
	// SYN, SYN-ACK, ACK and the data segment at least (lo's outgoing
	// copies are dropped by default).
	if st.Packets < 4 {
		t.Errorf("captured %d packets of one connection, want at least 4", st.Packets)
	}
}
