package claims

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"

	"pqrepro/internal/jsonnum"
	"pqrepro/internal/render"
	"pqrepro/internal/repro"
)

// Output files of the claims stage.
const (
	JSONFile    = "results/claims.json"
	LatexFile   = "paper/generated/claims.tex"
	NumbersFile = "paper/generated/claims-numbers.tex"
	// SummaryFile is the paper's one "what reproduced" table over every
	// study's claims; LatexFile holds the full tables, with the rules.
	SummaryFile = "paper/generated/claims-summary.tex"
)

// Evaluated is one row of results/claims.json.
type Evaluated struct {
	ID        string `json:"id"`
	Study     string `json:"study"`
	Statement string `json:"statement"`
	Quote     Quote  `json:"quote"`
	Measures  string `json:"measures,omitempty"`
	// Observation says why the row is an observation of ours, not the
	// original's claim; it is not counted.
	Observation string `json:"observation,omitempty"`
	Published   string `json:"published"`
	Agreement   string `json:"agreement"`
	Rationale   string `json:"rationale"`
	// DerivedFrom names the claims this one is computed from; a derived
	// claim is not counted in Report.Counts.
	DerivedFrom []string  `json:"derived_from,omitempty"`
	Calibrated  string    `json:"calibrated,omitempty"`
	Ours        string    `json:"ours"`
	Verdict     Verdict   `json:"verdict"`
	Reason      string    `json:"reason,omitempty"`
	Direction   Direction `json:"direction,omitempty"`
	Effect      string    `json:"effect,omitempty"`
	// Timing says whether the claim's rule predates the study's data
	// (TimingFile); nil when the report was built without the table.
	Timing *ClaimTiming `json:"timing,omitempty"`
}

// Derived reports whether the claim is computed from other claims.
func (e Evaluated) Derived() bool { return len(e.DerivedFrom) > 0 }

// Counted reports whether the claim is counted in the totals: neither
// derived nor an observation of ours.
func (e Evaluated) Counted() bool { return !e.Derived() && e.Observation == "" }

// Report is results/claims.json.
type Report struct {
	Claims []Evaluated `json:"claims"`
	// Counts counts the verdicts of the counted claims only (neither
	// derived nor observations).
	Counts map[Verdict]int `json:"counts"`
	// Preregistered and PostHoc split Counts by whether the claim's rule
	// predates the study's data (TimingFile); empty without the table.
	Preregistered map[Verdict]int `json:"counts_preregistered,omitempty"`
	PostHoc       map[Verdict]int `json:"counts_post_hoc,omitempty"`
	// Derived is the number of derived claims, shown but not counted.
	Derived int `json:"derived"`
	// Observations is the number of observations of ours, shown but not
	// counted.
	Observations int `json:"observations"`
	// Rules is the commit that fixed the rules; Runs the judged runs,
	// each with whether it was recorded after that commit.
	Rules Rules       `json:"rules"`
	Runs  []JudgedRun `json:"runs"`
	// Robustness re-evaluates claims on other views of the same results
	// (robust.go); it changes no verdict above.
	Robustness []Robustness `json:"robustness,omitempty"`
	// curves, when set, adds the specification curve's column to the
	// tables and its counts to the macros (CurveFile holds it).
	curves *CurveReport
}

// Independent is the number of claims Counts covers.
func (rep Report) Independent() int { return len(rep.Claims) - rep.Derived - rep.Observations }

// Run evaluates the catalogue and builds the report, without timing. A
// results file that does not decode makes its claims not measurable with
// the error as the reason (Results.Err has it): for reports that show
// two runs side by side; the claims stage uses RunTimed, which fails.
func Run(r *Results, catalogue []Claim) Report {
	rep, _ := report(r, catalogue, nil)
	return rep
}

// RunTimed evaluates the catalogue and builds the report. With a timing
// table every claim records whether its rule predates its study's data,
// and a claim the table lacks is an error. A results file a claim read
// that does not decode (Results.Err) is an error too, naming the file and
// the field: a broken file must stop the stage, not turn into verdicts.
func RunTimed(r *Results, catalogue []Claim, timing *Timing) (Report, error) {
	rep, err := report(r, catalogue, timing)
	if err != nil {
		return Report{}, err
	}
	if err := r.Err(); err != nil {
		return Report{}, err
	}
	return rep, nil
}

