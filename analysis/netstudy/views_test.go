package netstudy

import (
	"encoding/json"
	"os"
	"strings"
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

// TestToolchainAlternatives: the committed run's other toolchain is one
// alternative whose comparisons and scenarios are that toolchain's; a run
// with one toolchain has none; results that are not JSON are an error.
func TestToolchainAlternatives(t *testing.T) {
	b, err := os.ReadFile("../../results/net.json")
	if err != nil {
		t.Fatal(err)
	}
	alts, err := ToolchainAlternatives(b)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Toolchains struct {
			Primary string `json:"primary"`
			Per     []struct {
				Toolchain   string          `json:"toolchain"`
				Comparisons json.RawMessage `json:"comparisons"`
			} `json:"per_toolchain"`
		} `json:"toolchains"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	if len(alts) != len(doc.Toolchains.Per)-1 {
		t.Fatalf("%d alternatives for %d toolchains", len(alts), len(doc.Toolchains.Per))
	}
	for _, a := range alts {
		if a.Kind != claims.KindToolchain || !strings.HasPrefix(a.Name, "endpoints built with go") || a.Missing != "" {
			t.Errorf("alternative %+v", a)
		}
		var view struct {
			Comparisons json.RawMessage `json:"comparisons"`
		}
		if err := json.Unmarshal(a.Results, &view); err != nil {
			t.Fatal(err)
		}
		for _, p := range doc.Toolchains.Per {
			if a.Name == "endpoints built with "+p.Toolchain && !jsonEqual(t, view.Comparisons, p.Comparisons) {
				t.Errorf("%s: the view's comparisons are not the toolchain's", a.Name)
			}
		}
	}
	if alts, err := ToolchainAlternatives([]byte(`{"comparisons":[]}`)); err != nil || len(alts) != 0 {
		t.Errorf("one toolchain: %v, %v", alts, err)
	}
	if _, err := ToolchainAlternatives([]byte(`{`)); err == nil {
		t.Error("truncated results: no error")
	}
}

func jsonEqual(t *testing.T, a, b json.RawMessage) bool {
	t.Helper()
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	xb, _ := json.Marshal(x)
	yb, _ := json.Marshal(y)
	return string(xb) == string(yb)
}
