package stats

import (
	"strings"
	"testing"
)

// TestBootstrapResamplesBounded: a resample count outside 1..MaxResamples
// is refused at once (1e9 allocated 8 GB and ran for minutes).
func TestBootstrapResamplesBounded(t *testing.T) {
	x, y := []float64{1, 2, 3}, []float64{2, 3, 4}
	for _, tc := range []struct {
		n  int
		ok bool
	}{{0, false}, {-1, false}, {1, true}, {MaxResamples, true}, {MaxResamples + 1, false}, {1_000_000_000, false}} {
		_, err := BootstrapMedianDiff(x, y, BootstrapConfig{Seed: 1, Resamples: tc.n, Level: 0.95, Method: ResampleOrderStats})
		if (err == nil) != tc.ok || (err != nil && !strings.Contains(err.Error(), "1 to 1000000 resamples")) {
			t.Errorf("%d resamples: %v, want ok %v", tc.n, err, tc.ok)
		}
	}
}
