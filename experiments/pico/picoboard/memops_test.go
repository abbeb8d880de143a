package picoboard

import (
	"bytes"
	"context"
	"debug/elf"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
)

// The memory call.js lets a routine work on (experiments/pico/emulator
// call.js): sources from memSrc, destinations from memDst, each with room
// for the longest copy the tests make and its guards.
const (
	memSrc   = 0x20010000
	memDst   = 0x20018000
	memGuard = 16 // bytes checked untouched on each side of a destination
)

// memopsLens are the lengths every alignment is checked at: 0 to 300
// (every short copy, every head and tail of the word loop several times)
// and some longer ones.
var memopsLens = func() []int {
	var l []int
	for n := 0; n <= 300; n++ {
		l = append(l, n)
	}
	return append(l, 511, 1024, 4099)
}()

// write puts b at addr in the emulator's SRAM.
func (h *callHarness) write(addr uint32, b []byte) error {
	if _, err := fmt.Fprintf(h.in, "w %x %s\n", addr, hex.EncodeToString(b)); err != nil {
		return err
	}
	if !h.out.Scan() || h.out.Text() != "ok" {
		return fmt.Errorf("call.js: write: %q %v", h.out.Text(), h.out.Err())
	}
	return nil
}

// read returns n bytes at addr of the emulator's SRAM.
func (h *callHarness) read(addr uint32, n int) ([]byte, error) {
	if _, err := fmt.Fprintf(h.in, "r %x %x\n", addr, n); err != nil {
		return nil, err
	}
	if !h.out.Scan() {
		return nil, fmt.Errorf("call.js stopped: %v", h.out.Err())
	}
	return hex.DecodeString(h.out.Text())
}

// memopsHarness calls each entry point of experiments/pico/runtime/memops.S.
type memopsHarness map[string]*callHarness

// memopsEntries are memops.S's entry points (the 8 forms of the last two
// share code with the 4 forms).
var memopsEntries = []string{"memcpy", "__aeabi_memcpy", "__aeabi_memcpy4", "memset", "__aeabi_memset", "__aeabi_memset4"}

func startMemops(t testing.TB) memopsHarness {
	h := memopsHarness{}
	for _, e := range memopsEntries {
		h[e] = startRoutine(t, "memops.S", e)
	}
	return h
}

// pattern fills a destination before a call, so that a byte the routine
// writes, or fails to, shows.
func pattern(n int, seed byte) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*7) ^ seed ^ 0xa5
	}
	return b
}

// copyCase runs one copy of n bytes from memSrc+so to memDst+do through
// entry and checks C's semantics (the n bytes copied, every byte around
// them untouched, the destination returned) and the cycles memcpyCycles
// gives.
func (h memopsHarness) copyCase(t testing.TB, entry string, do, so uint32, n int, r *rand.Rand) {
	t.Helper()
	c := h[entry]
	src := make([]byte, n)
	for i := range src {
		src[i] = byte(r.Uint32())
	}
	d, s := uint32(memDst)+do, uint32(memSrc)+so
	before := pattern(n+2*memGuard, byte(n))
	if err := c.write(s, src); err != nil {
		t.Fatal(err)
	}
	if err := c.write(d-memGuard, before); err != nil {
		t.Fatal(err)
	}
	r0, _, cyc, err := c.call(d, s, uint32(n), 0)
	if err != nil {
		t.Fatalf("%s(d+%d, s+%d, %d): %v", entry, do, so, n, err)
	}
	got, err := c.read(d-memGuard, n+2*memGuard)
	if err != nil {
		t.Fatal(err)
	}
	want := append(append(append([]byte(nil), before[:memGuard]...), src...), before[memGuard+n:]...)
	if !bytes.Equal(got, want) {
		t.Fatalf("%s(d+%d, s+%d, %d): destination and guards\n got %x\nwant %x", entry, do, so, n, got, want)
	}
	if r0 != d {
		t.Errorf("%s(d+%d, s+%d, %d) returned %#x, want d %#x", entry, do, so, n, r0, d)
	}
	if want := memcpyCycles(entry, d, s, n); cyc != want {
		t.Errorf("%s(d+%d, s+%d, %d) took %d cycles, want %d", entry, do, so, n, cyc, want)
	}
}

