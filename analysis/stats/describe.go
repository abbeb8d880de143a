package stats

import (
	"errors"
	"fmt"
	"math"
	"slices"

	"pqrepro/internal/jsonnum"
)

// ErrEmpty is returned for a sample with no values.
var ErrEmpty = errors.New("stats: empty sample")

// ErrNonFinite is returned when a sample holds NaN or ±Inf; every
// statistic here is defined only for finite values.
var ErrNonFinite = errors.New("stats: sample holds NaN or Inf")

// checkSample reports whether x is usable: non-empty and finite.
func checkSample(x []float64) error {
	if len(x) == 0 {
		return ErrEmpty
	}
	for i, v := range x {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("value %d is %v: %w", i, v, ErrNonFinite)
		}
	}
	return nil
}

// sortedCopy returns x sorted ascending without touching x.
func sortedCopy(x []float64) []float64 {
	s := slices.Clone(x)
	slices.Sort(s)
	return s
}

// Summary is the descriptive statistics of one sample.
type Summary struct {
	N      int
	Mean   float64
	SD     float64 // sample standard deviation, divisor n-1; NaN for n = 1
	CV     float64 // SD / Mean; NaN when undefined
	Min    float64
	Max    float64
	Median float64
	Q1     float64 // Quantile(0.25), R type 7
	Q3     float64 // Quantile(0.75), R type 7
	IQR    float64 // Q3 - Q1
	P95    float64 // Quantile(0.95), R type 7
	P99    float64 // Quantile(0.99), R type 7
}

// JSON returns s as results files write it: JSON names, every number a
// jsonnum.Num (rounded, null where undefined). It lives here, not in
// internal/jsonnum, so that the bottom-layer package imports no analysis.
func (s Summary) JSON() jsonnum.Summary {
	return jsonnum.Summary{N: s.N, Mean: jsonnum.Num(s.Mean), SD: jsonnum.Num(s.SD), CV: jsonnum.Num(s.CV),
		Min: jsonnum.Num(s.Min), Q1: jsonnum.Num(s.Q1), Median: jsonnum.Num(s.Median), Q3: jsonnum.Num(s.Q3),
		IQR: jsonnum.Num(s.IQR), P95: jsonnum.Num(s.P95), P99: jsonnum.Num(s.P99), Max: jsonnum.Num(s.Max)}
}

// Describe returns the descriptive statistics of x. The mean is computed
// with a compensated two-pass algorithm (mean, then the mean of the
// residuals) so that it agrees with NumPy to the last bits on data with a
// large common offset.
func Describe(x []float64) (Summary, error) {
	if err := checkSample(x); err != nil {
		return Summary{}, err
	}
	s := sortedCopy(x)
	n := len(s)
	m := Mean(x)
	sd := math.NaN()
	if n > 1 {
		var ss float64
		for _, v := range x {
			d := v - m
			ss += d * d
		}
		sd = math.Sqrt(ss / float64(n-1))
		if math.IsInf(sd, 0) || math.IsNaN(sd) { // the squares overflowed (values near 1e154 and beyond)
			xs, e := scaledPow2(x)
			ms := Mean(xs)
			ss = 0
			for _, v := range xs {
				d := v - ms
				ss += d * d
			}
			sd = math.Ldexp(math.Sqrt(ss/float64(n-1)), e) // +Inf only if the sd itself exceeds float64
		}
	}
	cv := math.NaN()
	if m != 0 {
		cv = sd / m
	}
	q1, q3 := QuantileSorted(s, 0.25), QuantileSorted(s, 0.75)
	return Summary{
		N: n, Mean: m, SD: sd, CV: cv,
		Min: s[0], Max: s[n-1],
		Median: medianSorted(s),
		Q1:     q1, Q3: q3, IQR: q3 - q1,
		P95: QuantileSorted(s, 0.95),
		P99: QuantileSorted(s, 0.99),
	}, nil
}

// Mean returns the arithmetic mean of x (NaN for an empty x), refined by
// one correction pass: m + sum(x - m)/n.
func Mean(x []float64) float64 {
	if len(x) == 0 {
		return math.NaN()
	}
	var s float64
	for _, v := range x {
		s += v
	}
	m := s / float64(len(x))
	var c float64
	for _, v := range x {
		c += v - m
	}
	r := m + c/float64(len(x))
	if !math.IsInf(r, 0) && !math.IsNaN(r) {
		return r
	}
	// The sum overflowed float64 (values near 1e308): the same in
	// [-1, 1], scaled back exactly by a power of two. e is 0 when x
	// holds a NaN or an infinity: nothing to rescue.
	xs, e := scaledPow2(x)
	if e == 0 {
		return r
	}
	return math.Ldexp(Mean(xs), e)
}

