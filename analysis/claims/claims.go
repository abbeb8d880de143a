// Package claims is the engine that judges the numeric claims of the
// three reproduced studies (Hara, Kawashima and Saito, IPSJ SIG Technical
// Report 2026-IOT-73 no. 15; Marques and Zavan 2026; Chhetri 2026,
// arXiv:2603.19340) on the pipeline's results: the Claim and its
// Verdict, the judging rules they share, the handling of derived and
// calibrated claims, the claims stage and the pre-registration record.
//
// The claims themselves are not here: each study's analysis package
// states its own, beside the published values they judge, in its
// claims.go and published.go (analysis/tlsstudy for Study A,
// analysis/netstudy for B, analysis/picostudy for C), and reads its own typed
// results (Of, On). The composition root, internal/pipeline, gathers the
// three catalogues. The claim IDs (A1a, B1, C1, ...) are the ones the
// paper's claims tables, `mage claims`, `mage all` and the artifact
// bundle's appendix all show.
//
// A verdict is computed from results/<study>.json, never typed:
//
//   - reproduced: our value agrees within the claim's stated tolerance
//     (or, for a qualitative claim, holds as the original stated it);
//   - not reproduced: anything else, whatever the sign: a magnitude
//     outside its tolerance with the published sign is not reproduced
//     (Outcome.Direction records the sign in its own column);
//   - not assessable (calibrated): one of our conditions was chosen from
//     the very published value the claim states (Claim.Calibrated says
//     which), so agreement would confirm nothing; the value is shown;
//   - not measurable here: the study has no dataset, or the results lack
//     what the claim needs (the reason names the file and the field).
//
// Each claim quotes the sentence of the original it comes from
// (Claim.Quote) and names the measured quantity it judges
// (Claim.Measures): two counted claims never judge the same quantity.
// Effect sizes are shown (Outcome.Effect) but no rule requires one the
// original did not state.
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
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"

	"pqrepro/analysis/stats"
	"pqrepro/internal/jsonnum"
)

// Alpha is the significance level of the claims that assert significance.
const Alpha = 0.05

// Effect-size thresholds, shown as a descriptive label (large or not)
// beside the claims that assert significance. No rule requires them: the
// originals state significance, not an effect-size threshold.
const (
	// LargeCliffDelta is Romano et al.'s (2006) threshold of a large
	// Cliff's delta, |delta| >= 0.474.
	LargeCliffDelta = 0.474
	// LargeEpsilon2 is the threshold of a large epsilon-squared of a
	// Kruskal-Wallis test, epsilon2 = H/(n-1) >= 0.26 (Mangiafico,
	// "Summary and Analysis of Extension Program Evaluation in R",
	// rcompanion, section "Kruskal-Wallis Test").
	LargeEpsilon2 = 0.26
)

// Verdict is the outcome class of a claim.
type Verdict string

// The verdicts.
const (
	Reproduced    Verdict = "reproduced"
	NotReproduced Verdict = "not reproduced"
	NotMeasurable Verdict = "not measurable here"
	NotAssessable Verdict = "not assessable (calibrated)"
)

// Verdicts lists every verdict in the order tables count them.
var Verdicts = []Verdict{Reproduced, NotReproduced, NotAssessable, NotMeasurable}

// Direction says whether our effect has the published sign or order. It
// is shown beside the verdict and never changes it.
type Direction string

// The directions; "" when the claim has none (a size, a count).
const (
	AsPublished Direction = "as published"
	Opposite    Direction = "opposite"
)

// DirectionOf is AsPublished when ours has the sign of published (and is
// not zero), Opposite otherwise.
func DirectionOf(ours, published float64) Direction {
	if ours != 0 && math.Signbit(ours) == math.Signbit(published) {
		return AsPublished
	}
	return Opposite
}

