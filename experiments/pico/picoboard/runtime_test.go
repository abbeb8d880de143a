package picoboard

import (
	"bufio"
	"context"
	"debug/elf"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// lmulCycles is what the Cortex-M0+ TRM's table 3-1 gives for
// experiments/pico/runtime/lmul.S: PUSH {r4, r5} 3, 22 one-cycle ALU
// instructions and MULS, POP {r4, r5} 3, BX LR 2.
const lmulCycles = 3 + 22 + 3 + 2

// callHarness is a routine of experiments/pico/runtime running in rp2040js
// under the timing layer (experiments/pico/emulator/call.js), one call per
// request.
type callHarness struct {
	in  io.WriteCloser
	out *bufio.Scanner
	cmd *exec.Cmd
}

// lmulHarness calls our __aeabi_lmul.
type lmulHarness struct{ *callHarness }

// startLmul starts call.js on lmul.S (startRoutine).
func startLmul(t testing.TB) *lmulHarness {
	return &lmulHarness{startRoutine(t, "lmul.S", "__aeabi_lmul")}
}

// startRoutine assembles src (in experiments/pico/runtime) with the
// firmware's compiler, links it alone at call.js's code address with
// libgcc (for __aeabi_idiv0, whose default returns its argument) and
// starts call.js entering at symbol, skipping the test where the
// toolchain or node is missing.
func startRoutine(t testing.TB, src, symbol string) *callHarness {
	t.Helper()
	needToolchain(t)
	root, mods := emulatorModules(t)
	dir := t.TempDir()
	obj, elfPath, bin, ld := filepath.Join(dir, "r.o"), filepath.Join(dir, "r.elf"), filepath.Join(dir, "r.bin"), filepath.Join(dir, "r.ld")
	// call.js loads the code at SRAM + 0x100; memops.S's bodies and
	// table (.time_critical, .data) go with the code.
	if err := os.WriteFile(ld, []byte("SECTIONS { . = 0x20000100; .text : { *(.text*) *(.time_critical*) *(.data*) } }\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range [][]string{
		append([]string{"arm-none-eabi-gcc"}, append(DefaultCFlags, "-c", filepath.Join(root, "experiments/pico/runtime", src), "-o", obj)...),
		{"arm-none-eabi-gcc", "-mcpu=cortex-m0plus", "-mthumb", "-nostdlib", "-T", ld, "-o", elfPath, obj, "-lgcc"},
		{"arm-none-eabi-objcopy", "-O", "binary", "-j", ".text", elfPath, bin},
	} {
		if out, err := exec.Command(c[0], c[1:]...).CombinedOutput(); err != nil {
			t.Fatalf("%s: %v\n%s", strings.Join(c, " "), err, out)
		}
	}
	entry := elfSymbol(t, elfPath, symbol).Value&^1 - 0x20000100
	cmd := exec.Command("node", filepath.Join(root, "experiments/pico/emulator/call.js"), "--bin", bin, "--entry", fmt.Sprintf("%x", entry), "--modules", mods)
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	h := &callHarness{in: in, out: bufio.NewScanner(out), cmd: cmd}
	t.Cleanup(func() {
		in.Close()
		cmd.Wait()
	})
	return h
}

// call runs the routine with r0-r3 and returns r0, r1 and the cycles.
func (h *callHarness) call(r0, r1, r2, r3 uint32) (uint32, uint32, int, error) {
	if _, err := fmt.Fprintf(h.in, "%x %x %x %x\n", r0, r1, r2, r3); err != nil {
		return 0, 0, 0, err
	}
	if !h.out.Scan() {
		return 0, 0, 0, fmt.Errorf("call.js stopped: %v", h.out.Err())
	}
	var lo, hi uint32
	var cyc int
	if _, err := fmt.Sscanf(h.out.Text(), "%x %x %d", &lo, &hi, &cyc); err != nil {
		return 0, 0, 0, fmt.Errorf("call.js printed %q: %v", h.out.Text(), err)
	}
	return lo, hi, cyc, nil
}

// elfSymbol returns the symbol of an ELF by name, failing the test when
// there is none.
func elfSymbol(t testing.TB, path, name string) elf.Symbol {
	t.Helper()
	s, ok := findSymbol(t, path, name)
	if !ok {
		t.Fatalf("%s has no %s", path, name)
	}
	return s
}

// hasSymbol reports whether the ELF at path has a symbol of that name.
func hasSymbol(t testing.TB, path, name string) bool {
	t.Helper()
	_, ok := findSymbol(t, path, name)
	return ok
}

// findSymbol looks a symbol of the ELF at path up by name.
func findSymbol(t testing.TB, path, name string) (elf.Symbol, bool) {
	t.Helper()
	f, err := elf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	syms, err := f.Symbols()
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(syms, func(s elf.Symbol) bool { return s.Name == name })
	if i < 0 {
		return elf.Symbol{}, false
	}
	return syms[i], true
}

// seeded calls check n times with one generator seeded by stream,
// stopping at the first failure.
func seeded(t *testing.T, stream uint64, n int, check func(r *rand.Rand, i int)) {
	r := rand.New(rand.NewPCG(0x5eed2040, stream))
	for i := 0; i < n && !t.Failed(); i++ {
		check(r, i)
	}
}

// fuzzPairs seeds the fuzzer with edges paired end to end and fuzzes
// check on operand pairs.
func fuzzPairs[T uint32 | uint64](f *testing.F, edges []T, check func(t *testing.T, a, b T)) {
	for i, a := range edges {
		f.Add(a, edges[len(edges)-1-i])
	}
	f.Fuzz(check)
}

// mul returns a * b as our routine computes it in the emulator and the
// cycles the call took.
func (h *lmulHarness) mul(a, b uint64) (uint64, int, error) {
	lo, hi, cyc, err := h.call(uint32(a), uint32(a>>32), uint32(b), uint32(b>>32))
	return uint64(hi)<<32 | uint64(lo), cyc, err
}

// check compares one product with C's uint64_t multiply (mod 2^64, which
// Go's uint64 multiply is too) and the TRM's cycle count.
func (h *lmulHarness) check(t *testing.T, a, b uint64) {
	t.Helper()
	got, cyc, err := h.mul(a, b)
	if err != nil {
		t.Fatal(err)
	}
	if want := a * b; got != want {
		t.Errorf("__aeabi_lmul(%#x, %#x) = %#x, want %#x", a, b, got, want)
	}
	if cyc != lmulCycles {
		t.Errorf("__aeabi_lmul(%#x, %#x) took %d cycles, want %d (constant)", a, b, cyc, lmulCycles)
	}
}

// lmulEdges are operands at every edge of the algorithm: zero, one,
// all-ones, the sign bits of both words and halfwords, and values whose
// partial products carry across bit 16, 32 and 48.
var lmulEdges = []uint64{
	0, 1, 2, 3, 0xffff, 0x10000, 0xffffffff, 0x100000000, 0x1ffffffff,
	0x7fffffff, 0x80000000, 0xffff0000, 0x0000ffff0000ffff, 0xffff0000ffff0000,
	0x7fffffffffffffff, 0x8000000000000000, 0xffffffff00000000, 0x00000000ffffffff,
	0xfffffffffffffffe, 0xffffffffffffffff, 0x8000000080000000, 0xdeadbeefcafebabe,
	uint64(1) << 48, uint64(1)<<63 | 1, 0x0001000100010001,
}

// TestLmulEdges runs our __aeabi_lmul on every pair of edge operands
// (signed operands are the same bits: the ABI's product is mod 2^64).
func TestLmulEdges(t *testing.T) {
	h := startLmul(t)
	for _, a := range lmulEdges {
		for _, b := range lmulEdges {
			h.check(t, a, b)
		}
	}
	// Signed operands as C passes them: -1 * -1, INT64_MIN * -1, -3 * 5.
	for _, p := range [][2]int64{{-1, -1}, {-1 << 63, -1}, {-3, 5}, {-(1 << 32), 1 << 31}} {
		h.check(t, uint64(p[0]), uint64(p[1]))
	}
}

// TestLmulRandom checks 20,000 seeded random pairs, a quarter of them with
// one operand's high word zero (the common case of a 32x32->64 widening).
func TestLmulRandom(t *testing.T) {
	h := startLmul(t)
	seeded(t, 43, 20000, func(r *rand.Rand, i int) {
		a, b := r.Uint64(), r.Uint64()
		if i%4 == 0 {
			b &= 0xffffffff
		}
		h.check(t, a, b)
	})
}

// FuzzLmul compares our __aeabi_lmul with C's uint64_t multiply on
// operands the fuzzer chooses (go test -fuzz FuzzLmul).
func FuzzLmul(f *testing.F) {
	h := startLmul(f)
	fuzzPairs(f, lmulEdges, h.check)
}

// TestBuildRuntime checks the runtime factor: an unknown level fails
// before anything is compiled, and "sdk-like" links our __aeabi_lmul (its
// size is lmul.S's 50 bytes) and our memcpy and memset (memops.S, its
// table in SRAM) into an image whose ML-DSA-44 test vectors pass the
// host's checks, while the default links libgcc's and newlib's.
func TestBuildRuntime(t *testing.T) {
	if _, err := Build(context.Background(), BuildConfig{Name: "x", Schemes: []string{"ml-dsa-44"}, Runtime: "pico-sdk"}); err == nil ||
		!strings.Contains(err.Error(), `runtime "pico-sdk" is not one of libgcc, sdk-like`) {
		t.Fatalf("unknown runtime: %v", err)
	}
	needToolchain(t)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	p := QuickProfile
	p.DSAKeygen, p.DSASign = 1, 2
	size := map[string]uint64{}
	for _, rt := range []string{"", "sdk-like"} {
		name := map[string]string{"": "test-runtime-libgcc", "sdk-like": "test-runtime-sdk-like"}[rt]
		img, err := Build(ctx, BuildConfig{Name: name, Schemes: []string{"ml-dsa-44"}, Profile: p, Runtime: rt})
		if err != nil {
			t.Fatal(err)
		}
		if want := map[string]string{"": "libgcc", "sdk-like": "sdk-like"}[rt]; img.Provenance()["runtime"] != want {
			t.Errorf("runtime %q: provenance says %q", rt, img.Provenance()["runtime"])
		}
		size[rt] = lmulSymbolSize(t, img.ELF)
		if got := hasSymbol(t, img.ELF, "memops_table"); got != (rt == "sdk-like") {
			t.Errorf("runtime %q: memops.S linked: %v", rt, got)
		}
		if rt == "" {
			continue
		}
		run, err := Emulate(ctx, img, RunConfig{Timeout: 3 * time.Minute})
		if err != nil {
			t.Fatal(err)
		}
		if checks, err := VerifyVectors(run.Dataset); err != nil || len(checks) == 0 {
			t.Fatalf("sdk-like ML-DSA-44: host verification %v (%d checks)", err, len(checks))
		}
	}
	if size["sdk-like"] != 50 || size[""] == 50 {
		t.Errorf("__aeabi_lmul sizes: libgcc %d, sdk-like %d bytes; want our 50 only in sdk-like", size[""], size["sdk-like"])
	}
}

// lmulSymbolSize returns the size of __aeabi_lmul in an ELF.
func lmulSymbolSize(t *testing.T, path string) uint64 {
	return elfSymbol(t, path, "__aeabi_lmul").Size
}
