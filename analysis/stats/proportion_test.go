package stats

import (
	"math"
	"testing"
)

// TestWilson checks the Wilson interval against values computed by hand
// from its formula (5 of 10 as R's prop.test(5, 10, correct = FALSE) gives it).
func TestWilson(t *testing.T) {
	for _, tc := range []struct {
		k, n   int
		lo, hi float64
	}{
		{0, 100, 0, 0.036993},
		{100, 100, 0.963007, 1},
		{5, 10, 0.236593, 0.763407},
		{0, 5, 0, 0.434482},
		{97, 100, 0.915481, 0.989745},
	} {
		lo, hi := Wilson(tc.k, tc.n)
		if math.Abs(lo-tc.lo) > 1e-5 || math.Abs(hi-tc.hi) > 1e-5 {
			t.Errorf("Wilson(%d, %d) = [%.6f, %.6f], want [%.6f, %.6f]", tc.k, tc.n, lo, hi, tc.lo, tc.hi)
		}
	}
	for _, bad := range [][2]int{{0, 0}, {-1, 5}, {6, 5}} {
		if lo, hi := Wilson(bad[0], bad[1]); !math.IsNaN(lo) || !math.IsNaN(hi) {
			t.Errorf("Wilson(%d, %d) = [%v, %v], want NaN", bad[0], bad[1], lo, hi)
		}
	}
}
