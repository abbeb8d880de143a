package stats

import (
	"fmt"
	"math"
)

// NEffMinN is the fewest values for which EffectiveN is defined. The
// first pair of autocorrelations needs lags 0 and 1, and an
// autocorrelation of two values is degenerate (r_1 = -1/2 always).
const NEffMinN = 3

// NEffResult is the effective sample size of one series.
type NEffResult struct {
	N    int     // values
	NEff float64 // N / Tau, at most N
	// Tau = 1 + 2 sum_{k=1}^{K} r_k is the integrated autocorrelation
	// time (at least 1), K the truncation lag of the sum.
	Tau float64
	K   int
}

// EffectiveN returns the effective sample size n_eff = n / tau of a
// series.
//
// Here tau = 1 + 2 sum_{k=1}^{K} r_k with r_k its sample
// autocorrelations (ACF: mean removed, divisor n), truncated by Geyer's
// initial positive sequence (Geyer 1992, "Practical Markov chain Monte
// Carlo", Statistical Science 7(4): 473-483, sec. 3.3): with the pair
// sums Gamma_m = r_{2m} + r_{2m+1} (r_0 = 1), M is the last m such that
// Gamma_0, ..., Gamma_M are all positive, and K = 2M + 1, so that tau =
// -1 + 2 sum_{m=0}^{M} Gamma_m. The pairs stop at the last lag the
// series has (2M+1 <= n-1). Tau is raised to 1 (n_eff <= n): a series
// with negative autocorrelation is not credited with more information
// than an independent one.
//
// For the latency series the callers pass the ranks (Ranks), so that
// n_eff measures the dependence that the rank tests and the median see,
// not the few heavy-tailed values that dominate a raw ACF. It needs
// n >= NEffMinN finite values (ErrTooFew), not all equal (ErrAllTied).
// O(n K).
func EffectiveN(x []float64) (NEffResult, error) {
	if err := checkSample(x); err != nil {
		return NEffResult{}, fmt.Errorf("effective n: %w", err)
	}
	n := len(x)
	if n < NEffMinN {
		return NEffResult{}, fmt.Errorf("effective n needs at least %d values, got %d: %w", NEffMinN, n, ErrTooFew)
	}
	m := Mean(x)
	xo := make([]float64, n)
	var c0 float64
	for i, v := range x {
		xo[i] = v - m
		c0 += xo[i] * xo[i]
	}
	if c0 == 0 {
		return NEffResult{}, fmt.Errorf("effective n over %d values: %w", n, ErrAllTied)
	}
	r := func(k int) float64 {
		var s float64
		for t := k; t < n; t++ {
			s += xo[t] * xo[t-k]
		}
		return s / c0
	}
	sum, K := 0.0, 0 // sum of r_1..r_K
	r0 := 1.0
	for k := 1; k <= n-1; k += 2 {
		r1 := r(k)
		if r0+r1 <= 0 {
			break
		}
		if k > 1 {
			sum += r0 // r_{k-1}, the even lag of this pair
		}
		sum += r1
		K = k
		if k+1 > n-1 {
			break
		}
		r0 = r(k + 1)
	}
	tau := math.Max(1, 1+2*sum)
	return NEffResult{N: n, NEff: float64(n) / tau, Tau: tau, K: K}, nil
}
