package picostudy

import (
	"strings"
	"testing"
)

// signScheme is a synthetic signature scheme with the given signing
// samples (ms) and cycle bounds.
func signScheme(samples []float64, minCyc, maxCyc uint64) *Scheme {
	var sum float64
	lo, hi := samples[0], samples[0]
	for _, v := range samples {
		sum += v
		lo, hi = min(lo, v), max(hi, v)
	}
	mean := sum / float64(len(samples))
	mc := mean * 133000
	return &Scheme{Family: "signature", Ops: map[string]*Op{"sign": {N: len(samples), MeanMs: &mean, P99Ms: &hi, MinMs: &lo, MaxMs: &hi,
		SamplesMs: samples, MinCycles: &minCyc, MaxCycles: &maxCyc, MeanCycles: &mc, EnergyMJ: ptr(mean * 0.0792)}}}
}

// TestRecommendationVerdicts checks the deadline verdicts: a constant-time
// scheme meets or misses a deadline outright whatever n, a varying one
// needs its Wilson bound past 95 %, and a set the run lacks is listed, not
// invented.
func TestRecommendationVerdicts(t *testing.T) {
	var mldsa []float64
	for i := 0; i < 100; i++ {
		// 30 under 100 ms, 69 under 1 s, one at 1.2 s.
		switch {
		case i < 30:
			mldsa = append(mldsa, 80)
		case i < 99:
			mldsa = append(mldsa, 400)
		default:
			mldsa = append(mldsa, 1200)
		}
	}
	r := &Results{Schemes: map[string]*Scheme{
		"ml-dsa-44":         signScheme(mldsa, 10_000_000, 160_000_000),
		"sphincs-sha2-128f": signScheme([]float64{7633.7, 7633.7, 7633.7}, 1015283748, 1015283760),
		"sphincs-sha2-128s": signScheme([]float64{60000}, 8e9, 8e9), // one signature: not shown constant
	}}
	rec := recommendation(r)
	if rec == nil || len(rec.Rows) != 3 {
		t.Fatalf("rows = %+v", rec)
	}
	want := map[string][3]string{
		"ml-dsa-44":         {"sometimes", "sometimes", "met"},
		"sphincs-sha2-128f": {"missed", "missed", "met"},
		"sphincs-sha2-128s": {"sometimes", "sometimes", "sometimes"},
	}
	for _, row := range rec.Rows {
		for i, m := range row.Deadlines {
			if m.Verdict != want[row.Scheme][i] {
				t.Errorf("%s within %v ms: %s (%d of %d, [%v, %v]), want %s", row.Scheme, m.DeadlineMs, m.Verdict, m.Met, m.N, m.Lo, m.Hi, want[row.Scheme][i])
			}
		}
	}
	ml, _ := rowOf(rec, "ml-dsa-44")
	if m := ml.Deadlines[1]; m.Met != 99 || m.N != 100 || m.Lo > 0.95 || m.Hi < 0.99 {
		t.Errorf("ML-DSA-44 within 1 s: %+v, want 99 of 100 with a Wilson interval around it", m)
	}
	if m := ml.Deadlines[2]; m.Met != 100 || m.Lo < 0.96 {
		t.Errorf("ML-DSA-44 within 10 s: %+v", m)
	}
	if f, _ := rowOf(rec, "sphincs-sha2-128f"); !f.Constant || f.CycleSpread > 1e-7 {
		t.Errorf("SPHINCS+-SHA2-128f: constant=%v spread=%v, want constant (12 cycles in 1.0e9)", f.Constant, f.CycleSpread)
	}
	if rec.Findings.FastestSPHINCS != "sphincs-sha2-128f" || rec.Findings.SPHINCSMeetsMs != 10000 {
		t.Errorf("findings %+v", rec.Findings)
	}
	if s := *rec.Findings.SlowdownVsMLDSA44; s < 20 || s > 25 {
		t.Errorf("slowdown %v, want 7633.7 / mean(ML-DSA-44) = 22.x", s)
	}
	if strings.Join(rec.NotMeasured, ",") != "sphincs-shake-128f" {
		t.Errorf("not measured %v", rec.NotMeasured)
	}

	// No ML-DSA: nothing to compare with.
	delete(r.Schemes, "ml-dsa-44")
	if recommendation(r) != nil {
		t.Error("a run without ML-DSA signing must give no comparison")
	}
}

// TestRecommendationMacrosAlwaysDefined checks that the paper's macros
// exist for a run without any SPHINCS+ set, as "---".
func TestRecommendationMacrosAlwaysDefined(t *testing.T) {
	r := &Results{Schemes: map[string]*Scheme{"ml-dsa-44": signScheme([]float64{80, 400}, 1, 2)}}
	r.Recommendation = recommendation(r)
	got := map[string]string{}
	recommendationNumbers(r, func(name, v string) { got[name] = v })
	for _, k := range []string{"SphincsShakeOneTwentyEightFSignMeanS", "SphincsShaTwoOneTwentyEightSMeetsTenSPct", "RecFastestSphincs", "MldsaEightySevenMeetsOneSPct"} {
		if got[k] != "---" {
			t.Errorf("%s = %q, want ---", k, got[k])
		}
	}
	if got["MldsaFortyFourMeetsHundredMsPct"] != "50" || got["RecSphincsMeets"] != "none" {
		t.Errorf("ML-DSA-44 within 100 ms %q, SPHINCS+ meets %q", got["MldsaFortyFourMeetsHundredMsPct"], got["RecSphincsMeets"])
	}
}