// report is RunTimed without the check of the results files.
func report(r *Results, catalogue []Claim, timing *Timing) (Report, error) {
	outs := Evaluate(r, catalogue)
	rep := Report{Counts: map[Verdict]int{}}
	if timing != nil {
		rep.Preregistered, rep.PostHoc = map[Verdict]int{}, map[Verdict]int{}
	}
	for i, c := range catalogue {
		o := outs[i]
		e := Evaluated{ID: c.ID, Study: c.Study, Statement: c.Statement, Quote: c.Quote,
			Measures: c.Measures, Observation: c.Observation,
			Published: c.Published, Agreement: c.Agreement, Rationale: c.Rationale,
			DerivedFrom: c.DerivedFrom, Calibrated: c.Calibrated,
			Ours: o.Ours, Verdict: o.Verdict, Reason: o.Reason, Direction: o.Direction, Effect: o.Effect}
		if timing != nil {
			ct, err := timing.Of(c.ID, c.Study)
			if err != nil {
				return Report{}, err
			}
			e.Timing = &ct
		}
		rep.Claims = append(rep.Claims, e)
		switch {
		case e.Derived():
			rep.Derived++
			continue
		case e.Observation != "":
			rep.Observations++
			continue
		}
		rep.Counts[o.Verdict]++
		if e.Timing != nil && e.Timing.Preregistered {
			rep.Preregistered[o.Verdict]++
		} else if e.Timing != nil {
			rep.PostHoc[o.Verdict]++
		}
	}
	return rep, nil
}

// CheckOneQuantity reports the claims that break the counting rule. A
// counted claim that names no measured quantity, two counted claims that
// measure the same one, and a derived claim or an observation that names
// one (it would be counted twice if it were counted).
func CheckOneQuantity(catalogue []Claim) []error {
	var errs []error
	by := map[string]string{}
	for _, c := range catalogue {
		counted := len(c.DerivedFrom) == 0 && c.Observation == ""
		switch {
		case counted && c.Measures == "":
			errs = append(errs, fmt.Errorf("%s is counted but names no measured quantity", c.ID))
		case counted && by[c.Measures] != "":
			errs = append(errs, fmt.Errorf("%s and %s are both counted and both measure %q: make one derived", by[c.Measures], c.ID, c.Measures))
		case counted:
			by[c.Measures] = c.ID
		case c.Measures != "":
			errs = append(errs, fmt.Errorf("%s is not counted but names the measured quantity %q", c.ID, c.Measures))
		}
	}
	return errs
}

// A StudyClaims is one study as the claims stage sees it. The stage
// knows no study by name: the composition root (package pipeline) passes
// every registered study, in the paper's order.
type StudyClaims struct {
	// Name is the study's short name, the key of its claims' Study field.
	Name string
	// Label is how the paper names the study ("A" for Study A): the
	// tables' labels (tab:claims-A) and captions.
	Label string
	// Results is the path of results/<Name>.json, the output of the
	// study's analysis stage; "" when the study has none.
	Results string
	// Missing says why Results is "" (the claims are then not measurable).
	Missing string
	// Catalogue is the study's published claims as code, in the paper's
	// order, and the package that states them (part of the stage's code,
	// so that an edited rule reruns the stage).
	Catalogue Catalogue
	// Views are other readings of the study's results from the same run
	// on which its claims are re-evaluated as a robustness check
	// (robust.go); they change no verdict.
	Views []View
	// Alternatives, when set, is the study's alternatives file (a JSON
	// Alternatives, written by its analysis): its results under each
	// other specification the committed data allow (curve.go).
	Alternatives string
}

