package netstudy

import (
	"encoding/json"
	"fmt"
	"maps"

	"pqrepro/analysis/claims"
)

// ClaimViews are the views of results/net.json on which Study B's claims
// are re-evaluated as a robustness check (claims.View). That is, the
// comparisons, the scenarios and the reproduced summary without the handshakes a late
// packet touched (Hygiene.WithoutFlagged, hygiene.go). The claims
// themselves stay judged on every handshake, as pre-registered.
func ClaimViews() []claims.View {
	return []claims.View{{
		Name:  "without the handshakes a late packet touched (results/net.json hygiene.without_flagged)",
		Macro: "ClaimsNetFlagged",
		Of:    withoutFlagged,
	}}
}

// withoutFlagged replaces the results' comparisons, scenario-level
// differences (when recorded) and reproduced block by those computed
// without the flagged handshakes; ok is false for results of a run
// without a late-packet record.
func withoutFlagged(b []byte) ([]byte, bool, error) {
	var doc map[string]any
	if err := json.Unmarshal(b, &doc); err != nil {
		return nil, false, fmt.Errorf("results of Study B: %w", err)
	}
	h, _ := doc["hygiene"].(map[string]any)
	wf, _ := h["without_flagged"].(map[string]any)
	if wf == nil || wf["comparisons"] == nil || wf["reproduced"] == nil {
		return nil, false, nil
	}
	view := maps.Clone(doc)
	view["comparisons"], view["reproduced"] = wf["comparisons"], wf["reproduced"]
	if wf["scenarios"] != nil {
		view["scenarios"] = wf["scenarios"]
	}
	vb, err := json.Marshal(view)
	return vb, err == nil, err
}
