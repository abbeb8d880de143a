package stats

import (
	"fmt"
	"math/rand/v2"
	"slices"
)

// BootstrapConfig controls a bootstrap interval. The seed is the only
// source of randomness, so the same config and data give the same
// interval on every machine.
type BootstrapConfig struct {
	Seed      uint64  // seeds a PCG (math/rand/v2 NewPCG(Seed, BootstrapStream))
	Resamples int     // number of bootstrap resamples, e.g. 2000
	Level     float64 // confidence level, e.g. 0.95
}

// BootstrapStream is the fixed second word of the PCG state; recording it
// keeps a reported seed sufficient to rerun the bootstrap.
const BootstrapStream = 0x9e3779b97f4a7c15

// BootstrapResult is a percentile bootstrap interval.
type BootstrapResult struct {
	Estimate  float64 // the statistic on the original samples
	Lower     float64
	Upper     float64
	Level     float64
	Resamples int
	Seed      uint64
}

// BootstrapMedianDiff returns median(Y) - median(X) and its percentile
// bootstrap interval (Efron and Tibshirani 1993, sec. 13.3): each of
// Resamples rounds draws |X| values from X and |Y| values from Y with
// replacement (independently, stratified by sample) and records the
// difference of medians; the limits are the R type 7 quantiles at
// (1-Level)/2 and (1+Level)/2 of those differences. Medians use O(n)
// selection, so one round costs O(|X|+|Y|).
func BootstrapMedianDiff(x, y []float64, cfg BootstrapConfig) (BootstrapResult, error) {
	if err := checkSample(x); err != nil {
		return BootstrapResult{}, fmt.Errorf("bootstrap sample x: %w", err)
	}
	if err := checkSample(y); err != nil {
		return BootstrapResult{}, fmt.Errorf("bootstrap sample y: %w", err)
	}
	if cfg.Resamples < 1 {
		return BootstrapResult{}, fmt.Errorf("stats: bootstrap needs at least 1 resample, got %d", cfg.Resamples)
	}
	if !(cfg.Level > 0 && cfg.Level < 1) {
		return BootstrapResult{}, fmt.Errorf("stats: confidence level %v outside (0, 1)", cfg.Level)
	}
	rng := rand.New(rand.NewPCG(cfg.Seed, BootstrapStream))
	bx := make([]float64, len(x))
	by := make([]float64, len(y))
	diffs := make([]float64, cfg.Resamples)
	for b := range diffs {
		for i := range bx {
			bx[i] = x[rng.IntN(len(x))]
		}
		for i := range by {
			by[i] = y[rng.IntN(len(y))]
		}
		diffs[b] = medianInPlace(by) - medianInPlace(bx)
	}
	slices.Sort(diffs)
	est := medianInPlace(slices.Clone(y)) - medianInPlace(slices.Clone(x))
	return BootstrapResult{
		Estimate:  est,
		Lower:     QuantileSorted(diffs, (1-cfg.Level)/2),
		Upper:     QuantileSorted(diffs, (1+cfg.Level)/2),
		Level:     cfg.Level,
		Resamples: cfg.Resamples,
		Seed:      cfg.Seed,
	}, nil
}