// A Quote is the sentence of an original a claim comes from, as this
// project has read it.
type Quote struct {
	// Text is the sentence or phrase. When Verbatim is false it is this
	// project's English rendering of what the source states, not the
	// original's words.
	Text string `json:"text"`
	// Lang is the language of Text (English for a rendering).
	Lang string `json:"lang"`
	// Where says which text was read (the abstract, a third-party
	// summary) and in which language the original states it.
	Where    string `json:"where"`
	Verbatim bool   `json:"verbatim"`
	// English is our translation of a verbatim quote in another
	// language; the paper shows it (and, for a script its fonts lack,
	// only it, pointing to results/claims.json for the original words).
	English string `json:"english,omitempty"`
}

// A Claim is one published statement with the rule that judges it.
type Claim struct {
	ID    string // e.g. "A1"; stable, cited in the paper
	Study string // tls, net, pico
	// Statement says what the paper claims, in words.
	Statement string
	// Quote is the original's sentence the claim comes from.
	Quote Quote
	// Measures names the measured quantity the claim judges (an estimate
	// of the study's results, e.g. "median Ths increase, ML-DSA-87");
	// two counted claims never measure the same quantity
	// (CheckOneQuantity). A derived claim or an observation names none.
	Measures string
	// Observation, when set, says why this is an observation of ours and
	// not the original's claim: shown, never counted.
	Observation string
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
	// HostDependent is set when the claim judges a time (absolute or
	// relative), a property of the host as much as of the code: `mage
	// all` compares its verdict between two runs only when their hosts'
	// fingerprints match (analysis/agreement). Bytes, counts, directions
	// and orderings of effects, and the emulator's cycles are
	// host-independent.
	HostDependent bool
	// Item, when set, names the study's agreement item (its analysis
	// package's CompareItems) whose estimate the verdict rests on: a
	// verdict that changes while that estimate stays inside its
	// prediction interval is consistent, at the edge of the tolerance.
	Item string
	// Eval computes our value and the verdict from the results.
	Eval func(r *Results) Outcome
}

// Outcome is a claim's evaluation.
type Outcome struct {
	Ours    string  `json:"ours"`
	Verdict Verdict `json:"verdict"`
	Reason  string  `json:"reason,omitempty"`
	// Direction is whether our effect has the published sign or order,
	// for claims that have one; it does not change the verdict.
	Direction Direction `json:"direction,omitempty"`
	// Effect is a descriptive effect size (Cliff's delta, epsilon
	// squared) with its conventional label; no rule requires it.
	Effect string `json:"effect,omitempty"`
}

// A Catalogue is one study's claims as its analysis package states them
// (analysis/tlsstudy, analysis/netstudy, analysis/picostudy: each package's
// Claims function), beside the published values they judge. This
// package holds none of them: it is the engine, and the composition root
// (internal/pipeline) hands it the catalogues in the paper's order.
type Catalogue struct {
	// Study is the study's short name (tls, net, pico); its claims read
	// results/<Study>.json.
	Study string
	// Package is the directory of the package that states the claims,
	// relative to the repository root; the claims stage hashes it as part
	// of its code, so that an edited rule reruns the stage.
	Package string
	// Claims are the study's claims in the order of the paper.
	Claims []Claim
	// Source is the paper the published values come from.
	Source Citation
	// Numbers are constants of the rules that the paper's text quotes, as
	// \newcommand name -> value (claims-numbers.tex).
	Numbers map[string]string
	// FirstRules are the rules as first written of the claims whose rule
	// changed since, judged on today's results (the specification curve,
	// curve.go).
	FirstRules []FirstRule
	// Unavailable names the kinds of alternative specification the
	// study's records cannot give, each with why.
	Unavailable []string
	// AlternativesOf, when set, derives alternative specifications from
	// the study's own results (Study B: the same series measured with the
	// other toolchain's endpoints), beside its alternatives file: the
	// curve must hold every alternative the committed data hold.
	AlternativesOf func(results []byte) ([]Alternative, error)
}

// A Citation says where a study's published values come from.
type Citation struct {
	Authors string // as the paper names them
	Title   string
	Venue   string // report series and number, or arXiv identifier and version
	// Where names the parts of the paper the values are taken from
	// (abstract, results table, ...) and the page where this project
	// recorded one.
	Where string
}

// String is the citation in one line.
func (c Citation) String() string {
	return fmt.Sprintf("%s, %q, %s (%s)", c.Authors, c.Title, c.Venue, c.Where)
}

