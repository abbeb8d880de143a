package stats

import (
	"math"
	"slices"
	"testing"
)

func TestFormatP(t *testing.T) {
	for _, c := range []struct {
		p    float64
		want string
	}{
		{0.5, "0.5"}, {0.0123456, "0.0123"}, {1e-6, "1e-06"}, {9.99e-7, "< 10^-6"}, {1.5e-283, "< 10^-6"}, {0, "< 10^-6"}, {math.NaN(), "-"},
	} {
		if got := FormatP(c.p); got != c.want {
			t.Errorf("FormatP(%g) = %q, want %q", c.p, got, c.want)
		}
	}
	if p, raised := FloorP(1e-300); p != PFloor || !raised {
		t.Errorf("FloorP(1e-300) = %g, %v", p, raised)
	}
	if p, raised := FloorP(0.2); p != 0.2 || raised {
		t.Errorf("FloorP(0.2) = %g, %v", p, raised)
	}
}

func TestRanks(t *testing.T) {
	// scipy.stats.rankdata([3, 1, 4, 1, 5, 9, 2, 6]) = [4, 1.5, 5, 1.5, 6, 8, 3, 7]
	got := Ranks([]float64{3, 1, 4, 1, 5, 9, 2, 6})
	want := []float64{4, 1.5, 5, 1.5, 6, 8, 3, 7}
	if !slices.Equal(got, want) {
		t.Errorf("Ranks = %v, want %v", got, want)
	}
	if len(Ranks(nil)) != 0 {
		t.Error("Ranks(nil) not empty")
	}
}
