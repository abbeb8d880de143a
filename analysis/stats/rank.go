package stats

import (
	"slices"
)

// tagged is one value of a pooled sample with the index of its group.
type tagged struct {
	v float64
	g int
}

// pooledRanks ranks the union of the groups with average ranks for ties
// (scipy.stats.rankdata method='average') and returns the sum of ranks of
// each group and the tie term sum(t^3 - t) over the groups of t tied
// values. It sorts once: O(N log N).
func pooledRanks(groups ...[]float64) (rankSums []float64, tieTerm float64) {
	var n int
	for _, g := range groups {
		n += len(g)
	}
	all := make([]tagged, 0, n)
	for gi, g := range groups {
		for _, v := range g {
			all = append(all, tagged{v, gi})
		}
	}
	slices.SortFunc(all, func(a, b tagged) int {
		switch {
		case a.v < b.v:
			return -1
		case a.v > b.v:
			return 1
		}
		return 0
	})
	rankSums = make([]float64, len(groups))
	for i := 0; i < n; {
		j := i + 1
		for j < n && all[j].v == all[i].v {
			j++
		}
		// Values i..j-1 (0-based) share the average of ranks i+1..j.
		r := float64(i+1+j) / 2
		for k := i; k < j; k++ {
			rankSums[all[k].g] += r
		}
		if t := float64(j - i); t > 1 {
			tieTerm += t*t*t - t
		}
		i = j
	}
	return rankSums, tieTerm
}
