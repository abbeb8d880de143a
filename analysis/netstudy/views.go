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

// ToolchainAlternatives are Study B's results as the run's other
// toolchains measured them, one alternative specification each.
//
// A run that builds the endpoints with two Go releases measures every
// series twice on the same links (toolchains.per_toolchain); the claims
// are judged on the primary toolchain's series, and the others are
// alternatives the committed data hold (claims.KindToolchain). Each view
// replaces the comparisons and the scenario-level differences by the
// toolchain's; a run with one toolchain has none.
func ToolchainAlternatives(b []byte) ([]claims.Alternative, error) {
	var doc map[string]any
	if err := json.Unmarshal(b, &doc); err != nil {
		return nil, fmt.Errorf("results of Study B: %w", err)
	}
	tc, _ := doc["toolchains"].(map[string]any)
	per, _ := tc["per_toolchain"].([]any)
	primary, _ := tc["primary"].(string)
	var out []claims.Alternative
	for _, p := range per {
		t, _ := p.(map[string]any)
		name, _ := t["toolchain"].(string)
		if name == "" || name == primary {
			continue
		}
		if t["comparisons"] == nil || t["scenarios"] == nil {
			out = append(out, claims.Alternative{Kind: claims.KindToolchain, Name: "endpoints built with " + name, Missing: "the results hold no comparisons or scenarios of this toolchain"})
			continue
		}
		view := maps.Clone(doc)
		view["comparisons"], view["scenarios"] = t["comparisons"], t["scenarios"]
		vb, err := json.Marshal(view)
		if err != nil {
			return nil, err
		}
		out = append(out, claims.Alternative{Kind: claims.KindToolchain, Name: "endpoints built with " + name, Results: vb})
	}
	return out, nil
}
