package linkemu

import (
	"context"
	"encoding/binary"
	"fmt"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

func TestFlowOf(t *testing.T) {
	ip := func(proto byte, ihl int, frag uint16, l4 []byte) []byte {
		p := make([]byte, ihl*4)
		p[0] = 0x40 | byte(ihl)
		p[9] = proto
		binary.BigEndian.PutUint16(p[6:8], frag)
		return append(p, l4...)
	}
	ports := []byte{0xc3, 0x50, 0x11, 0x51} // 50000 -> 4433
	for _, c := range []struct {
		name     string
		p        []byte
		proto    uint8
		src, dst uint16
	}{
		{"tcp", ip(6, 5, 0, ports), 6, 50000, 4433},
		{"udp with options", ip(17, 6, 0, ports), 17, 50000, 4433},
		{"icmp", ip(1, 5, 0, ports), 1, 0, 0},
		{"later fragment", ip(6, 5, 0x0010, ports), 6, 0, 0},
		{"truncated tcp", ip(6, 5, 0, ports[:2]), 6, 0, 0},
		{"ipv6", append([]byte{0x60}, make([]byte, 40)...), 0, 0, 0},
		{"short", []byte{0x45, 0}, 0, 0, 0},
		{"bad ihl", ip(6, 3, 0, ports)[:24], 6, 0, 0},
	} {
		proto, src, dst := flowOf(c.p)
		if proto != c.proto || src != c.src || dst != c.dst {
			t.Errorf("%s: got proto %d ports %d -> %d, want %d %d -> %d", c.name, proto, src, dst, c.proto, c.src, c.dst)
		}
	}
}

// TestLateEventsRecorded holds every A->B packet of one flow 5 ms in the
// writer (a stalled writer thread, injected) on a link with a 1 ms bound:
// each of them must be recorded with its flow and a lateness of at least
// the hold; the other direction's packets, written on time, must not.
func TestLateEventsRecorded(t *testing.T) {
	requireLink(t)
	const hold = 5 * time.Millisecond
	const port = 7101
	testHookBeforeWrite = func(dir int, p []byte) {
		if _, _, dst := flowOf(p); dir == 0 && dst == port {
			time.Sleep(hold)
		}
	}
	t.Cleanup(func() { testHookBeforeWrite = nil })
	sc := Scenario{Name: "late", Seed: 1,
		AtoB: Direction{Delay: 2 * time.Millisecond, Rate: Unlimited},
		BtoA: Direction{Delay: 2 * time.Millisecond, Rate: Unlimited}}
	l, err := StartWith(context.Background(), sc, Options{Prefix: "pqr-latehyg-", LateBound: time.Millisecond})
	if err != nil {
		t.Fatalf("StartWith: %v", err)
	}
	t.Cleanup(func() { l.Close(); assertGone(t, l) })
	const n = 20
	r := oneWay(t, l, A, port, n, 64, 10*time.Millisecond)
	if got := len(delaysMs(r)); got != n {
		t.Fatalf("received %d of %d", got, n)
	}
	oneWay(t, l, B, port+1, n, 64, time.Millisecond) // on time
	st := l.Stats()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	evs := l.LateEvents()
	held := 0
	for _, e := range evs {
		if e.Dir == A && e.Proto == 17 && e.DstPort == port {
			held++
			if e.Late() < hold || e.SrcPort == 0 || e.Bytes != 64+28 {
				t.Errorf("held packet recorded as %+v (late %v): want late >= %v, a source port, 92 bytes", e, e.Late(), hold)
			}
		}
		if e.Late() <= time.Millisecond {
			t.Errorf("event %+v is late by %v, not above the 1 ms bound", e, e.Late())
		}
	}
	if held != n {
		t.Errorf("%d of the %d held packets recorded (events %+v)", held, n, evs)
	}
	if got := st.AtoB.LateEvents + st.BtoA.LateEvents; got != uint64(len(evs)) {
		t.Errorf("Stats counts %d late events, LateEvents returns %d", got, len(evs))
	}
	// Write times ascend and due times are consistent with the scenario.
	for i := 1; i < len(evs); i++ {
		if evs[i].Written < evs[i-1].Written {
			t.Fatalf("events not ordered by write time at %d", i)
		}
	}
	if d := time.Since(time.Unix(0, evs[0].Written)); d < 0 || d > time.Minute {
		t.Errorf("first event written %v ago: want a wall-clock time of this test", d)
	}
}

// TestLateEventsOffByDefault: without a bound nothing is kept.
func TestLateEventsOffByDefault(t *testing.T) {
	requireLink(t)
	testHookBeforeWrite = func(int, []byte) { time.Sleep(2 * time.Millisecond) }
	t.Cleanup(func() { testHookBeforeWrite = nil })
	l, err := StartWith(context.Background(), Scenario{Name: "nolate", Seed: 1, AtoB: Direction{Rate: Unlimited}, BtoA: Direction{Rate: Unlimited}},
		Options{Prefix: "pqr-latehyg-"})
	if err != nil {
		t.Fatal(err)
	}
	oneWay(t, l, A, 7103, 5, 64, time.Millisecond)
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	assertGone(t, l)
	if evs := l.LateEvents(); len(evs) != 0 {
		t.Errorf("%d late events kept without a bound", len(evs))
	}
	if st := l.Stats(); st.AtoB.LateMax < 2*time.Millisecond {
		t.Errorf("late_max %v: the histogram should still see the 2 ms holds", st.AtoB.LateMax)
	}
}

func TestNegativeLateBound(t *testing.T) {
	o := Options{LateBound: -1}
	if err := o.fill(); err == nil {
		t.Error("negative LateBound accepted")
	}
}

// TestMonotonicEpochNeverEarly preempts monotonicEpoch on either side of
// its CLOCK_MONOTONIC reading (the reader of a busy machine): the mapping
// may make due times late by the preemption, never early. Reading Go's
// clock only after CLOCK_MONOTONIC, as the forwarder once did, put
// epochMon 3 ms early here and failed this test.
func TestMonotonicEpochNeverEarly(t *testing.T) {
	const hold = 3 * time.Millisecond
	t.Cleanup(func() { testHookClockPair = nil })
	epoch := time.Now()
	for _, step := range []int{0, 1} {
		t.Run(fmt.Sprint("hold at step ", step), func(t *testing.T) {
			testHookClockPair = func(s int) {
				if s == step {
					time.Sleep(hold)
				}
			}
			got := monotonicEpoch(epoch)
			testHookClockPair = nil
			// An independent mapping with its own error bound: CLOCK_MONOTONIC
			// read between two of Go's readings.
			m1 := time.Since(epoch)
			var ts unix.Timespec
			unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts)
			m2 := time.Since(epoch)
			lo, hi := ts.Nano()-int64(m2), ts.Nano()-int64(m1) // the true epoch lies in [lo, hi]
			t.Logf("epochMon %d, true value in [%d, %d] (%v wide)", got, lo, hi, m2-m1)
			if got < lo {
				t.Errorf("epochMon %d is %v before the true epoch's lower bound: due times would be early", got, time.Duration(lo-got))
			}
			if got > hi+int64(hold)+int64(time.Millisecond) {
				t.Errorf("epochMon %d is %v after the true epoch's upper bound: more than the %v hold", got, time.Duration(got-hi), hold)
			}
		})
	}
}
