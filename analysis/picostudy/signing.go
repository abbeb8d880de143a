package picostudy

import (
	"fmt"
	"maps"
	"math"
	"slices"

	"gonum.org/v1/gonum/mat"

	"pqrepro/analysis/stats"
	"pqrepro/datasets/picodata"
	"pqrepro/internal/jsonnum"
)

// SigningLoop is one ML-DSA parameter set's signing cost split by its
// rejection loop (FIPS 204 Algorithm 7), from the firmware's counts.
//
// An ML-DSA signature repeats its loop until a candidate passes every
// check; each iteration's work is fixed once its path is known. So the
// cycles of signature j are, up to a small residual,
//
//	cycles_j = base + iter x n_j + r0 x r0_j + ct0 x ct0_j + hint x h_j,
//
// with n_j its iterations, r0_j, ct0_j and h_j how many of them reached
// the ||r0|| check, the ||ct0|| check and the hint (picodata.DSALoop).
// base is the work outside the loop (hashing the message, expanding A),
// iter the cost of an iteration up to the z check, and r0, ct0 and hint
// what each later step adds. The coefficients are ordinary least squares
// over the run's signatures; a step that never varies (every signature
// made one hint) is folded into base, and one that moves in step with an
// earlier count in every signature into that count, each reported as not
// separable.
//
// The mean of 100 signatures carries the loop's variance (its coefficient
// of variation near 58 % for ML-DSA-44 gives a standard error near 6 %):
// the single-iteration minimum and the per-step costs are what a timing
// model can be held to.
type SigningLoop struct {
	Scheme string `json:"scheme"`
	N      int    `json:"n"` // signatures with counts
	// MeanCycles and CVPct are the signatures' mean and coefficient of
	// variation (%); MeanIters their mean iterations.
	MeanCycles jsonnum.Num `json:"mean_cycles"`
	CVPct      jsonnum.Num `json:"cv_pct"`
	MeanIters  jsonnum.Num `json:"mean_iters"`
	// OneIterMinCycles is the fewest cycles of a signature that needed one
	// iteration; OneIterN how many did (0: none, and the minimum is NaN).
	OneIterMinCycles jsonnum.Num `json:"one_iter_min_cycles"`
	OneIterN         int         `json:"one_iter_n"`
	// Coefficients in cycles (NaN: not separable in this run, see the
	// type's comment).
	BaseCycles jsonnum.Num `json:"base_cycles"`
	IterCycles jsonnum.Num `json:"iter_cycles"`
	R0Cycles   jsonnum.Num `json:"r0_cycles"`
	Ct0Cycles  jsonnum.Num `json:"ct0_cycles"`
	HintCycles jsonnum.Num `json:"hint_cycles"`
	// MaxResidualPct is the largest |observed - fitted| over the
	// signatures, in % of the observed cycles.
	MaxResidualPct jsonnum.Num `json:"max_residual_pct"`
}

// signingLoops fits SigningLoop for every ML-DSA scheme of ms whose
// signatures carry the firmware's counts, in scheme order; none for runs
// before the counts.
func signingLoops(ms []picodata.Measurement) ([]SigningLoop, error) {
	by := map[string][]picodata.Measurement{}
	for _, m := range ms {
		if m.Op == "sign" && m.Loop.Counted() {
			by[m.Scheme] = append(by[m.Scheme], m)
		}
	}
	var out []SigningLoop
	for _, scheme := range slices.Sorted(maps.Keys(by)) {
		l, err := fitSigningLoop(scheme, by[scheme])
		if err != nil {
			return nil, err
		}
		out = append(out, l)
	}
	return out, nil
}

// fitSigningLoop fits one scheme's signatures (see SigningLoop).
func fitSigningLoop(scheme string, ms []picodata.Measurement) (SigningLoop, error) {
	nan := jsonnum.Num(math.NaN())
	l := SigningLoop{Scheme: scheme, N: len(ms), OneIterMinCycles: nan, BaseCycles: nan, IterCycles: nan, R0Cycles: nan, Ct0Cycles: nan, HintCycles: nan, MaxResidualPct: nan}
	cyc := make([]float64, len(ms))
	iters := 0.0
	for i, m := range ms {
		if err := m.Loop.Check(); err != nil {
			return l, fmt.Errorf("%s sign %d: %w", scheme, m.Iter, err)
		}
		cyc[i] = float64(m.Cycles)
		iters += float64(m.Loop.Iters)
		if m.Loop.Iters == 1 {
			l.OneIterN++
			if l.OneIterN == 1 || float64(m.Cycles) < float64(l.OneIterMinCycles) {
				l.OneIterMinCycles = jsonnum.Num(m.Cycles)
			}
		}
	}
	sum, err := stats.Describe(cyc)
	if err != nil {
		return l, fmt.Errorf("%s signatures: %w", scheme, err)
	}
	l.MeanCycles, l.CVPct = jsonnum.Num(sum.Mean), jsonnum.Num(100*sum.CV)
	l.MeanIters = jsonnum.Num(iters / float64(len(ms)))
	// The columns: the intercept, then each count that varies.
	get := []func(picodata.DSALoop) float64{
		func(d picodata.DSALoop) float64 { return float64(d.Iters) },
		func(d picodata.DSALoop) float64 { return float64(d.R0Checks) },
		func(d picodata.DSALoop) float64 { return float64(d.Ct0Checks) },
		func(d picodata.DSALoop) float64 { return float64(d.Hints) },
	}
	coef := []*jsonnum.Num{&l.IterCycles, &l.R0Cycles, &l.Ct0Cycles, &l.HintCycles}
	var cols []int
	for c, g := range get {
		first := g(ms[0].Loop)
		if slices.ContainsFunc(ms, func(m picodata.Measurement) bool { return g(m.Loop) != first }) {
			cols = append(cols, c)
		}
	}
	// A count that moves in step with the ones before it in every
	// signature (every iteration that reached ||r0|| also reached
	// ||ct0||, say) adds no rank: it is not separable, and its cost stays
	// in the columns before it.
	design := func(cols []int) *mat.Dense {
		X := mat.NewDense(len(ms), 1+len(cols), nil)
		for i, m := range ms {
			X.Set(i, 0, 1)
			for j, c := range cols {
				X.Set(i, 1+j, get[c](m.Loop))
			}
		}
		return X
	}
	if len(ms) <= 1+len(cols) {
		return l, nil // too few signatures to fit: the coefficients stay NaN
	}
	var kept []int
	for _, c := range cols {
		if try := append(slices.Clone(kept), c); fullRank(design(try)) {
			kept = try
		}
	}
	cols = kept
	X := design(cols)
	y := mat.NewVecDense(len(ms), cyc)
	var beta mat.VecDense
	if err := beta.SolveVec(X, y); err != nil {
		return l, nil // not solvable: NaN
	}
	l.BaseCycles = jsonnum.Num(beta.AtVec(0))
	for j, c := range cols {
		*coef[c] = jsonnum.Num(beta.AtVec(1 + j))
	}
	worst := 0.0
	for i := range ms {
		fit := mat.Dot(X.RowView(i), &beta)
		worst = max(worst, 100*math.Abs(cyc[i]-fit)/cyc[i])
	}
	l.MaxResidualPct = jsonnum.Num(worst)
	return l, nil
}

// fullRank reports whether X's columns are linearly independent: its
// smallest singular value is above 1e-9 of its largest.
func fullRank(X *mat.Dense) bool {
	var svd mat.SVD
	if !svd.Factorize(X, mat.SVDNone) {
		return false
	}
	v := svd.Values(nil)
	return len(v) > 0 && v[len(v)-1] > 1e-9*v[0]
}
