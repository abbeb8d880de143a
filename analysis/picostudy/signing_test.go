package picostudy

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"pqrepro/datasets/picodata"
)

// loopSigns makes n ML-DSA-44 signatures whose cycles are exactly
// base + iter n + r0 r + ct0 c + hint h for random paths through the loop.
func loopSigns(n int, hintsVary bool) []picodata.Measurement {
	rng := rand.New(rand.NewPCG(4, 3))
	var ms []picodata.Measurement
	for i := range n {
		it := uint32(1 + rng.IntN(6))
		r0 := 1 + uint32(rng.IntN(int(it)))
		ct0 := 1 + uint32(rng.IntN(int(r0)))
		h := uint32(1)
		if hintsVary {
			h += uint32(rng.IntN(int(ct0)))
		}
		cyc := 2_000_000 + 900_000*uint64(it) + 150_000*uint64(r0) + 120_000*uint64(ct0) + 60_000*uint64(h)
		ms = append(ms, picodata.Measurement{Scheme: "ml-dsa-44", Op: "sign", Iter: i, Cycles: cyc, OK: true,
			Loop: picodata.DSALoop{Iters: it, R0Checks: r0, Ct0Checks: ct0, Hints: h}})
	}
	// A verify and a keygen without counts are not signatures.
	return append(ms, picodata.Measurement{Scheme: "ml-dsa-44", Op: "verify", Cycles: 1}, picodata.Measurement{Scheme: "ml-kem-512", Op: "keygen", Cycles: 1})
}

func TestSigningLoopRecoversSteps(t *testing.T) {
	ls, err := signingLoops(loopSigns(100, true))
	if err != nil || len(ls) != 1 {
		t.Fatalf("%d loops, %v", len(ls), err)
	}
	l := ls[0]
	for name, c := range map[string][2]float64{"base": {float64(l.BaseCycles), 2_000_000}, "iteration": {float64(l.IterCycles), 900_000},
		"r0": {float64(l.R0Cycles), 150_000}, "ct0": {float64(l.Ct0Cycles), 120_000}, "hint": {float64(l.HintCycles), 60_000}} {
		if math.Abs(c[0]-c[1]) > 1 {
			t.Errorf("%s step %v cycles, want %v", name, c[0], c[1])
		}
	}
	if l.N != 100 || l.OneIterN == 0 || float64(l.OneIterMinCycles) != 2_000_000+900_000+150_000+120_000+60_000 || float64(l.MaxResidualPct) > 1e-6 {
		t.Errorf("n %d, one-iteration %d min %v, residual %v", l.N, l.OneIterN, l.OneIterMinCycles, l.MaxResidualPct)
	}
	if !(float64(l.CVPct) > 10) || !(float64(l.MeanIters) > 1) {
		t.Errorf("CV %v %%, mean iterations %v", l.CVPct, l.MeanIters)
	}
	tab, err := signingTable(&Results{SigningLoops: ls, ClockHz: 133_000_000})
	if err != nil || !strings.Contains(tab, `\label{tab:pico-signing}`) || !strings.Contains(tab, "ML-DSA-44 & 100") || !strings.Contains(tab, "& 900 & 150 & 120 & 60") {
		t.Errorf("table (err %v):\n%s", err, tab)
	}
}

func TestSigningLoopNotSeparable(t *testing.T) {
	// Every signature made one hint: the hint's cost is in the base.
	ls, _ := signingLoops(loopSigns(50, false))
	if l := ls[0]; !math.IsNaN(float64(l.HintCycles)) || math.Abs(float64(l.IterCycles)-900_000) > 1 || math.Abs(float64(l.BaseCycles)-2_060_000) > 1 {
		t.Errorf("hint %v, iteration %v, base %v: want NaN, 900000 and 2060000 (the hint folded in)", l.HintCycles, l.IterCycles, l.BaseCycles)
	}
	// Every iteration that reached ||r0|| also reached ||ct0|| (as in
	// ML-DSA-44's pinned run): ct0 moves with r0, is not separable, and
	// its cost is in r0's; the others are still fitted.
	same := loopSigns(50, true)
	for i := range same[:50] {
		d := &same[i].Loop
		extra := 120_000 * (uint64(d.R0Checks) - uint64(d.Ct0Checks))
		d.Ct0Checks = d.R0Checks
		d.Hints = min(d.Hints, d.Ct0Checks)
		same[i].Cycles += extra
	}
	ls, _ = signingLoops(same)
	if l := ls[0]; !math.IsNaN(float64(l.Ct0Cycles)) || math.Abs(float64(l.IterCycles)-900_000) > 1 || math.Abs(float64(l.R0Cycles)-270_000) > 1 ||
		math.Abs(float64(l.HintCycles)-60_000) > 1 || float64(l.MaxResidualPct) > 1e-6 {
		t.Errorf("collinear ct0: %+v; want ct0 NaN, iteration 900000, r0 270000 (ct0's folded in), hint 60000", l)
	}
	// Too few signatures to fit: the steps stay NaN, the rest is given.
	ls, _ = signingLoops(loopSigns(3, true))
	if l := ls[0]; !math.IsNaN(float64(l.IterCycles)) || l.N != 3 || math.IsNaN(float64(l.MeanCycles)) {
		t.Errorf("three signatures: %+v", l)
	}
	// A run before the counts has none, and the table says so.
	plain := loopSigns(5, true)
	for i := range plain {
		plain[i].Loop = picodata.DSALoop{}
	}
	if ls, _ := signingLoops(plain); ls != nil {
		t.Errorf("uncounted signatures gave %+v", ls)
	}
	if tab, _ := signingTable(&Results{ClockHz: 133_000_000}); !strings.Contains(tab, "not measured in this run") {
		t.Errorf("table without counts:\n%s", tab)
	}
	bad := loopSigns(5, true)
	bad[2].Loop.Hints = bad[2].Loop.Ct0Checks + 1
	if _, err := signingLoops(bad); err == nil || !strings.Contains(err.Error(), "sign 2") {
		t.Errorf("impossible counts: %v", err)
	}
}
