package picoboard

import (
	"math"
	"math/rand/v2"
	"testing"
)

// divCycles is what the Cortex-M0+ TRM's table 3-1 gives for a non-zero
// divisor in experiments/pico/runtime/div.S: CMP, BEQ not taken, MOVS,
// LSLS, two STR to the single-cycle IO port (1 each), four taken B (2
// each: the divider's 8 cycles, RP2040 datasheet 2.3.1.5), two LDR from it
// (1 each) and BX LR (2).
const divCycles = 1 + 1 + 1 + 1 + 2 + 8 + 2 + 2

// divHarness calls our __aeabi_uidivmod and __aeabi_idivmod (the quotient
// in r0, the remainder in r1; __aeabi_uidiv and __aeabi_idiv are the same
// code).
type divHarness struct{ u, s *callHarness }

func startDiv(t testing.TB) divHarness {
	return divHarness{startRoutine(t, "div.S", "__aeabi_uidivmod"), startRoutine(t, "div.S", "__aeabi_idivmod")}
}

// wantUdiv is C's and Go's unsigned division; by zero, what div.S
// documents: the quotient libgcc passes __aeabi_idiv0 (0 for 0, else
// UINT_MAX), which libgcc's default returns, and the dividend as the
// remainder.
func wantUdiv(n, d uint32) (q, r uint32) {
	if d == 0 {
		if n == 0 {
			return 0, 0
		}
		return math.MaxUint32, n
	}
	return n / d, n % d
}

// wantIdiv is Go's int32 division: rounds toward zero, the remainder has
// the dividend's sign, and MinInt32 / -1 is MinInt32 remainder 0 (the Go
// specification's overflow rule; C leaves it undefined). By zero: 0,
// INT_MAX or INT_MIN by the dividend's sign, remainder the dividend.
func wantIdiv(n, d int32) (q, r int32) {
	if d == 0 {
		switch {
		case n > 0:
			return math.MaxInt32, n
		case n < 0:
			return math.MinInt32, n
		}
		return 0, 0
	}
	return n / d, n % d
}

func (h divHarness) check(t *testing.T, n, d uint32) {
	t.Helper()
	q, r, cyc, err := h.u.call(n, d, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if wq, wr := wantUdiv(n, d); q != wq || r != wr {
		t.Errorf("__aeabi_uidivmod(%#x, %#x) = %#x rem %#x, want %#x rem %#x", n, d, q, r, wq, wr)
	}
	if d != 0 && cyc != divCycles {
		t.Errorf("__aeabi_uidivmod(%#x, %#x) took %d cycles, want %d", n, d, cyc, divCycles)
	}
	q, r, cyc, err = h.s.call(n, d, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if wq, wr := wantIdiv(int32(n), int32(d)); int32(q) != wq || int32(r) != wr {
		t.Errorf("__aeabi_idivmod(%d, %d) = %d rem %d, want %d rem %d", int32(n), int32(d), int32(q), int32(r), wq, wr)
	}
	if d != 0 && cyc != divCycles {
		t.Errorf("__aeabi_idivmod(%d, %d) took %d cycles, want %d", int32(n), int32(d), cyc, divCycles)
	}
}

// divEdges are operands at the divider's edges: zero, one, minus one,
// both signs' extremes, powers of two and their neighbours.
var divEdges = []uint32{
	0, 1, 2, 3, 7, 0xff, 0x100, 0xffff, 0x10000, 0x7ffffffe, 0x7fffffff,
	0x80000000, 0x80000001, 0xfffffffe, 0xffffffff, 0xfffffff9, 3329, 8380417,
	0xdeadbeef,
}

// TestDivEdges runs both routines on every pair of edge operands, zero
// divisors and INT_MIN / -1 included, against Go's division.
func TestDivEdges(t *testing.T) {
	h := startDiv(t)
	for _, n := range divEdges {
		for _, d := range divEdges {
			h.check(t, n, d)
		}
	}
}

// TestDivAliases checks that __aeabi_uidiv and __aeabi_idiv enter the same
// code as their divmod forms (the ABI lets the quotient-only form leave
// r1 as the divmod form sets it).
func TestDivAliases(t *testing.T) {
	needToolchain(t)
	a, b := startRoutine(t, "div.S", "__aeabi_uidiv"), startRoutine(t, "div.S", "__aeabi_idiv")
	for _, c := range [][2]uint32{{100, 7}, {0xfffffff9, 2}, {5, 0}} {
		q, _, _, err := a.call(c[0], c[1], 0, 0)
		if wq, _ := wantUdiv(c[0], c[1]); err != nil || q != wq {
			t.Errorf("__aeabi_uidiv(%#x, %#x) = %#x (%v), want %#x", c[0], c[1], q, err, wq)
		}
		q, _, _, err = b.call(c[0], c[1], 0, 0)
		if wq, _ := wantIdiv(int32(c[0]), int32(c[1])); err != nil || int32(q) != wq {
			t.Errorf("__aeabi_idiv(%d, %d) = %d (%v), want %d", int32(c[0]), int32(c[1]), int32(q), err, wq)
		}
	}
}

// TestDivRandom checks 20,000 seeded random pairs, half of them with a
// small divisor (the common case: a modulus or a base).
func TestDivRandom(t *testing.T) {
	h := startDiv(t)
	seeded(t, 0xd1, 20000, func(r *rand.Rand, i int) {
		n, d := r.Uint32(), r.Uint32()
		if i%2 == 0 {
			d >>= 20 + i%12
		}
		h.check(t, n, d)
	})
}

// FuzzDiv compares our divider routines with Go's division on operands
// the fuzzer chooses (go test -fuzz FuzzDiv).
func FuzzDiv(f *testing.F) {
	h := startDiv(f)
	fuzzPairs(f, divEdges, h.check)
}
