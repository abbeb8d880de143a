package stats

import (
	"fmt"
	"math"
	"slices"
)

// PFloor is the smallest p-value this project prints. A p-value computed
// from dependent data overstates the evidence (the nominal n exceeds the
// effective n), and one below 10^-6 claims more than any of the studies'
// designs can support; such a value is printed as "< 10^-6" (FloorP) with
// the effective sample size beside it.
const PFloor = 1e-6

// FloorP returns p raised to PFloor and whether it was raised, so that a
// caller prints "< 10^-6" instead of the value. NaN stays NaN.
func FloorP(p float64) (float64, bool) {
	if p < PFloor {
		return PFloor, true
	}
	return p, false
}

// FormatP writes p with three significant digits, or "< 10^-6" below
// PFloor; NaN is "-".
func FormatP(p float64) string {
	switch {
	case math.IsNaN(p):
		return "-"
	case p < PFloor:
		return "< 10^-6"
	}
	return fmt.Sprintf("%.3g", p)
}

// Ranks returns the mid-ranks (1-based, ties averaged: SciPy's
// rankdata(method='average')) of x in its own order. Serial dependence is
// checked on ranks as well as raw values: heavy tails hide autocorrelation
// in a raw ACF, and ranks are invariant to them.
func Ranks(x []float64) []float64 {
	idx := make([]int, len(x))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int {
		switch {
		case x[a] < x[b]:
			return -1
		case x[a] > x[b]:
			return 1
		}
		return 0
	})
	r := make([]float64, len(x))
	for i := 0; i < len(idx); {
		j := i + 1
		for j < len(idx) && x[idx[j]] == x[idx[i]] {
			j++
		}
		avg := float64(i+1+j) / 2
		for k := i; k < j; k++ {
			r[idx[k]] = avg
		}
		i = j
	}
	return r
}
