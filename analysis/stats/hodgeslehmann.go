package stats

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sort"

	"gonum.org/v1/gonum/stat/distuv"
)

// HLMethod says how the Hodges-Lehmann interval was found.
type HLMethod string

const (
	// HLExact uses quantiles of the exact null distribution of U.
	HLExact HLMethod = "exact"
	// HLAsymptotic uses the normal approximation with continuity
	// correction.
	HLAsymptotic HLMethod = "asymptotic"
)

// HodgesLehmannResult is the Hodges-Lehmann shift of Y against X.
type HodgesLehmannResult struct {
	Shift  float64 // median of all y_j - x_i
	Lower  float64 // lower confidence limit, an order statistic of the differences
	Upper  float64 // upper confidence limit
	Level  float64 // confidence level
	Method HLMethod
}

// HodgesLehmann returns the Hodges-Lehmann shift of Y against X and its
// distribution-free confidence interval.
//
// The estimate is the median of the m n differences D = y_j - x_i (Hodges
// and Lehmann 1963), the interval [D_(k), D_(mn+1-k)] from order
// statistics of the differences (Bauer 1972;
// Hollander and Wolfe 1999, sec. 4.3), as R's wilcox.test(y, x,
// conf.int=TRUE, conf.level=level) computes it:
//
//   - exact when both samples have fewer than 50 values and the pooled
//     sample has no ties: k = qwilcox((1-level)/2, n, m), the smallest q
//     with P(U <= q) >= (1-level)/2, or 1 if that is 0; the interval is
//     [D_(k), D_(mn-k+1)];
//   - otherwise the normal approximation with continuity correction:
//     k = ceil(mn/2 - 1/2 - z s), z = Phi^-1(1-(1-level)/2), s^2 =
//     mn/12 ((N+1) - T/(N(N-1))) with T the tie term sum(t^3-t) of the
//     ties inside X and inside Y, clamped to [1, mn]. R reaches the same
//     order statistics by root-finding (uniroot, tol 1e-4), so R's limits
//     agree only to that tolerance; the ones here are exact order
//     statistics. R's estimate in this branch is also a root, within 1e-4
//     of the median returned here.
//
// No m x n slice is built: D_(k) for the three or four ranks needed
// (mn/2 and mn/2+1, or (mn+1)/2; k; mn+1-k) comes from a selection over
// the implicit sorted matrix of differences (Johnson and Mizoguchi 1978;
// Monahan 1984, Algorithm 616; with Floyd and Rivest's 1975 sampled
// pivots, see diffMatrix), O((m+n) log(m+n)) time and O(m+n) memory.
func HodgesLehmann(x, y []float64, level float64) (HodgesLehmannResult, error) {
	if err := checkSample(x); err != nil {
		return HodgesLehmannResult{}, fmt.Errorf("hodges-lehmann sample x: %w", err)
	}
	if err := checkSample(y); err != nil {
		return HodgesLehmannResult{}, fmt.Errorf("hodges-lehmann sample y: %w", err)
	}
	if !(level > 0 && level < 1) {
		return HodgesLehmannResult{}, fmt.Errorf("stats: confidence level %v outside (0, 1)", level)
	}
	dm := newDiffMatrix(x, y)
	mn := int64(len(x)) * int64(len(y))
	res := HodgesLehmannResult{Level: level}
	if mn%2 == 1 {
		res.Shift = dm.kth(mn/2 + 1)
	} else {
		a := dm.kth(mn / 2)
		res.Shift = (a + dm.next(mn/2, a)) / 2
	}

	alpha := 1 - level
	m, n := len(x), len(y)
	var k int64
	if m < 50 && n < 50 && !dm.hasTies() {
		res.Method = HLExact
		k = int64(qwilcox(alpha/2, m, n))
		if k == 0 {
			k = 1
		}
	} else {
		res.Method = HLAsymptotic
		tx, ty := tieTermSorted(dm.xd), tieTermSorted(dm.ys)
		N := float64(m + n)
		fmn := float64(mn)
		s := math.Sqrt(fmn / 12 * ((N + 1) - (tx+ty)/(N*(N-1))))
		z := distuv.UnitNormal.Quantile(1 - alpha/2)
		kf := math.Ceil(fmn/2 - 0.5 - z*s)
		k = int64(math.Max(1, math.Min(kf, fmn)))
	}
	res.Lower = dm.kth(k)
	res.Upper = dm.kth(mn + 1 - k)
	return res, nil
}

// qwilcox returns the smallest q with P(U <= q) >= p for the no-ties null
// distribution of U with sizes m and n (R's qwilcox).
func qwilcox(p float64, m, n int) int {
	if p > 0.5 {
		panic("stats: qwilcox is only used for lower-tail probabilities")
	}
	// The quantile of a lower-tail probability <= 1/2 lies at or below
	// the centre mn/2 of the symmetric distribution.
	c := uCounts(m, n, (m*n+1)/2)
	total := binom(m+n, m)
	// As R's nmath/qwilcox.c: accumulate the pmf and compare with
	// p - 10 eps, so that rounding cannot skip a quantile.
	p -= 10 * 2.220446049250313e-16
	var cum float64
	for q, v := range c {
		cum += v / total
		if cum >= p {
			return q
		}
	}
	return len(c) - 1
}

