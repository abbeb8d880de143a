// Package claims writes down, once, every numeric claim of the three
// reproduced studies (Hara, Kawashima and Saito, IPSJ SIG Technical Report
// 2026-IOT-73 no. 15; Marques and Zavan 2026; the RP2040 benchmark of
// ML-KEM and ML-DSA) with the kind of agreement that counts, and
// evaluates them on the pipeline's results. A verdict is computed from
// results/<study>.json, never typed:
//
//   - reproduced: our value agrees within the claim's stated tolerance
//     (or, for a qualitative claim, holds as stated, with significance
//     where the claim asserts it);
//   - direction only: the effect has the published sign or order but
//     misses the tolerance or the significance;
//   - not reproduced: the effect is absent or reversed;
//   - not measurable here: the study has no dataset, or the results lack
//     what the claim needs (the reason says which);
//   - not assessable (calibrated): one of our conditions was chosen from
//     the very published value the claim states (Claim.Calibrated says
//     which), so agreement would confirm nothing; the value is shown.
//
// Every rule must be one a wrong result could fail: Claim.Rationale says
// why the tolerance is what it is and what result would fail it. A claim
// that is computed from another claim's measurement (a constant factor, a
// ratio of the same numbers) is marked derived (Claim.DerivedFrom): it is
// shown with its verdict but not counted in the totals, so one measurement
// is never counted twice.
//
// Tolerances are relative to the published value unless stated; they are
// the project's choices, stated with each claim and in the paper, and
// reflect how comparable the setups are (Go on loopback vs OpenSSL in
// Docker; rp2040js vs a real board without flash-cache effects).
package claims

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Verdict is the outcome class of a claim.
type Verdict string

// The verdicts, from best to worst.
const (
	Reproduced    Verdict = "reproduced"
	DirectionOnly Verdict = "direction only"
	NotReproduced Verdict = "not reproduced"
	NotMeasurable Verdict = "not measurable here"
	NotAssessable Verdict = "not assessable (calibrated)"
)

// Verdicts lists every verdict in the order tables count them.
var Verdicts = []Verdict{Reproduced, DirectionOnly, NotReproduced, NotAssessable, NotMeasurable}

// A Claim is one published statement with the rule that judges it.
type Claim struct {
	ID    string // e.g. "A1"; stable, cited in the paper
	Study string // tls, net, pico
	// Statement says what the paper claims, in words.
	Statement string
	// Published is the paper's value as it states it.
	Published string
	// Agreement says what counts as reproduced, in words: the rule and
	// its tolerance, as the paper's claims table shows them.
	Agreement string
	// Rationale says why the rule and its tolerance are what they are and
	// which result would fail it.
	Rationale string
	// DerivedFrom names the claims whose measurements this one is computed
	// from; a derived claim is shown but not counted in the totals.
	DerivedFrom []string
	// Calibrated, when set, says which of our conditions were chosen from
	// the published value this claim states; the verdict is then
	// NotAssessable whatever the numbers say.
	Calibrated string
	// Eval computes our value and the verdict from the results.
	Eval func(r *Results) Outcome
}

// Outcome is a claim's evaluation.
type Outcome struct {
	Ours    string  `json:"ours"`
	Verdict Verdict `json:"verdict"`
	Reason  string  `json:"reason,omitempty"`
}

// Results holds the decoded results/<study>.json of every study that has
// them, and for the others why not.
type Results struct {
	byStudy map[string]any
	missing map[string]string
}

// NewResults decodes the given results files (study -> JSON content);
// missing maps a study without results to the reason.
func NewResults(files map[string][]byte, missing map[string]string) (*Results, error) {
	r := &Results{byStudy: map[string]any{}, missing: map[string]string{}}
	for study, b := range files {
		var v any
		if err := json.Unmarshal(b, &v); err != nil {
			return nil, fmt.Errorf("results of study %s: %w", study, err)
		}
		r.byStudy[study] = v
	}
	for study, why := range missing {
		r.missing[study] = why
	}
	return r, nil
}

// errMissing marks a value the results do not have.
type errMissing struct{ study, path, why string }

func (e *errMissing) Error() string {
	if e.path == "" {
		return e.why
	}
	return fmt.Sprintf("results/%s.json has no %s (%s)", e.study, e.path, e.why)
}

// Get returns the value at path in a study's results. A path is a dot-
// separated list of object keys and list selectors: "families.paper.
// comparisons[role=pq-sig].median_diff_pct" takes the element of the list
// whose "role" is "pq-sig"; "[0]" takes an index.
func (r *Results) Get(study, path string) (any, error) {
	v, ok := r.byStudy[study]
	if !ok {
		why := r.missing[study]
		if why == "" {
			why = "no results for study " + study
		}
		return nil, &errMissing{study: study, why: why}
	}
	for _, part := range splitPath(path) {
		key, sel, hasSel := strings.Cut(part, "[")
		if key != "" {
			m, ok := v.(map[string]any)
			if !ok {
				return nil, &errMissing{study, path, key + " is not inside an object"}
			}
			if v, ok = m[key]; !ok {
				return nil, &errMissing{study, path, "no key " + key}
			}
		}
		if !hasSel {
			continue
		}
		sel = strings.TrimSuffix(sel, "]")
		list, ok := v.([]any)
		if !ok {
			return nil, &errMissing{study, path, key + " is not a list"}
		}
		if i, err := strconv.Atoi(sel); err == nil {
			if i < 0 || i >= len(list) {
				return nil, &errMissing{study, path, fmt.Sprintf("index %d out of range", i)}
			}
			v = list[i]
			continue
		}
		k, want, _ := strings.Cut(sel, "=")
		var found any
		for _, el := range list {
			if m, ok := el.(map[string]any); ok && fmt.Sprint(m[k]) == want {
				if found != nil {
					return nil, &errMissing{study, path, "more than one element has " + sel}
				}
				found = el
			}
		}
		if found == nil {
			return nil, &errMissing{study, path, "no element with " + sel}
		}
		v = found
	}
	return v, nil
}