// Stage evaluates every study's claims on the results files it is given
// and writes results/claims.json and the paper's claims tables. A
// study's missing reason, label and claim IDs are parameters, so a study
// that gains a dataset, is relabelled or gains a claim reruns the stage.
func Stage(studies []StudyClaims) *repro.Stage {
	params := map[string]string{}
	results, missing, labels := map[string]string{}, map[string]string{}, map[string]string{}
	var inputs []string
	var cats []Catalogue
	var views []studyView
	altFiles := map[string]string{}
	code := []string{"analysis/claims"}
	for _, s := range studies {
		if s.Results != "" {
			results[s.Name] = s.Results
			params["results."+s.Name] = s.Results
			inputs = append(inputs, s.Results)
		} else {
			missing[s.Name] = s.Missing
			params["missing."+s.Name] = s.Missing
		}
		labels[s.Name] = s.Label
		params["label."+s.Name] = s.Label
		// Which claims, in which order: the caller chooses them, in code
		// the stage's code hash does not cover (the catalogue's Package covers where
		// they are defined).
		var ids []string
		for _, c := range s.Catalogue.Claims {
			ids = append(ids, c.ID)
		}
		params["claims."+s.Name] = strings.Join(ids, " ")
		cats = append(cats, s.Catalogue)
		var names []string
		for _, v := range s.Views {
			views = append(views, studyView{s.Name, v})
			names = append(names, v.Name)
		}
		if len(names) > 0 {
			params["views."+s.Name] = strings.Join(names, "; ")
		}
		if s.Catalogue.Package != "" {
			code = append(code, s.Catalogue.Package)
		}
		if s.Alternatives != "" {
			altFiles[s.Name] = s.Alternatives
			params["alternatives."+s.Name] = s.Alternatives
			inputs = append(inputs, s.Alternatives)
		}
	}
	inputs = append(inputs, PreregistrationFile, TimingFile, RuleFile, HistoryFile)
	slices.Sort(inputs)
	slices.Sort(code)
	return &repro.Stage{
		Name:    "claims",
		Doc:     "evaluate every published claim on the results",
		Code:    slices.Compact(code),
		Inputs:  inputs,
		Params:  params,
		Outputs: []string{JSONFile, LatexFile, NumbersFile, SummaryFile, CurveFile, CurveFigure + ".pdf", CurveFigure + ".svg", HistoryLatexFile},
		Run: func(ctx context.Context, env *repro.Env) error {
			files := map[string][]byte{}
			for study, p := range results {
				b, err := env.ReadFile(p)
				if err != nil {
					return err
				}
				files[study] = b
			}
			r, err := NewResults(files, missing)
			if err != nil {
				return err
			}
			tb, err := env.ReadFile(TimingFile)
			if err != nil {
				return err
			}
			timing, err := ParseTiming(tb)
			if err != nil {
				return err
			}
			rep, err := RunTimed(r, All(cats), &timing)
			if err != nil {
				return err
			}
			for _, sv := range views {
				rb, err := evalView(sv.study, sv.view, files, missing, All(cats))
				if err != nil {
					return err
				}
				if rb != nil {
					rep.Robustness = append(rep.Robustness, *rb)
				}
			}
			pb, err := env.ReadFile(PreregistrationFile)
			if err != nil {
				return err
			}
			if rep.Rules, err = ParsePreregistration(pb); err != nil {
				return err
			}
			for _, study := range slices.Sorted(maps.Keys(files)) {
				jr, err := judgedRun(study, files[study], rep.Rules)
				if err != nil {
					// Not counted as judged blind: nothing shows when the
					// data were recorded.
					jr = JudgedRun{Study: study, Run: "unknown (" + err.Error() + ")"}
				}
				rep.Runs = append(rep.Runs, jr)
			}
			b, err := json.MarshalIndent(rep, "", "  ")
			if err != nil {
				return err
			}
			if err := env.WriteFile(JSONFile, append(b, '\n')); err != nil {
				return err
			}
			alts, firsts, err := gatherAlternatives(env, cats, files, altFiles)
			if err != nil {
				return err
			}
			curves, err := Curves(files, missing, All(cats), alts, firsts)
			if err != nil {
				return err
			}
			cb, err := json.MarshalIndent(curves, "", "  ")
			if err != nil {
				return err
			}
			if err := env.WriteFile(CurveFile, append(cb, '\n')); err != nil {
				return err
			}
			if err := writeCurveFigure(env, curves, rep.Rules.Date); err != nil {
				return err
			}
			rep.curves = &curves
			hb, err := env.ReadFile(HistoryFile)
			if err != nil {
				return err
			}
			hist, err := ParseHistory(hb)
			if err != nil {
				return err
			}
			if err := env.WriteFile(HistoryLatexFile, []byte(HistoryLatex(rep, hist, timing, &curves))); err != nil {
				return err
			}
			tex, err := Latex(rep, labels)
			if err != nil {
				return err
			}
			var all []View
			for _, sv := range views {
				all = append(all, sv.view)
			}
			nums, err := Numbers(rep, all, cats...)
			if err != nil {
				return err
			}
			lists, err := ListMacros(rep, labels)
			if err != nil {
				return err
			}
			if err := env.WriteFile(NumbersFile, []byte(nums+lists)); err != nil {
				return err
			}
			if err := env.WriteFile(SummaryFile, []byte(SummaryLatex(rep, labels))); err != nil {
				return err
			}
			return env.WriteFile(LatexFile, []byte(tex))
		},
	}
}

