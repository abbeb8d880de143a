package claims

import (
	"context"
	"encoding/json"
	"fmt"
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
	ID        string  `json:"id"`
	Study     string  `json:"study"`
	Statement string  `json:"statement"`
	Published string  `json:"published"`
	Agreement string  `json:"agreement"`
	Ours      string  `json:"ours"`
	Verdict   Verdict `json:"verdict"`
	Reason    string  `json:"reason,omitempty"`
}

// Report is results/claims.json.
type Report struct {
	Claims []Evaluated     `json:"claims"`
	Counts map[Verdict]int `json:"counts"`
}

// Run evaluates the catalogue and builds the report.
func Run(r *Results, catalogue []Claim) Report {
	outs := Evaluate(r, catalogue)
	rep := Report{Counts: map[Verdict]int{}}
	for i, c := range catalogue {
		o := outs[i]
		rep.Claims = append(rep.Claims, Evaluated{ID: c.ID, Study: c.Study, Statement: c.Statement,
			Published: c.Published, Agreement: c.Agreement, Ours: o.Ours, Verdict: o.Verdict, Reason: o.Reason})
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

// Numbers renders the verdict counts as \newcommand macros
// (\ClaimsReproduced, \ClaimsDirectionOnly, \ClaimsNotReproduced,
// \ClaimsNotMeasurable, \ClaimsTotal).
func Numbers(rep Report) string {
	var n render.Numbers
	total := 0
	for _, v := range []struct {
		name string
		v    Verdict
	}{{"ClaimsReproduced", Reproduced}, {"ClaimsDirectionOnly", DirectionOnly}, {"ClaimsNotReproduced", NotReproduced}, {"ClaimsNotMeasurable", NotMeasurable}} {
		n.Set(v.name, fmt.Sprint(rep.Counts[v.v]))
		total += rep.Counts[v.v]
	}
	n.Set("ClaimsTotal", fmt.Sprint(total))
	return n.Latex()
}

// Latex renders the verdict table for the paper.
func Latex(rep Report) (string, error) {
	t := render.Table{
		Label:   "tab:claims",
		Caption: "Every numeric claim of the three studies, evaluated on our results by \\texttt{analysis/claims} (verdicts are computed, not typed).",
		Align:   "llp{0.2\\linewidth}p{0.2\\linewidth}l",
		Header:  []string{"claim", "study", "published", "ours", "verdict"},
	}
	for _, c := range rep.Claims {
		t.Rows = append(t.Rows, []string{c.ID, studyLabel(c.Study), render.Escape(c.Published), render.Escape(c.Ours), render.Escape(string(c.Verdict))})
	}
	var notes []string
	for _, c := range rep.Claims {
		if c.Reason != "" {
			notes = append(notes, c.ID+": "+render.Escape(c.Reason))
		}
	}
	t.Notes = strings.Join(notes, "; ")
	return t.Latex()
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
	fmt.Fprintln(w, "claim\tstudy\tpublished\tours\tverdict")
	for _, c := range rep.Claims {
		v := string(c.Verdict)
		if c.Reason != "" {
			v += " (" + c.Reason + ")"
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\n", c.ID, studyLabel(c.Study), c.Published, c.Ours, v)
	}
	w.Flush()
	fmt.Fprintf(&b, "%d reproduced, %d direction only, %d not reproduced, %d not measurable here\n",
		rep.Counts[Reproduced], rep.Counts[DirectionOnly], rep.Counts[NotReproduced], rep.Counts[NotMeasurable])
	return b.String()
}
