package claims

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"

	"pqrepro/internal/render"
	"pqrepro/internal/repro"
)

// Output files of the claims stage.
const (
	JSONFile    = "results/claims.json"
	LatexFile   = "paper/generated/claims.tex"
	NumbersFile = "paper/generated/claims-numbers.tex"
)

// Evaluated is one row of results/claims.json.
type Evaluated struct {
	ID        string `json:"id"`
	Study     string `json:"study"`
	Statement string `json:"statement"`
	Published string `json:"published"`
	Agreement string `json:"agreement"`
	Rationale string `json:"rationale"`
	// DerivedFrom names the claims this one is computed from; a derived
	// claim is not counted in Report.Counts.
	DerivedFrom []string `json:"derived_from,omitempty"`
	Calibrated  string   `json:"calibrated,omitempty"`
	Ours        string   `json:"ours"`
	Verdict     Verdict  `json:"verdict"`
	Reason      string   `json:"reason,omitempty"`
}

// Derived reports whether the claim is computed from other claims.
func (e Evaluated) Derived() bool { return len(e.DerivedFrom) > 0 }

// Report is results/claims.json.
type Report struct {
	Claims []Evaluated `json:"claims"`
	// Counts counts the verdicts of the independent claims only.
	Counts map[Verdict]int `json:"counts"`
	// Derived is the number of derived claims, shown but not counted.
	Derived int `json:"derived"`
	// Rules is the commit that fixed the rules; Runs the judged runs,
	// each with whether it was recorded after that commit.
	Rules Rules       `json:"rules"`
	Runs  []JudgedRun `json:"runs"`
	// Robustness re-evaluates claims on other views of the same results
	// (robust.go); it changes no verdict above.
	Robustness []Robustness `json:"robustness,omitempty"`
}

// Independent is the number of claims Counts covers.
func (rep Report) Independent() int { return len(rep.Claims) - rep.Derived }

// Run evaluates the catalogue and builds the report.
func Run(r *Results, catalogue []Claim) Report {
	outs := Evaluate(r, catalogue)
	rep := Report{Counts: map[Verdict]int{}}
	for i, c := range catalogue {
		o := outs[i]
		e := Evaluated{ID: c.ID, Study: c.Study, Statement: c.Statement,
			Published: c.Published, Agreement: c.Agreement, Rationale: c.Rationale,
			DerivedFrom: c.DerivedFrom, Calibrated: c.Calibrated,
			Ours: o.Ours, Verdict: o.Verdict, Reason: o.Reason}
		rep.Claims = append(rep.Claims, e)
		if e.Derived() {
			rep.Derived++
			continue
		}
		rep.Counts[o.Verdict]++
	}
	return rep
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
	}
	inputs = append(inputs, PreregistrationFile)
	slices.Sort(inputs)
	slices.Sort(code)
	return &repro.Stage{
		Name:    "claims",
		Doc:     "evaluate every published claim on the results",
		Code:    slices.Compact(code),
		Inputs:  inputs,
		Params:  params,
		Outputs: []string{JSONFile, LatexFile, NumbersFile},
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
			rep := Run(r, All(cats))
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
			if err := env.WriteFile(NumbersFile, []byte(nums)); err != nil {
				return err
			}
			return env.WriteFile(LatexFile, []byte(tex))
		},
	}
}

// Numbers renders the verdict counts of the independent claims as
// \newcommand macros (\ClaimsReproduced, \ClaimsDirectionOnly,
// \ClaimsNotReproduced, \ClaimsNotAssessable, \ClaimsNotMeasurable,
// \ClaimsTotal), the number of derived claims (\ClaimsDerived) and the
// rules' thresholds the paper's text quotes: the engine's and each
// catalogue's Numbers, and per view with a Macro the number of claims it
// re-evaluated and of verdicts that would change (\<Macro>Checked,
// \<Macro>Changed).
// A catalogue's macro with a name that is not letters only, or set twice,
// is an error.
func Numbers(rep Report, views []View, cats ...Catalogue) (string, error) {
	var n render.Numbers
	total := 0
	for _, v := range []struct {
		name string
		v    Verdict
	}{{"ClaimsReproduced", Reproduced}, {"ClaimsDirectionOnly", DirectionOnly}, {"ClaimsNotReproduced", NotReproduced},
		{"ClaimsNotAssessable", NotAssessable}, {"ClaimsNotMeasurable", NotMeasurable}} {
		n.Set(v.name, fmt.Sprint(rep.Counts[v.v]))
		total += rep.Counts[v.v]
	}
	n.Set("ClaimsTotal", fmt.Sprint(total))
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
	// The rules' constants, so that the paper's text cannot drift from
	// the code that applies them.
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

// label is the claim's ID as tables show it: a derived claim carries the
// IDs it comes from.
func (e Evaluated) label() string {
	if !e.Derived() {
		return e.ID
	}
	return e.ID + " (from " + strings.Join(e.DerivedFrom, ", ") + ")"
}

// Latex renders the verdict tables for the paper, one per study
// (labels tab:claims-A, tab:claims-B, ... from labels, study -> label),
// so that each fits a page.
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
			Caption: "Study " + label + ": every numeric claim with the rule that judges it, evaluated on our results by " +
				"\\texttt{analysis/claims} (verdicts are computed, not typed). A claim marked ``from'' is derived from " +
				"the claims it names: shown, not counted in the totals.",
			Align:  "l" + rag + "p{0.17\\linewidth}" + rag + "p{0.3\\linewidth}" + rag + "p{0.2\\linewidth}" + rag + "p{0.14\\linewidth}",
			Header: []string{"claim", "published", "rule", "ours", "verdict"},
		}
		var notes []string
		for _, c := range rep.Claims {
			if c.Study != study {
				continue
			}
			id := render.Escape(c.ID)
			if c.Derived() {
				id += " \\newline {\\footnotesize from " + render.Escape(strings.Join(c.DerivedFrom, ", ")) + "}"
				id = "\\parbox[t]{4.5em}{\\raggedright " + id + "}"
			}
			t.Rows = append(t.Rows, []string{id, render.Escape(c.Published), render.Escape(c.Agreement), render.Escape(c.Ours), render.Escape(string(c.Verdict))})
			if c.Reason != "" {
				notes = append(notes, c.ID+": "+render.Escape(c.Reason))
			}
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
	fmt.Fprintln(w, "claim\tstudy\tpublished\trule\tours\tverdict")
	for _, c := range rep.Claims {
		v := string(c.Verdict)
		if c.Reason != "" {
			v += " (" + c.Reason + ")"
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\n", c.label(), studyLabel(labels, c.Study), c.Published, c.Agreement, c.Ours, v)
	}
	w.Flush()
	fmt.Fprintf(&b, "%d independent claims: %d reproduced, %d direction only, %d not reproduced, %d not assessable (calibrated), %d not measurable here; %d derived claims shown, not counted\n",
		rep.Independent(), rep.Counts[Reproduced], rep.Counts[DirectionOnly], rep.Counts[NotReproduced], rep.Counts[NotAssessable], rep.Counts[NotMeasurable], rep.Derived)
	return b.String()
}
