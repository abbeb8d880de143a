package picostudy

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestResampler: an operation with repetitions has its mean and se
// re-derived from a resample of them (a mean of drawn repetitions), one
// without is drawn at its se, cycles and stack stay exact, the reference
// is untouched.
func TestResampler(t *testing.T) {
	f := func(x float64) *float64 { return &x }
	sign := &Op{N: 4, MeanMs: f(2), SDMs: f(2), MeanCycles: f(100), PeakStackBytes: 64, SamplesMs: []float64{1, 1, 1, 5}}
	keygen := &Op{N: 4, MeanMs: f(3), SDMs: f(0.2), MeanCycles: f(50), PeakStackBytes: 32}
	ref := &Results{Profile: "full", Emulated: true, Schemes: map[string]*Scheme{"ml-dsa-44": {Ops: map[string]*Op{"sign": sign, "keygen": keygen}}}}
	items := CompareItems(ref, ref)
	r := Resampler(ref)
	moved := false
	for seed := range uint64(20) {
		v := r(rand.New(rand.NewPCG(seed, 1)))
		if len(v) != len(items) {
			t.Fatalf("%d values for %d items", len(v), len(items))
		}
		for i, it := range items {
			switch it.Name {
			case "ml-dsa-44 sign mean time":
				// A mean of 4 draws from {1, 1, 1, 5} is 1, 2, 3, 4 or 5.
				if k := v[i].Est; k != math.Round(k) || k < 1 || k > 5 || math.IsNaN(v[i].SE) {
					t.Errorf("seed %d: sign mean %+v is not a resample's", seed, v[i])
				}
				moved = moved || v[i].Est != 2
			case "ml-dsa-44 keygen mean time":
				if v[i].Est == 3 || v[i].SE != 0.1 {
					t.Errorf("seed %d: keygen %+v: want drawn at se 0.1", seed, v[i])
				}
			default:
				if v[i] != it.Ref {
					t.Errorf("seed %d: %s moved: %+v", seed, it.Name, v[i])
				}
			}
		}
	}
	if !moved {
		t.Error("20 resamples gave the reference's mean every time")
	}
	if *sign.MeanMs != 2 || *keygen.MeanMs != 3 {
		t.Error("the reference was modified")
	}
}