// scaledPow2 returns x times 2^-e, with e the binary exponent of the
// largest |x|, so every value lies in [-1, 1]; scaling by a power of two
// is exact for normal numbers. Mean, Describe and ACF use it only when
// the direct sums overflow, so results that fit float64 are unchanged.
func scaledPow2(x []float64) ([]float64, int) {
	var mx float64
	for _, v := range x {
		mx = max(mx, math.Abs(v))
	}
	_, e := math.Frexp(mx)
	out := make([]float64, len(x))
	for i, v := range x {
		out[i] = math.Ldexp(v, -e)
	}
	return out, e
}

// QuantileSorted returns the p-quantile (0 <= p <= 1) of the ascending
// sample s by R's type 7 definition. That is, h = (n-1)p, Q = s[floor
// h] + (h - floor h)(s[floor h + 1] - s[floor h]). It panics on an
// empty s or p outside [0, 1], which are programming errors.
func QuantileSorted(s []float64, p float64) float64 {
	if len(s) == 0 || !(p >= 0 && p <= 1) {
		panic(fmt.Sprintf("stats: QuantileSorted(len %d, p %v)", len(s), p))
	}
	h := float64(len(s)-1) * p
	lo := math.Floor(h)
	i := int(lo)
	if i >= len(s)-1 {
		return s[len(s)-1]
	}
	return s[i] + (h-lo)*(s[i+1]-s[i])
}

// Quantile returns the p-quantile of x (any order), R type 7.
func Quantile(x []float64, p float64) (float64, error) {
	if err := checkSample(x); err != nil {
		return math.NaN(), err
	}
	if !(p >= 0 && p <= 1) {
		return math.NaN(), fmt.Errorf("stats: quantile probability %v outside [0, 1]", p)
	}
	return QuantileSorted(sortedCopy(x), p), nil
}

// Median returns the median of x. That is, the mean of the two middle
// values for an even length (NumPy median, R type 7 at p = 0.5).
func Median(x []float64) (float64, error) {
	if err := checkSample(x); err != nil {
		return math.NaN(), err
	}
	return medianInPlace(slices.Clone(x)), nil
}

// medianInPlace returns the median of x, reordering x. It uses selection,
// O(n) expected, which matters inside the bootstrap loop.
func medianInPlace(x []float64) float64 {
	n := len(x)
	k := n / 2
	hi := selectK(x, k)
	if n%2 == 1 {
		return hi
	}
	// After selectK, x[:k] holds the k smallest values; the largest of
	// them is the lower middle value.
	lo := x[0]
	for _, v := range x[1:k] {
		if v > lo {
			lo = v
		}
	}
	return (lo + hi) / 2
}

// selectK partially sorts x so that x[k] is the k-th smallest value
// (0-based), x[:k] <= x[k] <= x[k+1:], and returns x[k]. Hoare
// partitioning with a median-of-three pivot; deterministic.
func selectK(x []float64, k int) float64 {
	lo, hi := 0, len(x)-1
	for lo < hi {
		mid := lo + (hi-lo)/2
		if x[mid] < x[lo] {
			x[mid], x[lo] = x[lo], x[mid]
		}
		if x[hi] < x[lo] {
			x[hi], x[lo] = x[lo], x[hi]
		}
		if x[hi] < x[mid] {
			x[hi], x[mid] = x[mid], x[hi]
		}
		p := x[mid]
		i, j := lo, hi
		for i <= j {
			for x[i] < p {
				i++
			}
			for x[j] > p {
				j--
			}
			if i <= j {
				x[i], x[j] = x[j], x[i]
				i++
				j--
			}
		}
		switch {
		case k <= j:
			hi = j
		case k >= i:
			lo = i
		default:
			return x[k]
		}
	}
	return x[k]
}

// medianSorted returns the median of the ascending sample s, computed as
// NumPy does: the middle value, or (a+b)/2 of the two middle values.
func medianSorted(s []float64) float64 {
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}
