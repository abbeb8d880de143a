package stats

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
)

// BootstrapMedians returns the medians of resamples bootstrap resamples
// of x.
//
// Each resample holds |x| values drawn with replacement, drawn as
// BootstrapMedianDiff's ResampleValues draws one sample's, from a PCG
// seeded with (seed, stream). Keeping the replicates of every sample lets
// a caller form the bootstrap distribution of any difference of medians
// of independent samples, such as a difference of two differences (an
// interaction), from one draw per sample; BootstrapReplicates summarises
// it.
func BootstrapMedians(x []float64, seed, stream uint64, resamples int) ([]float64, error) {
	if err := checkSample(x); err != nil {
		return nil, fmt.Errorf("bootstrap sample: %w", err)
	}
	if resamples < 2 {
		return nil, fmt.Errorf("stats: bootstrap replicates need at least 2 resamples, got %d", resamples)
	}
	rng := rand.New(rand.NewPCG(seed, stream))
	rc := newRankCounter(x)
	out := make([]float64, resamples)
	for b := range out {
		out[b] = rc.resampleMedian(rng)
	}
	return out, nil
}

// BootstrapMediansOrderStats is BootstrapMedians with each resample's
// median drawn from its exact distribution as order statistics of
// uniforms (ResampleOrderStats, see BootstrapMedianDiff). That is,
// the same estimator at O(1) draws per resample instead of |x|.
func BootstrapMediansOrderStats(x []float64, seed, stream uint64, resamples int) ([]float64, error) {
	if err := checkSample(x); err != nil {
		return nil, fmt.Errorf("bootstrap sample: %w", err)
	}
	if resamples < 2 {
		return nil, fmt.Errorf("stats: bootstrap replicates need at least 2 resamples, got %d", resamples)
	}
	rng := rand.New(rand.NewPCG(seed, stream))
	s := sortedCopy(x)
	out := make([]float64, resamples)
	for b := range out {
		out[b] = resampleMedian(s, rng)
	}
	return out, nil
}

// ReplicateSummary summarises the bootstrap replicates of a statistic.
type ReplicateSummary struct {
	Estimate float64 // the statistic on the original samples
	Lower    float64 // percentile interval: R type 7 quantiles of the replicates
	Upper    float64
	Level    float64
	// SE is the standard deviation of the replicates (divisor B-1), the
	// bootstrap standard error; P the two-sided p of the bootstrap z test
	// z = Estimate/SE against a standard normal (Efron and Tibshirani
	// 1993, sec. 16.4): finer than a p counted from B replicates, which
	// cannot go below about 2/B, too coarse for a Holm correction over
	// dozens of tests. P is 1 when SE and Estimate are 0, 0 when only SE
	// is.
	SE, P float64
}

// BootstrapReplicates summarises the replicates reps of a statistic whose
// value on the original samples is est.
func BootstrapReplicates(est float64, reps []float64, level float64) (ReplicateSummary, error) {
	if len(reps) < 2 {
		return ReplicateSummary{}, fmt.Errorf("stats: %d bootstrap replicates, need at least 2", len(reps))
	}
	if !(level > 0 && level < 1) {
		return ReplicateSummary{}, fmt.Errorf("stats: confidence level %v outside (0, 1)", level)
	}
	s := slices.Sorted(slices.Values(reps))
	m := Mean(s)
	var ss float64
	for _, v := range s {
		ss += (v - m) * (v - m)
	}
	r := ReplicateSummary{Estimate: est, Lower: QuantileSorted(s, (1-level)/2), Upper: QuantileSorted(s, (1+level)/2), Level: level,
		SE: math.Sqrt(ss / float64(len(s)-1))}
	switch {
	case r.SE > 0:
		r.P = math.Erfc(math.Abs(est/r.SE) / math.Sqrt2)
	case est == 0:
		r.P = 1
	}
	return r, nil
}
