package pipeline

import (
	"fmt"
	"math"

	"pqrepro/analysis/claims"
	"pqrepro/analysis/netstudy"
	"pqrepro/analysis/pico"
	"pqrepro/analysis/tlsmatrix"
	"pqrepro/internal/jsonnum"
)

// Tolerances of the comparisons: how far a new run's medians may be from
// the reference run's, relative. Timing on a shared machine drifts from
// run to run; the emulator is deterministic but ML-DSA timings depend on
// the seeded messages, which are the same.
const (
	reproduceMedianTol = 0.20
	reproducePicoTol   = 0.02
)

// An outcome is how one item of a new run compares with the reference run
// of the same profile.
type outcome int

const (
	// agrees: the same finding within the stated rule.
	agrees outcome = iota
	// inconclusive: the two runs do not both support a finding either way
	// (see compareEffect); it is reported, and does not fail the command.
	inconclusive
	// differs: a finding of the reference run is contradicted.
	differs
)

func (o outcome) String() string {
	return [...]string{"agrees", "inconclusive", "DIFFERS"}[o]
}

// compareEffect compares one effect (a difference between two
// configurations, with the p-value of its test after the study's
// multiple-comparison correction) as measured by the reference run (rd,
// rp) and by the new run (nd, np), at the claims' level alpha
// (claims.Alpha). The rule, applied in this order:
//
//  1. significant in both runs (p < alpha): agrees when the two
//     differences have the same sign, else differs ("direction differs");
//  2. significant in neither run: agrees (neither run finds an effect; the
//     sign of a difference that is not significant is noise and is not
//     compared);
//  3. significant in one run only: inconclusive. One run finds an effect
//     and the other cannot tell it from noise at alpha, so neither the
//     effect nor its absence is reproduced or contradicted; the sign is
//     not compared, since one of the two is noise. This is the case of a
//     new -0.038 ms at p = 0.53 against a reference +0.009 ms at
//     p < alpha: not a difference in direction.
//
// A missing p-value (NaN) counts as not significant.
func compareEffect(rd, rp, nd, np float64) (outcome, string) {
	rs, ns := rp < claims.Alpha, np < claims.Alpha
	switch {
	case rs && ns && math.Signbit(rd) != math.Signbit(nd):
		return differs, "direction differs (significant in both runs)"
	case rs && ns:
		return agrees, "same direction, significant in both runs"
	case !rs && !ns:
		return agrees, "not significant in either run"
	case rs:
		return inconclusive, fmt.Sprintf("significant in the reference run only (p %.2g vs %.2g at alpha %.2f)", rp, np, claims.Alpha)
	default:
		return inconclusive, fmt.Sprintf("significant in the new run only (p %.2g vs %.2g at alpha %.2f)", np, rp, claims.Alpha)
	}
}

// compareMedian compares a median (or any positive measure) of the two
// runs: it agrees when the new value is within tol (relative) of the
// reference value.
func compareMedian(a, b, tol float64) (outcome, string) {
	if math.Abs(b-a) > tol*math.Abs(a) {
		return differs, fmt.Sprintf("differs by more than %.0f %%", 100*tol)
	}
	return agrees, fmt.Sprintf("within %.0f %%", 100*tol)
}

// An itemRow is one compared item of a study: a comparison or a median.
type itemRow struct {
	study, item, reference, now string
	outcome                     outcome
	why                         string
}

// items collects a study's rows.
type items struct {
	study string
	rows  []itemRow
}

func (it *items) add(item, refText, nowText string, o outcome, why string) {
	it.rows = append(it.rows, itemRow{study: it.study, item: item, reference: refText, now: nowText, outcome: o, why: why})
}

// absent is the row of an item of the reference run that the new run
// lacks: a finding of the reference not reproduced.
func (it *items) absent(item string) {
	it.add(item, "present", "missing", differs, "not in the new run")
}

// null reports whether one of the values a comparison needs is null (NaN)
// in either run, and if so adds the row that says which: null in the new
// run differs (the reference run has it, the new one does not); null in
// the reference run is inconclusive (nothing to compare with). A missing
// value is never skipped silently.
func (it *items) null(item string, fields []string, ref, now []float64) bool {
	for i, f := range fields {
		switch {
		case math.IsNaN(ref[i]) && math.IsNaN(now[i]):
			it.add(item, "null", "null", inconclusive, f+" is null in both runs (not computable from either dataset)")
		case math.IsNaN(now[i]):
			it.add(item, fmt.Sprintf("%.4g", ref[i]), "null", differs, "missing in the new run: "+f+" is null")
		case math.IsNaN(ref[i]):
			it.add(item, "null", fmt.Sprintf("%.4g", now[i]), inconclusive, f+" is null in the reference run: nothing to compare with")
		default:
			continue
		}
		return true
	}
	return false
}