// diffMatrix is the implicit m x n matrix of differences y_j - x_i with
// rows ordered so that it increases along rows and down columns: row r
// holds ys[j] - xd[r], xd sorted descending, ys ascending.
//
// Selection in such a matrix (Johnson and Mizoguchi 1978, "Selecting the
// Kth element in X + Y and X1 + X2 + ... + Xm", SIAM J. Comput. 7(2):
// 147-153) keeps, for every row r, an active column range [lo[r], hi[r])
// with the invariant
//
//	d(r, j) <  D_(k) for j <  lo[r],   d(r, j) > D_(k) for j >= hi[r]
//
// (ties with D_(k) may stay active), so the answer is an active cell.
// Counting the cells at most a value p, c(p) = sum_r #{j: d(r,j) <= p},
// takes O(m+n) with one pointer that only moves left as r grows, because
// each row and each column is sorted. A pivot p then discards every
// active cell on the side of p that cannot hold D_(k): all cells >= p
// when k <= c(p-), all cells <= p when k > c(p). Monahan (1984, "Fast
// computation of the Hodges-Lehmann location estimator", ACM TOMS 10(3):
// 265-270, Algorithm 616) draws the pivot uniformly from the active cells,
// which needs O(log mn) expected rounds. Here each round instead draws a
// sample of s active cells and takes two of its order statistics that
// bracket the target rank, as Floyd and Rivest (1975, "Expected time
// bounds for selection", CACM 18(3): 165-172, Algorithm 489) do for
// arrays: if k' = k - (cells left of the active ranges) is the rank
// wanted among A active cells, the pivots are the sample's order
// statistics at s k'/A -+ 2 sqrt(s), and about a 4/sqrt(s) fraction of
// the active cells survives a round. With s = (m+n)/16 clamped to
// [2^10, 2^14] (the sample's cost, s log m to place the cells and O(s) to
// select the two pivots, stays below the two O(m+n) counts) a round keeps
// at most about 1/8 of them, so that
//
//	rounds ~ log(mn/(m+n)) / log(sqrt(s)/4)
//
// is 3 to 5 for samples of 10^4 to 10^6 values; each round costs
// O(m + n + s log m), and the last O(m+n) active cells are selected
// directly. With the two sorts that set the matrix up, the total is
// O((m+n) log(m+n)) time and O(m+n) memory; the m n differences are never
// built. Whatever the random draws, the answer is the exact order
// statistic: only the running time depends on them.
type diffMatrix struct {
	xd, ys []float64
	rng    *rand.Rand
	lo, hi []int     // active columns of each row: [lo[r], hi[r])
	lt, le []int     // scratch: per-row counts below / at most a pivot
	cum    []int64   // scratch: cumulative active cells before row r
	sample []float64 // scratch: the pivot sample

	sampleSize int   // s, cells sampled per round
	finishAt   int64 // select directly once this few cells are active
}

// pivotSample is the largest s, the number of active cells sampled per
// round.
const pivotSample = 1 << 14

func newDiffMatrix(x, y []float64) *diffMatrix {
	xd := sortedCopy(x)
	slices.Reverse(xd)
	m := len(xd)
	return &diffMatrix{
		xd: xd, ys: sortedCopy(y),
		// A fixed seed: the result does not depend on it, only the
		// running time does; fixing it keeps runs reproducible.
		rng: rand.New(rand.NewPCG(0x6a09e667f3bcc908, 0xbb67ae8584caa73b)),
		lo:  make([]int, m), hi: make([]int, m),
		lt: make([]int, m), le: make([]int, m),
		cum:        make([]int64, m+1),
		sampleSize: min(pivotSample, max((m+len(y))/16, 1<<10)),
		finishAt:   int64(max(m+len(y), 2*pivotSample)),
	}
}

// countBelow fills lt[r] = #{j: d(r,j) < p} and le[r] = #{j: d(r,j) <= p}
// for every row with two pointers (both counts are non-increasing in r),
// O(m+n), and returns their totals.
func (d *diffMatrix) countBelow(p float64) (lt, le int64) {
	n := len(d.ys)
	jl, je := n, n
	for r, xv := range d.xd {
		for jl > 0 && d.ys[jl-1]-xv >= p {
			jl--
		}
		for je > 0 && d.ys[je-1]-xv > p {
			je--
		}
		d.lt[r], d.le[r] = jl, je
		lt += int64(jl)
		le += int64(je)
	}
	return lt, le
}