// Numbers renders the verdict counts and the other counts the paper quotes
// as \newcommand macros, so that the text types no count.
//
// They are the verdict counts of the counted claims (\ClaimsReproduced,
// \ClaimsNotReproduced, \ClaimsNotAssessable, \ClaimsNotMeasurable,
// \ClaimsTotal), the same split by timing (\ClaimsPreregistered,
// \ClaimsPostHoc and \Claims<Verdict>Preregistered,
// \Claims<Verdict>PostHoc), the counts in words (\ClaimsSentence,
// \ClaimsTimingSentence: the paper's abstract and conclusion use these, so
// that no count or verb is typed), the number of derived claims
// (\ClaimsDerived) and observations (\ClaimsObservations), the effect-size
// labels' thresholds the paper quotes (the engine's and each catalogue's
// Numbers), and per view with a Macro the number of claims it re-evaluated
// and of verdicts that would change (\<Macro>Checked, \<Macro>Changed).
// A catalogue's macro with a name that is not letters only, or set twice,
// is an error.
func Numbers(rep Report, views []View, cats ...Catalogue) (string, error) {
	var n render.Numbers
	total, pre, post := 0, 0, 0
	for _, v := range verdictMacros {
		n.Set(v.name, fmt.Sprint(rep.Counts[v.v]))
		n.Set(v.name+"Preregistered", fmt.Sprint(rep.Preregistered[v.v]))
		n.Set(v.name+"PostHoc", fmt.Sprint(rep.PostHoc[v.v]))
		total += rep.Counts[v.v]
		pre += rep.Preregistered[v.v]
		post += rep.PostHoc[v.v]
	}
	n.Set("ClaimsTotal", fmt.Sprint(total))
	n.Set("ClaimsPreregistered", fmt.Sprint(pre))
	n.Set("ClaimsPostHoc", fmt.Sprint(post))
	n.Set("ClaimsSentence", CountSentence(rep.Counts))
	n.Set("ClaimsTimingSentence", TimingSentence(rep))
	n.Set("ClaimsObservations", fmt.Sprint(rep.Observations))
	// Each view's claims re-evaluated and verdicts that would change
	// (robust.go); 0 and 0 when the results have no such view.
	for _, v := range views {
		if v.Macro == "" {
			continue
		}
		checked, changed := 0, 0
		for _, rb := range rep.Robustness {
			if rb.View == v.Name {
				checked, changed = len(rb.Claims), rb.Changed
			}
		}
		if err := n.Set(v.Macro+"Checked", fmt.Sprint(checked)); err != nil {
			return "", fmt.Errorf("view %q: %w", v.Name, err)
		}
		if err := n.Set(v.Macro+"Changed", fmt.Sprint(changed)); err != nil {
			return "", fmt.Errorf("view %q: %w", v.Name, err)
		}
	}
	n.Set("ClaimsDerived", fmt.Sprint(rep.Derived))
	if c := rep.curves; c != nil {
		n.Set("ClaimsRobust", fmt.Sprint(c.Counts[Robust]))
		n.Set("ClaimsRobustNoAlternative", fmt.Sprint(c.NoAlternative))
		n.Set("ClaimsRobustVaried", fmt.Sprint(c.Counts[Robust]-c.NoAlternative))
		n.Set("ClaimsFragile", fmt.Sprint(c.Counts[Fragile]))
		n.Set("ClaimsFails", fmt.Sprint(c.Counts[Fails]))
		n.Set("ClaimsNotJudged", fmt.Sprint(c.Counts[NotJudged]))
		n.Set("ClaimsCurveSentence", CurveSentence(*c))
	}
	// The rules' constants, so that the paper's text cannot drift from
	// the code that applies them.
	n.Set("ClaimsAlpha", render.Fixed(Alpha, 2))
	n.Set("ClaimsLargeCliffDelta", render.Fixed(LargeCliffDelta, 3))
	n.Set("ClaimsLargeEpsilonSq", render.Fixed(LargeEpsilon2, 2))
	for _, c := range cats {
		for _, name := range slices.Sorted(maps.Keys(c.Numbers)) {
			if err := n.Set(name, c.Numbers[name]); err != nil {
				return "", fmt.Errorf("the claims of study %s: %w", c.Study, err)
			}
		}
	}
	if rep.Rules.Commit != "" {
		n.Set("ClaimsRulesCommit", rep.Rules.Commit[:12])
		n.Set("ClaimsRulesDate", rep.Rules.Date.Format("2006-01-02"))
		after := 0
		for _, r := range rep.Runs {
			if r.AfterRules {
				after++
			}
		}
		n.Set("ClaimsRunsJudged", fmt.Sprint(len(rep.Runs)))
		n.Set("ClaimsRunsAfterRules", fmt.Sprint(after))
		n.Set("ClaimsRulesAmendments", fmt.Sprint(len(rep.Rules.Amendments)))
	}
	return n.Latex(), nil
}

