package pico

import (
	"context"
	"os/exec"
	"testing"
	"time"
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

func TestEmulateMLKEM512(t *testing.T) {
	needToolchain(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	p := QuickProfile
	p.KEM = 2
	img, err := Build(ctx, BuildConfig{Name: "test-mlkem512", Schemes: []string{"ml-kem-512"}, Profile: p})
	if err != nil {
		t.Fatal(err)
	}
	run, err := Emulate(ctx, img, RunConfig{Timeout: 2 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	if !run.Complete || len(run.Measurements) != 6 {
		t.Fatalf("complete=%v measurements=%d problems=%v", run.Complete, len(run.Measurements), run.Problems)
	}
	for _, m := range run.Measurements {
		if !m.OK || m.Micros == 0 {
			t.Errorf("bad measurement %+v", m)
		}
		// Timer and cycle counter agree: cycles = us * 133 within 1 %.
		if r := float64(m.Cycles) / float64(m.Micros*133); r < 0.99 || r > 1.01 {
			t.Errorf("%s %s: %d cycles in %d us is not 133 MHz", m.Scheme, m.Op, m.Cycles, m.Micros)
		}
	}
	if run.Header.ClockHz != 133000000 || run.Header.FirmwareID != img.FirmwareID {
		t.Errorf("header %+v, want clock 133 MHz and id %s", run.Header, img.FirmwareID)
	}
	t.Logf("emulator: %.1f simulated MHz, %.2f s wall", run.Emulator.SimMHz, run.Emulator.WallSeconds)
}