// All is the claims of the catalogues, in order.
func All(cats []Catalogue) []Claim {
	var out []Claim
	for _, c := range cats {
		out = append(out, c.Claims...)
	}
	return out
}

// Results holds the results/<study>.json of every study that has them,
// and for the others why not. Claims read them typed, through Of.
type Results struct {
	files   map[string][]byte
	decoded map[string]any
	missing map[string]string
	// bad holds the files that do not fit their study's results type
	// (jsonnum.Decode's errors), by study: Err reports them.
	bad map[string]error
}

// NewResults takes the given results files (study -> JSON content), which
// must each be one JSON value. Missing maps a study without results to the
// reason.
func NewResults(files map[string][]byte, missing map[string]string) (*Results, error) {
	r := &Results{files: map[string][]byte{}, decoded: map[string]any{}, missing: map[string]string{}, bad: map[string]error{}}
	for study, b := range files {
		if !json.Valid(b) {
			name := "results/" + study + ".json"
			return nil, fmt.Errorf("%s: not valid JSON; %s", name, jsonnum.Advice(name))
		}
		r.files[study] = b
	}
	for study, why := range missing {
		r.missing[study] = why
	}
	return r, nil
}

// Of returns a study's results decoded into its analysis package's results
// type (tlsstudy.Results for tls, ...) by jsonnum.Decode. That is the
// reader every results file goes through: a mistyped, missing or unknown
// field is an error naming the file and the field. Such an error is not
// a property of the study but a broken file: Err reports it, and the
// stage fails on it instead of publishing the claims as not measurable.
// A field the rules read that is renamed in Go stops the build. The
// error of a study without results is its reason.
func Of[T any](r *Results, study string) (*T, error) {
	if v, ok := r.decoded[study]; ok {
		t, ok := v.(*T)
		if !ok {
			return nil, fmt.Errorf("results/%s.json was read as %T, not as %T: a claim names the wrong study", study, v, t)
		}
		return t, nil
	}
	if err := r.bad[study]; err != nil {
		return nil, err
	}
	b, ok := r.files[study]
	if !ok {
		why := r.missing[study]
		if why == "" {
			why = "no results for study " + study
		}
		return nil, &errMissing{study: study, why: why}
	}
	t, err := jsonnum.Decode[T]("results/"+study+".json", b)
	if err != nil {
		r.bad[study] = err
		return nil, err
	}
	r.decoded[study] = t
	return t, nil
}

// Err reports the results files that a claim read and that do not fit
// their study's results type. It returns one error per study in study
// order; nil when every file read fits.
func (r *Results) Err() error {
	var errs []error
	for _, study := range slices.Sorted(maps.Keys(r.bad)) {
		errs = append(errs, r.bad[study])
	}
	return errors.Join(errs...)
}

// On makes a claim's Eval from a rule over a study's typed results. A
// study without results, or results that do not decode, make the claim
// not measurable with the reason (a file that does not decode also makes
// Err, and so the claims stage, fail).
func On[T any](study string, rule func(*T) Outcome) func(*Results) Outcome {
	return func(r *Results) Outcome {
		t, err := Of[T](r, study)
		if err != nil {
			return Unmeasurable(err)
		}
		return rule(t)
	}
}

// errMissing marks a value the results do not have.
type errMissing struct{ study, path, why string }

func (e *errMissing) Error() string {
	if e.path == "" {
		return e.why
	}
	return fmt.Sprintf("results/%s.json has no %s (%s)", e.study, e.path, e.why)
}

// Missing is the error of a value a rule needs and a study's results do
// not have. The argument path names it as the results file spells it (e.g.
// "families.paper.comparisons[role=pq-sig]"), why says what is wrong.
func Missing(study, path, why string) error { return &errMissing{study: study, path: path, why: why} }

// A Field is one number a rule reads, with its path in the results file
// for the error when it is absent.
type Field struct {
	Path  string
	Value float64
}

