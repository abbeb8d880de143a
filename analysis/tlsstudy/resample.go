package tlsstudy

import (
	"math"
	"math/rand/v2"

	"pqrepro/analysis/agreement"
	"pqrepro/analysis/stats"
)

// ResampleMethod says in one line how Resampler draws a pseudo-run, for
// the calibration's report.
const ResampleMethod = "rounds resampled with replacement from the results' per-round differences (rounds.diffs_ms), the same rounds for every item; each increase re-derived as the median of its resampled differences, each factor change as the difference of two re-derived increases; standard errors the reference's rounds.se (a cluster bootstrap inside each of K pseudo-runs would cost K x 2000 resamples per item); bytes exact"

// Resampler draws pseudo-runs of Study A from a reference run's results
// for the calibration (agreement.Resampled), without the raw records.
// That is, the results carry, per comparison, the per-round paired
// differences d_r (Rounds.DiffsMs), which are all the round-level
// inference uses. A pseudo-run draws R rounds with replacement, R the
// run's number of rounds (the profile's), the same round indices for
// every comparison of every family and cell, so that what a round's
// drift does to all of them at once stays together; each comparison's
// increase is then the median of its d_r over the drawn rounds (NaN
// rounds skipped, as the analysis pairs only rounds with both blocks),
// each factor change the To cell's re-derived increase minus the From
// cell's (gap.go's ChangeMs). The standard errors stay the reference's:
// the interval width at the profile's n. The values come in
// CompareItems(ref, ref)'s order.
func Resampler(ref *Results) agreement.Resampler {
	rounds := 0
	each(ref, func(c *Comparison) { rounds = max(rounds, len(c.Rounds.DiffsMs)) })
	return func(rng *rand.Rand) []agreement.Value {
		idx := make([]int, rounds)
		for i := range idx {
			idx[i] = rng.IntN(rounds)
		}
		r := cloneComparisons(ref)
		each(r, func(c *Comparison) { c.Rounds.IncreaseMs = Num(medianOver(floats(c.Rounds.DiffsMs), idx)) })
		if r.Gap != nil {
			for f := range r.Gap.Factors {
				for e := range r.Gap.Factors[f].Effects {
					rederiveChange(r.Gap, &r.Gap.Factors[f].Effects[e])
				}
			}
		}
		return agreement.RefValues(CompareItems(r, r))
	}
}

// each calls f for every comparison of every family and gap cell.
func each(r *Results, f func(*Comparison)) {
	for _, fam := range r.Families {
		if fam != nil {
			for i := range fam.Comparisons {
				f(&fam.Comparisons[i])
			}
		}
	}
	if r.Gap != nil {
		for c := range r.Gap.Cells {
			for i := range r.Gap.Cells[c].Comparisons {
				f(&r.Gap.Cells[c].Comparisons[i])
			}
		}
	}
}

// cloneComparisons copies r deeply enough that changing a comparison, a
// factor effect or a cell of the copy leaves r untouched.
func cloneComparisons(r *Results) *Results {
	out := *r
	out.Families = make(map[string]*Family, len(r.Families))
	for k, f := range r.Families {
		if f == nil {
			continue
		}
		g := *f
		g.Comparisons = append([]Comparison(nil), f.Comparisons...)
		out.Families[k] = &g
	}
	if r.Gap != nil {
		g := Gap{Cells: append([]CellResult(nil), r.Gap.Cells...), Factors: append([]FactorResult(nil), r.Gap.Factors...)}
		for i := range g.Cells {
			g.Cells[i].Comparisons = append([]Comparison(nil), g.Cells[i].Comparisons...)
		}
		for i := range g.Factors {
			g.Factors[i].Effects = append([]FactorEffect(nil), g.Factors[i].Effects...)
		}
		out.Gap = &g
	}
	return &out
}

// rederiveChange sets e's change from its two cells' (re-derived)
// increases, as factorEffect does.
func rederiveChange(g *Gap, e *FactorEffect) {
	var from, to *Comparison
	for i := range g.Cells {
		switch g.Cells[i].Cell {
		case e.From:
			from = g.Cells[i].role(e.Role)
		case e.To:
			to = g.Cells[i].role(e.Role)
		}
	}
	if from == nil || to == nil {
		return
	}
	e.FromIncreaseMs, e.ToIncreaseMs = from.Rounds.IncreaseMs, to.Rounds.IncreaseMs
	e.ChangeMs = Num(float64(to.Rounds.IncreaseMs) - float64(from.Rounds.IncreaseMs))
}

// medianOver is the median of x at idx, skipping indices past x's end
// and NaN (rounds without a paired value); NaN when none is left.
func medianOver(x []float64, idx []int) float64 {
	var v []float64
	for _, i := range idx {
		if i < len(x) && !math.IsNaN(x[i]) {
			v = append(v, x[i])
		}
	}
	if len(v) == 0 {
		return math.NaN()
	}
	m, _ := stats.Median(v)
	return m
}
