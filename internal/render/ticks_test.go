package render

import (
	"math"
	"slices"
	"testing"

	"gonum.org/v1/plot"
)

func tickLabels(ts []plot.Tick) (out []string) {
	for _, tk := range ts {
		if tk.Label != "" {
			out = append(out, tk.Label)
		}
	}
	return out
}

func TestTicks(t *testing.T) {
	for _, tc := range []struct {
		name string
		got  []plot.Tick
		want []string
	}{
		{"log, one decade", LogTicks{}.Ticks(0.27, 6.1), []string{"0.3", "0.5", "1", "2", "3", "5"}},
		{"log, three decades", LogTicks{}.Ticks(0.02, 12), []string{"0.02", "0.05", "0.1", "0.2", "0.5", "1", "2", "5", "10"}},
		{"log, six decades", LogTicks{}.Ticks(0.05, 2e5), []string{"0.1", "1", "10", "100", "1,000", "10,000", "100,000"}},
		{"log, under a decade", LogTicks{}.Ticks(0.01, 0.1), []string{"0.01", "0.02", "0.03", "0.05", "0.1"}},
		{"log coarse, 3.3 decades", LogTicks{Coarse: true}.Ticks(0.005, 10), []string{"0.01", "0.1", "1", "10"}},
		{"log coarse, under 3 decades", LogTicks{Coarse: true}.Ticks(0.02, 12), []string{"0.02", "0.05", "0.1", "0.2", "0.5", "1", "2", "5", "10"}},
		{"linear 0-19", LinearTicks{}.Ticks(0, 19.0), []string{"0", "5", "10", "15"}},
		{"linear 0-5.3", LinearTicks{}.Ticks(0, 5.3), []string{"0", "1", "2", "3", "4", "5"}},
		{"linear narrow", LinearTicks{}.Ticks(1.5, 2.7), []string{"1.6", "1.8", "2", "2.2", "2.4", "2.6"}},
		{"linear thousands", LinearTicks{}.Ticks(0, 4800), []string{"0", "1,000", "2,000", "3,000", "4,000"}},
		// A range that starts just below zero labels zero "0", not "-0".
		{"linear across zero", LinearTicks{}.Ticks(-0.3, 9.4), []string{"0", "2", "4", "6", "8"}},
	} {
		if got := tickLabels(tc.got); !slices.Equal(got, tc.want) {
			t.Errorf("%s: ticks %v, want %v", tc.name, got, tc.want)
		}
		if n := len(tickLabels(tc.got)); n < MinTicks {
			t.Errorf("%s: %d labels, under MinTicks", tc.name, n)
		}
	}
}

func TestTicksDegenerate(t *testing.T) {
	inf := math.Inf(1)
	for _, r := range [][2]float64{{0, 1}, {-1, 5}, {1, inf}, {math.NaN(), 3}, {1e-300, 1e300}, {5, 5}} {
		if n := len(LogTicks{}.Ticks(r[0], r[1])); n > 300 {
			t.Errorf("log ticks %v: %d", r, n)
		}
	}
	for _, r := range [][2]float64{{0, inf}, {math.NaN(), 3}, {1e17, 1e17 + 1}, {5, 5}, {-inf, 0}} {
		if n := len(LinearTicks{}.Ticks(r[0], r[1])); n > 30 {
			t.Errorf("linear ticks %v: %d", r, n)
		}
	}
}