// splitPath splits at dots outside brackets.
func splitPath(p string) []string {
	var parts []string
	depth, start := 0, 0
	for i, c := range p {
		switch c {
		case '[':
			depth++
		case ']':
			depth--
		case '.':
			if depth == 0 {
				parts = append(parts, p[start:i])
				start = i + 1
			}
		}
	}
	return append(parts, p[start:])
}

// Num returns the number at path.
func (r *Results) Num(study, path string) (float64, error) {
	v, err := r.Get(study, path)
	if err != nil {
		return 0, err
	}
	switch x := v.(type) {
	case float64:
		return x, nil
	case nil:
		return math.NaN(), &errMissing{study, path, "the value is null (not computable from this dataset)"}
	}
	return 0, &errMissing{study, path, fmt.Sprintf("the value %v is not a number", v)}
}

// Nums returns the numbers at several paths of a study's results, or the
// first error.
func (r *Results) Nums(study string, paths ...string) ([]float64, error) {
	out := make([]float64, len(paths))
	for i, p := range paths {
		v, err := r.Num(study, p)
		if err != nil {
			return nil, err
		}
		out[i] = v
	}
	return out, nil
}

// Evaluate runs every claim of the catalogue on the results, in order.
func Evaluate(r *Results, catalogue []Claim) []Outcome {
	out := make([]Outcome, len(catalogue))
	for i, c := range catalogue {
		out[i] = safeEval(c, r)
	}
	return out
}

func safeEval(c Claim, r *Results) (o Outcome) {
	defer func() {
		if p := recover(); p != nil {
			o = Outcome{Ours: "---", Verdict: NotMeasurable, Reason: fmt.Sprintf("evaluation failed: %v", p)}
		}
	}()
	o = c.Eval(r)
	if c.Calibrated != "" && o.Verdict != NotMeasurable {
		o.Verdict, o.Reason = NotAssessable, c.Calibrated
	}
	return o
}

// unmeasurable turns an error from the accessors into an outcome.
func unmeasurable(err error) Outcome {
	return Outcome{Ours: "---", Verdict: NotMeasurable, Reason: err.Error()}
}

// within reports whether ours is within tol (relative) of published.
func within(ours, published, tol float64) bool {
	return math.Abs(ours-published) <= tol*math.Abs(published)
}

// judgeValue is the rule for a quantitative claim whose sign carries the
// direction (an increase, a speed-up above 1 is expressed by the caller):
// within tolerance: reproduced; same sign as published: direction only;
// otherwise not reproduced.
func judgeValue(ours, published, tol float64, format func(float64) string) Outcome {
	o := Outcome{Ours: format(ours)}
	switch {
	case math.IsNaN(ours):
		return Outcome{Ours: "---", Verdict: NotMeasurable, Reason: "not computable from this dataset"}
	case within(ours, published, tol):
		o.Verdict = Reproduced
	case math.Signbit(ours) == math.Signbit(published) && ours != 0:
		o.Verdict = DirectionOnly
		o.Reason = fmt.Sprintf("outside the %.0f %% tolerance (ours/published = %.2f)", 100*tol, ours/published)
	default:
		o.Verdict = NotReproduced
		o.Reason = "opposite sign"
	}
	return o
}

// judgeMagnitude is for a positive quantity (a time, a size): within
// tolerance: reproduced; otherwise not reproduced.
func judgeMagnitude(ours, published, tol float64, format func(float64) string) Outcome {
	if math.IsNaN(ours) {
		return Outcome{Ours: "---", Verdict: NotMeasurable, Reason: "not computable from this dataset"}
	}
	o := Outcome{Ours: format(ours), Verdict: Reproduced}
	if !within(ours, published, tol) {
		o.Verdict = NotReproduced
		o.Reason = fmt.Sprintf("outside the %.0f %% tolerance (ours/published = %.2f)", 100*tol, ours/published)
	}
	return o
}

// judgeRange is for a claim about a published range: our smallest and
// largest values both inside [min, max]: reproduced; the smallest above
// floor (the effect is there): direction only, with outside as the
// reason; otherwise not reproduced, with none as the reason.
func judgeRange(lo, hi, min, max, floor float64, ours, outside, none string) Outcome {
	o := Outcome{Ours: ours}
	switch {
	case lo >= min && hi <= max:
		o.Verdict = Reproduced
	case lo > floor:
		o.Verdict, o.Reason = DirectionOnly, outside
	default:
		o.Verdict, o.Reason = NotReproduced, none
	}
	return o
}

func ms(x float64) string   { return strconv.FormatFloat(x, 'f', 3, 64) + " ms" }
func ms1(x float64) string  { return strconv.FormatFloat(x, 'f', 1, 64) + " ms" }
func pct(x float64) string  { return fmt.Sprintf("%+.1f %%", x) }
func pct0(x float64) string { return fmt.Sprintf("%.1f %%", x) }
func times(x float64) string {
	return strconv.FormatFloat(x, 'f', 2, 64) + "x"
}
