package claims

import (
	"encoding/json"
	"fmt"
	"maps"
)

// A robustness view re-evaluates one study's claims on other results of
// the same run, without changing any verdict: the claims stay judged as
// pre-registered, on the study's own results; the view only says whether
// a verdict would change.
//
// Study B's "without flagged" view (issue #13 section 2) replaces
// results/net.json's comparisons and reproduced block by those computed
// without the handshakes a late packet touched
// (hygiene.without_flagged, analysis/netstudy).

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

// netWithoutFlagged evaluates Study B's claims on the view without the
// flagged handshakes; nil when the net results have no such view (a run
// without a late-packet record, or no Study B results).
func netWithoutFlagged(files map[string][]byte, missing map[string]string, catalogue []Claim) (*Robustness, error) {
	b, ok := files["net"]
	if !ok {
		return nil, nil
	}
	var doc map[string]any
	if err := json.Unmarshal(b, &doc); err != nil {
		return nil, fmt.Errorf("results of study net: %w", err)
	}
	h, _ := doc["hygiene"].(map[string]any)
	wf, _ := h["without_flagged"].(map[string]any)
	if wf == nil || wf["comparisons"] == nil || wf["reproduced"] == nil {
		return nil, nil
	}
	view := maps.Clone(doc)
	view["comparisons"], view["reproduced"] = wf["comparisons"], wf["reproduced"]
	vb, err := json.Marshal(view)
	if err != nil {
		return nil, err
	}
	vfiles := maps.Clone(files)
	vfiles["net"] = vb
	r, err := NewResults(files, missing)
	if err != nil {
		return nil, err
	}
	vr, err := NewResults(vfiles, missing)
	if err != nil {
		return nil, err
	}
	rb := &Robustness{Study: "net", View: "without the handshakes a late packet touched (results/net.json hygiene.without_flagged)", Claims: []RobustnessItem{}}
	for _, c := range catalogue {
		if c.Study != "net" {
			continue
		}
		o, vo := safeEval(c, r), safeEval(c, vr)
		rb.Claims = append(rb.Claims, RobustnessItem{ID: c.ID, Verdict: o.Verdict, ViewVerdict: vo.Verdict, Ours: o.Ours, ViewOurs: vo.Ours})
		if o.Verdict != vo.Verdict {
			rb.Changed++
		}
	}
	return rb, nil
}
