package stats

import (
	"math"
	"testing"
)

// TestHugeValues: samples near the top of float64 (1e300, 1.7e308) give
// the mean, sd and autocorrelations of the same sample scaled down,
// instead of NaN from overflowed sums; ordinary samples are unchanged.
func TestHugeValues(t *testing.T) {
	base := []float64{1.3, 2.9, 1.1, 3.7, 2.2, 0.4, 3.1, 2.8, 1.9, 0.7, 2.5, 3.3}
	for _, scale := range []float64{1e300, 1e200, 1.7e308 / 3.7} {
		x := make([]float64, len(base))
		for i, v := range base {
			x[i] = v * scale
		}
		ref, err := Describe(base)
		if err != nil {
			t.Fatal(err)
		}
		got, err := Describe(x)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range []struct {
			name      string
			got, want float64
		}{{"mean", got.Mean, ref.Mean * scale}, {"sd", got.SD, ref.SD * scale}, {"cv", got.CV, ref.CV}} {
			if !(math.Abs(c.got-c.want) <= 1e-12*math.Abs(c.want)) {
				t.Errorf("scale %g: %s %v, want %v", scale, c.name, c.got, c.want)
			}
		}
		rRef, err := ACF(base, 5)
		if err != nil {
			t.Fatal(err)
		}
		r, err := ACF(x, 5)
		if err != nil {
			t.Fatal(err)
		}
		for k := range r {
			if !(math.Abs(r[k]-rRef[k]) <= 1e-12) {
				t.Errorf("scale %g: acf lag %d = %v, want %v", scale, k, r[k], rRef[k])
			}
		}
		if lb := LjungBoxACF(r, len(x)); math.IsNaN(lb.Q) || math.IsNaN(lb.P) {
			t.Errorf("scale %g: Ljung-Box %+v", scale, lb)
		}
	}
	if m := Mean([]float64{math.Inf(1), 1}); !math.IsNaN(m) {
		t.Errorf("Mean with +Inf = %v, want NaN as before (and no endless rescaling)", m)
	}
	if m := Mean([]float64{math.NaN(), 1}); !math.IsNaN(m) {
		t.Errorf("Mean with NaN = %v", m)
	}
}
