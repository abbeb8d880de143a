package stats

import (
	"fmt"
	"math"
)

// MWUMethod says how a Mann-Whitney p-value was computed.
type MWUMethod string

const (
	// MWUExact is the exact null distribution of U (no tie correction).
	MWUExact MWUMethod = "exact"
	// MWUAsymptotic is the normal approximation with tie and continuity
	// correction.
	MWUAsymptotic MWUMethod = "asymptotic"
)

// MannWhitneyResult is the outcome of a two-sided Mann-Whitney U test of
// samples X and Y.
type MannWhitneyResult struct {
	U      float64   // U of X: R_X - n_X(n_X+1)/2, as scipy returns it
	UY     float64   // U of Y = n_X n_Y - U
	P      float64   // two-sided p-value, clipped to [0, 1]
	Z      float64   // standardised statistic (asymptotic only; NaN for exact)
	Method MWUMethod // which null distribution gave P
}

// MannWhitneyU runs the two-sided Mann-Whitney U test of x against y with
// the conventions of scipy.stats.mannwhitneyu(x, y, method='auto') in
// SciPy 1.10:
//
//   - U_x = R_x - n_x(n_x+1)/2 from average ranks of the pooled sample;
//     U = max(U_x, U_y) is the statistic of the two-sided test.
//   - Exact when min(n_x, n_y) <= 8 and the pooled sample has no ties:
//     p = 2 P(U' >= U) under the null distribution of U (see uCounts).
//   - Otherwise asymptotic: z = (U - n_x n_y/2 - 1/2)/s with
//     s^2 = n_x n_y/12 ((N+1) - sum(t^3-t)/(N(N-1))), p = 2 (1 - Phi(z)).
//
// p is clipped to [0, 1]. All-equal pooled samples give s = 0, z = -Inf
// and p = 1, as SciPy does. Cost: one sort of the pooled sample,
// O(N log N), plus O(min(n) U) for the exact distribution.
func MannWhitneyU(x, y []float64) (MannWhitneyResult, error) {
	if err := checkSample(x); err != nil {
		return MannWhitneyResult{}, fmt.Errorf("mann-whitney sample x: %w", err)
	}
	if err := checkSample(y); err != nil {
		return MannWhitneyResult{}, fmt.Errorf("mann-whitney sample y: %w", err)
	}
	n1, n2 := float64(len(x)), float64(len(y))
	rs, tie := pooledRanks(x, y)
	u1 := rs[0] - n1*(n1+1)/2
	u2 := n1*n2 - u1
	u := math.Max(u1, u2)
	res := MannWhitneyResult{U: u1, UY: u2, Z: math.NaN()}
	if (len(x) <= 8 || len(y) <= 8) && tie == 0 {
		res.Method = MWUExact
		// sf(U) = P(U' >= U) = P(U' <= mn - U) by symmetry.
		res.P = 2 * uCDF(len(x), len(y), int(n1*n2-u))
	} else {
		res.Method = MWUAsymptotic
		n := n1 + n2
		s := math.Sqrt(n1 * n2 / 12 * ((n + 1) - tie/(n*(n-1))))
		res.Z = (u - n1*n2/2 - 0.5) / s
		res.P = 2 * normalSF(res.Z)
	}
	res.P = math.Min(math.Max(res.P, 0), 1)
	return res, nil
}

// normalSF is the standard normal survival function 1 - Phi(z), computed
// as erfc(z/sqrt 2)/2 so that it keeps relative precision in the upper
// tail.
func normalSF(z float64) float64 {
	return 0.5 * math.Erfc(z/math.Sqrt2)
}

// uCDF returns P(U <= k) for the null distribution of the Mann-Whitney U
// with sample sizes m and n and no ties.
func uCDF(m, n, k int) float64 {
	if k < 0 {
		return 0
	}
	if k >= m*n {
		return 1
	}
	c := uCounts(m, n, k)
	var s float64
	for _, v := range c {
		s += v
	}
	return s / binom(m+n, m)
}

// uCounts returns f(u) for u = 0..kmax: the number of the C(m+n, m)
// orderings of m X's and n Y's in which exactly u (X, Y) pairs have the
// X above the Y. Its generating function is the Gaussian binomial
// coefficient [m+n choose m]_q = prod_{i=1..m} (1 - q^(n+i)) / (1 - q^i)
// (Andrews, The Theory of Partitions, Thm 3.1; Löffler 1983).
//
// Two ways to get the coefficients, both in float64:
//
//   - small tables: the recurrence f(m,n,u) = f(m-1,n,u-n) + f(m,n-1,u)
//     (Mann and Whitney 1947; SciPy 1.10's _MWU._f), additions of
//     non-negative numbers only, so every value is correct to rounding;
//   - otherwise the product form, one factor at a time: dividing by
//     (1 - q^i) is a prefix sum with stride i, multiplying by (1 - q^(n+i))
//     a subtraction with stride n+i. After factor i the series is
//     [n+i choose i]_q, so all intermediate values stay non-negative.
//     Cost O(min(m,n) kmax), which keeps 8 x 100,000 cheap.
func uCounts(m, n, kmax int) []float64 {
	if m > n {
		m, n = n, m
	}
	if kmax > m*n {
		kmax = m * n
	}
	if float64(m)*float64(n)*float64(kmax+1) <= 4e6 {
		return uCountsRecurrence(m, n, kmax)
	}
	c := make([]float64, kmax+1)
	c[0] = 1
	for i := 1; i <= m; i++ {
		for u := i; u <= kmax; u++ {
			c[u] += c[u-i]
		}
		for u := kmax; u >= n+i; u-- {
			c[u] -= c[u-n-i]
		}
	}
	return c
}

// uCountsRecurrence fills f(j, l, u) for j <= m, l <= n, u <= kmax with
// f(j,l,u) = f(j-1,l,u-l) + f(j,l-1,u), f(j,l,0) = 1, and returns f(m,n,.)
// (the largest of the j+l values is either an X above all l Y's, or a Y).
func uCountsRecurrence(m, n, kmax int) []float64 {
	// prev[j] holds f(j, l-1, .); cur[j] holds f(j, l, .).
	prev := make([][]float64, m+1)
	cur := make([][]float64, m+1)
	for j := range prev {
		prev[j] = make([]float64, kmax+1)
		cur[j] = make([]float64, kmax+1)
	}
	// l = 0: only u = 0 is possible.
	for j := range prev {
		prev[j][0] = 1
	}
	for l := 1; l <= n; l++ {
		cur[0][0] = 1
		for j := 1; j <= m; j++ {
			for u := 0; u <= kmax; u++ {
				v := prev[j][u]
				if u >= l {
					v += cur[j-1][u-l]
				}
				cur[j][u] = v
			}
		}
		prev, cur = cur, prev
	}
	return prev[m]
}

// binom returns the binomial coefficient C(n, k) as a float64 by the
// product C(n,k) = prod_{i=1..k} (n-k+i)/i, where each partial product is
// itself a binomial coefficient: exact while it fits in 2^53 and accurate
// to a few ulps beyond.
func binom(n, k int) float64 {
	if k < 0 || k > n {
		return 0
	}
	if k > n-k {
		k = n - k
	}
	r := 1.0
	for i := 1; i <= k; i++ {
		r = r * float64(n-k+i) / float64(i)
	}
	return r
}