// ListMacros renders, per study, a macro naming its counted claims that
// are not reproduced.
//
// The macro is \ClaimsNotReproducedIn<Label> ("C12, C13 and C17", or
// "none"), so that the text names the claims that missed without typing
// them.
func ListMacros(rep Report, labels map[string]string) (string, error) {
	var n render.Numbers
	var studies []string
	missed := map[string][]string{}
	for _, c := range rep.Claims {
		if !slices.Contains(studies, c.Study) {
			studies = append(studies, c.Study)
		}
		if c.Counted() && c.Verdict == NotReproduced {
			missed[c.Study] = append(missed[c.Study], c.ID)
		}
	}
	for _, s := range studies {
		list := joinAnd(missed[s])
		if list == "" {
			list = "none"
		}
		if err := n.Set("ClaimsNotReproducedIn"+studyLabel(labels, s), list); err != nil {
			return "", fmt.Errorf("study %s: %w", s, err)
		}
	}
	if len(studies) == 0 {
		return "", nil
	}
	return n.Latex(), nil
}

// verdictMacros are the verdicts' macro names, in the order of Verdicts.
var verdictMacros = []struct {
	name string
	v    Verdict
}{{"ClaimsReproduced", Reproduced}, {"ClaimsNotReproduced", NotReproduced},
	{"ClaimsNotAssessable", NotAssessable}, {"ClaimsNotMeasurable", NotMeasurable}}

// CountSentence says the counts in words, e.g. "Of 26 counted claims,
// 12 are reproduced, 1 is not reproduced and 5 are not assessable
// (calibrated); none is not measurable here." A verdict with no claims
// is named after "none", so that no count reads "0 are".
func CountSentence(counts map[Verdict]int) string {
	total := 0
	var some, none []string
	for _, v := range Verdicts {
		total += counts[v]
		if c := counts[v]; c > 0 {
			verb := "are"
			if c == 1 {
				verb = "is"
			}
			some = append(some, fmt.Sprintf("%d %s %s", c, verb, v))
		} else {
			none = append(none, string(v))
		}
	}
	noun := "claims"
	if total == 1 {
		noun = "claim"
	}
	s := fmt.Sprintf("Of %d counted %s, %s", total, noun, joinAnd(some))
	if len(some) == 0 {
		s = fmt.Sprintf("There are no counted %s", noun)
	}
	if len(none) > 0 {
		s += "; none is " + joinOr(none)
	}
	return s + "."
}

// TimingSentence says how many counted claims have a rule older than
// their study's data, and how many of those are reproduced, e.g. "The
// rules of 2 of them predate the data that judge them (1 reproduced);
// the other 24 were written after data of their study had been seen
// (11 reproduced)."
func TimingSentence(rep Report) string {
	if rep.Preregistered == nil {
		return "Whether the rules predate the data was not recorded in this build."
	}
	pre, post := 0, 0
	for _, v := range Verdicts {
		pre += rep.Preregistered[v]
		post += rep.PostHoc[v]
	}
	rules := func(n int) string {
		if n == 1 {
			return "the rule of 1 of them predates"
		}
		return fmt.Sprintf("the rules of %d of them predate", n)
	}
	s := rules(pre) + fmt.Sprintf(" the data that judge them (%d reproduced)", rep.Preregistered[Reproduced])
	verb := "were"
	if post == 1 {
		verb = "was"
	}
	s += fmt.Sprintf("; the other %d %s written after data of their study had been seen (%d reproduced).", post, verb, rep.PostHoc[Reproduced])
	return strings.ToUpper(s[:1]) + s[1:]
}

func joinAnd(xs []string) string { return joinWith(xs, "and") }
func joinOr(xs []string) string  { return joinWith(xs, "or") }

