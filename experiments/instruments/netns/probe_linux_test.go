package netns

import (
	"context"
	"errors"
	"net"
	"os"
	"strings"
	"testing"
	"time"
)

// TestProbe joins this process's own namespace twice (setns needs root,
// as every user of the package): a reachable address passes and use sees
// the connection, use's error is returned, an address nobody has fails.
func TestProbe(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("skipped: joining a network namespace (setns) needs root; CI runs as root")
	}
	th, err := NewThread("/proc/self/ns/net")
	if err != nil {
		t.Fatal(err)
	}
	defer th.Close()
	ctx := context.Background()
	seen := false
	if err := Probe(ctx, th, th, "127.0.0.1", time.Second, func(c net.Conn) error { seen = c != nil; return nil }); err != nil || !seen {
		t.Fatalf("Probe on loopback: %v (use saw a connection: %v)", err, seen)
	}
	boom := errors.New("boom")
	if err := Probe(ctx, th, th, "127.0.0.1", time.Second, func(net.Conn) error { return boom }); !errors.Is(err, boom) {
		t.Fatalf("Probe = %v, want use's error", err)
	}
	// 192.0.2.1 (TEST-NET-1, RFC 5737) is nobody's address here.
	if err := Probe(ctx, th, th, "192.0.2.1", time.Second, nil); err == nil || !strings.Contains(err.Error(), "probe listener") {
		t.Fatalf("Probe on an address nobody has = %v, want the listener's error", err)
	}
}
