package stats

import "math"

// Wilson is the Wilson score interval for k successes in n trials at 95
// %.
//
// The interval (Wilson 1927; Brown, Cai and DasGupta 2001, "Interval
// Estimation for a Binomial Proportion") is:
//
//	centre = (p + z²/2n) / (1 + z²/n)
//	half   = z sqrt(p(1-p)/n + z²/4n²) / (1 + z²/n),   z = 1.95996...
//
// Unlike the Wald interval it stays inside [0, 1] and does not collapse to
// a point at k = 0 or k = n: 0 of 100 gives [0, 3.7 %], the most such a
// sample can rule out. It returns NaN, NaN for n = 0.
func Wilson(k, n int) (lo, hi float64) {
	if n <= 0 || k < 0 || k > n {
		return math.NaN(), math.NaN()
	}
	z := 1.959963984540054
	p, nf := float64(k)/float64(n), float64(n)
	d := 1 + z*z/nf
	mid := (p + z*z/(2*nf)) / d
	half := z * math.Sqrt(p*(1-p)/nf+z*z/(4*nf*nf)) / d
	return math.Max(0, mid-half), math.Min(1, mid+half)
}
