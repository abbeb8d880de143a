package stats

import (
	"fmt"
	"math/rand/v2"
	"slices"
)

// BlockBootstrapMinBlocks is the fewest whole blocks a series must hold
// for the block bootstrap. With one block every resample is a rotation
// of the series, its median never moves and the interval would have
// zero width.
const BlockBootstrapMinBlocks = 2

// ErrBlockTooLong is returned when a series is shorter than
// BlockBootstrapMinBlocks blocks of its block length.
var ErrBlockTooLong = fmt.Errorf("stats: series too short for its block length (needs at least %d blocks): %w", BlockBootstrapMinBlocks, ErrTooFew)

// BlockBootstrapMedians returns the medians of resamples circular block
// bootstrap resamples of the series x.
//
// The circular block bootstrap (Politis and Romano 1992, "A circular
// block-resampling procedure for stationary data", in Exploring the Limits
// of Bootstrap, Wiley, 263-270) wraps x on a circle: each resample joins
// ceil(n/block) blocks x_s, x_{s+1}, ..., x_{s+block-1} (indices mod n) with
// starts s drawn uniformly from 0..n-1, cut to n values. Within a block the
// series keeps its order, so the resample keeps the dependence up to lag
// block-1; the circle gives every value the same chance to be drawn.
//
// The starts come from a PCG seeded with (seed, stream), rng.IntN(n) per
// block. The medians are read off counts by rank, one pass per resample
// (O(n), no sort and no copy of the values): the same values a sort of
// the resample would give. It needs finite values (ErrNonFinite),
// 1 <= block and n >= BlockBootstrapMinBlocks*block (ErrBlockTooLong),
// resamples >= 2.
func BlockBootstrapMedians(x []float64, block int, seed, stream uint64, resamples int) ([]float64, error) {
	if err := checkSample(x); err != nil {
		return nil, fmt.Errorf("block bootstrap: %w", err)
	}
	if block < 1 {
		return nil, fmt.Errorf("stats: block bootstrap block length %d, need at least 1", block)
	}
	if len(x) < BlockBootstrapMinBlocks*block {
		return nil, fmt.Errorf("block bootstrap of %d values with blocks of %d: %w", len(x), block, ErrBlockTooLong)
	}
	if resamples < 2 {
		return nil, fmt.Errorf("stats: block bootstrap needs at least 2 resamples, got %d", resamples)
	}
	rng := rand.New(rand.NewPCG(seed, stream))
	rc := newRankCounter(x)
	n := len(x)
	out := make([]float64, resamples)
	for b := range out {
		for filled := 0; filled < n; {
			s := rng.IntN(n)
			l := min(block, n-filled)
			// The block s..s+l-1 on the circle, in at most two runs.
			first := min(l, n-s)
			for _, r := range rc.rank[s : s+first] {
				rc.count[r]++
			}
			for _, r := range rc.rank[:l-first] {
				rc.count[r]++
			}
			filled += l
		}
		out[b] = rc.countedMedian()
	}
	return out, nil
}

// SeriesBootstrap is one series' block bootstrap: its block length (from
// its ranks), its effective sample size (from its ranks) and the medians
// of its resamples.
type SeriesBootstrap struct {
	Median  float64
	Block   BlockLengthResult
	NEff    NEffResult
	Medians []float64
}

// BootstrapSeries block-bootstraps the median of one series. The block
// length is BlockLength of Ranks(x) (its Circular value), n_eff is
// EffectiveN of Ranks(x), and the resamples are BlockBootstrapMedians. A
// caller forms the bootstrap distribution of any contrast of medians of
// independent series (a difference, a difference of differences) from the
// Medians of each, replicate by replicate, and summarises it with
// BootstrapReplicates. It needs n >= BlockLengthMinN values, not all
// equal, finite.
func BootstrapSeries(x []float64, seed, stream uint64, resamples int) (SeriesBootstrap, error) {
	if err := checkSample(x); err != nil {
		return SeriesBootstrap{}, fmt.Errorf("series bootstrap: %w", err)
	}
	r := Ranks(x)
	bl, err := BlockLength(r)
	if err != nil {
		return SeriesBootstrap{}, fmt.Errorf("series bootstrap: %w", err)
	}
	ne, err := EffectiveN(r)
	if err != nil {
		return SeriesBootstrap{}, fmt.Errorf("series bootstrap: %w", err)
	}
	meds, err := BlockBootstrapMedians(x, bl.Circular, seed, stream, resamples)
	if err != nil {
		return SeriesBootstrap{}, fmt.Errorf("series bootstrap: %w", err)
	}
	m, _ := Median(x)
	return SeriesBootstrap{Median: m, Block: bl, NEff: ne, Medians: meds}, nil
}

// BlockDiffResult is the block bootstrap of median(Y) - median(X) of two
// independent series.
type BlockDiffResult struct {
	ReplicateSummary
	X, Y SeriesBootstrap
}

// BlockBootstrapMedianDiff returns median(Y) - median(X) of two
// independent series, with a block bootstrap interval and test.
//
// The percentile interval and bootstrap z test (BootstrapReplicates)
// come from circular block bootstrap resamples of each series
// (BootstrapSeries, X from the stream BootstrapStream, Y from
// BootstrapStream+1, both seeded with cfg.Seed). cfg.Method is ignored.
func BlockBootstrapMedianDiff(x, y []float64, cfg BootstrapConfig) (BlockDiffResult, error) {
	if !(cfg.Level > 0 && cfg.Level < 1) {
		return BlockDiffResult{}, fmt.Errorf("stats: confidence level %v outside (0, 1)", cfg.Level)
	}
	bx, err := BootstrapSeries(x, cfg.Seed, BootstrapStream, cfg.Resamples)
	if err != nil {
		return BlockDiffResult{}, fmt.Errorf("sample x: %w", err)
	}
	by, err := BootstrapSeries(y, cfg.Seed, BootstrapStream+1, cfg.Resamples)
	if err != nil {
		return BlockDiffResult{}, fmt.Errorf("sample y: %w", err)
	}
	d := slices.Clone(by.Medians)
	for i := range d {
		d[i] -= bx.Medians[i]
	}
	s, err := BootstrapReplicates(by.Median-bx.Median, d, cfg.Level)
	if err != nil {
		return BlockDiffResult{}, err
	}
	return BlockDiffResult{ReplicateSummary: s, X: bx, Y: by}, nil
}
