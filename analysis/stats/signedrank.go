package stats

import (
	"errors"
	"fmt"
	"math"
)

// SignedRankMethod says how a signed-rank p-value was computed.
type SignedRankMethod string

const (
	SignedRankExact  SignedRankMethod = "exact"
	SignedRankNormal SignedRankMethod = "normal"
)

// SignedRankExactMaxN is the largest number of non-zero differences for
// which WilcoxonSignedRank uses the exact null distribution (without ties
// among |d|). SciPy 1.10's method='auto' uses the same bound.
const SignedRankExactMaxN = 50

// ErrAllZero is returned when every paired difference is zero: the
// signed-rank statistic has no non-zero difference to rank.
var ErrAllZero = errors.New("stats: every difference is zero")

// SignedRankResult is a two-sided Wilcoxon signed-rank test.
type SignedRankResult struct {
	// N is the number of non-zero differences (the effective n of the
	// test); Zeros the differences dropped for being zero.
	N, Zeros int
	// WPlus is the sum of the ranks of |d| over the positive differences,
	// W = min(W+, W-) the statistic SciPy reports for a two-sided test.
	WPlus, W float64
	// Z is the normal approximation's (W+ - n(n+1)/4)/sigma, with the tie
	// correction, without continuity correction; reported for both
	// methods.
	Z      float64
	P      float64
	Method SignedRankMethod
}

// WilcoxonSignedRank tests whether the paired differences d are symmetric
// about zero (Wilcoxon 1945), two-sided, as scipy.stats.wilcoxon(d,
// zero_method='wilcox', correction=False) of SciPy 1.10: zeros are
// dropped. |d| are ranked with mid-ranks; W+ is the sum of the ranks of
// the positive differences. Without ties and with at most
// SignedRankExactMaxN differences, p = min(1, 2 P(W <= min(W+, W-)))
// under the exact null distribution (each of the 2^n sign patterns
// equally likely, counted by dynamic programming over the ranks).
// Otherwise z = (W+ - n(n+1)/4) / sqrt(n(n+1)(2n+1)/24 - sum(t^3-t)/48)
// with t the sizes of the tie groups and p = 2 P(Z >= |z|).
//
// The smallest exact p is 2/2^n: n = 6 differences are the fewest with
// which a two-sided test can reach p < 0.05.
func WilcoxonSignedRank(d []float64) (SignedRankResult, error) {
	if err := checkSample(d); err != nil {
		return SignedRankResult{}, fmt.Errorf("signed-rank differences: %w", err)
	}
	var nz []float64
	for _, v := range d {
		if v != 0 {
			nz = append(nz, v)
		}
	}
	r := SignedRankResult{N: len(nz), Zeros: len(d) - len(nz)}
	if r.N == 0 {
		return r, fmt.Errorf("signed-rank over %d differences: %w", len(d), ErrAllZero)
	}
	abs := make([]float64, len(nz))
	for i, v := range nz {
		abs[i] = math.Abs(v)
	}
	ranks := Ranks(abs)
	for i, v := range nz {
		if v > 0 {
			r.WPlus += ranks[i]
		}
	}
	n := float64(r.N)
	total := n * (n + 1) / 2
	r.W = math.Min(r.WPlus, total-r.WPlus)
	tie := tieTermSorted(sortedCopy(abs))
	mean := n * (n + 1) / 4
	sd := math.Sqrt(n*(n+1)*(2*n+1)/24 - tie/48)
	if sd > 0 {
		r.Z = (r.WPlus - mean) / sd
	}
	if tie == 0 && r.N <= SignedRankExactMaxN {
		r.Method = SignedRankExact
		r.P = math.Min(1, 2*signedRankCDF(r.N, int(r.W)))
		return r, nil
	}
	r.Method = SignedRankNormal
	r.P = math.Min(1, 2*normalSF(math.Abs(r.Z)))
	return r, nil
}

// signedRankCDF is P(W+ <= k) for n untied ranks 1..n under the null: the
// number of subsets of {1..n} with sum <= k over 2^n.
func signedRankCDF(n, k int) float64 {
	max := n * (n + 1) / 2
	if k >= max {
		return 1
	}
	c := make([]float64, max+1)
	c[0] = 1
	for i := 1; i <= n; i++ {
		for s := max; s >= i; s-- {
			c[s] += c[s-i]
		}
	}
	var sum float64
	for s := 0; s <= k; s++ {
		sum += c[s]
	}
	return sum / math.Exp2(float64(n))
}
