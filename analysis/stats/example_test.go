package stats_test

import (
	"fmt"

	"pqrepro/analysis/stats"
)

func ExampleMannWhitneyU() {
	males := []float64{19, 22, 16, 29, 24}
	females := []float64{20, 11, 17, 12}
	r, _ := stats.MannWhitneyU(males, females)
	fmt.Printf("U=%v p=%.4f %s\n", r.U, r.P, r.Method)
	// Output: U=17 p=0.1111 exact
}

func ExampleKruskalWallis() {
	r, _ := stats.KruskalWallis(
		[]float64{6.3, 5.4, 5.7, 5.2, 5.0},
		[]float64{6.9, 7.0, 6.1, 7.9},
		[]float64{7.2, 6.9, 6.1, 6.5})
	fmt.Printf("H=%.6f p=%.6f epsilon2=%.4f\n", r.H, r.P, r.Epsilon2)
	// Output: H=7.113812 p=0.028527 epsilon2=0.5928
}

func ExampleCliffsDelta() {
	control := []float64{10, 20, 30, 40, 40, 50}
	treatment := []float64{10, 10, 20, 20, 20, 30, 30, 30, 40, 50}
	r, _ := stats.CliffsDelta(control, treatment, 0.95)
	fmt.Printf("delta=%.2f (%s) CI [%.7f, %.7f]\n", r.Delta, r.Magnitude, r.Lower, r.Upper)
	// Output: delta=-0.25 (small) CI [-0.7265846, 0.3890062]
}

func ExampleVarghaDelaneyA12() {
	r, _ := stats.VarghaDelaneyA12([]float64{1, 2, 3}, []float64{2, 4, 5})
	fmt.Printf("A12=%.4f %s\n", r.A12, r.Magnitude)
	// Output: A12=0.8333 large
}

func ExampleHodgesLehmann() {
	x := []float64{1.5, 2.25, 3.0}
	y := []float64{2.0, 4.5, 3.75}
	r, _ := stats.HodgesLehmann(x, y, 0.95)
	fmt.Println(r.Shift, r.Lower, r.Upper, r.Method)
	// Output: 1.5 -1 3 exact
}

func ExampleBootstrapMedianDiff() {
	x := []float64{3.1, 3.4, 3.9, 4.0, 4.2, 3.8, 3.7}
	y := []float64{8.0, 8.4, 8.9, 9.3, 8.1, 8.7}
	r, _ := stats.BootstrapMedianDiff(x, y, stats.BootstrapConfig{Seed: 7, Resamples: 1000, Level: 0.95})
	fmt.Printf("diff=%.2f seed=%d lower<=diff<=upper: %v\n", r.Estimate, r.Seed, r.Lower <= r.Estimate && r.Estimate <= r.Upper)
	// Output: diff=4.75 seed=7 lower<=diff<=upper: true
}

func ExampleDescribe() {
	s, _ := stats.Describe([]float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10})
	fmt.Printf("n=%d mean=%.1f median=%.1f q1=%.2f q3=%.2f p95=%.2f\n", s.N, s.Mean, s.Median, s.Q1, s.Q3, s.P95)
	// Output: n=10 mean=5.5 median=5.5 q1=3.25 q3=7.75 p95=9.55
}

func ExampleHolm() {
	fmt.Println(stats.Holm([]float64{0.01, 0.04, 0.03}), stats.Bonferroni([]float64{0.01, 0.04, 0.03}))
	// Output: [0.03 0.06 0.06] [0.03 0.12 0.09]
}

func ExampleLjungBox() {
	x := []float64{1, 3, 1, 3, 1, 3, 1, 3, 1, 3, 1, 3}
	lb, _ := stats.LjungBox(x, 2)
	runs, _ := stats.RunsTest(x)
	fmt.Printf("Q=%.3f p=%.4f runs=%d\n", lb.Q, lb.P, runs.Runs)
	// Output: Q=24.500 p=0.0000 runs=12
}

// Per-round paired differences of a blocked experiment: the signed-rank
// test over rounds and the cluster-bootstrap interval of their median.
func ExampleWilcoxonSignedRank() {
	d := []float64{0.41, 0.52, 0.38, 0.61, 0.47, 0.55, -0.05, 0.44, 0.58, 0.49}
	r, _ := stats.WilcoxonSignedRank(d)
	fmt.Printf("n = %d, W+ = %g, p = %.4f (%s)\n", r.N, r.WPlus, r.P, r.Method)
	ci, _ := stats.ClusterBootstrap(len(d), func(idx []int) float64 { return stats.MedianAt(d, idx) },
		stats.ClusterConfig{Seed: 1, Stream: stats.ClusterStream, Resamples: 2000, Level: 0.95})
	fmt.Printf("median %.3f, 95 %% interval over rounds [%.3f, %.3f]\n", ci.Estimate, ci.Lower, ci.Upper)
	// Output:
	// n = 10, W+ = 54, p = 0.0039 (exact)
	// median 0.480, 95 % interval over rounds [0.410, 0.550]
}

// Friedman's test over 4 rounds (blocks) of 3 configurations.
func ExampleFriedman() {
	r, _ := stats.Friedman([][]float64{{1.0, 1.4, 2.1}, {1.2, 1.5, 2.0}, {0.9, 1.6, 2.4}, {1.1, 1.3, 2.2}})
	fmt.Printf("Q = %.1f, df = %d, p = %.4f, W = %.2f over %d rounds\n", r.Q, r.DF, r.P, r.KendallW, r.Blocks)
	// Output: Q = 8.0, df = 2, p = 0.0183, W = 1.00 over 4 rounds
}

// A difference of medians of two dependent series: the block bootstrap
// chooses each series' block length from its ranks (Politis and White)
// and resamples blocks of consecutive values.
func ExampleBlockBootstrapMedianDiff() {
	x, y := make([]float64, 400), make([]float64, 400)
	for i := range x {
		x[i] = 10 + float64(i/100)      // drifts upward in steps
		y[i] = 10.5 + float64(i/100)    // 0.5 higher throughout
		x[i] += float64((i*37)%11) / 20 // deterministic jitter
		y[i] += float64((i*53)%11) / 20
	}
	r, err := stats.BlockBootstrapMedianDiff(x, y, stats.BootstrapConfig{Seed: 1, Resamples: 2000, Level: 0.95})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("diff %.2f, blocks %d and %d, n_eff %.0f and %.0f of %d\n", r.Estimate, r.X.Block.Circular, r.Y.Block.Circular, r.X.NEff.NEff, r.Y.NEff.NEff, len(x))
	fmt.Println("interval covers 0.5:", r.Lower <= 0.5 && 0.5 <= r.Upper)
	// Output:
	// diff 0.50, blocks 38 and 38, n_eff 3 and 3 of 400
	// interval covers 0.5: true
}
