package claims

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
)

// CurveFile is the specification curve of every counted claim.
const CurveFile = "results/claims-curve.json"

// RuleFile states the curve's labelling rule, committed before the
// curve was first computed.
const RuleFile = "analysis/claims/robustness-rule.txt"

// The kinds of alternative specification (RuleFile names them).
const (
	KindCell = "cell" // another cell of the study's design
	KindThs  = "ths"  // another definition of the measured time
	KindRun  = "run"  // another quiet run of the same profile and design
	KindRule = "rule" // the claim's rule as first written
	// KindToolchain is the same series measured with another toolchain
	// (Study B's endpoints built with another Go release).
	KindToolchain = "toolchain"
)

// The labels of a curve (RuleFile).
const (
	Robust    = "robust"
	Fragile   = "fragile"
	Fails     = "fails"
	NotJudged = "not judged"
)

// DirectionOnly is the verdict class the first rules had for a value
// outside its tolerance with the published sign; it is not reproduced.
const DirectionOnly Verdict = "direction only"

// An Alternative is the study's results under one other specification.
// A study's analysis computes them from the committed data (its
// alternatives file); Missing says why one could not be computed.
type Alternative struct {
	Kind    string          `json:"kind"`
	Name    string          `json:"name"`
	Results json.RawMessage `json:"results,omitempty"`
	Missing string          `json:"missing,omitempty"`
}

// Alternatives is a study's alternatives file: the alternatives and the
// kinds the study's records cannot give, each with why.
type Alternatives struct {
	Alternatives []Alternative `json:"alternatives"`
	Unavailable  []string      `json:"unavailable,omitempty"`
}

// A FirstRule is a claim's rule as first written, applied to today's
// results, for a claim whose rule changed since.
type FirstRule struct {
	ID     string
	Commit string // the commit that first wrote it
	// Text is the rule as that commit's Agreement stated it.
	Text string
	Eval func(r *Results) Outcome
}

// Spec is one claim's verdict under one specification.
type Spec struct {
	Kind    string  `json:"kind"`
	Name    string  `json:"name"`
	Verdict Verdict `json:"verdict"`
	Ours    string  `json:"ours,omitempty"`
	Reason  string  `json:"reason,omitempty"`
}

// Holds reports whether the claim holds in the specification.
func (s Spec) Holds() bool { return s.Verdict == Reproduced }

// Curve is one counted claim's specification curve and its label.
type Curve struct {
	ID    string `json:"id"`
	Study string `json:"study"`
	// Stated is the verdict in the stated specification.
	Stated       Verdict `json:"stated"`
	Alternatives []Spec  `json:"alternatives"`
	// Left are the alternatives not judged (not measurable), with why.
	Left  []Spec `json:"left,omitempty"`
	K     int    `json:"k"`
	N     int    `json:"n"`
	Label string `json:"label"`
}

// Summary says "holds in k of n", "k of 1, no alternative", or, for a
// claim not judged, its stated verdict.
//
// A claim not judged has no curve (RuleFile): "0 of 1" would read as a
// failure, so its summary names the stated verdict instead.
func (c Curve) Summary() string {
	switch {
	case c.Label == NotJudged:
		return "stated: " + string(c.Stated)
	case c.N == 1:
		return fmt.Sprintf("%d of 1, no alternative", c.K)
	}
	return fmt.Sprintf("holds in %d of %d", c.K, c.N)
}

// Label applies RuleFile to a stated verdict and the alternatives'
// verdicts: k and n count the stated specification too.
//
// An alternative that is not measurable here is left out of n, as
// RuleFile says; Curves lists it apart (Curve.Left) with its reason.
func Label(stated Verdict, alts []Verdict) (k, n int, label string) {
	n = 1
	if stated == Reproduced {
		k++
	}
	for _, v := range alts {
		if v == NotMeasurable {
			continue
		}
		n++
		if v == Reproduced {
			k++
		}
	}
	switch {
	case stated == NotAssessable || stated == NotMeasurable:
		label = NotJudged
	case stated != Reproduced:
		label = Fails
	case k == n:
		label = Robust
	default:
		label = Fragile
	}
	return k, n, label
}

// CurveReport is CurveFile.
type CurveReport struct {
	Rule   string  `json:"rule"`
	Curves []Curve `json:"curves"`
	// Unavailable lists, per study, the kinds of alternative its records
	// cannot give.
	Unavailable map[string][]string `json:"unavailable,omitempty"`
	Counts      map[string]int      `json:"counts"`
	// NoAlternative counts the robust claims with nothing varied.
	NoAlternative int `json:"robust_no_alternative"`
}