// Need returns the fields' values, or a Missing error naming the first
// that is NaN (null in the results file: not computable from the
// dataset).
func Need(study string, fields ...Field) ([]float64, error) {
	out := make([]float64, len(fields))
	for i, f := range fields {
		if math.IsNaN(f.Value) {
			return nil, Missing(study, f.Path, "the value is null (not computable from this dataset)")
		}
		out[i] = f.Value
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

// Unmeasurable turns an error of the results into an outcome.
func Unmeasurable(err error) Outcome {
	return Outcome{Ours: "---", Verdict: NotMeasurable, Reason: err.Error()}
}

// Within reports whether ours is within tol (relative) of published.
func Within(ours, published, tol float64) bool {
	return math.Abs(ours-published) <= tol*math.Abs(published)
}

// JudgeValue is the rule for a quantitative claim whose sign carries the
// direction: reproduced within tolerance, else not reproduced, whatever
// the sign. Its sign is that of an increase; a speed-up above 1 is
// expressed by the caller. The direction is recorded beside the verdict.
func JudgeValue(ours, published, tol float64, format func(float64) string) Outcome {
	if math.IsNaN(ours) {
		return Outcome{Ours: "---", Verdict: NotMeasurable, Reason: "not computable from this dataset"}
	}
	o := Outcome{Ours: format(ours), Verdict: Reproduced, Direction: DirectionOf(ours, published)}
	if !Within(ours, published, tol) {
		o.Verdict = NotReproduced
		o.Reason = fmt.Sprintf("outside the %.0f %% tolerance (ours/published = %.2f)", 100*tol, ours/published)
		if o.Direction == Opposite {
			o.Reason = "opposite sign"
		}
	}
	return o
}

// JudgeMagnitude is for a positive quantity (a time, a size): within
// tolerance: reproduced; otherwise not reproduced.
func JudgeMagnitude(ours, published, tol float64, format func(float64) string) Outcome {
	if math.IsNaN(ours) {
		return Outcome{Ours: "---", Verdict: NotMeasurable, Reason: "not computable from this dataset"}
	}
	o := Outcome{Ours: format(ours), Verdict: Reproduced}
	if !Within(ours, published, tol) {
		o.Verdict = NotReproduced
		o.Reason = fmt.Sprintf("outside the %.0f %% tolerance (ours/published = %.2f)", 100*tol, ours/published)
	}
	return o
}

// JudgeRange is the rule for a claim about a published range [min, max]:
// reproduced when our smallest and largest values are both inside it.
// Otherwise it is not reproduced, with outside as the reason when the
// smallest is above floor (the effect is there: direction as published)
// and none otherwise.
func JudgeRange(lo, hi, min, max, floor float64, ours, outside, none string) Outcome {
	o := Outcome{Ours: ours, Verdict: Reproduced, Direction: AsPublished}
	if lo <= floor {
		o.Direction = Opposite
	}
	switch {
	case lo >= min && hi <= max:
	case lo > floor:
		o.Verdict, o.Reason = NotReproduced, outside
	default:
		o.Verdict, o.Reason = NotReproduced, none
	}
	return o
}

// Formats of our values in the verdict tables.

// Ms formats milliseconds with three decimals ("0.742 ms").
func Ms(x float64) string { return strconv.FormatFloat(x, 'f', 3, 64) + " ms" }

// Ms1 formats milliseconds with one decimal ("35.7 ms").
func Ms1(x float64) string { return strconv.FormatFloat(x, 'f', 1, 64) + " ms" }

// Pct formats a signed percentage ("+46.9 %").
func Pct(x float64) string { return fmt.Sprintf("%+.1f %%", x) }

// Pct0 formats an unsigned percentage ("94.1 %").
func Pct0(x float64) string { return fmt.Sprintf("%.1f %%", x) }

// Times formats a ratio ("17.02x").
func Times(x float64) string { return strconv.FormatFloat(x, 'f', 2, 64) + "x" }

// PValue formats a p-value for a verdict table: "= 0.0023", or "< 1e-06"
// below stats.PFloor. That is the floor every printed p of this project
// keeps (a p below it claims more than the studies' designs can support:
// see stats.PFloor).
func PValue(p float64) string {
	if p < stats.PFloor {
		return fmt.Sprintf("< %.0e", stats.PFloor)
	}
	return fmt.Sprintf("= %.2g", p)
}
