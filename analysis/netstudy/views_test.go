package netstudy

import (
	"encoding/json"
	"testing"

	"pqrepro/analysis/claims"
)

// TestClaimViewWithoutFlagged: the view swaps in the comparisons and the
// summary without the flagged handshakes, and B1 judged on it can differ
// from B1 judged on every handshake; results of a run without a
// late-packet record have no view.
func TestClaimViewWithoutFlagged(t *testing.T) {
	views := ClaimViews()
	if len(views) != 1 || views[0].Macro != "ClaimsNetFlagged" {
		t.Fatalf("views = %+v", views)
	}
	// Results as the analysis writes them (every field present), with
	// the summary numbers B1 reads.
	summary := Reproduced{Comparisons: 9, HigherLatency: 9, Round: 10000}
	flagged := summary
	flagged.HigherLatency = 8
	res := &Results{Reproduced: summary, Comparisons: []Comparison{},
		Hygiene: &Hygiene{WithoutFlagged: WithoutFlagged{Comparisons: []Comparison{}, Reproduced: flagged}}}
	b, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	vb, ok, err := views[0].Of(b)
	if err != nil || !ok {
		t.Fatalf("view: ok %v, %v", ok, err)
	}
	var got map[string]any
	if err := json.Unmarshal(vb, &got); err != nil {
		t.Fatal(err)
	}
	if h := got["reproduced"].(map[string]any)["target_higher_latency"]; h != 8.0 {
		t.Errorf("the view's reproduced block has target_higher_latency %v, want the one without flagged (8)", h)
	}
	var b1 []claims.Claim
	for _, c := range Claims().Claims {
		if c.ID == "B1" {
			b1 = append(b1, c)
		}
	}
	if len(b1) != 1 {
		t.Fatal("no claim B1")
	}
	on := func(results []byte) claims.Verdict {
		r, err := claims.NewResults(map[string][]byte{"net": results}, nil)
		if err != nil {
			t.Fatal(err)
		}
		return claims.Run(r, b1).Claims[0].Verdict
	}
	if all, view := on(b), on(vb); all != claims.Reproduced || view == claims.Reproduced {
		t.Errorf("B1: %v on every handshake, %v without the flagged ones; want reproduced and not", all, view)
	}
	res.Hygiene = nil
	b, _ = json.Marshal(res)
	if _, ok, err := views[0].Of(b); ok || err != nil {
		t.Errorf("results without the view: ok %v, %v", ok, err)
	}
	if _, _, err := views[0].Of([]byte("{")); err == nil {
		t.Error("broken results: no error")
	}
}

// TestClaimViewCarriesScenarios: the view swaps in the scenario-level
// differences without the flagged handshakes when the results record
// them (B3 reads them), and keeps the study's when they do not.
func TestClaimViewCarriesScenarios(t *testing.T) {
	sc := func(mean float64) []any { return []any{map[string]any{"scenario": "lan", "mean_ms": mean}} }
	wf := map[string]any{"reproduced": map[string]any{}, "comparisons": []any{}, "scenarios": sc(0.4)}
	doc := map[string]any{"reproduced": map[string]any{}, "comparisons": []any{}, "scenarios": sc(0.5),
		"hygiene": map[string]any{"without_flagged": wf}}
	mean := func(doc map[string]any) any {
		b, _ := json.Marshal(doc)
		vb, ok, err := ClaimViews()[0].Of(b)
		if err != nil || !ok {
			t.Fatalf("view: ok %v, %v", ok, err)
		}
		var got map[string]any
		if err := json.Unmarshal(vb, &got); err != nil {
			t.Fatal(err)
		}
		return got["scenarios"].([]any)[0].(map[string]any)["mean_ms"]
	}
	if m := mean(doc); m != 0.4 {
		t.Errorf("the view's lan mean is %v, want the one without flagged (0.4)", m)
	}
	delete(wf, "scenarios")
	if m := mean(doc); m != 0.5 {
		t.Errorf("without recorded scenarios the view's lan mean is %v, want the study's (0.5)", m)
	}
}
