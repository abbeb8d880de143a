package capture

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"runtime"
	"strings"
	"testing"
)

// helloFlood writes a capture of n flows that each send a SYN and a
// minimal ClientHello and then nothing: no ServerHello, no Finished, no
// FIN (the reader's worst case for flows that make records).
func helloFlood(n int) []byte {
	sy := newSynth(LinkEthernet)
	ch := clientHello(34)
	for i := range n {
		c := netip.AddrPortFrom(netip.AddrFrom4([4]byte{10, byte(i >> 16), byte(i >> 8), byte(i)}), uint16(1024+i%60000))
		sy.frame(c, srv4, 1000, 0, flagSYN, nil)
		sy.frame(c, srv4, 1001, 0, flagACK, ch)
	}
	return sy.buf.Bytes()
}

// liveAfterRead reads capture as Read does and returns the heap the
// reader's state holds after the last packet (after a GC, before the
// records are made), with the tracker for inspection.
func liveAfterRead(tb testing.TB, capture []byte, opt ReadOptions) (int64, *tracker) {
	src, err := NewSource(bytes.NewReader(capture))
	if err != nil {
		tb.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	t := newTrackerFor(opt)
	var seg segment
	for {
		p, err := src.Next()
		if err != nil {
			break
		}
		if decode(p.LinkType, p.Data, &seg) == decOK {
			t.packet(&seg, p.TsNs)
		}
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(t)
	return int64(after.HeapAlloc) - int64(before.HeapAlloc), t
}

// BenchmarkReadHelloFlood reads 100,000 flows that send a ClientHello and
// never finish and reports the heap the reader's state holds per flow at
// the end (live-B/flow) and the flows it holds (live-flows). Run with
// -benchmem; the memory figures do not depend on the machine's load.
func BenchmarkReadHelloFlood(b *testing.B) {
	const n = 100_000
	capture := helloFlood(n)
	var live int64
	var t *tracker
	for b.Loop() {
		live, t = liveAfterRead(b, capture, ReadOptions{})
	}
	b.ReportMetric(float64(live)/n, "live-B/flow")
	b.ReportMetric(float64(len(t.conns)), "live-flows")
}

// TestUnfinishedFlowsBounded: flows that send a ClientHello and never
// finish are dropped past the cap, oldest first, counted and said in
// Warnings; handshakes before and after the flood are read as before.
func TestUnfinishedFlowsBounded(t *testing.T) {
	sy := newSynth(LinkEthernet)
	sy.conn(cli4, srv4, synthOpts{group: 0x11ec})
	ch := clientHello(34)
	for i := range 5000 {
		c := netip.AddrPortFrom(netip.AddrFrom4([4]byte{10, 9, byte(i >> 8), byte(i)}), uint16(2000+i))
		sy.frame(c, srv4, 1000, 0, flagSYN, nil)
		sy.frame(c, srv4, 1001, 0, flagACK, ch)
	}
	late := netip.AddrPortFrom(netip.AddrFrom4([4]byte{10, 8, 0, 1}), 40000)
	sy.conn(late, srv4, synthOpts{group: 0x11ec})
	capture := sy.buf.Bytes()

	// The late handshake is unfinished too between its ClientHello and
	// its Finished: then the flood's oldest flow gives way to it as well.
	for _, tc := range []struct {
		name    string
		opt     ReadOptions
		dropped int64
		kept    int // the flood's flows kept: its newest ones
	}{
		{"cap", ReadOptions{UnfinishedMax: 100}, 4901, 99},
		{"cap of two", ReadOptions{UnfinishedMax: 2}, 4999, 1},
		{"cap of one", ReadOptions{UnfinishedMax: 1}, 5000, 0},
		{"defaults", ReadOptions{}, 0, 5000},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := Read(bytes.NewReader(capture), tc.opt)
			if err != nil {
				t.Fatal(err)
			}
			if res.DroppedUnfinished != tc.dropped {
				t.Errorf("dropped %d flows, want %d", res.DroppedUnfinished, tc.dropped)
			}
			complete, incomplete := 0, 0
			for _, r := range res.Records {
				if r.Complete {
					complete++
				} else {
					incomplete++
				}
			}
			if complete != 2 || incomplete != tc.kept {
				t.Fatalf("%d complete and %d incomplete records, want 2 and %d", complete, incomplete, tc.kept)
			}
			if i := 5000 - tc.kept; tc.kept > 0 {
				if want := fmt.Sprintf("10.9.%d.%d:%d", i>>8, i&255, 2000+i); res.Records[1].Client != want {
					t.Errorf("oldest flood flow kept is %s, want %s (the oldest go first)", res.Records[1].Client, want)
				}
			}
			warned := strings.Contains(strings.Join(res.Warnings(), "\n"), "sent a ClientHello but no client Finished")
			if warned != (tc.dropped > 0) {
				t.Errorf("warnings %q", res.Warnings())
			}
		})
	}
}

