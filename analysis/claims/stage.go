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

// Stage evaluates every claim on the results files it is given (study ->
// path of results/<study>.json, each the output of that study's analysis
// stage) and writes results/claims.json and the paper's claims table.
// missing gives, for each study without results, the reason; it is a
// parameter, so a study that gains a dataset reruns the stage.
func Stage(results map[string]string, missing map[string]string) *repro.Stage {
	params := map[string]string{}
	var inputs []string
	for study, p := range results {
		params["results."+study] = p
		inputs = append(inputs, p)
	}
	for study, why := range missing {
		params["missing."+study] = why
	}
	inputs = append(inputs, PreregistrationFile)
	slices.Sort(inputs)
	return &repro.Stage{
		Name:    "claims",
		Doc:     "evaluate every published claim on the results",
		Code:    []string{"analysis/claims"},
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
			rep := Run(r, Catalogue())
			if rb, err := netWithoutFlagged(files, missing, Catalogue()); err != nil {
				return err
			} else if rb != nil {
				rep.Robustness = append(rep.Robustness, *rb)
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
			tex, err := Latex(rep)
			if err != nil {
				return err
			}
			if err := env.WriteFile(NumbersFile, []byte(Numbers(rep))); err != nil {
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
// rules' thresholds the paper's text quotes.
func Numbers(rep Report) string {
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
	// Study B without the flagged handshakes (robust.go): how many of its
	// claims were re-evaluated and how many verdicts would change.
	checked, changed := 0, 0
	for _, rb := range rep.Robustness {
		if rb.Study == "net" {
			checked, changed = len(rb.Claims), rb.Changed
		}
	}
	n.Set("ClaimsNetFlaggedChecked", fmt.Sprint(checked))
	n.Set("ClaimsNetFlaggedChanged", fmt.Sprint(changed))
	n.Set("ClaimsDerived", fmt.Sprint(rep.Derived))
	// The rules' constants, so that the paper's text cannot drift from
	// the code that applies them.
	n.Set("ClaimsLargeCliffDelta", render.Fixed(LargeCliffDelta, 3))
	n.Set("ClaimsLargeEpsilonSq", render.Fixed(LargeEpsilon2, 2))
	n.Set("ClaimsStudyATolPct", render.Fixed(100*studyATol, 0))
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
	return n.Latex()
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
// (labels tab:claims-A, tab:claims-B, tab:claims-C), so that each fits a
// page.
func Latex(rep Report) (string, error) {
	const rag = `>{\raggedright\arraybackslash}`
	var out strings.Builder
	var studies []string
	for _, c := range rep.Claims {
		if !slices.Contains(studies, c.Study) {
			studies = append(studies, c.Study)
		}
	}
	for _, study := range studies {
		label := studyLabel(study)
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

func studyLabel(s string) string {
	switch s {
	case "tls":
		return "A"
	case "net":
		return "B"
	case "pico":
		return "C"
	}
	return s
}

// Text renders the report as a plain table for the terminal.
func Text(rep Report) string {
	var b strings.Builder
	w := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "claim\tstudy\tpublished\trule\tours\tverdict")
	for _, c := range rep.Claims {
		v := string(c.Verdict)
		if c.Reason != "" {
			v += " (" + c.Reason + ")"
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\n", c.label(), studyLabel(c.Study), c.Published, c.Agreement, c.Ours, v)
	}
	w.Flush()
	fmt.Fprintf(&b, "%d independent claims: %d reproduced, %d direction only, %d not reproduced, %d not assessable (calibrated), %d not measurable here; %d derived claims shown, not counted\n",
		rep.Independent(), rep.Counts[Reproduced], rep.Counts[DirectionOnly], rep.Counts[NotReproduced], rep.Counts[NotAssessable], rep.Counts[NotMeasurable], rep.Derived)
	return b.String()
}
