package linkemu

import (
	"math"
	"net/netip"
	"testing"
	"time"
)

func mustPrefix(s string) netip.Prefix { return netip.MustParsePrefix(s) }

func TestShaperRateSpacing(t *testing.T) {
	// 1000-byte packets at 8 Mbit/s take exactly 1 ms each.
	s := NewShaper(Direction{Delay: ms_(10), Rate: 8e6, Queue: 100000}, 1, 0)
	for i := range 20 {
		v, due := s.Offer(0, 1000) // a burst at t=0
		if v != Pass {
			t.Fatalf("packet %d: verdict %v", i, v)
		}
		if want := ms_(10) + time.Duration(i+1)*time.Millisecond; due != want {
			t.Fatalf("packet %d due %v, want %v", i, due, want)
		}
	}
}

func TestShaperDropTail(t *testing.T) {
	// Queue of 5000 bytes, 1000-byte packets, burst at t=0: the first five
	// fit (backlog 0,1000,...,4000), the rest are dropped until the
	// serialiser has drained 1000 bytes (1 ms at 8 Mbit/s).
	s := NewShaper(Direction{Rate: 8e6, Queue: 5000}, 1, 0)
	var pass, drop int
	for range 20 {
		v, _ := s.Offer(0, 1000)
		switch v {
		case Pass:
			pass++
		case DropQueue:
			drop++
		default:
			t.Fatalf("verdict %v", v)
		}
	}
	if pass != 5 || drop != 15 {
		t.Fatalf("pass %d drop %d, want 5 and 15", pass, drop)
	}
	if v, _ := s.Offer(time.Millisecond, 1000); v != Pass {
		t.Fatalf("after 1 ms of draining the queue still refuses: %v", v)
	}
	if v, _ := s.Offer(time.Millisecond, 1000); v != DropQueue {
		t.Fatalf("second packet at 1 ms fit into a full queue: %v", v)
	}
}

func TestShaperJitterNoReorder(t *testing.T) {
	d := Direction{Delay: ms_(20), Jitter: ms_(5), Rate: Unlimited}
	s := NewShaper(d, 7, 0)
	var prev time.Duration
	var sum, sum2 float64
	n := 0
	for i := range 20000 {
		now := time.Duration(i) * 20 * time.Millisecond // far apart: no clamping
		_, due := s.Offer(now, 100)
		delay := due - now
		if delay < d.Delay-d.Jitter || delay > d.Delay+d.Jitter {
			t.Fatalf("delay %v outside %v±%v", delay, d.Delay, d.Jitter)
		}
		if due < prev {
			t.Fatalf("reordered")
		}
		prev = due
		x := float64(delay-d.Delay) / 1e6
		sum += x
		sum2 += x * x
		n++
	}
	mean, sd := sum/float64(n), math.Sqrt(sum2/float64(n)-(sum/float64(n))*(sum/float64(n)))
	// Uniform on [-5, 5] ms: mean 0, sd 5/sqrt(3) = 2.887 ms.
	if math.Abs(mean) > 0.1 || math.Abs(sd-5/math.Sqrt(3)) > 0.1 {
		t.Errorf("jitter mean %.3f ms sd %.3f ms, want 0 and 2.887", mean, sd)
	}
	// Packets 0.1 ms apart: jitter would reorder them; due times must still
	// be non-decreasing.
	s = NewShaper(d, 7, 0)
	prev = 0
	for i := range 10000 {
		_, due := s.Offer(time.Duration(i)*100*time.Microsecond, 100)
		if due < prev {
			t.Fatalf("packet %d due %v before previous %v", i, due, prev)
		}
		prev = due
	}
}

func TestShaperLossSeeded(t *testing.T) {
	pattern := func(d Direction, seed, dir uint64) []bool {
		s := NewShaper(d, seed, dir)
		out := make([]bool, 10000)
		for i := range out {
			v, _ := s.Offer(time.Duration(i)*time.Millisecond, 100)
			out[i] = v == DropLoss
		}
		return out
	}
	d := Direction{Delay: ms_(10), Loss: 10, Rate: Unlimited}
	a, b := pattern(d, 42, 0), pattern(d, 42, 0)
	dj := d
	dj.Jitter = ms_(3)
	c := pattern(dj, 42, 0) // jitter must not change the loss pattern
	e := pattern(d, 43, 0)  // another seed must
	f := pattern(d, 42, 1)  // and the other direction must
	lost := 0
	for i := range a {
		if a[i] != b[i] || a[i] != c[i] {
			t.Fatalf("packet %d: same seed, different loss", i)
		}
		if a[i] {
			lost++
		}
	}
	if lost < 850 || lost > 1150 { // 1000 ± 4.7 sd
		t.Errorf("lost %d of 10000 at 10 %%", lost)
	}
	same := func(x, y []bool) bool {
		for i := range x {
			if x[i] != y[i] {
				return false
			}
		}
		return true
	}
	if same(a, e) || same(a, f) {
		t.Error("different seed or direction gave the same loss pattern")
	}
	for _, p := range []float64{0, 100} {
		d.Loss = p
		for i, l := range pattern(d, 1, 0) {
			if l != (p == 100) {
				t.Fatalf("loss %v%%: packet %d lost=%v", p, i, l)
			}
		}
	}
}

func TestSerialisationTime(t *testing.T) {
	for _, c := range []struct {
		size int
		rate int64
		want time.Duration
	}{{1500, 12e6, time.Millisecond}, {1, 3, 2666666667}, {MaxMTU, 8000, 65535 * time.Second / 1000}, {100, Unlimited, 0}} {
		if got := SerialisationTime(c.size, c.rate); got != c.want {
			t.Errorf("SerialisationTime(%d, %d) = %v, want %v", c.size, c.rate, got, c.want)
		}
	}
}
