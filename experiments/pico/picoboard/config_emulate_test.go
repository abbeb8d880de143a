package picoboard

import (
	"context"
	"math"
	"slices"
	"testing"
	"time"

	"pqrepro/datasets/picodata"
)

// TestConfigurationsDeterministic runs an ML-DSA-44 image of each
// configuration twice in rp2040js: [build]'s (libgcc, 133 MHz, 32-byte
// message, code in SRAM, no USB interrupt), "sdk" (our runtime, 125 MHz,
// code in flash, the USB stdio interrupt every 1000 us), and the two
// single changes the factors make (libgcc at 125 MHz; a 1024-byte
// message). Each gives the same measurements twice, the clock the build
// asked for, and times that are its cycles / clock; the clock alone moves
// times, not cycles.
func TestConfigurationsDeterministic(t *testing.T) {
	needToolchain(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	t.Cleanup(cancel)
	type config struct {
		name, runtime, codeIn string
		mhz                   float64
		msg, usb              int
	}
	configs := []config{
		{"test-cfg-build", "libgcc", "ram", 133, 32, 0},
		{"test-cfg-sdk", "sdk-like", "flash", 125, 32, SDKUSBIRQMicros},
		{"test-cfg-125", "libgcc", "ram", 125, 32, 0},
		{"test-cfg-msg1024", "libgcc", "ram", 133, 1024, 0},
	}
	p := QuickProfile
	p.DSAKeygen, p.DSASign = 1, 2
	runs := map[string]*EmulatedRun{}
	for _, c := range configs {
		img, err := Build(ctx, BuildConfig{Name: c.name, Schemes: []string{"ml-dsa-44"}, Profile: p, Runtime: c.runtime, ClockMHz: c.mhz, MsgBytes: c.msg,
			CodeIn: c.codeIn, USBIRQMicros: c.usb})
		if err != nil {
			t.Fatal(err)
		}
		var first *EmulatedRun
		for range 2 {
			run, err := Emulate(ctx, img, RunConfig{Timeout: 3 * time.Minute})
			if err != nil {
				t.Fatal(err)
			}
			if first == nil {
				first = run
				continue
			}
			if len(run.Measurements) != len(first.Measurements) || run.Emulator.Cycles != first.Emulator.Cycles {
				t.Fatalf("%s: run 2 has %d measurements, %d cycles; run 1 %d, %d", c.name, len(run.Measurements), run.Emulator.Cycles, len(first.Measurements), first.Emulator.Cycles)
			}
			for i, m := range run.Measurements {
				if m != first.Measurements[i] {
					t.Errorf("%s: run 2 differs: %+v vs %+v", c.name, m, first.Measurements[i])
				}
			}
		}
		hz := c.mhz * 1e6
		if first.Header.ClockHz != uint32(hz) || first.Emulator.ClkSys != hz {
			t.Errorf("%s: firmware reports %d Hz, rp2040js ran %v Hz; want %v", c.name, first.Header.ClockHz, first.Emulator.ClkSys, hz)
		}
		for _, m := range first.Measurements {
			if us := float64(m.Cycles) * 1e6 / hz; math.Abs(us-float64(m.Micros)) > img.TimeSlackFor(us) {
				t.Errorf("%s: %s %s took %d us for %d cycles, not cycles / clock (%.1f us)", c.name, m.Scheme, m.Op, m.Micros, m.Cycles, us)
			}
		}
		if n := len(first.Vectors["ml-dsa-44"]["msg"]); n != c.msg {
			t.Errorf("%s: signed %d bytes, want %d", c.name, n, c.msg)
		}
		if checks, err := VerifyVectors(first.Dataset); err != nil || len(checks) == 0 {
			t.Errorf("%s: host verification %v (%d checks)", c.name, err, len(checks))
		}
		runs[c.name] = first
		for _, m := range first.Measurements {
			t.Logf("%s: %s %s #%d: %d cycles, %d us", c.name, m.Scheme, m.Op, m.Iter, m.Cycles, m.Micros)
		}
	}
	// The clock moves times, not cycles: libgcc at 125 MHz counts the
	// cycles of libgcc at 133 MHz.
	a, b := runs["test-cfg-build"].Measurements, runs["test-cfg-125"].Measurements
	for i := range a {
		if a[i].Cycles != b[i].Cycles {
			t.Errorf("%s %s #%d: %d cycles at 133 MHz, %d at 125 MHz", a[i].Scheme, a[i].Op, a[i].Iter, a[i].Cycles, b[i].Cycles)
		}
	}
	// The sdk configuration's run-time routines save more cycles in every
	// ML-DSA operation than its flash and its interrupt add.
	for i, m := range runs["test-cfg-sdk"].Measurements {
		if m.Cycles >= a[i].Cycles {
			t.Errorf("%s %s #%d: sdk-like %d cycles, libgcc %d", m.Scheme, m.Op, m.Iter, m.Cycles, a[i].Cycles)
		}
	}
}

// TestDSALoopCounts: an ML-DSA image counts each signature's rejection
// loop through the linker's wraps (firmware/dsacount.c): every signature
// has at least one iteration, the counts can come from one signature, and
// the signature whose loop ran more iterations took more cycles.
func TestDSALoopCounts(t *testing.T) {
	needToolchain(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	t.Cleanup(cancel)
	p := QuickProfile
	p.DSAKeygen, p.DSASign = 1, 6
	img, err := Build(ctx, BuildConfig{Name: "test-dsacount", Schemes: []string{"ml-dsa-44"}, Profile: p})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(img.LDFlags, "-Wl,--wrap=PQCLEAN_MLDSA44_CLEAN_poly_challenge") || !slices.Contains(img.Defines, "DSA_COUNTS") {
		t.Fatalf("the image does not wrap the counted functions: ldflags %v", img.LDFlags)
	}
	run, err := Emulate(ctx, img, RunConfig{Timeout: 3 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	var signs []picodata.Measurement
	for _, m := range run.Measurements {
		switch {
		case m.Op == "sign":
			if err := m.Loop.Check(); err != nil {
				t.Errorf("sign %d: %v", m.Iter, err)
			}
			signs = append(signs, m)
		case m.Loop.Counted():
			t.Errorf("%s %s counted a loop: %+v", m.Scheme, m.Op, m.Loop)
		}
	}
	if len(signs) != p.DSASign {
		t.Fatalf("%d signatures, want %d", len(signs), p.DSASign)
	}
	lo, hi := signs[0], signs[0]
	for _, m := range signs {
		if m.Loop.Iters < lo.Loop.Iters {
			lo = m
		}
		if m.Loop.Iters > hi.Loop.Iters {
			hi = m
		}
	}
	if hi.Loop.Iters > lo.Loop.Iters && hi.Cycles <= lo.Cycles {
		t.Errorf("%d iterations took %d cycles, %d took %d: more iterations must cost more", hi.Loop.Iters, hi.Cycles, lo.Loop.Iters, lo.Cycles)
	}
	t.Logf("iterations per signature: %v", func() (s []uint32) {
		for _, m := range signs {
			s = append(s, m.Loop.Iters)
		}
		return
	}())
}
