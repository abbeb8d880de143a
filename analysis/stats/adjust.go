package stats

import (
	"math"
	"slices"
)

// Bonferroni returns the Bonferroni-adjusted p-values min(1, m p_i) for m
// tests, as R's p.adjust(p, "bonferroni").
func Bonferroni(p []float64) []float64 {
	out := make([]float64, len(p))
	m := float64(len(p))
	for i, v := range p {
		out[i] = math.Min(1, m*v)
	}
	return out
}

// Holm returns Holm's step-down adjusted p-values (Holm 1979), as R's
// p.adjust(p, "holm"): with p_(1) <= ... <= p_(m) in ascending order,
// adj_(i) = min(1, max_{j<=i} (m-j+1) p_(j)). The result is in the input
// order. Ties keep their input order, as R's order() does.
func Holm(p []float64) []float64 {
	m := len(p)
	idx := make([]int, m)
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int {
		switch {
		case p[a] < p[b]:
			return -1
		case p[a] > p[b]:
			return 1
		}
		return 0
	})
	out := make([]float64, m)
	run := 0.0
	for rank, i := range idx {
		v := float64(m-rank) * p[i]
		run = math.Max(run, v)
		out[i] = math.Min(1, run)
	}
	return out
}