// TestHelloFloodMemoryBounded: under the default cap, the reader's state
// after 40,000 unfinished flows holds at most DefaultUnfinishedMax of them
// and at most maxConnBytes of heap each (before the cap: every flow, 32 MB).
func TestHelloFloodMemoryBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("reads 40,000 flows")
	}
	const n = 40_000
	live, tr := liveAfterRead(t, helloFlood(n), ReadOptions{})
	if len(tr.conns) > DefaultUnfinishedMax {
		t.Errorf("%d flows held, want at most %d", len(tr.conns), DefaultUnfinishedMax)
	}
	if tr.droppedUnfinished != n-DefaultUnfinishedMax {
		t.Errorf("dropped %d, want %d", tr.droppedUnfinished, n-DefaultUnfinishedMax)
	}
	if limit := int64(DefaultUnfinishedMax * maxConnBytes); live > limit {
		t.Errorf("reader state holds %d bytes after %d unfinished flows, want at most %d", live, n, limit)
	}
}

// endless is a reader of zero bytes without end, like /dev/zero.
type endless struct{ n int64 }

func (e *endless) Read(p []byte) (int, error) {
	clear(p)
	e.n += int64(len(p))
	return len(p), nil
}

// TestReadKeyLogBounded: a key log up to MaxKeyLog is read whole; a
// longer or endless one is refused having read at most a buffer past the
// cap, and Read refuses one given in memory.
func TestReadKeyLogBounded(t *testing.T) {
	line := "CLIENT_HANDSHAKE_TRAFFIC_SECRET " + strings.Repeat("ab", 32) + " " + strings.Repeat("cd", 48) + "\n"
	full := bytes.Repeat([]byte{'#'}, MaxKeyLog-len(line)-1)
	full = append(append(full, '\n'), line...)
	for _, tc := range []struct {
		name string
		r    io.Reader
		ok   bool
	}{
		{"one line", strings.NewReader(line), true},
		{"at the cap", bytes.NewReader(full), true},
		{"a byte over", io.MultiReader(bytes.NewReader(full), strings.NewReader("\n")), false},
		{"endless", &endless{}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, err := ReadKeyLog(tc.r)
			if tc.ok != (err == nil) || (err != nil) != errors.Is(err, ErrKeyLogTooLarge) {
				t.Fatalf("error %v, want ok %v", err, tc.ok)
			}
			if e, ok := tc.r.(*endless); ok && e.n > MaxKeyLog+1<<20 {
				t.Errorf("read %d bytes of an endless key log, want at most about %d", e.n, MaxKeyLog)
			}
			if tc.ok && len(b) == 0 {
				t.Error("nothing read")
			}
		})
	}
	sy := newSynth(LinkEthernet)
	sy.conn(cli4, srv4, synthOpts{group: 0x11ec})
	if _, err := Read(bytes.NewReader(sy.buf.Bytes()), ReadOptions{KeyLog: make([]byte, MaxKeyLog+1)}); !errors.Is(err, ErrKeyLogTooLarge) {
		t.Errorf("Read with a key log over the cap: %v, want ErrKeyLogTooLarge", err)
	}
}

// TestKeyLogStatsKept: the given key log's statistics count every line
// and every distinct secret although only the records' and the capture's
// client randoms are kept: repeats count once, the last secret of a
// repeat is used, and hex case does not make a conflict.
func TestKeyLogStatsKept(t *testing.T) {
	cr := func(b byte) string { return strings.Repeat(fmt.Sprintf("%02x", b), 32) }
	line := func(c byte, sec string) string { return "CLIENT_HANDSHAKE_TRAFFIC_SECRET " + cr(c) + " " + sec + "\n" }
	dsb := line(0xb0, "aa") + line(0xb1, "bb")
	given := "# comment\n" + line(0xa0, "01") + line(0xa0, "02") + // a record's, repeated: the last is kept
		line(0xb0, "cc") + line(0xb1, "BB") + // a conflict with the capture's; the same in upper case
		line(0xc0, "03") + line(0xc0, "03") + line(0xc1, "04") + // no record's
		"CLIENT_RANDOM " + cr(0xd0) + " 05\n" + "garbage\n"
	rs := []Record{{haveCR: true, cr: [32]byte(bytes.Repeat([]byte{0xa0}, 32))}, {haveCR: true, cr: [32]byte(bytes.Repeat([]byte{0xe0}, 32))}}
	st := checkFinished(rs, []byte(given), []byte(dsb))
	want := KeyLogStats{Lines: 2 + 9, Unusable: 1, Secrets: 5, Matched: 1, Conflicts: 1}
	st.Verified, st.Failed = 0, 0
	if st != want {
		t.Errorf("stats %+v, want %+v", st, want)
	}
	if rs[0].FinishedCheck != CheckNotCaptured || rs[1].FinishedCheck != CheckNoSecret {
		t.Errorf("checks %q %q, want %q (a secret but no record captured) and %q", rs[0].FinishedCheck, rs[1].FinishedCheck, CheckNotCaptured, CheckNoSecret)
	}
	// Secrets only for client randoms of no record still check every record.
	rs = []Record{{haveCR: true, cr: [32]byte(bytes.Repeat([]byte{0xe0}, 32))}}
	if st := checkFinished(rs, []byte(line(0xc0, "03")), nil); st.Secrets != 1 || rs[0].FinishedCheck != CheckNoSecret {
		t.Errorf("stats %+v, check %q, want 1 secret and %q", st, rs[0].FinishedCheck, CheckNoSecret)
	}
}
