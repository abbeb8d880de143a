package capture

import (
	"bytes"
	"errors"
	"net/netip"
	"strings"
	"testing"
	"time"
)

// TestNoHelloFlowsBounded: flows that never carry a ClientHello are
// dropped past the cap or the idle time, counted, and said in Warnings;
// the handshakes among them are read as before.
func TestNoHelloFlowsBounded(t *testing.T) {
	sy := newSynth(LinkEthernet)
	sy.conn(cli4, srv4, synthOpts{group: 0x11ec}) // a handshake first
	for i := range 5000 {
		c := netip.AddrPortFrom(netip.AddrFrom4([4]byte{10, 9, byte(i >> 8), byte(i)}), uint16(2000+i))
		sy.frame(c, srv4, uint32(i), 0, flagSYN, nil)
	}
	late := netip.AddrPortFrom(netip.AddrFrom4([4]byte{10, 8, 0, 1}), 40000)
	sy.conn(late, srv4, synthOpts{group: 0x11ec}) // and one after the flood
	capture := sy.buf.Bytes()

	for _, tc := range []struct {
		name    string
		opt     ReadOptions
		dropped int64
	}{
		{"cap", ReadOptions{NoHelloMax: 100, NoHelloIdle: time.Hour}, 4900},
		{"idle", ReadOptions{NoHelloMax: 1 << 20, NoHelloIdle: time.Millisecond}, 4900}, // frames are 10 µs apart: all but the last 100 idle out
		{"defaults", ReadOptions{}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := Read(bytes.NewReader(capture), tc.opt)
			if err != nil {
				t.Fatal(err)
			}
			if res.DroppedNoHello < tc.dropped || res.DroppedNoHello > tc.dropped+20 {
				t.Errorf("dropped %d flows, want about %d", res.DroppedNoHello, tc.dropped)
			}
			if len(res.Records) != 2 || !res.Records[0].Complete || !res.Records[1].Complete {
				t.Errorf("records %+v: want the two handshakes, complete", res.Records)
			}
			warned := strings.Contains(strings.Join(res.Warnings(), "\n"), "flows that carried no ClientHello")
			if warned != (tc.dropped > 0) {
				t.Errorf("warnings %q", res.Warnings())
			}
		})
	}
}

// TestKeyLogLongLine: a key log line longer than any TLS secret is
// rejected with its line number, before any packet is read.
func TestKeyLogLongLine(t *testing.T) {
	sy := newSynth(LinkEthernet)
	sy.conn(cli4, srv4, synthOpts{group: 0x11ec})
	good := "CLIENT_HANDSHAKE_TRAFFIC_SECRET " + strings.Repeat("ab", 32) + " " + strings.Repeat("cd", 48) + "\n"
	keylog := "# a comment\n" + good + "CLIENT_RANDOM " + strings.Repeat("ab", 32) + " " + strings.Repeat("0", 1<<20) + "\n"
	_, err := Read(bytes.NewReader(sy.buf.Bytes()), ReadOptions{KeyLog: []byte(keylog)})
	if err == nil || !strings.Contains(err.Error(), "line 3") || !strings.Contains(err.Error(), "longer than any key log line") {
		t.Fatalf("error %v, want line 3 refused as too long", err)
	}
	var d *DamageError
	if errors.As(err, &d) {
		t.Errorf("a bad key log is not damage of the capture: %v", err)
	}
	if _, err := Read(bytes.NewReader(sy.buf.Bytes()), ReadOptions{KeyLog: []byte(good)}); err != nil {
		t.Errorf("a key log line of the longest secret refused: %v", err)
	}
}

// maxConnBytes is the upper bound docs/security.md states for the
// reader's state per live connection that carries no payload (a SYN):
// the conn struct, its map entry and its queue slot.
const maxConnBytes = 1600

// BenchmarkReadSYNFlood reads a capture of flows that only send a SYN,
// under the cap (so every flow stays live until the end), and reports the
// heap each live flow holds (live-B/conn, measured after a GC with the
// reader's state still reachable); it fails when that exceeds
// maxConnBytes. Run with -benchmem for the allocations per read; the
// memory figures, unlike times, do not depend on the machine's load.
func BenchmarkReadSYNFlood(b *testing.B) {
	const n = 10_000
	capture := synFlood(n)
	var perConn float64
	for b.Loop() {
		heap, t := liveAfterRead(b, capture, ReadOptions{NoHelloMax: n + 1})
		if len(t.conns) != n {
			b.Fatalf("%d live flows, want %d", len(t.conns), n)
		}
		perConn = float64(heap) / n
	}
	b.ReportMetric(perConn, "live-B/conn")
	if perConn > maxConnBytes {
		b.Fatalf("%.0f bytes of state per live connection, more than the %d docs/security.md states", perConn, maxConnBytes)
	}
}
