package picoboard

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// The clock factor ([build] clock_mhz). The RP2040's rated maximum is
// 133 MHz (RP2040 datasheet, chapter 1); a pico-sdk program that never
// calls set_sys_clock_* runs at the SDK's default, 125 MHz.
const (
	DefaultClockMHz = 133
	SDKClockMHz     = 125
	MaxClockMHz     = 133
)

// The crystal and the PLL's limits (RP2040 datasheet 2.16 and 2.18.2).
// f_out = f_ref / REFDIV * FBDIV / (POSTDIV1 * POSTDIV2), the VCO
// (f_ref / REFDIV * FBDIV) in 750..1600 MHz, FBDIV 16..320, each POSTDIV
// 1..7. The firmware keeps REFDIV at 1 (f_ref 12 MHz, above the 5 MHz
// minimum).
const (
	xoscKHz            = 12000
	vcoMinKHz          = 750000
	vcoMaxKHz          = 1600000
	fbdivMin, fbdivMax = 16, 320
	postdivMax         = 7
)

// PLL is one setting of PLL_SYS (RP2040 datasheet 2.18.2) and the clk_sys
// it makes from the 12 MHz crystal, in kHz.
type PLL struct {
	FBDIV    int `json:"fbdiv"`
	PostDiv1 int `json:"postdiv1"`
	PostDiv2 int `json:"postdiv2"`
	KHz      int `json:"clk_sys_khz"`
}

// VCOKHz is the PLL's VCO frequency: 12 MHz times FBDIV (REFDIV 1).
func (p PLL) VCOKHz() int { return xoscKHz * p.FBDIV }

// Hz is the PLL's output frequency in Hz.
func (p PLL) Hz() int { return p.KHz * 1000 }

// pllSettings lists every legal setting with REFDIV 1 (datasheet 2.18.2),
// POSTDIV1 >= POSTDIV2 and an output of a whole kHz. The datasheet
// advises the first divider at the higher value: it saves power.
func pllSettings() []PLL {
	var out []PLL
	for fb := fbdivMin; fb <= fbdivMax; fb++ {
		vco := xoscKHz * fb
		if vco < vcoMinKHz || vco > vcoMaxKHz {
			continue
		}
		for pd1 := 1; pd1 <= postdivMax; pd1++ {
			for pd2 := 1; pd2 <= pd1; pd2++ {
				if vco%(pd1*pd2) == 0 {
					out = append(out, PLL{FBDIV: fb, PostDiv1: pd1, PostDiv2: pd2, KHz: vco / (pd1 * pd2)})
				}
			}
		}
	}
	return out
}

// PLLFor returns the PLL_SYS setting that makes mhz exactly from the
// 12 MHz crystal (RP2040 datasheet 2.18.2), else an error naming the
// nearest.
//
// Of the settings that make mhz, it takes the one with the highest VCO
// frequency (the datasheet: lower jitter), then the largest POSTDIV1: for
// 125 MHz VCO 1500 MHz, 6 and 2, as pico-sdk's default, and for 133 MHz VCO
// 1596 MHz, 6 and 2, the firmware's setting before this factor existed.
// A clock above the RP2040's rated 133 MHz is an error.
func PLLFor(mhz float64) (PLL, error) {
	if math.IsNaN(mhz) || mhz <= 0 {
		return PLL{}, fmt.Errorf("clock_mhz = %v: want a positive clock in MHz", mhz)
	}
	if mhz > MaxClockMHz {
		return PLL{}, fmt.Errorf("clock_mhz = %v is above the RP2040's rated %d MHz (datasheet chapter 1)", mhz, MaxClockMHz)
	}
	khz := math.Round(mhz * 1000)
	all := pllSettings()
	if math.Abs(khz-mhz*1000) < 1e-6 {
		var best *PLL
		for i, p := range all {
			if float64(p.KHz) != khz {
				continue
			}
			if best == nil || p.FBDIV > best.FBDIV || p.FBDIV == best.FBDIV && p.PostDiv1 > best.PostDiv1 {
				best = &all[i]
			}
		}
		if best != nil {
			return *best, nil
		}
	}
	below, above := 0, 0
	for _, p := range all {
		f := float64(p.KHz)
		if f < mhz*1000 && f > float64(below) {
			below = p.KHz
		}
		if f > mhz*1000 && f <= MaxClockMHz*1000 && (above == 0 || p.KHz < above) {
			above = p.KHz
		}
	}
	var near []string
	for _, k := range []int{below, above} {
		if k != 0 {
			near = append(near, formatMHz(k)+" MHz")
		}
	}
	return PLL{}, fmt.Errorf("clock_mhz = %v: the PLL cannot make it exactly from the 12 MHz crystal (VCO 750-1600 MHz, FBDIV 16-320, POSTDIV 1-7; RP2040 datasheet 2.18.2); the nearest it can make: %s",
		mhz, strings.Join(near, " and "))
}

// formatMHz writes khz in MHz with no trailing zeros.
func formatMHz(khz int) string {
	return strconv.FormatFloat(float64(khz)/1000, 'f', -1, 64)
}

// The message-length factor ([build] message_bytes): the bytes every
// signature scheme signs. 32 is the length every pinned run signed.
// MaxMessageBytes bounds the firmware's static message buffer, which sits
// in SRAM beside ML-DSA-87's 128 KiB stack.
const (
	DefaultMessageBytes = 32
	MaxMessageBytes     = 4096
)

// CheckMessageBytes returns an error unless n is in 1..MaxMessageBytes.
func CheckMessageBytes(n int) error {
	if n < 1 || n > MaxMessageBytes {
		return fmt.Errorf("message_bytes = %d: want 1..%d (the firmware's static message buffer)", n, MaxMessageBytes)
	}
	return nil
}

