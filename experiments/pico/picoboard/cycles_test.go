package picoboard

import (
	"context"
	"encoding/json"
	"io"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// cyclesReport is what experiments/pico/emulator/cycles.js prints.
type cyclesReport struct {
	Version string `json:"rp2040js"`
	Timing  string `json:"timing"`
	Rows    []struct {
		Instruction string `json:"instruction"`
		TRMRow      string `json:"trm_row"`
		TRM         int    `json:"trm_cycles"`
		RP2040js    int    `json:"rp2040js_cycles"`
		Emulator    int    `json:"emulator_cycles"`
	} `json:"rows"`
	Mismatches    int `json:"mismatches"`
	RawMismatches int `json:"raw_mismatches"`
}

// emulatorModules returns the checkout's root and the pinned rp2040js's
// node_modules, skipping the test where node, npm or rp2040js is missing.
func emulatorModules(t testing.TB) (root, mods string) {
	t.Helper()
	for _, tool := range []string{"node", "npm"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not installed (apt-get install -y nodejs npm)", tool)
		}
	}
	root, err := FindRoot("")
	if err != nil {
		t.Skipf("not in a checkout: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	mods, err = EnsureEmulator(ctx, root, io.Discard)
	if err != nil {
		t.Skipf("rp2040js not installable here (%v)", err)
	}
	return root, mods
}

// runCyclesJS runs cycles.js with extra arguments and decodes its report,
// skipping the test where node, npm or rp2040js cannot be had.
func runCyclesJS(t *testing.T, args ...string) cyclesReport {
	t.Helper()
	root, mods := emulatorModules(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	argv := append([]string{filepath.Join(root, "experiments/pico/emulator/cycles.js"), "--modules", mods}, args...)
	out, err := exec.CommandContext(ctx, "node", argv...).Output()
	if err != nil {
		t.Fatalf("cycles.js: %v", err)
	}
	var res cyclesReport
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatalf("cycles.js printed %q: %v", out, err)
	}
	return res
}

// TestEmulatorCyclesMatchTRM is the instrument check behind Study C's
// times: experiments/pico/emulator/cycles.js executes one instruction of
// every Thumb-1 class compiled code uses (moves, ALU, MULS, compares,
// shifts, loads and stores to SRAM and the SIO port, LDM/STM, PUSH/POP
// with and without LR/PC, branches taken and not, BL, BX, BLX, extends,
// reverses, MRS/MSR, barriers, hints) and an exception entry, in the
// pinned rp2040js under our timing layer (m0plus-timing.js, as run.js
// runs it), and compares the cycles with the Cortex-M0+ Technical
// Reference Manual (r0p1, table 3-1 and 3.6.1) on the RP2040's
// configuration (single-cycle multiplier, zero-wait SRAM: RP2040
// datasheet 2.2, 2.6). Each row is a subtest; any difference fails. XIP
// flash and its cache are not modelled by rp2040js and so are not
// checked: our images run from SRAM.
func TestEmulatorCyclesMatchTRM(t *testing.T) {
	res := runCyclesJS(t)
	if len(res.Rows) < 80 {
		t.Fatalf("only %d instruction classes checked", len(res.Rows))
	}
	for _, r := range res.Rows {
		t.Run(r.Instruction, func(t *testing.T) {
			if r.TRM != r.Emulator {
				t.Errorf("rp2040js %s with %s: %s takes %d cycles, the TRM (%s) says %d",
					res.Version, res.Timing, r.Instruction, r.Emulator, r.TRMRow, r.TRM)
			}
		})
	}
	if res.Mismatches != 0 {
		t.Errorf("cycles.js counts %d mismatches", res.Mismatches)
	}
}

// TestEmulatorRawDifferences documents where rp2040js alone departs from
// the TRM: exactly the rows m0plus-timing.js corrects (LR in PUSH, PC in
// POP, exception entry), each by the cycles the layer adds. A newer
// rp2040js that fixed one of them would fail here and in the check above.
func TestEmulatorRawDifferences(t *testing.T) {
	res := runCyclesJS(t, "--raw")
	want := map[string]int{
		"PUSH {lr} (1 + N, N counts LR)":                1,
		"PUSH {r4-r7, lr} (1 + N, N counts LR)":         1,
		"POP {pc} (3 + N, N counts PC)":                 1,
		"POP {r4, pc} (3 + N, N counts PC)":             1,
		"POP {r4-r7, pc} (3 + N, N counts PC)":          1,
		"exception entry (PendSV) + NOP in the handler": 15,
	}
	got := map[string]int{}
	for _, r := range res.Rows {
		if r.RP2040js != r.Emulator {
			t.Errorf("--raw: %s counted %d and %d", r.Instruction, r.RP2040js, r.Emulator)
		}
		if d := r.TRM - r.RP2040js; d != 0 {
			got[r.Instruction] = d
		}
	}
	if len(got) != len(want) || res.RawMismatches != len(want) || res.Mismatches != len(want) {
		t.Errorf("rp2040js alone differs from the TRM in %v (%d, %d), want %v", got, res.RawMismatches, res.Mismatches, want)
	}
	for k, d := range want {
		if got[k] != d {
			t.Errorf("rp2040js alone: %s is %d cycles short, want %d", k, got[k], d)
		}
	}
}