// Curves judges every counted claim of the catalogue in its stated
// specification and in each alternative. Of the arguments, files are the
// studies' results, alts each study's alternatives and firsts the first
// rules.
func Curves(files map[string][]byte, missing map[string]string, catalogue []Claim, alts map[string]Alternatives, firsts []FirstRule) (CurveReport, error) {
	r, err := NewResults(files, missing)
	if err != nil {
		return CurveReport{}, err
	}
	type variant struct {
		study string
		alt   Alternative
		r     *Results
	}
	var vs []variant
	rep := CurveReport{Rule: RuleFile, Counts: map[string]int{}, Unavailable: map[string][]string{}}
	for _, study := range slices.Sorted(maps.Keys(alts)) {
		a := alts[study]
		if len(a.Unavailable) > 0 {
			rep.Unavailable[study] = a.Unavailable
		}
		for _, alt := range a.Alternatives {
			v := variant{study: study, alt: alt}
			if alt.Missing == "" {
				vf := maps.Clone(files)
				vf[study] = alt.Results
				if v.r, err = NewResults(vf, missing); err != nil {
					return CurveReport{}, fmt.Errorf("alternative %s %q of study %s: %w", alt.Kind, alt.Name, study, err)
				}
			}
			vs = append(vs, v)
		}
	}
	first := map[string]FirstRule{}
	for _, f := range firsts {
		first[f.ID] = f
	}
	for _, c := range catalogue {
		if len(c.DerivedFrom) > 0 || c.Observation != "" {
			continue
		}
		cv := Curve{ID: c.ID, Study: c.Study, Stated: safeEval(c, r).Verdict, Alternatives: []Spec{}}
		add := func(kind, name string, o Outcome) {
			s := Spec{Kind: kind, Name: name, Verdict: o.Verdict, Ours: o.Ours, Reason: o.Reason}
			if o.Verdict == NotMeasurable {
				cv.Left = append(cv.Left, s)
				return
			}
			cv.Alternatives = append(cv.Alternatives, s)
		}
		for _, v := range vs {
			if v.study != c.Study {
				continue
			}
			if v.r == nil {
				add(v.alt.Kind, v.alt.Name, Outcome{Verdict: NotMeasurable, Reason: v.alt.Missing})
				continue
			}
			add(v.alt.Kind, v.alt.Name, safeEval(c, v.r))
		}
		if f, ok := first[c.ID]; ok {
			fc := c
			fc.Eval = f.Eval
			add(KindRule, "as first written ("+f.Commit[:min(7, len(f.Commit))]+"): "+f.Text, safeEval(fc, r))
		}
		var vv []Verdict
		for _, s := range cv.Alternatives {
			vv = append(vv, s.Verdict)
		}
		cv.K, cv.N, cv.Label = Label(cv.Stated, vv)
		rep.Counts[cv.Label]++
		if cv.Label == Robust && cv.N == 1 {
			rep.NoAlternative++
		}
		rep.Curves = append(rep.Curves, cv)
	}
	// A results file that does not decode stops the curve as it stops
	// the verdicts (RunTimed), naming the file, or the alternative, and
	// the field.
	if err := r.Err(); err != nil {
		return CurveReport{}, err
	}
	for _, v := range vs {
		if v.r == nil {
			continue
		}
		if err := v.r.Err(); err != nil {
			return CurveReport{}, fmt.Errorf("alternative %s %q of study %s (its results in the study's alternatives file): %w", v.alt.Kind, v.alt.Name, v.study, err)
		}
	}
	return rep, nil
}

// curveOf returns the claim's curve, if it has one.
func (rep CurveReport) curveOf(id string) (Curve, bool) {
	for _, c := range rep.Curves {
		if c.ID == id {
			return c, true
		}
	}
	return Curve{}, false
}

// CurveSentence says the labels in words, e.g. "Of the 10 reproduced
// counted claims, 2 are robust, 1 is fragile and 7 are untested (a single
// specification: no alternative could be judged)." A claim judged under
// one specification only was not tested for robustness, so it is counted
// apart, never as robust.
func CurveSentence(rep CurveReport) string {
	rob, frag, untested := rep.Counts[Robust]-rep.NoAlternative, rep.Counts[Fragile], rep.NoAlternative
	s := fmt.Sprintf("Of the %d reproduced counted claims, %d %s robust (reproduced in every alternative specification the data hold) and %d %s fragile (reproduced as stated, not in every alternative)",
		rob+frag+untested, rob, verb(rob), frag, verb(frag))
	if untested > 0 {
		s += fmt.Sprintf("; %d %s untested: no alternative specification could be judged", untested, verb(untested))
	}
	return s + "."
}

func verb(n int) string {
	if n == 1 {
		return "is"
	}
	return "are"
}