func joinWith(xs []string, word string) string {
	switch len(xs) {
	case 0:
		return ""
	case 1:
		return xs[0]
	}
	return strings.Join(xs[:len(xs)-1], ", ") + " " + word + " " + xs[len(xs)-1]
}

// label is the claim's ID as tables show it: a derived claim carries the
// IDs it comes from, an observation says so.
func (e Evaluated) label() string {
	switch {
	case e.Derived():
		return e.ID + " (from " + strings.Join(e.DerivedFrom, ", ") + ")"
	case e.Observation != "":
		return e.ID + " (observation)"
	}
	return e.ID
}

// timingLabel is "pre-registered", "post hoc" or "" without timing.
func (e Evaluated) timingLabel() string {
	switch {
	case e.Timing == nil:
		return ""
	case e.Timing.Preregistered:
		return "pre-registered"
	}
	return "post hoc"
}

// latex is the quote as a claims table row shows it (LaTeX): in
// quotation marks when verbatim, with our translation when it is not
// English (only the translation for Japanese, which the paper's fonts
// lack: the words are in results/claims.json), in brackets as our
// rendering otherwise. Where it was read is the caption's (sources).
func (q Quote) latex() string {
	switch {
	case q.Text == "":
		return ""
	case !q.Verbatim:
		return "[" + render.Escape(q.Text) + "]"
	case q.Lang == "ja":
		return "[" + render.Escape(q.English) + "; our translation of the Japanese words in results/claims.json]"
	case q.English != "":
		return "``" + render.Escape(q.Text) + "'' [" + render.Escape(q.English) + "]"
	}
	return "``" + render.Escape(q.Text) + "''"
}

// sources is where a study's quotes were read, for the caption.
func sources(rep Report, study string) string {
	var out []string
	for _, c := range rep.Claims {
		if c.Study == study && c.Quote.Where != "" && !slices.Contains(out, c.Quote.Where) {
			out = append(out, c.Quote.Where)
		}
	}
	return strings.Join(out, "; ")
}