// factorDefines returns the firmware's -D defines of the clock and message
// factors. They are the PLL's dividers, the clock in Hz that board.c and the
// start line report, and the message length.
func factorDefines(pll PLL, msgBytes int) []string {
	return []string{
		fmt.Sprintf("PLL_SYS_FBDIV=%d", pll.FBDIV),
		fmt.Sprintf("PLL_SYS_POSTDIV1=%d", pll.PostDiv1),
		fmt.Sprintf("PLL_SYS_POSTDIV2=%d", pll.PostDiv2),
		fmt.Sprintf("SYS_CLOCK_HZ=%du", pll.Hz()),
		fmt.Sprintf("MSG_BYTES=%d", msgBytes),
	}
}

// The USB interrupt factor ([build] usb_irq_us), in microseconds; 0 is
// off, every pinned run's. It is the period of the alarm with which a
// pico-sdk program's USB stdio runs TinyUSB's task (firmware/usbirq.c).
// SDKUSBIRQMicros is PICO_STDIO_USB_TASK_INTERVAL_US's default (pico-sdk
// src/rp2_common/pico_stdio_usb/include/pico/stdio_usb.h). Below
// MinUSBIRQMicros the load is no longer the SDK's kind: one tick's work
// (about 1,000 cycles, 8 us at 125 MHz, in rp2040js) would take a tenth
// of the period or more, and a tick that comes late is, in the SDK's
// alarm pool, run again at once. Above MaxUSBIRQMicros (1 s) few
// operations would see a tick at all.
const (
	SDKUSBIRQMicros = 1000
	MinUSBIRQMicros = 100
	MaxUSBIRQMicros = 1000000
)

// USBTickMaxCycles bounds the cycles one tick of firmware/usbirq.c takes
// in rp2040js from SRAM (about 900-1,000). In a flash image a tick can
// find its code (about 900 bytes, 113 lines of the XIP cache) evicted:
// usbTickFlashCycles bounds it with every line a miss (56 cycles each,
// xip-cache.js) on top.
const (
	USBTickMaxCycles   = 1500
	usbTickFlashCycles = USBTickMaxCycles + 120*56
)

// harnessFlashLines bounds the XIP cache lines the harness's code between
// the two counters' reads may miss at each end of an operation, in flash.
// That code is time_us's tail, cycles (28 and 60 bytes in the images'
// maps: 4 and 8 lines of 8 bytes, one more each for alignment) and the
// call site's few instructions (2 lines); the operation before it may
// have evicted every one. 16 lines (896 cycles, 7.2 us at 125 MHz) bound
// them with room.
const harnessFlashLines = 16

// emulatorClockDrift bounds, relative to an operation's time, how far
// rp2040js's TIMER may drift from its cycles. Its clock is a float64 of
// nanoseconds advanced by each instruction's cycles x 1e9 / clk_sys, and
// each addition rounds by up to half an ulp of the running total: for an
// image of up to an hour (3.6e12 ns, ulp 2^-11 ns) and at least 7.5 ns per
// addition (one cycle at 133 MHz), under 33 ppm. Measured: 2.2 us in a
// 23.5 s SPHINCS+-SHAKE-128f signature (0.09 ppm). A wrong clock moves
// times by percents, 300 times more.
const emulatorClockDrift = 40e-6

// TimeSlackFor is TimeSlackMicros plus the emulator clock's drift over an
// operation of us microseconds (emulatorClockDrift).
func (img Image) TimeSlackFor(us float64) float64 {
	return img.TimeSlackMicros() + emulatorClockDrift*us
}

// TimeSlackMicros is how far an emulated operation's TIMER microseconds
// may lie from its cycles / clock. That is the TIMER's 1 us steps and the
// cycles between the two counters' reads, 2 us; in flash, also the XIP
// misses of that code at each end (harnessFlashLines, 56 cycles each,
// xip-cache.js), which the cycles count and the microseconds do not;
// with the USB interrupt, also a tick at each end, which can come between
// the two reads (bench.c: the cycle counter is read first at the start,
// last at the end). A wrong clock moves an operation's time by percents,
// far more.
func (img Image) TimeSlackMicros() float64 {
	slack := 2.0
	hz := img.PLL.Hz()
	if inFlash(img.CodeIn) && hz > 0 {
		slack += 2 * harnessFlashLines * 56 * 1e6 / float64(hz)
	}
	if img.USBIRQ > 0 && hz > 0 {
		tick := USBTickMaxCycles
		if inFlash(img.CodeIn) {
			tick = usbTickFlashCycles
		}
		slack += 2 * float64(tick) * 1e6 / float64(hz)
	}
	return slack
}

// CheckUSBIRQ returns an error unless us is 0 (off) or a period in
// MinUSBIRQMicros..MaxUSBIRQMicros.
func CheckUSBIRQ(us int) error {
	if us != 0 && (us < MinUSBIRQMicros || us > MaxUSBIRQMicros) {
		return fmt.Errorf("usb_irq_us = %d: want 0 (off) or a period of %d..%d us (pico-sdk's is %d)", us, MinUSBIRQMicros, MaxUSBIRQMicros, SDKUSBIRQMicros)
	}
	return nil
}

// CheckFactors checks the build factors of one configuration (runtime,
// clock, message length, USB interrupt period) and returns the first
// error, before anything is compiled.
func CheckFactors(runtime string, clockMHz float64, msgBytes, usbIRQMicros int) error {
	if err := CheckRuntime(runtime); err != nil {
		return err
	}
	if _, err := PLLFor(clockMHz); err != nil {
		return err
	}
	if err := CheckMessageBytes(msgBytes); err != nil {
		return err
	}
	return CheckUSBIRQ(usbIRQMicros)
}