// median compares a median of the two runs (compareMedian).
func (it *items) median(item, field string, a, b, tol float64) {
	if it.null(item, []string{field}, []float64{a}, []float64{b}) {
		return
	}
	o, why := compareMedian(a, b, tol)
	it.add(item, fmt.Sprintf("%.4g", a), fmt.Sprintf("%.4g", b), o, why)
}

// effect compares a difference and its p-value (compareEffect); p is the
// field name of the p-value, for the row of a null value.
func (it *items) effect(item, p, unit string, rd, rp, nd, np float64) {
	if it.null(item, []string{"the difference", p}, []float64{rd, rp}, []float64{nd, np}) {
		return
	}
	o, why := compareEffect(rd, rp, nd, np)
	it.add(item, fmt.Sprintf("%+.3f ms, %s %.2g", rd, unit, rp), fmt.Sprintf("%+.3f ms, %s %.2g", nd, unit, np), o, why)
}

// compareStudy compares a study's reference and new results item by item
// (results/<study>.json of each, read into the study's results type, so
// that a field renamed in the analysis stops the build here): per
// comparison of two configurations its direction and significance
// (compareEffect), per configuration its median (compareMedian). An item
// of the reference run that the new run lacks, or whose value is null in
// either run, is a row of its own, never skipped. A study the pipeline has
// no item rules for gives no rows; its claims are still compared.
func compareStudy(study string, ref, now []byte) ([]itemRow, error) {
	it := &items{study: study}
	var err error
	switch study {
	case "tls":
		err = compareTyped(ref, now, it, compareTLS)
	case "net":
		err = compareTyped(ref, now, it, compareNet)
	case "pico":
		err = compareTyped(ref, now, it, comparePico)
	default:
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("compare %s: %w", study, err)
	}
	if len(it.rows) == 0 {
		return nil, fmt.Errorf("compare %s: nothing to compare in the results", study)
	}
	return it.rows, nil
}

// compareTyped reads both runs' results as T and compares them.
func compareTyped[T any](ref, now []byte, it *items, compare func(it *items, ref, now *T)) error {
	name := "results/" + it.study + ".json"
	r, err := jsonnum.Decode[T]("the reference run's "+name, ref)
	if err != nil {
		return err
	}
	n, err := jsonnum.Decode[T]("the new run's "+name, now)
	if err != nil {
		return err
	}
	compare(it, r, n)
	return nil
}

// compareTLS compares Study A's matrix family (every configuration
// against the baseline, Holm) and its gap analysis.
func compareTLS(it *items, ref, now *tlsmatrix.Results) {
	if rf := ref.Families["matrix"]; rf != nil {
		var nc []tlsmatrix.Comparison
		if nf := now.Families["matrix"]; nf != nil {
			nc = nf.Comparisons
		}
		for _, c := range rf.Comparisons {
			n := find(nc, func(n *tlsmatrix.Comparison) bool { return n.Target == c.Target })
			if n == nil {
				it.absent(c.Target)
				continue
			}
			it.effect(c.Target+" vs baseline", "p_holm", "p_Holm", float64(c.MedianDiffMs), float64(c.PHolm), float64(n.MedianDiffMs), float64(n.PHolm))
			it.median(c.Target+" median ms", "median_target_ms", float64(c.MedianTargetMs), float64(n.MedianTargetMs), reproduceMedianTol)
		}
	}
	if ref.Gap != nil {
		ng := now.Gap
		if ng == nil {
			ng = &tlsmatrix.Gap{}
		}
		compareGap(it, ref.Gap, ng)
	}
}

