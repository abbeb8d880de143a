package stats

import (
	"fmt"

	"gonum.org/v1/gonum/stat/distuv"
)

// FriedmanResult is Friedman's test over blocks.
type FriedmanResult struct {
	Q  float64 // the chi-square statistic, tie-corrected
	DF int     // k - 1
	P  float64
	// Blocks is the number of blocks n (the effective n of the test),
	// Treatments the number k of treatments in every block.
	Blocks, Treatments int
	// KendallW is Kendall's coefficient of concordance W = Q/(n(k-1)),
	// in [0, 1]: 0 when the treatments' ranks within a block are
	// unrelated across blocks, 1 when every block ranks them alike.
	KendallW float64
}

// Friedman tests whether k treatments differ when each of n blocks holds
// one value of every treatment (Friedman 1937), as
// scipy.stats.friedmanchisquare. blocks[i][j] is treatment j in block i;
// the values are ranked within each block (mid-ranks), R_j is treatment
// j's rank sum, and
//
//	Q = [12/(n k (k+1)) sum_j R_j^2 - 3 n (k+1)] / [1 - sum(t^3-t)/(n k (k^2-1))]
//
// with t the sizes of the tie groups within blocks; p = P(chi2_{k-1} >= Q).
// It needs at least 2 blocks and 2 treatments (SciPy: 3 treatments),
// every block of the same length, finite values, and not every block
// all tied.
func Friedman(blocks [][]float64) (FriedmanResult, error) {
	n := len(blocks)
	if n < 2 {
		return FriedmanResult{}, fmt.Errorf("stats: Friedman needs at least 2 blocks, got %d", n)
	}
	k := len(blocks[0])
	if k < 2 {
		return FriedmanResult{}, fmt.Errorf("stats: Friedman needs at least 2 treatments, got %d", k)
	}
	sums := make([]float64, k)
	var tie float64
	for i, b := range blocks {
		if len(b) != k {
			return FriedmanResult{}, fmt.Errorf("stats: Friedman block %d has %d values, block 0 has %d: every block needs one value of every treatment", i, len(b), k)
		}
		if err := checkSample(b); err != nil {
			return FriedmanResult{}, fmt.Errorf("friedman block %d: %w", i, err)
		}
		for j, r := range Ranks(b) {
			sums[j] += r
		}
		tie += tieTermSorted(sortedCopy(b))
	}
	fn, fk := float64(n), float64(k)
	corr := 1 - tie/(fn*fk*(fk*fk-1))
	if corr == 0 {
		return FriedmanResult{}, fmt.Errorf("friedman over %d blocks: %w", n, ErrAllTied)
	}
	var ss float64
	for _, s := range sums {
		ss += s * s
	}
	q := (12/(fn*fk*(fk+1))*ss - 3*fn*(fk+1)) / corr
	return FriedmanResult{
		Q: q, DF: k - 1, P: distuv.ChiSquared{K: fk - 1}.Survival(q),
		Blocks: n, Treatments: k, KendallW: q / (fn * (fk - 1)),
	}, nil
}
