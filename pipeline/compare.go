package pipeline

import (
	"fmt"
	"math"

	"pqrepro/analysis/claims"
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
// (results/<study>.json of each) by the study's Compare: per comparison
// of two configurations its direction and significance (compareEffect),
// per configuration its median (compareMedian). A study without item
// rules gives no rows; its claims are still compared.
func compareStudy(s Study, ref, now []byte) ([]itemRow, error) {
	if s.Compare == nil {
		return nil, nil
	}
	r, err := claims.NewResults(map[string][]byte{"ref": ref, "new": now}, nil)
	if err != nil {
		return nil, err
	}
	c := &itemComparer{study: s.Name, r: r}
	s.Compare(c)
	if len(c.rows) == 0 {
		return nil, fmt.Errorf("compare %s: nothing to compare in the results", s.Name)
	}
	return c.rows, nil
}

// An itemComparer collects a study's compared items; r holds the
// reference results as "ref" and the new ones as "new".
type itemComparer struct {
	study string
	r     *claims.Results
	rows  []itemRow
}

func (c *itemComparer) add(item, refText, nowText string, o outcome, why string) {
	c.rows = append(c.rows, itemRow{study: c.study, item: item, reference: refText, now: nowText, outcome: o, why: why})
}

// missing records an item of the reference run the new run lacks.
func (c *itemComparer) missing(item string) {
	c.add(item, "present", "missing", differs, "not in the new run")
}

// median compares a median of the two runs by compareMedian.
func (c *itemComparer) median(item string, a, b, tol float64) {
	o, why := compareMedian(a, b, tol)
	c.add(item, fmt.Sprintf("%.4g", a), fmt.Sprintf("%.4g", b), o, why)
}

// list is the list at path in the "ref" or "new" results (nil if absent).
func (c *itemComparer) list(which, path string) []any {
	v, err := c.r.Get(which, path)
	if err != nil {
		return nil
	}
	l, _ := v.([]any)
	return l
}