// compareNet compares Study B's comparisons, matched by scenario and
// round: the difference with its Bonferroni-corrected Mann-Whitney p (the
// study's test), and the X25519 median.
func compareNet(it *items, ref, now *netstudy.Results) {
	for _, c := range ref.Comparisons {
		item := fmt.Sprintf("%s round %d", c.Scenario, c.Round)
		n := find(now.Comparisons, func(n *netstudy.Comparison) bool { return n.Scenario == c.Scenario && n.Round == c.Round })
		if n == nil {
			it.absent(item)
			continue
		}
		it.effect(item+" difference", "mwu_p_bonferroni", "p", float64(c.DiffMs), float64(c.MWUPAdj), float64(n.DiffMs), float64(n.MWUPAdj))
		it.median(item+" X25519 median ms", "baseline_median_ms", float64(c.BaseMedianMs), float64(n.BaseMedianMs), reproduceMedianTol)
	}
}

// comparePico compares Study C's values beside the paper's (results'
// "published", by key): the emulator is deterministic, so within
// reproducePicoTol.
func comparePico(it *items, ref, now *pico.Results) {
	nanIfNil := func(p *float64) float64 {
		if p == nil {
			return math.NaN()
		}
		return *p
	}
	for _, p := range ref.Published {
		n := find(now.Published, func(n *pico.PublishedValue) bool { return n.Key == p.Key })
		if n == nil {
			it.absent(p.Key)
			continue
		}
		it.median(p.Key, "ours", nanIfNil(p.Ours), nanIfNil(n.Ours), reproducePicoTol)
	}
}

// find returns the first element of l that match accepts, or nil.
func find[T any](l []T, match func(*T) bool) *T {
	for i := range l {
		if match(&l[i]) {
			return &l[i]
		}
	}
	return nil
}

// compareGap compares Study A's gap analysis (analysis/tlsmatrix): every
// cell's increases of the paper's configurations, by compareEffect; and
// every factor change the reference finds significant, which the new run
// contradicts only when its interval lies wholly on the other side of
// zero (a quick run's intervals are wide: a change it cannot resolve is
// inconclusive, not a contradiction).
func compareGap(it *items, ref, now *tlsmatrix.Gap) {
	for _, rc := range ref.Cells {
		name := rc.Cell.String()
		nc := find(now.Cells, func(n *tlsmatrix.CellResult) bool { return n.Cell == rc.Cell })
		for _, ro := range rc.Comparisons {
			item := fmt.Sprintf("cell %s %s vs baseline", name, ro.Role)
			var no *tlsmatrix.Comparison
			if nc != nil {
				no = find(nc.Comparisons, func(n *tlsmatrix.Comparison) bool { return n.Role == ro.Role })
			}
			if no == nil {
				it.absent(item)
				continue
			}
			it.effect(item, "p_holm", "p_Holm", float64(ro.MedianDiffMs), float64(ro.PHolm), float64(no.MedianDiffMs), float64(no.PHolm))
		}
	}
	for _, rf := range ref.Factors {
		nf := find(now.Factors, func(n *tlsmatrix.FactorResult) bool { return n.Factor == rf.Factor })
		for _, re := range rf.Effects {
			item := fmt.Sprintf("%s %s -> %s %s change", rf.Factor, re.From, re.To, re.Role)
			if math.IsNaN(float64(re.PHolm)) {
				it.add(item, "p_holm null", "-", inconclusive, "the reference run has no p_holm for the change (null): no direction to reproduce")
				continue
			}
			if !(float64(re.PHolm) < claims.Alpha) {
				continue // the reference finds no change: no direction to reproduce
			}
			var ne *tlsmatrix.FactorEffect
			if nf != nil {
				ne = find(nf.Effects, func(n *tlsmatrix.FactorEffect) bool { return n.Role == re.Role && n.From == re.From })
			}
			if ne == nil {
				it.absent(item)
				continue
			}
			rd, nd, lo, hi := float64(re.ChangeMs), float64(ne.ChangeMs), float64(ne.Lower), float64(ne.Upper)
			if it.null(item, []string{"change_ms", "lower", "upper"}, []float64{rd, 0, 0}, []float64{nd, lo, hi}) {
				continue
			}
			o, why := agrees, "the new interval includes the reference's direction"
			switch {
			case (rd > 0 && hi < 0) || (rd < 0 && lo > 0):
				o, why = differs, "the new interval lies wholly on the other side of zero"
			case lo <= 0 && hi >= 0:
				o, why = inconclusive, "the new interval includes zero"
			}
			it.add(item, fmt.Sprintf("%+.3f ms", rd), fmt.Sprintf("%+.3f ms [%+.3f, %+.3f]", nd, lo, hi), o, why)
		}
	}
}
