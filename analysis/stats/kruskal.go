package stats

import (
	"errors"
	"fmt"

	"gonum.org/v1/gonum/stat/distuv"
)

// ErrAllTied is returned when every pooled value is equal, so that a
// rank statistic has no variance (SciPy raises "All numbers are identical
// in kruskal").
var ErrAllTied = errors.New("stats: all values are identical")

// KruskalResult is the outcome of a Kruskal-Wallis H test.
type KruskalResult struct {
	H        float64 // tie-corrected H
	DF       int     // groups - 1
	P        float64 // chi-squared survival of H with DF degrees of freedom
	Epsilon2 float64 // effect size H/(N-1)
}

// KruskalWallis runs the Kruskal-Wallis H test over two or more groups as
// scipy.stats.kruskal does:
//
//	H = [12/(N(N+1)) sum_i R_i^2/n_i - 3(N+1)] / [1 - sum(t^3-t)/(N^3-N)]
//
// with R_i the rank sum of group i in the pooled sample (average ranks)
// and t the sizes of tie groups; p = P(chi2_{k-1} >= H). The effect size
// epsilon-squared is H/(N-1) (Tomczak and Tomczak 2014, eq. 6:
// H/((N^2-1)/(N+1))).
func KruskalWallis(groups ...[]float64) (KruskalResult, error) {
	if len(groups) < 2 {
		return KruskalResult{}, fmt.Errorf("stats: Kruskal-Wallis needs at least 2 groups, got %d", len(groups))
	}
	var n float64
	for i, g := range groups {
		if err := checkSample(g); err != nil {
			return KruskalResult{}, fmt.Errorf("kruskal group %d: %w", i, err)
		}
		n += float64(len(g))
	}
	rs, tie := pooledRanks(groups...)
	var sum float64
	for i, g := range groups {
		sum += rs[i] * rs[i] / float64(len(g))
	}
	corr := 1 - tie/(n*n*n-n)
	if corr == 0 {
		return KruskalResult{}, fmt.Errorf("kruskal over %v values: %w", n, ErrAllTied)
	}
	h := (12/(n*(n+1))*sum - 3*(n+1)) / corr
	df := len(groups) - 1
	return KruskalResult{
		H:        h,
		DF:       df,
		P:        distuv.ChiSquared{K: float64(df)}.Survival(h),
		Epsilon2: h / (n - 1),
	}, nil
}
