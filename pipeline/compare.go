package pipeline

import (
	"fmt"
	"math"

	"pqrepro/analysis/claims"
	"pqrepro/internal/jsonnum"
)

// reproduceMedianTol is how far a new run's timed medians may be from the
// reference run's, relative: timing on a shared machine drifts from run
// to run.
const reproduceMedianTol = 0.20

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

// compareStudy compares a study's reference and new results item by item
// (results/<study>.json of each) by the study's Compare, which reads both
// into the study's results type (compareWith), so that a field renamed in
// the analysis stops the build here: per comparison of two configurations
// its direction and significance (compareEffect), per configuration its
// median (compareMedian). An item of the reference run that the new run
// lacks, or whose value is null in either run, is a row of its own, never
// skipped. A study without item rules gives no rows; its claims are still
// compared.
func compareStudy(s Study, ref, now []byte) ([]itemRow, error) {
	if s.Compare == nil {
		return nil, nil
	}
	it := &items{study: s.Name}
	if err := s.Compare(it, ref, now); err != nil {
		return nil, fmt.Errorf("compare %s: %w", s.Name, err)
	}
	if len(it.rows) == 0 {
		return nil, fmt.Errorf("compare %s: nothing to compare in the results", s.Name)
	}
	return it.rows, nil
}

// compareWith is a study's Compare from its typed comparison: both runs'
// results are read as T (strictly: an unknown field is an error).
func compareWith[T any](compare func(it *items, ref, now *T)) func(it *items, ref, now []byte) error {
	return func(it *items, ref, now []byte) error { return compareTyped(ref, now, it, compare) }
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

// find returns the first element of l that match accepts, or nil.
func find[T any](l []T, match func(*T) bool) *T {
	for i := range l {
		if match(&l[i]) {
			return &l[i]
		}
	}
	return nil
}
