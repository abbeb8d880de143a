package picoboard

import (
	"context"
	"testing"
	"time"
)

// The cycles one tick of firmware/usbirq.c may cost from SRAM: its two
// exception entries (15 cycles each) and the work it does, counted from
// the TRM in rp2040js at about 900-1,000; the bounds leave room for where
// the tick interrupts, not for a handler that does nothing or loops.
const (
	usbTickMin = 500
	usbTickMax = USBTickMaxCycles
)

// TestUSBIRQ builds the ML-KEM-512 test image with and without the USB
// stdio interrupt at pico-sdk's period and checks that the interrupt runs
// (two exception entries per tick, one tick per period of simulated
// time), that the results still verify, and that every operation costs
// more by its ticks (its microseconds / the period, rounded down or up)
// times one tick's cycles.
func TestUSBIRQ(t *testing.T) {
	needToolchain(t)
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()
	p := QuickProfile
	p.KEM = 2
	runs := map[int]*EmulatedRun{}
	for _, us := range []int{0, SDKUSBIRQMicros} {
		img, err := Build(ctx, BuildConfig{Name: "test-usbirq-" + map[int]string{0: "off", SDKUSBIRQMicros: "sdk"}[us], Schemes: []string{"ml-kem-512"}, Profile: p, USBIRQMicros: us})
		if err != nil {
			t.Fatal(err)
		}
		if got, want := img.Provenance()["usb_irq_us"], map[int]string{0: "", SDKUSBIRQMicros: "1000"}[us]; got != want {
			t.Errorf("usb_irq_us %d: provenance %q", us, got)
		}
		run, err := Emulate(ctx, img, RunConfig{Timeout: 3 * time.Minute})
		if err != nil {
			t.Fatal(err)
		}
		if checks, err := VerifyVectors(run.Dataset); err != nil || len(checks) == 0 {
			t.Fatalf("usb_irq_us %d: host verification %v (%d checks)", us, err, len(checks))
		}
		runs[us] = run
	}
	off, on := runs[0], runs[SDKUSBIRQMicros]
	ticks := int(on.Emulator.SimSeconds * 1e6 / SDKUSBIRQMicros)
	if extra := int(on.Emulator.Timing.ExceptionEntries - off.Emulator.Timing.ExceptionEntries); extra < 2*ticks-4 || extra > 2*ticks+4 {
		t.Errorf("%d more exception entries over %.3f s of board time; want 2 per tick, %d", extra, on.Emulator.SimSeconds, 2*ticks)
	}
	for i, m := range on.Measurements {
		o := off.Measurements[i]
		lo, hi := int(o.Micros)/SDKUSBIRQMicros, int(m.Micros)/SDKUSBIRQMicros+1
		d := int(m.Cycles) - int(o.Cycles)
		if d < lo*usbTickMin || d > hi*usbTickMax {
			t.Errorf("%s #%d: %d cycles with the interrupt, %d without: %d more for %d-%d ticks", m.Op, m.Iter, m.Cycles, o.Cycles, d, lo, hi)
		}
		t.Logf("%s #%d: +%d cycles (%.2f %%), %d us", m.Op, m.Iter, d, 100*float64(d)/float64(o.Cycles), m.Micros)
	}
}
