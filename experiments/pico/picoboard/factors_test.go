package picoboard

import (
	"context"
	"strings"
	"testing"
)

// TestPLLFor checks the PLL settings against the RP2040 datasheet's
// section 2.18.2 and the two clocks of the factor: pico-sdk's default
// 125 MHz (VCO 1500 MHz, 6, 2) and the rated 133 MHz (VCO 1596 MHz, 6, 2,
// the firmware's setting before the factor).
func TestPLLFor(t *testing.T) {
	for mhz, want := range map[float64]PLL{
		125: {FBDIV: 125, PostDiv1: 6, PostDiv2: 2, KHz: 125000},
		133: {FBDIV: 133, PostDiv1: 6, PostDiv2: 2, KHz: 133000},
		// 48 MHz (USB's): VCO 1440 MHz / (6 * 5), the highest VCO that
		// two dividers of at most 7 bring down to it.
		48: {FBDIV: 120, PostDiv1: 6, PostDiv2: 5, KHz: 48000},
	} {
		got, err := PLLFor(mhz)
		if err != nil || got != want {
			t.Errorf("PLLFor(%v) = %+v, %v; want %+v", mhz, got, err, want)
		}
	}
	// Every setting obeys the datasheet's limits and makes what it says.
	for _, p := range pllSettings() {
		if p.VCOKHz() < 750000 || p.VCOKHz() > 1600000 || p.FBDIV < 16 || p.FBDIV > 320 ||
			p.PostDiv1 < 1 || p.PostDiv1 > 7 || p.PostDiv2 < 1 || p.PostDiv2 > p.PostDiv1 ||
			12000*p.FBDIV != p.KHz*p.PostDiv1*p.PostDiv2 {
			t.Fatalf("illegal or inexact setting %+v", p)
		}
	}
	for mhz, want := range map[float64]string{
		100.1: "nearest it can make: 100 MHz and 100.5 MHz",
		134:   "above the RP2040's rated 133 MHz",
		0:     "want a positive clock",
		-5:    "want a positive clock",
	} {
		if _, err := PLLFor(mhz); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("PLLFor(%v) = %v, want an error saying %q", mhz, err, want)
		}
	}
}

// TestCheckFactors checks that each unknown or impossible level is an
// error naming the key, and that Build refuses it before compiling.
func TestCheckFactors(t *testing.T) {
	for _, usb := range []int{0, MinUSBIRQMicros, SDKUSBIRQMicros, MaxUSBIRQMicros} {
		if err := CheckFactors("sdk-like", 125, 1024, usb); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		rt   string
		mhz  float64
		msg  int
		usb  int
		want string
	}{
		{"pico-sdk", 133, 32, 0, `runtime "pico-sdk"`},
		{"libgcc", 133.3, 32, 0, "clock_mhz = 133.3"},
		{"libgcc", 133, 0, 0, "message_bytes = 0"},
		{"libgcc", 133, 4097, 0, "message_bytes = 4097: want 1..4096"},
		{"libgcc", 133, 32, -1000, "usb_irq_us = -1000: want 0 (off) or a period of 100..1000000 us"},
		{"libgcc", 133, 32, 99, "usb_irq_us = 99: want 0 (off)"},
		{"libgcc", 133, 32, 1000001, "usb_irq_us = 1000001"},
	} {
		if err := CheckFactors(c.rt, c.mhz, c.msg, c.usb); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("CheckFactors(%q, %v, %d, %d) = %v, want %q", c.rt, c.mhz, c.msg, c.usb, err, c.want)
		}
		if c.msg == 0 {
			continue // 0 is the default in a BuildConfig
		}
		// Build fails the same way, before looking for a compiler.
		_, err := Build(context.Background(), BuildConfig{Name: "x", Schemes: []string{"ml-kem-512"}, Runtime: c.rt, ClockMHz: c.mhz, MsgBytes: c.msg, USBIRQMicros: c.usb})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Build with %q, %v MHz, %d bytes, usb %d: %v", c.rt, c.mhz, c.msg, c.usb, err)
		}
	}
}

// TestTimeSlackMicros checks the slack between an emulated operation's
// microseconds and its cycles / clock: the TIMER's steps alone; in flash
// the harness's misses at each end (2 x 16 lines x 56 cycles); and with
// the USB interrupt a tick at each end (2 x 1500 cycles at 125 MHz from
// SRAM, 2 x 8220 from flash).
func TestTimeSlackMicros(t *testing.T) {
	pll, _ := PLLFor(125)
	for _, c := range []struct {
		usb    int
		codeIn string
		want   float64
	}{{0, "", 2}, {0, "flash", 2 + 2*896.0/125}, {0, "flash-cold", 2 + 2*896.0/125}, {SDKUSBIRQMicros, "", 2 + 24},
		{SDKUSBIRQMicros, "flash", 2 + 2*896.0/125 + 2*8220.0/125}} {
		if got := (Image{PLL: pll, USBIRQ: c.usb, CodeIn: c.codeIn}).TimeSlackMicros(); got != c.want {
			t.Errorf("usb_irq_us %d, code_in %q: slack %v us, want %v", c.usb, c.codeIn, got, c.want)
		}
	}
}

// TestTimeSlackFor: the drift term grows with the operation: the failed
// check of a 23.5 s SPHINCS+-SHAKE-128f signature (2.2 us apart, a 2 us
// slack) passes, and a clock 0.1 % off still fails there.
func TestTimeSlackFor(t *testing.T) {
	pll, _ := PLLFor(133)
	img := Image{PLL: pll}
	const cycles = 3128426958
	us := cycles * 1e6 / 133e6
	if d := us - 23522005; d > img.TimeSlackFor(us) || d <= img.TimeSlackMicros() {
		t.Errorf("the 2.2 us drift: %v us against slack %v (without drift %v)", d, img.TimeSlackFor(us), img.TimeSlackMicros())
	}
	if d := us * 0.001; d <= img.TimeSlackFor(us) {
		t.Errorf("a clock 0.1 %% off (%v us) passes the slack %v", d, img.TimeSlackFor(us))
	}
}
