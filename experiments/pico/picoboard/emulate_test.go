package picoboard

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"pqrepro/datasets/picodata"
)

// needToolchain skips a test when the firmware toolchain or node is missing.
func needToolchain(t testing.TB) {
	t.Helper()
	for _, tool := range []string{"arm-none-eabi-gcc", "node", "npm"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not installed (apt-get install -y gcc-arm-none-eabi libnewlib-arm-none-eabi nodejs npm)", tool)
		}
	}
}

func testImage(t testing.TB, name string, defines ...string) Image {
	t.Helper()
	needToolchain(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	p := QuickProfile
	p.KEM = 2
	img, err := Build(ctx, BuildConfig{Name: name, Schemes: []string{"ml-kem-512"}, Profile: p, Defines: defines})
	if err != nil {
		t.Fatal(err)
	}
	return img
}

// TestEmulateMLKEM512 is the end-to-end test: build, UF2, rp2040js over a
// pty, the reader, the on-device checks and the host checks with circl.
func TestEmulateMLKEM512(t *testing.T) {
	img := testImage(t, "test-mlkem512")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	run, err := Emulate(ctx, img, RunConfig{Timeout: 2 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	if !run.Complete || !run.Emulated || len(run.Measurements) != 6 {
		t.Fatalf("complete=%v measurements=%d problems=%v", run.Complete, len(run.Measurements), run.Problems)
	}
	for _, m := range run.Measurements {
		if !m.OK || m.Micros == 0 || m.Stack < 1024 {
			t.Errorf("bad measurement %+v", m)
		}
		// Timer and cycle counter agree: cycles = us * 133 within 1 %.
		if r := float64(m.Cycles) / float64(m.Micros*133); r < 0.99 || r > 1.01 {
			t.Errorf("%s %s: %d cycles in %d us is not 133 MHz", m.Scheme, m.Op, m.Cycles, m.Micros)
		}
	}
	if run.Header.ClockHz != 133000000 || run.Header.FirmwareID != img.FirmwareID || run.Header.Profile != "quick" {
		t.Errorf("header %+v, want clock 133 MHz and id %s", run.Header, img.FirmwareID)
	}
	checks, err := VerifyVectors(run.Dataset)
	if err != nil || len(checks) < 5 {
		t.Fatalf("host verification: %v (%d checks)", err, len(checks))
	}
	// Deterministic: the same image gives the same cycles.
	again, err := Emulate(ctx, img, RunConfig{Timeout: 2 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	for i, m := range run.Measurements {
		if again.Measurements[i] != m {
			t.Errorf("run 2 differs: %+v vs %+v", again.Measurements[i], m)
		}
	}
	// The Cortex-M0+ timing layer ran, and added the same cycles twice.
	if tm := run.Emulator.Timing; tm.PushLR == 0 || tm.PopPC == 0 || tm.AddedCycles != tm.PushLR+tm.PopPC+15*tm.ExceptionEntries {
		t.Errorf("timing layer counters %+v", tm)
	}
	if again.Emulator.Timing != run.Emulator.Timing || again.Emulator.Cycles != run.Emulator.Cycles {
		t.Errorf("run 2's emulator differs: %+v vs %+v", again.Emulator, run.Emulator)
	}
	rep, err := SizeReportFile(img.ELF)
	if err != nil {
		t.Fatal(err)
	}
	owners := map[string]picodata.OwnerSize{}
	for _, o := range rep.Owners {
		owners[o.Owner] = o
	}
	if owners["ml-kem-512"].Text < 2000 || owners["firmware"].Text == 0 || owners["pqclean-common"].Text == 0 || rep.Image == 0 {
		t.Errorf("size report %+v", rep)
	}
	t.Logf("emulator: %.1f simulated MHz, %.2f s wall", run.Emulator.SimMHz, run.Emulator.WallSeconds)
}

func TestEmulateFault(t *testing.T) {
	img := testImage(t, "test-fault", "FAULT_TEST")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	run, err := Emulate(ctx, img, RunConfig{Timeout: time.Minute, IdleTimeout: 10 * time.Second})
	if err == nil || !strings.Contains(err.Error(), "breakpoint") || !strings.Contains(err.Error(), "pc=0x2000") || !strings.Contains(err.Error(), " start ") {
		t.Fatalf("err = %v", err)
	}
	if run == nil || run.Complete {
		t.Fatal("a faulted run must be incomplete")
	}
}

func TestEmulateCycleLimit(t *testing.T) {
	img := testImage(t, "test-mlkem512")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_, err := Emulate(ctx, img, RunConfig{MaxCycles: 2_000_000, IdleTimeout: 10 * time.Second})
	if err == nil || !strings.Contains(err.Error(), "max-cycles") {
		t.Fatalf("err = %v", err)
	}
}

func TestEmulateMissingImage(t *testing.T) {
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("node not installed (apt-get install -y nodejs npm)")
	}
	_, err := Emulate(context.Background(), Image{Name: "x", UF2: "/nonexistent.uf2"}, RunConfig{Modules: t.TempDir()})
	if err == nil || !strings.Contains(err.Error(), "build it first") {
		t.Fatalf("err = %v", err)
	}
}

func TestBuildBadConfig(t *testing.T) {
	for _, cfg := range []BuildConfig{
		{Name: "x"},
		{Name: "x", Schemes: []string{"ml-kem-9"}},
		{Name: "x", Schemes: []string{"ml-kem-512", "ml-kem-512"}},
		{Name: "a/b", Schemes: []string{"ml-kem-512"}},
		{Name: "x", Schemes: []string{"rsa-2048"}},
	} {
		if _, err := Build(context.Background(), cfg); err == nil {
			t.Errorf("Build(%+v) succeeded", cfg)
		}
	}
}

// BenchmarkEmulator reports the emulator's speed in simulated MHz.
func BenchmarkEmulator(b *testing.B) {
	img := testImage(b, "test-mlkem512")
	var mhz float64
	for i := 0; i < b.N; i++ {
		run, err := Emulate(context.Background(), img, RunConfig{})
		if err != nil {
			b.Fatal(err)
		}
		mhz = run.Emulator.SimMHz
	}
	b.ReportMetric(mhz, "sim-MHz")
}

// TestEmulateClassic builds the classic image (mbedTLS from the pinned
// Debian source) with one iteration of each operation and no on-device
// RSA keygen (seconds of simulated time; the full profile runs it), runs
// it in rp2040js and checks every vector on the host with Go's crypto.
func TestEmulateClassic(t *testing.T) {
	needToolchain(t)
	needMbedTLS(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	p := QuickProfile
	p.RSA, p.ECC, p.RSAKeygen = 1, 1, 0
	img, err := Build(ctx, BuildConfig{Name: "test-classic", Schemes: picodata.ClassicalSchemes, Profile: p})
	if err != nil {
		t.Fatal(err)
	}
	prov := img.Provenance()
	for _, k := range []string{"mbedtls.version", "mbedtls.orig_sha256", "mbedtls.dsc_sha256", "source.mbedtls", "source.rsa-key", "uf2_sha256", "compiler", "cflags"} {
		if prov[k] == "" {
			t.Errorf("provenance has no %s: %v", k, prov)
		}
	}
	if prov["mbedtls.version"] != MbedTLSVersion || prov["pqclean.version"] != "" {
		t.Errorf("provenance %v", prov)
	}
	run, err := Emulate(ctx, img, RunConfig{Timeout: 2 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{
		"rsa-2048/sign": true, "rsa-2048/verify": true,
		"ecdsa-p256/keygen": true, "ecdsa-p256/sign": true, "ecdsa-p256/verify": true,
		"ecdh-p256/keygen": true, "ecdh-p256/shared": true, "ecdh-p256/exchange": true,
	}
	if !run.Complete || len(run.Measurements) != len(want) || len(run.Failures) != 0 {
		t.Fatalf("complete=%v measurements=%d failures=%v problems=%v", run.Complete, len(run.Measurements), run.Failures, run.Problems)
	}
	ms := map[string]picodata.Measurement{}
	for _, m := range run.Measurements {
		key := m.Scheme + "/" + m.Op
		if !want[key] || !m.OK || m.Micros == 0 || m.Stack < 256 {
			t.Errorf("bad measurement %+v", m)
		}
		ms[key] = m
	}
	// The exchange is two keygens and two shared secrets: within 5 %.
	ex, kg, sh := ms["ecdh-p256/exchange"].Micros, ms["ecdh-p256/keygen"].Micros, ms["ecdh-p256/shared"].Micros
	if r := float64(ex) / float64(2*kg+2*sh); r < 0.95 || r > 1.05 {
		t.Errorf("exchange %d us vs 2*(keygen %d + shared %d)", ex, kg, sh)
	}
	checks, err := VerifyVectors(run.Dataset)
	if err != nil || len(checks) != 13 {
		t.Fatalf("host verification: %v (%d checks)", err, len(checks))
	}
	rep, err := SizeReportFile(img.ELF)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range rep.Owners {
		if o.Owner == "mbedtls" && o.Text < 10000 {
			t.Errorf("mbedtls text %d bytes", o.Text)
		}
	}
	for _, m := range run.Measurements {
		t.Logf("%s %s: %.1f ms, stack %d B", m.Scheme, m.Op, float64(m.Micros)/1000, m.Stack)
	}
	t.Logf("emulator: %.1f simulated MHz, %.2f s wall", run.Emulator.SimMHz, run.Emulator.WallSeconds)
}

// TestEmulateRSAKeygen runs one on-device RSA-2048 keygen (the full
// profile's path) and checks the generated key on the host. It is slow
// (tens of seconds of simulated time, minutes of wall time in rp2040js), so
// it runs only with PQREPRO_PICO_SLOW=1; the quick test suite leaves it out.
func TestEmulateRSAKeygen(t *testing.T) {
	if os.Getenv("PQREPRO_PICO_SLOW") != "1" {
		t.Skip("an RSA-2048 keygen takes minutes of wall time in rp2040js; set PQREPRO_PICO_SLOW=1 to run it")
	}
	needToolchain(t)
	needMbedTLS(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	p := QuickProfile
	p.RSA, p.ECC, p.RSAKeygen = 1, 1, 1
	img, err := Build(ctx, BuildConfig{Name: "test-classic-keygen", Schemes: picodata.ClassicalSchemes, Profile: p})
	if err != nil {
		t.Fatal(err)
	}
	run, err := Emulate(ctx, img, RunConfig{Timeout: 30 * time.Minute, IdleTimeout: 20 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	checks, err := VerifyVectors(run.Dataset)
	if err != nil || len(checks) != 18 {
		t.Fatalf("host verification: %v (%d checks)", err, len(checks))
	}
	for _, m := range run.Measurements {
		t.Logf("%s %s: %.1f ms, stack %d B, heap %d B", m.Scheme, m.Op, float64(m.Micros)/1000, m.Stack, m.Heap)
	}
	t.Logf("emulator: %.1f simulated MHz, %.2f s wall", run.Emulator.SimMHz, run.Emulator.WallSeconds)
}

// TestEmulateTimeLimitSaysWhichOperation runs the SPHINCS+-SHA2-128s image
// past a time limit shorter than its first key generation (hundreds of
// millions of cycles): the error must name the operation it was in, from
// the firmware's "b" line, not only the program counter.
func TestEmulateTimeLimitSaysWhichOperation(t *testing.T) {
	needToolchain(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	img, err := Build(ctx, BuildConfig{Name: "test-sphincs-sha2-128s", Schemes: []string{"sphincs-sha2-128s"}, Profile: QuickProfile})
	if err != nil {
		t.Fatal(err)
	}
	run, err := Emulate(ctx, img, RunConfig{Timeout: 6 * time.Second})
	if err == nil || !strings.Contains(err.Error(), "stopped (timeout) in sphincs-sha2-128s keygen i=0") {
		t.Fatalf("err = %v, want a timeout in sphincs-sha2-128s keygen i=0", err)
	}
	if run == nil || run.Complete || run.InProgress == nil || len(run.Measurements) != 0 {
		t.Fatalf("run = %+v, want incomplete, in keygen, no measurement", run)
	}
}

// TestEmulateSPHINCS is the end-to-end test of a SPHINCS+ image (the
// fastest set, SHA2-128f: about a minute of emulation): build, run, the
// "b" lines, the on-device verification, and the host's checks (circl's
// FIPS 205 key generation from the device's seeds, slhverify's round 3.1
// verification). A signature changed in the log must fail the host check.
func TestEmulateSPHINCS(t *testing.T) {
	needToolchain(t)
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	p := QuickProfile
	p.SLHKeygen, p.SLHSignFast = 1, 1
	img, err := Build(ctx, BuildConfig{Name: "test-sphincs-sha2-128f", Schemes: []string{"sphincs-sha2-128f"}, Profile: p})
	if err != nil {
		t.Fatal(err)
	}
	run, err := Emulate(ctx, img, RunConfig{Timeout: 8 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	if !run.Complete || len(run.Measurements) != 3 || run.InProgress != nil || len(run.Problems) != 0 {
		t.Fatalf("complete=%v measurements=%d in progress=%v problems=%v", run.Complete, len(run.Measurements), run.InProgress, run.Problems)
	}
	for _, m := range run.Measurements {
		if !m.OK || m.Scheme != "sphincs-sha2-128f" {
			t.Errorf("bad measurement %+v", m)
		}
		if m.Op == "sign" && (m.Cycles < 500_000_000 || m.Stack > 16<<10) {
			t.Errorf("sign: %d cycles, %d bytes of stack: not a SPHINCS+-128f signature", m.Cycles, m.Stack)
		}
	}
	checks, err := VerifyVectors(run.Dataset)
	if err != nil {
		t.Fatalf("host verification: %v", err)
	}
	names := map[string]bool{}
	for _, c := range checks {
		names[c.Lib+": "+c.Name] = c.OK
	}
	for _, want := range []string{"circl (FIPS 205): keygen pk", "circl (FIPS 205): keygen sk", "pqrepro slhverify (round 3.1): verify device signature",
		"pqrepro slhverify (round 3.1): reject flipped signature", "circl (FIPS 205): not a FIPS 205 signature"} {
		if !names[want] {
			t.Errorf("check %q missing or failed in %v", want, names)
		}
	}
	// A signature altered on its way to the host: an error, never dropped.
	sig := run.Vectors["sphincs-sha2-128f"]["sig"]
	sig[100] ^= 0x10
	checks, err = VerifyVectors(run.Dataset)
	if !errors.Is(err, ErrVectorMismatch) || !strings.Contains(err.Error(), "verify device signature") {
		t.Fatalf("altered signature: err = %v", err)
	}
	failed := 0
	for _, c := range checks {
		if !c.OK {
			failed++
		}
	}
	if failed == 0 {
		t.Error("the failed check must be listed with ok = false")
	}
}
