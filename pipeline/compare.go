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
		rows = append(rows, compareGap(study, list("ref", "gap.cells"), list("new", "gap.cells"), list("ref", "gap.factors"), list("new", "gap.factors"))...)
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

// compareGap compares Study A's gap analysis (analysis/tlsmatrix): every
// cell's increases of the paper's configurations, by compareEffect; and
// every factor change the reference finds significant, which the new run
// contradicts only when its interval lies wholly on the other side of
// zero (a quick run's intervals are wide: a change it cannot resolve is
// inconclusive, not a contradiction).
func compareGap(study string, refCells, newCells, refFactors, newFactors []any) []itemRow {
	var rows []itemRow
	add := func(item, refText, nowText string, o outcome, why string) {
		rows = append(rows, itemRow{study: study, item: item, reference: refText, now: nowText, outcome: o, why: why})
	}
	cellName := func(m map[string]any) string { return fmt.Sprintf("%v/%v/%v", m["stack"], m["path"], m["keyshare"]) }
	find := func(l []any, match func(map[string]any) bool) map[string]any {
		for _, v := range l {
			if m, ok := v.(map[string]any); ok && match(m) {
				return m
			}
		}
		return nil
	}
	num := func(m map[string]any, k string) float64 {
		if v, ok := m[k].(float64); ok {
			return v
		}
		return math.NaN()
	}
	for _, c := range refCells {
		rc, _ := c.(map[string]any)
		name := cellName(rc)
		nc := find(newCells, func(m map[string]any) bool { return cellName(m) == name })
		comps, _ := rc["comparisons"].([]any)
		for _, x := range comps {
			ro, _ := x.(map[string]any)
			item := fmt.Sprintf("cell %s %v vs baseline", name, ro["role"])
			var no map[string]any
			if nc != nil {
				ncomps, _ := nc["comparisons"].([]any)
				no = find(ncomps, func(m map[string]any) bool { return m["role"] == ro["role"] })
			}
			if no == nil {
				add(item, "present", "missing", differs, "not in the new run")
				continue
			}
			rd, nd, rp, np := num(ro, "median_diff_ms"), num(no, "median_diff_ms"), num(ro, "p_holm"), num(no, "p_holm")
			o, why := compareEffect(rd, rp, nd, np)
			add(item, fmt.Sprintf("%+.3f ms, p_Holm %.2g", rd, rp), fmt.Sprintf("%+.3f ms, p_Holm %.2g", nd, np), o, why)
		}
	}
	for _, f := range refFactors {
		rf, _ := f.(map[string]any)
		nf := find(newFactors, func(m map[string]any) bool { return m["factor"] == rf["factor"] })
		effects, _ := rf["effects"].([]any)
		for _, e := range effects {
			re, _ := e.(map[string]any)
			if !(num(re, "p_holm") < claims.Alpha) {
				continue // the reference finds no change: no direction to reproduce
			}
			from, _ := re["from_cell"].(map[string]any)
			to, _ := re["to_cell"].(map[string]any)
			item := fmt.Sprintf("%v %s -> %s %v change", rf["factor"], cellName(from), cellName(to), re["role"])
			var ne map[string]any
			if nf != nil {
				neffects, _ := nf["effects"].([]any)
				ne = find(neffects, func(m map[string]any) bool {
					nfrom, _ := m["from_cell"].(map[string]any)
					return m["role"] == re["role"] && nfrom != nil && cellName(nfrom) == cellName(from)
				})
			}
			if ne == nil {
				add(item, "present", "missing", differs, "not in the new run")
				continue
			}
			rd, nd, lo, hi := num(re, "change_ms"), num(ne, "change_ms"), num(ne, "lower"), num(ne, "upper")
			o, why := agrees, "the new interval includes the reference's direction"
			switch {
			case (rd > 0 && hi < 0) || (rd < 0 && lo > 0):
				o, why = differs, "the new interval lies wholly on the other side of zero"
			case lo <= 0 && hi >= 0:
				o, why = inconclusive, "the new interval includes zero"
			}
			add(item, fmt.Sprintf("%+.3f ms", rd), fmt.Sprintf("%+.3f ms [%+.3f, %+.3f]", nd, lo, hi), o, why)
		}
	}
	return rows
}