// setCase runs one memset of n bytes of c at memDst+do through entry
// (__aeabi_memset's operands in its own order) and checks it as copyCase
// does.
func (h memopsHarness) setCase(t testing.TB, entry string, do uint32, c uint32, n int) {
	t.Helper()
	d := uint32(memDst) + do
	before := pattern(n+2*memGuard, byte(n)^0x3c)
	if err := h[entry].write(d-memGuard, before); err != nil {
		t.Fatal(err)
	}
	r1, r2 := c, uint32(n)
	if entry != "memset" {
		r1, r2 = r2, r1 // __aeabi_memset(d, n, c)
	}
	r0, _, cyc, err := h[entry].call(d, r1, r2, 0)
	if err != nil {
		t.Fatalf("%s(d+%d, %#x, %d): %v", entry, do, c, n, err)
	}
	got, err := h[entry].read(d-memGuard, n+2*memGuard)
	if err != nil {
		t.Fatal(err)
	}
	want := append(append(append([]byte(nil), before[:memGuard]...), bytes.Repeat([]byte{byte(c)}, n)...), before[memGuard+n:]...)
	if !bytes.Equal(got, want) {
		t.Fatalf("%s(d+%d, %#x, %d): destination and guards\n got %x\nwant %x", entry, do, c, n, got, want)
	}
	if r0 != d {
		t.Errorf("%s(d+%d, %#x, %d) returned %#x, want d %#x", entry, do, c, n, r0, d)
	}
	if want := memsetCycles(entry, d, n); cyc != want {
		t.Errorf("%s(d+%d, %#x, %d) took %d cycles, want %d", entry, do, c, n, cyc, want)
	}
}

// TestMemcpy checks memcpy and __aeabi_memcpy at every alignment of the
// destination and the source (0-3 bytes past a word) and every length in
// memopsLens, and __aeabi_memcpy4 (both word aligned) at every length.
func TestMemcpy(t *testing.T) {
	h := startMemops(t)
	r := rand.New(rand.NewPCG(0x5eed2040, 0x3c))
	for _, entry := range []string{"memcpy", "__aeabi_memcpy"} {
		for do := uint32(0); do < 4; do++ {
			for so := uint32(0); so < 4; so++ {
				for _, n := range memopsLens {
					if h.copyCase(t, entry, do, so, n, r); t.Failed() {
						return
					}
				}
			}
		}
	}
	for _, n := range memopsLens {
		// Any word-aligned pair: 0 and 8 past the areas' starts too.
		for _, off := range [][2]uint32{{0, 0}, {8, 4}} {
			if h.copyCase(t, "__aeabi_memcpy4", off[0], off[1], n, r); t.Failed() {
				return
			}
		}
	}
}

// TestMemset checks memset at every alignment of the destination and
// every length in memopsLens, with fill values whose bits above the
// low byte must be ignored, and __aeabi_memset (d, n, c) and
// __aeabi_memset4 (d word aligned) likewise.
func TestMemset(t *testing.T) {
	h := startMemops(t)
	fills := []uint32{0, 0xff, 0x5a, 0x1234, 0xffffff80}
	for i, n := range memopsLens {
		c := fills[i%len(fills)]
		for do := uint32(0); do < 4; do++ {
			if h.setCase(t, "memset", do, c, n); t.Failed() {
				return
			}
			if h.setCase(t, "__aeabi_memset", do, c^0x11, n); t.Failed() {
				return
			}
		}
		if h.setCase(t, "__aeabi_memset4", 4*uint32(i%3), c^0x77, n); t.Failed() {
			return
		}
	}
}

