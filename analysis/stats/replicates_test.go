package stats

import (
	"math"
	"math/rand/v2"
	"testing"
)

// BootstrapMedians draws exactly the medians of sorting each resample
// drawn with rng.IntN from the same stream.
func TestBootstrapMediansBySorting(t *testing.T) {
	for _, n := range []int{1, 2, 3, 10, 11} {
		g := rand.New(rand.NewPCG(1, uint64(n)))
		x := make([]float64, n)
		for i := range x {
			x[i] = math.Round(g.NormFloat64()*10) / 10 // ties too
		}
		got, err := BootstrapMedians(x, 5, 9, 50)
		if err != nil {
			t.Fatal(err)
		}
		draw := rand.New(rand.NewPCG(5, 9))
		for b := range got {
			r := make([]float64, n)
			for i := range r {
				r[i] = x[draw.IntN(n)]
			}
			want, _ := Median(r)
			if got[b] != want {
				t.Fatalf("n=%d resample %d: median %v, want %v", n, b, got[b], want)
			}
		}
	}
}

func TestBootstrapReplicates(t *testing.T) {
	for _, tc := range []struct {
		name      string
		est       float64
		reps      []float64
		lo, hi, p float64
	}{
		// mean 2, sd 1.5811: z = 2/1.5811 = 1.2649, p = 0.2059
		{"spread", 2, []float64{0, 1, 2, 3, 4}, 0.2, 3.8, 0.20590321073206},
		{"constant zero", 0, []float64{0, 0, 0}, 0, 0, 1},
		{"constant nonzero", 1, []float64{1, 1, 1}, 1, 1, 0},
	} {
		r, err := BootstrapReplicates(tc.est, tc.reps, 0.9)
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(r.Lower-tc.lo) > 1e-12 || math.Abs(r.Upper-tc.hi) > 1e-12 || math.Abs(r.P-tc.p) > 1e-9 {
			t.Errorf("%s: %+v, want [%v, %v] p %v", tc.name, r, tc.lo, tc.hi, tc.p)
		}
	}
	for _, bad := range []struct {
		reps  []float64
		level float64
	}{{[]float64{1}, 0.95}, {[]float64{1, 2}, 1}, {[]float64{1, 2}, 0}} {
		if _, err := BootstrapReplicates(0, bad.reps, bad.level); err == nil {
			t.Errorf("BootstrapReplicates(%v, %v) accepted", bad.reps, bad.level)
		}
	}
	if _, err := BootstrapMedians(nil, 1, 1, 10); err == nil {
		t.Error("BootstrapMedians accepted an empty sample")
	}
	if _, err := BootstrapMedians([]float64{1, math.NaN()}, 1, 1, 10); err == nil {
		t.Error("BootstrapMedians accepted NaN")
	}
}

func TestBonferroniZAndExcessSD(t *testing.T) {
	if z := BonferroniZ(0.05, 1); math.Abs(z-1.959963984540054) > 1e-12 {
		t.Errorf("BonferroniZ(0.05, 1) = %v, want 1.96", z)
	}
	if z := BonferroniZ(0.05, 48); math.Abs(z-3.2790) > 1e-3 {
		t.Errorf("BonferroniZ(0.05, 48) = %v, want 3.28", z)
	}
	// Pairs that differ by no more than their errors carry no excess.
	if tau := ExcessSD([]float64{0.1, -0.2}, []float64{0.3, 0.3}); tau != 0 {
		t.Errorf("tau = %v, want 0", tau)
	}
	// (4 - 1) / 2 and (0 - 1) / 2: mean 0.5, tau sqrt(0.5).
	if tau := ExcessSD([]float64{2, 0}, []float64{1, 1}); math.Abs(tau-math.Sqrt(0.5)) > 1e-15 {
		t.Errorf("tau = %v, want sqrt(0.5)", tau)
	}
	if tau := ExcessSD(nil, nil); tau != 0 {
		t.Errorf("no pair: tau = %v, want 0", tau)
	}
}
