package stats

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
)

// ClusterStream is the fixed second word of the PCG state of
// ClusterBootstrap when the caller has no stream of its own.
const ClusterStream = 0x6a09e667f3bcc909

// ClusterConfig controls a cluster bootstrap. The seed and stream are the
// only source of randomness.
type ClusterConfig struct {
	Seed, Stream uint64
	Resamples    int     // number of resamples, e.g. 2000
	Level        float64 // confidence level, e.g. 0.95
}

// ClusterBootstrap is the cluster (or block-of-the-design) bootstrap
// (Davison and Hinkley 1997, sec. 3.8; Field and Welsh 2007): the n
// clusters, here the rounds of a blocked experiment, are the units that
// are resampled, n of them with replacement per resample, and whatever
// lies within a cluster (its handshakes, its blocks of every
// configuration) travels with it, so that dependence within a cluster
// and drift between clusters are carried into the interval instead of
// being averaged away as an independent-sample bootstrap does.
//
// stat receives the cluster indices of a resample (0..n-1, repeats
// allowed, in draw order) and returns the statistic; it is called once
// with 0..n-1 for the estimate. The result holds the percentile interval
// (R type 7 quantiles of the replicates at (1-Level)/2 and (1+Level)/2),
// the bootstrap standard error and the z-test p of BootstrapReplicates.
// It needs at least 2 clusters and 2 resamples, and stat must be finite
// on every resample (else an error names the resample).
func ClusterBootstrap(n int, stat func(idx []int) float64, cfg ClusterConfig) (ReplicateSummary, error) {
	reps, est, err := ClusterReplicates(n, stat, cfg)
	if err != nil {
		return ReplicateSummary{}, err
	}
	return BootstrapReplicates(est, reps, cfg.Level)
}

// ClusterReplicates returns the replicates of ClusterBootstrap and the
// statistic on the original clusters. Resample b draws its n indices
// with rng.IntN(n) from one PCG(cfg.Seed, cfg.Stream), in order.
func ClusterReplicates(n int, stat func(idx []int) float64, cfg ClusterConfig) (reps []float64, est float64, err error) {
	if n < 2 {
		return nil, math.NaN(), fmt.Errorf("stats: cluster bootstrap needs at least 2 clusters, got %d", n)
	}
	if cfg.Resamples < 2 {
		return nil, math.NaN(), fmt.Errorf("stats: cluster bootstrap needs at least 2 resamples, got %d", cfg.Resamples)
	}
	if !(cfg.Level > 0 && cfg.Level < 1) {
		return nil, math.NaN(), fmt.Errorf("stats: confidence level %v outside (0, 1)", cfg.Level)
	}
	idx := make([]int, n)
	for i := range idx {
		idx[i] = i
	}
	est = stat(idx)
	if math.IsNaN(est) || math.IsInf(est, 0) {
		return nil, est, fmt.Errorf("stats: cluster bootstrap statistic is %v on the original clusters", est)
	}
	rng := rand.New(rand.NewPCG(cfg.Seed, cfg.Stream))
	reps = make([]float64, cfg.Resamples)
	for b := range reps {
		for i := range idx {
			idx[i] = rng.IntN(n)
		}
		v := stat(idx)
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, est, fmt.Errorf("stats: cluster bootstrap statistic is %v on resample %d", v, b)
		}
		reps[b] = v
	}
	return reps, est, nil
}

// MedianAt is the median of x at the indices idx (repeats count).
//
// It is the statistic of a cluster bootstrap of one value per cluster,
// such as a per-round paired difference. It uses a scratch copy; x is
// untouched.
func MedianAt(x []float64, idx []int) float64 {
	s := make([]float64, len(idx))
	for i, j := range idx {
		s[i] = x[j]
	}
	return medianInPlace(s)
}

// MedianOfDifferences returns the median of the paired differences
// y[i] - x[i] and the differences (in order). x and y must have the same
// length, at least 1, and be finite.
func MedianOfDifferences(x, y []float64) (float64, []float64, error) {
	if len(x) != len(y) {
		return math.NaN(), nil, fmt.Errorf("stats: paired samples of %d and %d values", len(x), len(y))
	}
	if err := checkSample(x); err != nil {
		return math.NaN(), nil, fmt.Errorf("paired sample x: %w", err)
	}
	if err := checkSample(y); err != nil {
		return math.NaN(), nil, fmt.Errorf("paired sample y: %w", err)
	}
	d := make([]float64, len(x))
	for i := range d {
		d[i] = y[i] - x[i]
	}
	return medianInPlace(slices.Clone(d)), d, nil
}
