package pipeline

import (
	"fmt"
	"math"

	"pqrepro/analysis/claims"
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

// compareStudy compares a study's reference and new results item by item
// (results/<study>.json of each): per comparison of two configurations
// its direction and significance (compareEffect), per configuration its
// median (compareMedian). A study the pipeline has no item rules for
// gives no rows; its claims are still compared.
func compareStudy(study string, ref, now []byte) ([]itemRow, error) {
	r, err := claims.NewResults(map[string][]byte{"ref": ref, "new": now}, nil)
	if err != nil {
		return nil, err
	}
	var rows []itemRow
	add := func(item, refText, nowText string, o outcome, why string) {
		rows = append(rows, itemRow{study: study, item: item, reference: refText, now: nowText, outcome: o, why: why})
	}
	missing := func(item string) { add(item, "present", "missing", differs, "not in the new run") }
	median := func(item string, a, b, tol float64) {
		o, why := compareMedian(a, b, tol)
		add(item, fmt.Sprintf("%.4g", a), fmt.Sprintf("%.4g", b), o, why)
	}
	list := func(which, path string) []any {
		v, err := r.Get(which, path)
		if err != nil {
			return nil
		}
		l, _ := v.([]any)
		return l
	}
	switch study {
	case "tls":
		for _, c := range list("ref", "families.matrix.comparisons") {
			target := fmt.Sprint(c.(map[string]any)["target"])
			path := "families.matrix.comparisons[target=" + target + "]."
			rd, _ := r.Num("ref", path+"median_diff_ms")
			rp, _ := r.Num("ref", path+"p_holm")
			nd, err1 := r.Num("new", path+"median_diff_ms")
			np, err2 := r.Num("new", path+"p_holm")
			if err1 != nil || err2 != nil {
				missing(target)
				continue
			}
			o, why := compareEffect(rd, rp, nd, np)
			add(target+" vs baseline", fmt.Sprintf("%+.3f ms, p_Holm %.2g", rd, rp), fmt.Sprintf("%+.3f ms, p_Holm %.2g", nd, np), o, why)
			rm, _ := r.Num("ref", path+"median_target_ms")
			nm, _ := r.Num("new", path+"median_target_ms")
			median(target+" median ms", rm, nm, reproduceMedianTol)
		}
	case "net":
		for _, c := range list("ref", "comparisons") {
			m := c.(map[string]any)
			item := fmt.Sprintf("%v round %v", m["scenario"], m["round"])
			var nm map[string]any
			for _, d := range list("new", "comparisons") {
				if dm := d.(map[string]any); dm["scenario"] == m["scenario"] && dm["round"] == m["round"] {
					nm = dm
				}
			}
			if nm == nil {
				missing(item)
				continue
			}
			rd, rp := netEffect(m)
			nd, np := netEffect(nm)
			o, why := compareEffect(rd, rp, nd, np)
			add(item+" difference", fmt.Sprintf("%+.3f ms, p %.2g", rd, rp), fmt.Sprintf("%+.3f ms, p %.2g", nd, np), o, why)
			rb, _ := m["baseline_median_ms"].(float64)
			nb, _ := nm["baseline_median_ms"].(float64)
			median(item+" X25519 median ms", rb, nb, reproduceMedianTol)
		}
	case "pico":
		for _, p := range list("ref", "published") {
			key := fmt.Sprint(p.(map[string]any)["key"])
			a, err1 := r.Num("ref", "published[key="+key+"].ours")
			b, err2 := r.Num("new", "published[key="+key+"].ours")
			if err1 != nil || err2 != nil {
				continue
			}
			median(key, a, b, reproducePicoTol)
		}
	default:
		return nil, nil
	}
	if len(rows) == 0 {
		return nil, fmt.Errorf("compare %s: nothing to compare in the results", study)
	}
	return rows, nil
}

// netEffect is a Study B comparison's difference and its p-value as the
// study tests it (Mann-Whitney U, Bonferroni-corrected; the uncorrected
// p when the results predate the correction). NaN when absent.
func netEffect(m map[string]any) (diff, p float64) {
	diff, _ = m["diff_ms"].(float64)
	p = math.NaN()
	for _, k := range []string{"mwu_p_bonferroni", "mwu_p"} {
		if v, ok := m[k].(float64); ok {
			return diff, v
		}
	}
	return diff, p
}
