package picoboard

import (
	"context"
	"strings"
	"testing"
	"time"

	"pqrepro/datasets/picodata"
)

// TestCodeInRefused checks that an unknown code_in level fails before
// anything is compiled.
func TestCodeInRefused(t *testing.T) {
	_, err := Build(context.Background(), BuildConfig{Name: "x", Schemes: []string{"ml-kem-512"}, CodeIn: "rom"})
	if err == nil || !strings.Contains(err.Error(), `code_in "rom" is not one of ram, flash, flash-cold`) {
		t.Fatalf("unknown code_in: %v", err)
	}
	for _, c := range CodeIns {
		if err := CheckCodeIn(c); err != nil {
			t.Error(err)
		}
	}
}

// opKey names one measurement: scheme, operation and iteration.
type opKey struct {
	op string
	i  int
}

// cyclesByOp maps each measurement of a run to its cycles.
func cyclesByOp(ms []picodata.Measurement) map[opKey]uint64 {
	m := map[opKey]uint64{}
	for _, x := range ms {
		m[opKey{x.Op, x.Iter}] = x.Cycles
	}
	return m
}

// TestFlashImageMLKEM512 builds the ML-KEM-512 test image three ways (code
// in SRAM; in flash through the XIP cache, warm; in flash with the cache
// flushed before each operation, cold), runs each in rp2040js and checks
// that the flash images compute the same (host-verified) results, that
// cold costs more than warm and warm at least what SRAM costs, that the
// cold image is deterministic, and that every cycle added is a miss's. It
// logs the cycles added per operation.
func TestFlashImageMLKEM512(t *testing.T) {
	needToolchain(t)
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	p := QuickProfile
	p.KEM = 2
	runs := map[string]*EmulatedRun{}
	for _, c := range CodeIns {
		img, err := Build(ctx, BuildConfig{Name: "test-mlkem512-" + c, Schemes: []string{"ml-kem-512"}, Profile: p, CodeIn: c})
		if err != nil {
			t.Fatal(err)
		}
		if got := img.Provenance()["code_in"]; got != map[string]string{"ram": "", "flash": "flash", "flash-cold": "flash-cold"}[c] {
			t.Errorf("%s: provenance code_in %q", c, got)
		}
		run, err := Emulate(ctx, img, RunConfig{Timeout: 3 * time.Minute})
		if err != nil {
			t.Fatal(err)
		}
		if checks, err := VerifyVectors(run.Dataset); err != nil || len(checks) < 5 {
			t.Fatalf("%s: host verification %v (%d checks)", c, err, len(checks))
		}
		if !run.Complete || len(run.Measurements) != 6 {
			t.Fatalf("%s: complete=%v measurements=%d", c, run.Complete, len(run.Measurements))
		}
		x, tm := run.Emulator.XIP, run.Emulator.Timing
		switch {
		case c == DefaultCodeIn && x != nil:
			t.Errorf("ram: the cache model ran: %+v", x)
		case c != DefaultCodeIn && x == nil:
			t.Fatalf("%s: no cache counters", c)
		case x != nil:
			if x.MissCycles != 56 || x.Misses == 0 || x.AddedCycles != 56*x.Misses || x.Hits+x.Misses != x.Accesses {
				t.Errorf("%s: cache counters %+v", c, x)
			}
			if tm.AddedCycles != tm.PushLR+tm.PopPC+15*tm.ExceptionEntries+x.AddedCycles {
				t.Errorf("%s: timing %+v does not add the cache's %d", c, tm, x.AddedCycles)
			}
			if want := map[string]uint64{"flash": 0, "flash-cold": 6}[c]; x.Flushes != want {
				t.Errorf("%s: %d flushes, want %d (one per measured operation)", c, x.Flushes, want)
			}
		}
		runs[c] = run
	}
	ram, warm, cold := cyclesByOp(runs["ram"].Measurements), cyclesByOp(runs["flash"].Measurements), cyclesByOp(runs["flash-cold"].Measurements)
	for k, r := range ram {
		w, c := warm[k], cold[k]
		t.Logf("%-7s i=%d: ram %d, flash warm %+d (%.1f %%), flash cold %+d (%.1f %%)", k.op, k.i, r,
			int64(w)-int64(r), 100*(float64(w)/float64(r)-1), int64(c)-int64(r), 100*(float64(c)/float64(r)-1))
		if !(c > w && w >= r) {
			t.Errorf("%s i=%d: cold %d, warm %d, ram %d: want cold > warm >= ram", k.op, k.i, c, w, r)
		}
	}
	// Cold runs are deterministic.
	img, err := Build(ctx, BuildConfig{Name: "test-mlkem512-flash-cold", Schemes: []string{"ml-kem-512"}, Profile: p, CodeIn: "flash-cold"})
	if err != nil {
		t.Fatal(err)
	}
	again, err := Emulate(ctx, img, RunConfig{Timeout: 3 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	for i, m := range runs["flash-cold"].Measurements {
		if again.Measurements[i] != m {
			t.Errorf("cold run 2 differs: %+v vs %+v", again.Measurements[i], m)
		}
	}
	if *again.Emulator.XIP != *runs["flash-cold"].Emulator.XIP {
		t.Errorf("cold run 2's cache counters differ: %+v vs %+v", again.Emulator.XIP, runs["flash-cold"].Emulator.XIP)
	}
}
