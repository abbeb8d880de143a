package stats

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/stat/distuv"
)

// BetweenSeries is the top-level interval of an effect measured once in
// each of k series, and how far they disagree.
//
// The series are replications of the whole measurement.
type BetweenSeries struct {
	K int
	// Mean of the series' estimates, their sample SD (divisor k-1), and
	// the Student t interval Mean -+ t_{(1+level)/2, k-1} SD/sqrt(k); P
	// is the two-sided one-sample t test of mean 0 (df = k-1: the
	// effective n of the test is K).
	Mean, SD, Lower, Upper, Level, P float64
	Min, Max                         float64
	// Q is Cochran's heterogeneity statistic sum w_i (e_i - e_w)^2 with
	// w_i = 1/se_i^2 and e_w the w-weighted mean, QP = P(chi2_{k-1} >= Q),
	// and I2 = max(0, (Q-(k-1))/Q) the share of the variation between
	// series beyond what each one's own standard error explains (Higgins
	// and Thompson 2002, Statistics in Medicine 21: 1539-1558). NaN when
	// a standard error is not positive.
	Q, QP, I2 float64
}

// BetweenSeriesInterval is the interval of one effect over k series,
// the series being the sample.
//
// It puts the interval at the top level of the design (Kalibera and
// Jones 2013, "Rigorous benchmarking in reasonable time", ISMM: the
// unit of replication is the series, not the value): est are the k
// series' estimates of one effect, se their within-series standard
// errors (e.g. the block bootstrap's), used only for the heterogeneity
// Q. The t interval treats the series as the sample: it carries the
// between-series variance, and with few series it is wide (k = 3: t =
// 4.30 at 95 %). It needs k >= 2 finite estimates (ErrTooFew: one
// series gives no between-series variance), not all equal (ErrAllTied:
// a zero-width interval would be silent), and len(se) == k.
func BetweenSeriesInterval(est, se []float64, level float64) (BetweenSeries, error) {
	if err := checkSample(est); err != nil {
		return BetweenSeries{}, fmt.Errorf("between-series interval: %w", err)
	}
	k := len(est)
	if k < 2 {
		return BetweenSeries{}, fmt.Errorf("between-series interval needs at least 2 series, got %d: %w", k, ErrTooFew)
	}
	if len(se) != k {
		return BetweenSeries{}, fmt.Errorf("stats: between-series interval: %d estimates and %d standard errors", k, len(se))
	}
	if !(level > 0 && level < 1) {
		return BetweenSeries{}, fmt.Errorf("stats: confidence level %v outside (0, 1)", level)
	}
	m := Mean(est)
	var ss float64
	lo, hi := est[0], est[0]
	for _, v := range est {
		ss += (v - m) * (v - m)
		lo, hi = min(lo, v), max(hi, v)
	}
	if ss == 0 {
		return BetweenSeries{}, fmt.Errorf("between-series interval over %d equal estimates: %w", k, ErrAllTied)
	}
	sd := math.Sqrt(ss / float64(k-1))
	t := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: float64(k - 1)}
	half := t.Quantile((1+level)/2) * sd / math.Sqrt(float64(k))
	tstat := m / (sd / math.Sqrt(float64(k)))
	r := BetweenSeries{K: k, Mean: m, SD: sd, Lower: m - half, Upper: m + half, Level: level, P: 2 * t.Survival(math.Abs(tstat)),
		Min: lo, Max: hi, Q: math.NaN(), QP: math.NaN(), I2: math.NaN()}
	var sw, swe float64
	for i, s := range se {
		if !(s > 0) || math.IsInf(s, 0) {
			return r, nil
		}
		w := 1 / (s * s)
		sw += w
		swe += w * est[i]
	}
	ew := swe / sw
	var q float64
	for i, s := range se {
		q += (est[i] - ew) * (est[i] - ew) / (s * s)
	}
	r.Q, r.QP = q, distuv.ChiSquared{K: float64(k - 1)}.Survival(q)
	r.I2 = 0
	if q > 0 {
		r.I2 = max(0, (q-float64(k-1))/q)
	}
	return r, nil
}
