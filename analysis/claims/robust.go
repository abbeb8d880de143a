package claims

import (
	"fmt"
	"maps"
)

// A View is another reading of a study's results from the same run, on
// which the study's claims are re-evaluated as a robustness check. It
// changes no verdict: the claims stay judged as pre-registered, on the
// study's own results; the view only says whether a verdict would change.
// The study's analysis package defines its views (for example Study B's
// results without the handshakes a late packet touched).
type View struct {
	// Name says what the view is; results/claims.json names it.
	Name string
	// Macro, when set, is the prefix of the paper's macros
	// \<Macro>Checked (claims re-evaluated) and \<Macro>Changed (verdicts
	// that would change).
	Macro string
	// Of returns the study's results as the view reads them (the same
	// JSON schema); ok is false when the results have no such view (a run
	// recorded without what the view needs).
	Of func(results []byte) (view []byte, ok bool, err error)
}

// Robustness is one view's re-evaluation, in results/claims.json.
type Robustness struct {
	Study   string           `json:"study"`
	View    string           `json:"view"`
	Claims  []RobustnessItem `json:"claims"`
	Changed int              `json:"changed"` // claims whose verdict differs in the view
}

// RobustnessItem is one claim's verdict as judged and in the view.
type RobustnessItem struct {
	ID          string  `json:"id"`
	Verdict     Verdict `json:"verdict"`
	ViewVerdict Verdict `json:"view_verdict"`
	Ours        string  `json:"ours"`
	ViewOurs    string  `json:"view_ours"`
}

// studyView is a view with the study whose results it reads.
type studyView struct {
	study string
	view  View
}

// evalView evaluates the study's claims of catalogue on the view of its
// results; nil when the study has no results or they have no such view.
func evalView(study string, v View, files map[string][]byte, missing map[string]string, catalogue []Claim) (*Robustness, error) {
	b, ok := files[study]
	if !ok || v.Of == nil {
		return nil, nil
	}
	vb, ok, err := v.Of(b)
	if err != nil {
		return nil, fmt.Errorf("view %q of study %s: %w", v.Name, study, err)
	}
	if !ok {
		return nil, nil
	}
	vfiles := maps.Clone(files)
	vfiles[study] = vb
	r, err := NewResults(files, missing)
	if err != nil {
		return nil, err
	}
	vr, err := NewResults(vfiles, missing)
	if err != nil {
		return nil, fmt.Errorf("view %q of study %s: %w", v.Name, study, err)
	}
	rb := &Robustness{Study: study, View: v.Name, Claims: []RobustnessItem{}}
	for _, c := range catalogue {
		if c.Study != study {
			continue
		}
		o, vo := safeEval(c, r), safeEval(c, vr)
		rb.Claims = append(rb.Claims, RobustnessItem{ID: c.ID, Verdict: o.Verdict, ViewVerdict: vo.Verdict, Ours: o.Ours, ViewOurs: vo.Ours})
		if o.Verdict != vo.Verdict {
			rb.Changed++
		}
	}
	if err := r.Err(); err != nil {
		return nil, err
	}
	if err := vr.Err(); err != nil {
		return nil, fmt.Errorf("view %q of study %s: %w", v.Name, study, err)
	}
	return rb, nil
}