// Latex renders the verdict tables for the paper, one per study
// (labels tab:claims-A, tab:claims-B, ... from labels, study -> label),
// so that each fits a page. Each claim shows the original's sentence it
// comes from under the published value, the direction in its own column,
// and under the verdict whether the rule predates the data.
func Latex(rep Report, labels map[string]string) (string, error) {
	const rag = `>{\raggedright\arraybackslash}`
	var out strings.Builder
	var studies []string
	for _, c := range rep.Claims {
		if !slices.Contains(studies, c.Study) {
			studies = append(studies, c.Study)
		}
	}
	for _, study := range studies {
		label := studyLabel(labels, study)
		t := render.Table{
			Label: "tab:claims-" + label,
			Caption: "Study " + label + ": every numeric claim, under its published value the original's statement it comes from " +
				"(read in: " + render.Escape(sources(rep, study)) + "; in quotation marks when verbatim, in brackets our English rendering, not the source's words; " +
				"each statement shown once, at its first claim), the rule that judges it, our value, the direction " +
				"(``as pub.'': the published sign or order; ``opp.'': the opposite) and the verdict, evaluated on our results by \\texttt{analysis/claims} " +
				"(computed, not typed); under the verdict whether the rule predates the study's data (pre-reg.) or not (post hoc). " +
				"A claim marked ``from'' is derived from the claims it names and an ``observation'' is ours, not the original's: " +
				"both shown, not counted. Effect sizes are descriptive.",
			Align:  "@{}l" + rag + "p{0.28\\linewidth}" + rag + "p{0.16\\linewidth}" + rag + "p{0.14\\linewidth}" + rag + "p{0.06\\linewidth}" + rag + "p{0.10\\linewidth}@{}",
			Header: []string{"claim", "published (source)", "rule", "ours", "dir.", "verdict"},
			Long:   true,
		}
		if rep.curves != nil {
			t.Align = "@{}l" + rag + "p{0.23\\linewidth}" + rag + "p{0.14\\linewidth}" + rag + "p{0.12\\linewidth}" + rag + "p{0.05\\linewidth}" + rag + "p{0.10\\linewidth}" + rag + "p{0.09\\linewidth}@{}"
			t.Header = append(t.Header, "robust?")
			t.Caption += " Robust?: the counted claim's specification curve (" + render.Escape(CurveFile) + "; rule in " + render.Escape(RuleFile) +
				"): in how many of the defensible specifications (other cells of the design, Ths definitions, quiet repeat runs, the rule as first written) it is reproduced; " +
				"robust: in all, fragile: as stated but not in every alternative, fails: not as stated."
		}
		var notes, reasons []string
		byReason := map[string][]string{}
		quoted := map[string]string{} // quote -> the first claim that shows it
		for _, c := range rep.Claims {
			if c.Study != study {
				continue
			}
			id := render.Escape(c.ID)
			switch {
			case c.Derived():
				id += " \\newline {\\footnotesize from " + render.Escape(strings.Join(c.DerivedFrom, ", ")) + "}"
				id = "\\parbox[t]{5em}{\\raggedright " + id + "}"
			case c.Observation != "":
				id = "\\parbox[t]{5em}{\\raggedright " + id + " \\newline {\\footnotesize observation}}"
			}
			pub := render.Escape(c.Published)
			switch q, first := c.Quote.latex(), quoted[c.Quote.Text]; {
			case q == "":
			case first != "":
				pub += " \\newline {\\scriptsize (statement as " + render.Escape(first) + ")}"
			default:
				pub += " \\newline {\\scriptsize " + q + "}"
				quoted[c.Quote.Text] = c.ID
			}
			ours := texText(c.Ours)
			if c.Effect != "" {
				ours += " \\newline {\\footnotesize " + render.Escape(c.Effect) + "}"
			}
			dir := map[Direction]string{AsPublished: "as pub.", Opposite: "opp."}[c.Direction]
			if dir == "" {
				dir = "--"
			}
			verdict := render.Escape(string(c.Verdict))
			if tl := c.timingLabel(); tl != "" && c.Counted() {
				verdict += " \\newline {\\footnotesize " + map[string]string{"pre-registered": "pre-reg.", "post hoc": "post hoc"}[tl] + "}"
			}
			robust := "--"
			if rep.curves != nil {
				if cv, ok := rep.curves.curveOf(c.ID); ok {
					robust = render.Escape(robustnessWord(cv)) + " \\newline {\\footnotesize " + render.Escape(cv.Summary()) + "}"
				}
			}
			row := []string{id, pub, render.Escape(c.Agreement), ours, dir, verdict}
			if rep.curves != nil {
				row = append(row, robust)
			}
			t.Rows = append(t.Rows, row)
			if c.Reason != "" {
				if !slices.Contains(reasons, c.Reason) {
					reasons = append(reasons, c.Reason)
				}
				byReason[c.Reason] = append(byReason[c.Reason], c.ID)
			}
		}
		// One note per reason, with every claim it applies to.
		for _, r := range reasons {
			notes = append(notes, strings.Join(byReason[r], ", ")+": "+render.Escape(r))
		}
		t.Notes = strings.Join(notes, "; ")
		tex, err := t.Latex()
		if err != nil {
			return "", err
		}
		out.WriteString(tex)
	}
	return out.String(), nil
}

// texText escapes plain text for LaTeX and sets the identifiers the
// claims' words use for symbols as symbols: "p_Holm" prints as p with
// the subscript Holm, never as an identifier.
func texText(s string) string {
	return strings.ReplaceAll(render.Escape(s), `p\_Holm`, `$p_{\mathrm{Holm}}$`)
}