// FuzzMemops checks memcpy and memset on offsets, lengths and fill values
// the fuzzer chooses (go test -fuzz FuzzMemops).
func FuzzMemops(f *testing.F) {
	h := startMemops(f)
	for _, c := range [][3]uint{{0, 0, 0}, {1, 2, 7}, {3, 0, 8}, {2, 2, 31}, {0, 3, 300}, {5, 9, 4099}} {
		f.Add(uint8(c[0]), uint8(c[1]), uint16(c[2]), uint32(c[2]), uint64(c[0]))
	}
	f.Fuzz(func(t *testing.T, do, so uint8, n uint16, c uint32, seed uint64) {
		n %= 8192
		r := rand.New(rand.NewPCG(seed, 1))
		h.copyCase(t, "memcpy", uint32(do%64), uint32(so%64), int(n), r)
		h.setCase(t, "memset", uint32(do%64), c, int(n))
	})
}

// The cycles of memops.S's paths by the Cortex-M0+ TRM's table 3-1 (ALU
// and not-taken branches 1, taken branches, BX, ADD PC and loads and
// stores 2, LDM, STM, PUSH and POP 1 + registers), as its comments add
// them up; the tests hold the emulator to them.

// memopsEntryCycles is an entry point's own: LDR, LDR, BX, and for
// __aeabi_memset's forms the three MOVS that swap its operands.
func memopsEntryCycles(entry string) int {
	if strings.HasPrefix(entry, "__aeabi_memset") {
		return 6 + 3
	}
	return 6
}

// memcpyCycles is one call's cycles from the entry point to its return.
func memcpyCycles(entry string, d, s uint32, n int) int {
	c := memopsEntryCycles(entry)
	short := 5 + 4*n + 2 // MOVS, SUBS, LSLS, ADD PC, the n pairs, BX
	if entry == "__aeabi_memcpy4" {
		if n < 8 {
			return c + 1 + 2 + short // CMP, BLO taken
		}
		return c + 1 + 1 + 1 + 4 + 2 + memcpyWords(n) // CMP, BLO, MOV, PUSH, B
	}
	if n < 8 {
		return c + 1 + 1 + short // CMP, BHS not taken
	}
	c += 1 + 2 + 1 + 1 // CMP, BHS, SUBS, LSLS
	if (d-s)%4 != 0 {
		return c + 2 + 7*n - 1 + 2 // BNE taken, n x (SUBS, LDRB, STRB, BNE), the last BNE not taken, BX
	}
	c += 1 + 1 + 4 + 1 + 1 + 1 // BNE, MOV, PUSH, SUBS, MOVS, LSLS
	a := 0                     // bytes the head copies
	if d%2 == 1 {
		c += 1 + 2 + 2 + 1 // BEQ not taken, LDRB, STRB, ADDS
		a = 1
	} else {
		c += 2
	}
	c++ // LSLS
	if (d+uint32(a))%4 == 2 {
		c += 1 + 2 + 2 + 1 // BPL not taken, LDRH, STRH, ADDS
		a += 2
	} else {
		c += 2
	}
	c += 3 // ADDS, SUBS, SUBS
	return c + memcpyWords(n-a)
}

// memcpyWords is the cycles from .Lc_words to the return, for m bytes.
func memcpyWords(m int) int {
	c := 1 // SUBS
	if q := m / 16; q == 0 {
		c += 2 // BCC taken
	} else {
		c += 1 + 13*q - 1 // BCC, q x (LDMIA 5, STMIA 5, SUBS, BCS), the last BCS not taken
	}
	b := m % 16
	c++ // LSLS
	if b&8 != 0 {
		c += 1 + 3 + 3
	} else {
		c += 2
	}
	if b&4 != 0 {
		c += 1 + 2 + 2
	} else {
		c += 2
	}
	c++ // LSLS
	switch {
	case b&2 != 0:
		c += 1 + 2 + 2 // BCC not taken, LDRH, STRH
		if b&1 != 0 {
			c += 1 + 2 + 2 // BPL not taken, LDRB, STRB
		} else {
			c += 2
		}
	case b&1 != 0:
		c += 2 + 1 + 2 + 2 // BCC taken, BPL not taken, LDRB, STRB
	default:
		c += 2 + 2
	}
	return c + 4 + 1 + 2 // POP, MOV, BX
}

