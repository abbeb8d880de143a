package stats

import (
	"errors"
	"fmt"
	"math"

	"gonum.org/v1/gonum/stat/distuv"
)

// RunsResult is the outcome of the Wald-Wolfowitz runs test about the
// median.
type RunsResult struct {
	Runs  int     // number of runs of x >= median / x < median
	Above int     // values >= median
	Below int     // values < median
	Z     float64 // standardised statistic
	P     float64 // two-sided normal p-value
}

// ErrOneClass is returned by RunsTest when every value falls on the same
// side of the median, so the runs count has no variance.
var ErrOneClass = errors.New("stats: runs test needs values on both sides of the median")

// ErrTooFew is returned when a sample has fewer values than a statistic
// needs (see RunsMinN, ACFMinN, LjungBoxMinN).
var ErrTooFew = errors.New("stats: too few values")

// RunsMinN is the fewest values for which the runs test is defined. That
// is, with n0 and n1 values on each side of the median, var(R) > 0 needs
// 2 n0 n1 > n, which with n0, n1 >= 1 holds exactly when n >= 3 (for n =
// 2 the variance is 0 and z would be infinite).
const RunsMinN = 3

// ACFMinN returns the fewest values for which the autocorrelation at lag k
// is defined: c_k sums the n-k products x_t x_{t-k}, so n >= k+1. n >= 2
// besides, since c_0 = 0 for one value.
func ACFMinN(k int) int { return max(k+1, 2) }

// LjungBoxMinN returns the fewest values for which the Ljung-Box Q at
// lag h is defined. That is, every r_k for k <= h, and the divisors
// n-k > 0, so n >= h+1 (and n >= 2).
func LjungBoxMinN(h int) int { return ACFMinN(h) }

// RunsTest is the runs test for randomness about the median, as
// statsmodels' runstest_1samp(x, cutoff='median', correction=True).
// Values are coded 1 if x >= median(x) else 0, R is the number of runs,
// and with n1 ones, n0 zeros and n = n0 + n1,
//
//	mu = 2 n0 n1/n + 1,  var = 2 n0 n1 (2 n0 n1 - n) / (n^2 (n-1))
//
// For n < 50 the deviation R - mu is moved by 0.5 (the SAS convention),
// in statsmodels' form: R-mu-0.5 if R-mu > 0.5, R-mu+0.5 if R-mu < 0.5,
// else 0 (sic: statsmodels compares with +0.5 in both branches; kept here
// so that results agree). z = that / sqrt(var), p = 2(1 - Phi(|z|)).
// Where statsmodels returns Inf or NaN because all values are on one
// side, RunsTest returns ErrOneClass; for fewer than RunsMinN values,
// where var = 0 and statsmodels gives z = Inf and p = 0, it returns
// ErrTooFew. With either error the counts Runs, Above and Below are still
// set.
func RunsTest(x []float64) (RunsResult, error) {
	if err := checkSample(x); err != nil {
		return RunsResult{}, fmt.Errorf("runs test: %w", err)
	}
	med := medianSorted(sortedCopy(x))
	var res RunsResult
	prev := -1
	for _, v := range x {
		c := 0
		if v >= med {
			c = 1
			res.Above++
		} else {
			res.Below++
		}
		if c != prev {
			res.Runs++
			prev = c
		}
	}
	if len(x) < RunsMinN {
		return res, fmt.Errorf("runs test needs at least %d values, got %d: %w", RunsMinN, len(x), ErrTooFew)
	}
	if res.Above == 0 || res.Below == 0 {
		return res, fmt.Errorf("runs test over %d values: %w", len(x), ErrOneClass)
	}
	n := float64(len(x))
	npn := float64(res.Above) * float64(res.Below)
	mean := 2*npn/n + 1
	variance := 2 * npn * (2*npn - n) / (n * n) / (n - 1)
	dev := float64(res.Runs) - mean
	if n < 50 {
		switch {
		case dev > 0.5:
			dev -= 0.5
		case dev < 0.5:
			dev += 0.5
		default:
			dev = 0
		}
	}
	res.Z = dev / math.Sqrt(variance)
	res.P = 2 * normalSF(math.Abs(res.Z))
	return res, nil
}

// ACF returns the sample autocorrelations r_0..r_maxLag of x as statsmodels
// acf(x, nlags=maxLag, adjusted=False, fft=False). That is, with xbar the mean
// and c_k = sum_{t=k}^{n-1} (x_t - xbar)(x_{t-k} - xbar)/n, r_k = c_k / c_0
// (r_0 = 1). It needs 0 <= maxLag <= n-1 (n >= ACFMinN(maxLag); else
// ErrTooFew) and a non-constant x (else ErrAllTied). O(n maxLag).
func ACF(x []float64, maxLag int) ([]float64, error) {
	if err := checkSample(x); err != nil {
		return nil, fmt.Errorf("acf: %w", err)
	}
	n := len(x)
	if maxLag < 0 {
		return nil, fmt.Errorf("stats: acf lag %d is negative", maxLag)
	}
	if maxLag > n-1 {
		return nil, fmt.Errorf("acf at lag %d needs at least %d values, got %d: %w", maxLag, ACFMinN(maxLag), n, ErrTooFew)
	}
	acov, err := autocovariances(x, maxLag)
	if err == nil && (math.IsInf(acov[0], 0) || math.IsNaN(acov[0])) {
		// The squares overflowed float64 (values near 1e154 and beyond):
		// r_k is scale-free, so take it from x scaled into [-1, 1].
		xs, _ := scaledPow2(x)
		acov, err = autocovariances(xs, maxLag)
	}
	if err != nil {
		return nil, fmt.Errorf("acf: %w", err)
	}
	r := make([]float64, maxLag+1)
	for k := range r {
		r[k] = acov[k] / acov[0]
	}
	return r, nil
}

// LjungBoxResult is the Ljung-Box portmanteau statistic at one lag.
type LjungBoxResult struct {
	Lags int
	Q    float64
	P    float64
}

// LjungBox returns the Ljung-Box (1978) statistic Q and its p-value
// P(chi2_h >= Q), as statsmodels acorr_ljungbox(x, lags=[h], model_df=0).
// Q = n(n+2) sum_{k=1}^{h} r_k^2/(n-k) with r_k from ACF. It needs h >= 1
// and n >= LjungBoxMinN(h) = h+1 (else ErrTooFew).
func LjungBox(x []float64, lags int) (LjungBoxResult, error) {
	if lags < 1 {
		return LjungBoxResult{}, fmt.Errorf("stats: Ljung-Box needs at least 1 lag, got %d", lags)
	}
	r, err := ACF(x, lags)
	if err != nil {
		return LjungBoxResult{}, fmt.Errorf("ljung-box: %w", err)
	}
	return LjungBoxACF(r, len(x)), nil
}

// LjungBoxACF is LjungBox from autocorrelations already computed. That
// is, r = ACF(x, h) of the n values, with h = len(r)-1 >= 1, so that a
// caller that needs both does the O(n h) sums once.
func LjungBoxACF(r []float64, n int) LjungBoxResult {
	lags, fn := len(r)-1, float64(n)
	var s float64
	for k := 1; k <= lags; k++ {
		s += r[k] * r[k] / (fn - float64(k))
	}
	q := fn * (fn + 2) * s
	return LjungBoxResult{Lags: lags, Q: q, P: distuv.ChiSquared{K: float64(lags)}.Survival(q)}
}