// SummaryLatex renders the paper's one "what reproduced" table, a row per
// claim of every study.
//
// Each row has the claim's statement, the published value, ours, the
// verdict and, where the specification curve was computed, its
// robustness label. The full
// tables (Latex) give the rules and the sources; this one is for a
// reader who wants the outcome. A long table breaks across pages with
// every row readable.
func SummaryLatex(rep Report, labels map[string]string) string {
	const rag = `>{\raggedright\arraybackslash}`
	var b strings.Builder
	b.WriteString("% Generated by pqrepro; do not edit.\n{\\small\n")
	fmt.Fprintf(&b, "\\begin{longtable}{@{}l%sp{0.27\\linewidth}%sp{0.14\\linewidth}%sp{0.15\\linewidth}%sp{0.11\\linewidth}%sp{0.09\\linewidth}@{}}\n", rag, rag, rag, rag, rag)
	b.WriteString("\\caption{What reproduced: every claim of the three studies, the published value, ours and the verdict of its rule " +
		"(Appendix~\\ref{app:claims} gives each rule, its source and its reason). Robust: reproduced in every alternative specification the data hold; " +
		"fragile: reproduced as stated, not in every alternative; fails: not reproduced as stated; untested: no alternative specification. " +
		"Derived claims and observations of ours are shown, not counted.}\\label{tab:claims}\\\\\n")
	head := "\\toprule\nclaim & statement & published & ours & verdict & robust? \\\\\n\\midrule\n"
	b.WriteString(head + "\\endfirsthead\n" + head + "\\endhead\n")
	for _, c := range rep.Claims {
		id := render.Escape(c.ID)
		switch {
		case c.Derived():
			id += " {\\footnotesize (derived)}"
		case c.Observation != "":
			id += " {\\footnotesize (ours)}"
		}
		robust := "--"
		if rep.curves != nil && c.Counted() {
			if cv, ok := rep.curves.curveOf(c.ID); ok {
				robust = render.Escape(robustnessWord(cv))
			}
		}
		fmt.Fprintf(&b, "%s & %s & %s & %s & %s & %s \\\\\n", id, texText(c.Statement), texText(c.Published), texText(c.Ours), render.Escape(string(c.Verdict)), robust)
	}
	b.WriteString("\\bottomrule\n\\end{longtable}}\n")
	return b.String()
}

// robustnessWord is a counted claim's label on its specification curve,
// with a claim that has no alternative specification called untested:
// one specification tests nothing about robustness.
func robustnessWord(cv Curve) string {
	if cv.N == 1 && cv.Label != NotJudged {
		return "untested"
	}
	return cv.Label
}

// studyLabel is the study's label, or its name when it has none.
func studyLabel(labels map[string]string, study string) string {
	if l := labels[study]; l != "" {
		return l
	}
	return study
}

// Text renders the report as a plain table for the terminal, each study
// shown by its label (study -> label).
func Text(rep Report, labels map[string]string) string {
	var b strings.Builder
	w := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "claim\tstudy\tpublished\trule\tours\tdirection\tverdict\ttiming")
	for _, c := range rep.Claims {
		v := string(c.Verdict)
		if c.Reason != "" {
			v += " (" + c.Reason + ")"
		}
		dir := string(c.Direction)
		if dir == "" {
			dir = "-"
		}
		tl := c.timingLabel()
		if tl == "" || !c.Counted() {
			tl = "-"
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", c.label(), studyLabel(labels, c.Study), c.Published, c.Agreement, c.Ours, dir, v, tl)
	}
	w.Flush()
	fmt.Fprintf(&b, "%s Shown, not counted: derived claims %d, observations of ours %d.\n", CountSentence(rep.Counts), rep.Derived, rep.Observations)
	if rep.Preregistered != nil {
		fmt.Fprintln(&b, TimingSentence(rep))
	}
	return b.String()
}

// gatherAlternatives collects every study's alternative specifications:
// those its catalogue derives from its results (Catalogue.AlternativesOf),
// those of its alternatives file (altFiles, by study), the kinds its
// records cannot give, and every catalogue's first rules.
func gatherAlternatives(env *repro.Env, cats []Catalogue, files map[string][]byte, altFiles map[string]string) (map[string]Alternatives, []FirstRule, error) {
	alts := map[string]Alternatives{}
	var firsts []FirstRule
	for _, c := range cats {
		firsts = append(firsts, c.FirstRules...)
		if len(c.Unavailable) > 0 {
			a := alts[c.Study]
			a.Unavailable = append(a.Unavailable, c.Unavailable...)
			alts[c.Study] = a
		}
		if b, ok := files[c.Study]; ok && c.AlternativesOf != nil {
			derived, err := c.AlternativesOf(b)
			if err != nil {
				return nil, nil, fmt.Errorf("alternatives of study %s from its results: %w", c.Study, err)
			}
			a := alts[c.Study]
			a.Alternatives = append(a.Alternatives, derived...)
			alts[c.Study] = a
		}
	}
	for _, study := range slices.Sorted(maps.Keys(altFiles)) {
		ab, err := env.ReadFile(altFiles[study])
		if err != nil {
			return nil, nil, err
		}
		a, err := jsonnum.Decode[Alternatives](altFiles[study], ab)
		if err != nil {
			return nil, nil, err
		}
		a.Unavailable = append(alts[study].Unavailable, a.Unavailable...)
		a.Alternatives = append(alts[study].Alternatives, a.Alternatives...)
		alts[study] = *a
	}
	return alts, firsts, nil
}