// kth returns the k-th smallest difference (1-based, 1 <= k <= mn); see
// diffMatrix for the method.
func (d *diffMatrix) kth(k int64) float64 {
	m, n := len(d.xd), len(d.ys)
	for r := range m {
		d.lo[r], d.hi[r] = 0, n
	}
	for {
		var below int64 // cells left of the active ranges: all below D_(k)
		for r := range m {
			below += int64(d.lo[r])
			d.cum[r+1] = d.cum[r] + int64(d.hi[r]-d.lo[r])
		}
		active := d.cum[m]
		if active <= d.finishAt {
			return d.finish(k - below)
		}
		pl, ph, okl, okh := d.pivots(k-below, active)
		if okl {
			lt, le := d.countBelow(pl)
			switch {
			case k <= lt:
				d.shrinkHi()
				continue
			case k <= le:
				return pl
			}
			d.raiseLo()
		}
		if okh {
			lt, le := d.countBelow(ph)
			switch {
			case k <= lt:
				d.shrinkHi()
			case k <= le:
				return ph
			default:
				d.raiseLo()
			}
		}
	}
}

// shrinkHi drops the cells at or above the last pivot: hi[r] = min(hi[r],
// lt[r]).
func (d *diffMatrix) shrinkHi() {
	for r, c := range d.lt {
		d.hi[r] = min(d.hi[r], c)
	}
}

// raiseLo drops the cells at or below the last pivot: lo[r] = max(lo[r],
// le[r]).
func (d *diffMatrix) raiseLo() {
	for r, c := range d.le {
		d.lo[r] = max(d.lo[r], c)
	}
}

// pivots draws sampleSize active cells (d.cum must hold the cumulative
// active counts) and returns the sample order statistics just below and
// just above rank k among the active cells, with whether each exists.
func (d *diffMatrix) pivots(k, active int64) (lo, hi float64, okLo, okHi bool) {
	s := d.sample[:0]
	for range d.sampleSize {
		t := d.rng.Int64N(active)
		// The row r with cum[r] <= t < cum[r+1].
		r := sort.Search(len(d.xd), func(i int) bool { return d.cum[i+1] > t })
		j := d.lo[r] + int(t-d.cum[r])
		s = append(s, d.ys[j]-d.xd[r])
	}
	d.sample = s
	at := float64(k) / float64(active) * float64(len(s))
	spread := 2 * math.Sqrt(float64(len(s)))
	il, ih := int(math.Floor(at-spread)), int(math.Ceil(at+spread))
	// Two selections instead of a sort: O(s).
	if il >= 0 {
		lo, okLo = selectK(s, il), true
	}
	if ih < len(s) {
		from := max(il+1, 0) // after selectK(s, il), s[il+1:] holds the larger values
		hi, okHi = selectK(s[from:], ih-from), true
	}
	if !okLo && !okHi {
		// A sample too small to bracket the rank: one pivot near it
		// still discards at least itself, so every round progresses.
		lo, okLo = selectK(s, min(max(int(at), 0), len(s)-1)), true
	}
	return lo, hi, okLo, okHi
}

// finish gathers the few remaining active cells and selects the k-th
// smallest among them directly.
func (d *diffMatrix) finish(k int64) float64 {
	var cells []float64
	for r, xv := range d.xd {
		for j := d.lo[r]; j < d.hi[r]; j++ {
			cells = append(cells, d.ys[j]-xv)
		}
	}
	return selectK(cells, int(k-1))
}

// next returns the smallest difference greater than or equal to the
// (k+1)-th, given the k-th, v = D_(k): D_(k+1) is v itself when more than
// k cells are at most v, else the smallest cell above v, which is the
// first cell right of each row's count. O(m+n).
func (d *diffMatrix) next(k int64, v float64) float64 {
	if _, le := d.countBelow(v); le > k {
		return v
	}
	best := math.Inf(1)
	for r, xv := range d.xd {
		if j := d.le[r]; j < len(d.ys) {
			best = min(best, d.ys[j]-xv)
		}
	}
	return best
}

// hasTies reports whether the pooled sample holds two equal values: a
// value repeated inside X or inside Y, or one value in both. O(m+n).
func (d *diffMatrix) hasTies() bool {
	if tieTermSorted(d.xd) > 0 || tieTermSorted(d.ys) > 0 {
		return true
	}
	// Walk X ascending (xd backwards) against Y ascending.
	j := 0
	for i := len(d.xd) - 1; i >= 0; i-- {
		for j < len(d.ys) && d.ys[j] < d.xd[i] {
			j++
		}
		if j < len(d.ys) && d.ys[j] == d.xd[i] {
			return true
		}
	}
	return false
}

// tieTermSorted returns sum(t^3 - t) over the groups of t equal values of
// a sorted sample (ascending or descending), adding the groups from the
// smallest value up as pooledRanks does, so that the float sum is the
// same to the last bit.
func tieTermSorted(s []float64) float64 {
	var tie float64
	n := len(s)
	at := func(i int) float64 { return s[i] }
	if n > 1 && s[0] > s[n-1] {
		at = func(i int) float64 { return s[n-1-i] }
	}
	for i := 0; i < n; {
		j := i + 1
		for j < n && at(j) == at(i) {
			j++
		}
		if t := float64(j - i); t > 1 {
			tie += t*t*t - t
		}
		i = j
	}
	return tie
}
