package stats

import (
	"math"

	"gonum.org/v1/gonum/stat/distuv"
)

// BonferroniZ is the bound, in standard errors, that m normal errors all
// stay within with probability at least 1 - alpha.
//
// It is Phi^-1(1 - alpha / (2 m)), the two-sided Bonferroni quantile of the registered predictions'
// acceptance (analysis/gapmodel, analysis/ttlbmechanism): a correct model
// misses some bound with probability at most alpha.
func BonferroniZ(alpha float64, m int) float64 {
	return distuv.UnitNormal.Quantile(1 - alpha/(2*float64(m)))
}

// ExcessSD is tau = sqrt(max(0, mean((d_i^2 - se_i^2) / 2))) over pairs of
// estimates that should agree, 0 without a pair.
//
// d_i is a pair's difference and se_i its own standard error: when the
// pairs differ by more than their errors, the excess is a variance each
// estimate carries beyond its resampling (method of moments; each of the
// pair's two members carries tau^2, hence the half).
func ExcessSD(d, se []float64) float64 {
	if len(d) == 0 {
		return 0
	}
	s := 0.0
	for i := range d {
		s += (d[i]*d[i] - se[i]*se[i]) / 2
	}
	return math.Sqrt(max(0, s/float64(len(d))))
}