// memsetCycles is one call's cycles from the entry point to its return.
func memsetCycles(entry string, d uint32, n int) int {
	c := memopsEntryCycles(entry)
	if entry == "__aeabi_memset4" {
		return c + 4 + 2 + memsetWords(n) // MOV, UXTB, LSLS, ORRS, B
	}
	if n < 8 {
		return c + 1 + 1 + 5 + 2*n + 2 // CMP, BHS, MOVS, SUBS, LSLS, ADD PC, the n STRB, BX
	}
	c += 1 + 2 + 4 + 1 // CMP, BHS taken, MOV, UXTB, LSLS, ORRS, LSLS
	a := 0
	if d%2 == 1 {
		c += 1 + 2 + 1 + 1 // BEQ not taken, STRB, ADDS, SUBS
		a = 1
	} else {
		c += 2
	}
	c++ // LSLS
	if (d+uint32(a))%4 == 2 {
		c += 1 + 2 + 1 + 1
		a += 2
	} else {
		c += 2
	}
	return c + memsetWords(n-a)
}

// memsetWords is the cycles from .Ls_words to the return, for m bytes.
func memsetWords(m int) int {
	c := 4 // LSLS, ORRS, MOVS, SUBS
	if q := m / 16; q == 0 {
		c += 2
	} else {
		c += 1 + 3 + 2 + 8*q - 1 + 3 // BCC, PUSH, 2 MOVS, q x (STMIA 5, SUBS, BCS), POP
	}
	b := m % 16
	c++
	if b&8 != 0 {
		c += 1 + 3
	} else {
		c += 2
	}
	if b&4 != 0 {
		c += 1 + 2
	} else {
		c += 2
	}
	c++
	if b&2 != 0 {
		c += 1 + 2
	} else {
		c += 2
	}
	if b&1 != 0 {
		c += 1 + 2
	} else {
		c += 2
	}
	return c + 1 + 2 // MOV, BX
}

// TestMemopsFlashImage builds an "sdk-like" ML-KEM-512 image with its code
// in flash: the entry points stay in flash, the routines' bodies and their
// table run from SRAM (copied there with .data before anything calls
// them, crt.c), the image loads nothing below its entry stub, and its
// results pass the host's checks.
func TestMemopsFlashImage(t *testing.T) {
	needToolchain(t)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	p := QuickProfile
	p.KEM = 2
	img, err := Build(ctx, BuildConfig{Name: "test-memops-flash", Schemes: []string{"ml-kem-512"}, Profile: p, Runtime: "sdk-like", CodeIn: "flash"})
	if err != nil {
		t.Fatal(err)
	}
	inFlashWindow := func(a uint64) bool { return a >= FlashStart && a < FlashStart+FlashSize }
	for sym, flash := range map[string]bool{"memcpy": true, "memset": true, "memops_memcpy": false, "memops_memset": false, "memops_table": false} {
		if a := elfSymbol(t, img.ELF, sym).Value; inFlashWindow(a) != flash {
			t.Errorf("%s at %#x: in flash %v, want %v", sym, a, inFlashWindow(a), flash)
		}
	}
	// The image starts at its entry stub, not at ELF headers below it
	// (flashLDFlags): the emulator enters at the lowest address.
	f, err := elf.Open(img.ELF)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	segs, err := LoadSegments(f)
	if err != nil || segs[0].Addr != FlashStart+0x100 {
		t.Errorf("lowest loaded address %#x (%v), want the entry stub at %#x", segs[0].Addr, err, FlashStart+0x100)
	}
	run, err := Emulate(ctx, img, RunConfig{Timeout: 3 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	if checks, err := VerifyVectors(run.Dataset); err != nil || len(checks) == 0 {
		t.Fatalf("host verification %v (%d checks)", err, len(checks))
	}
}
