package stats

import (
	"fmt"
	"math"
)

// BlockLengthMinN is the fewest values for which BlockLength is defined.
// The rule reads the autocorrelations up to lag ceil(sqrt(n)) + K_N with
// K_N = max(5, ceil(log10 n)), which needs n > ceil(sqrt(n)) + K_N; 16
// is the smallest n where that holds with room for one more lag.
const BlockLengthMinN = 16

// BlockLengthResult is the automatic block length of one series.
type BlockLengthResult struct {
	// Circular is the block length for the circular (and moving) block
	// bootstrap, Stationary the mean block length for the stationary
	// bootstrap, both rounded (R's round, half to even) and clamped to
	// [1, Max]; CircularRaw and StationaryRaw are before rounding and
	// clamping.
	Circular, Stationary       int
	CircularRaw, StationaryRaw float64
	// M is the bandwidth of the flat-top lag window (2 m-hat, at most
	// MMax), MHat the lag after which the correlogram is insignificant,
	// Max the upper bound ceil(min(3 sqrt(n), n/3)).
	M, MHat, MMax, Max int
}

// BlockLength returns the automatic block length of Politis and White,
// as R's np::b.star computes it.
//
// The method is Politis and White (2004, "Automatic block-length
// selection for the dependent bootstrap", Econometric Reviews 23(1):
// 53-70) with the correction of Patton, Politis and White (2009,
// Econometric Reviews 28(4): 372-375), computed as R's np::b.star
// (Hayfield and Racine 2008) with its defaults:
//
//   - K_N = max(5, ceil(log10 n)), m_max = ceil(sqrt n) + K_N,
//     b_max = ceil(min(3 sqrt n, n/3)), c = qnorm(0.975);
//   - rho_k the sample autocorrelations (ACF) for k = 1..m_max; m-hat is
//     the first j such that |rho_j|, ..., |rho_{j+K_N-1}| are all below
//     c sqrt(log10(n)/n); if there is none, the largest significant lag
//     (m_max when every lag is significant); M = min(2 m-hat, m_max);
//   - with the flat-top window lambda(t) = 1 for |t| < 1/2, 2(1-|t|) for
//     1/2 <= |t| <= 1, and R(k) the autocovariances (divisor n),
//     G = sum_{|k|<=M} lambda(k/M) |k| R(k) and
//     g = sum_{|k|<=M} lambda(k/M) R(k);
//   - D_CB = (4/3) g^2 and D_SB = 2 g^2 (the corrected constant), and
//     b = (2 G^2 / D)^(1/3) n^(1/3) for each.
//
// The rule estimates the block length that minimises the mean squared
// error of the bootstrap variance of the sample mean. Callers that
// bootstrap a median pass the series' ranks (Ranks): the median's
// linearisation, the indicator 1{x_t <= m}, depends on the series only
// through its ranks, and heavy tails would otherwise dominate R(k).
//
// It needs n >= BlockLengthMinN finite values (ErrTooFew) that are not
// all equal (ErrAllTied).
func BlockLength(x []float64) (BlockLengthResult, error) {
	if err := checkSample(x); err != nil {
		return BlockLengthResult{}, fmt.Errorf("block length: %w", err)
	}
	n := len(x)
	if n < BlockLengthMinN {
		return BlockLengthResult{}, fmt.Errorf("block length needs at least %d values, got %d: %w", BlockLengthMinN, n, ErrTooFew)
	}
	fn := float64(n)
	kn := max(5, int(math.Ceil(math.Log10(fn))))
	mmax := int(math.Ceil(math.Sqrt(fn))) + kn
	bmax := int(math.Ceil(min(3*math.Sqrt(fn), fn/3)))
	acov, err := autocovariances(x, mmax)
	if err != nil {
		return BlockLengthResult{}, fmt.Errorf("block length: %w", err)
	}
	crit := 1.959963984540054 * math.Sqrt(math.Log10(fn)/fn)
	insig := func(k int) bool { return math.Abs(acov[k]/acov[0]) < crit }
	mhat := 0
	for j := 1; j+kn-1 <= mmax && mhat == 0; j++ {
		all := true
		for k := j; k < j+kn; k++ {
			if !insig(k) {
				all = false
				break
			}
		}
		if all {
			mhat = j
		}
	}
	if mhat == 0 {
		mhat = mmax // every lag significant, or the last significant one
		for k := mmax; k >= 1; k-- {
			if !insig(k) {
				mhat = k
				break
			}
		}
	}
	m := min(2*mhat, mmax)
	lambda := func(t float64) float64 {
		t = math.Abs(t)
		switch {
		case t < 0.5:
			return 1
		case t <= 1:
			return 2 * (1 - t)
		}
		return 0
	}
	g, gsum := 0.0, acov[0]
	for k := 1; k <= m; k++ {
		l := lambda(float64(k) / float64(m))
		g += 2 * l * float64(k) * acov[k]
		gsum += 2 * l * acov[k]
	}
	dcb, dsb := 4.0/3*gsum*gsum, 2*gsum*gsum
	res := BlockLengthResult{M: m, MHat: mhat, MMax: mmax, Max: bmax,
		CircularRaw:   math.Cbrt(2*g*g/dcb) * math.Cbrt(fn),
		StationaryRaw: math.Cbrt(2*g*g/dsb) * math.Cbrt(fn)}
	clamp := func(b float64) int {
		switch {
		case math.IsNaN(b) || b < 1:
			return 1
		case b > float64(bmax):
			return bmax
		}
		return int(math.RoundToEven(b))
	}
	res.Circular, res.Stationary = clamp(res.CircularRaw), clamp(res.StationaryRaw)
	return res, nil
}

// autocovariances returns c_0..c_maxLag of x (mean removed, divisor n);
// ErrAllTied when c_0 = 0.
func autocovariances(x []float64, maxLag int) ([]float64, error) {
	n := len(x)
	if maxLag > n-1 {
		return nil, fmt.Errorf("autocovariance at lag %d needs at least %d values, got %d: %w", maxLag, maxLag+1, n, ErrTooFew)
	}
	m := Mean(x)
	xo := make([]float64, n)
	for i, v := range x {
		xo[i] = v - m
	}
	acov := make([]float64, maxLag+1)
	for k := range acov {
		var s float64
		for t := k; t < n; t++ {
			s += xo[t] * xo[t-k]
		}
		acov[k] = s / float64(n)
	}
	if acov[0] == 0 {
		return nil, fmt.Errorf("autocovariance over %d values: %w", n, ErrAllTied)
	}
	return acov, nil
}
