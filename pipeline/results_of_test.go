package pipeline

import (
	"errors"
	"strings"
	"testing"

	"pqrepro/analysis/agreement"
	"pqrepro/internal/jsonnum"
)

// TestResultsOf: a study's Results decodes each results file once with
// its one decoder (twice for two runs, once for a run compared with
// itself), binds the study's functions to what it decoded, reports no
// changes or resampler when the study has none, refuses to compare two
// studies' results, and passes on the decoder's error.
func TestResultsOf(t *testing.T) {
	type res struct {
		V float64 `json:"v"`
	}
	decodes := 0
	h := resultsOf[res]{
		Decode: func(name string, b []byte) (*res, error) {
			decodes++
			return jsonnum.Decode[res](name, b)
		},
		Items: func(ref, now *res) []agreement.Item {
			return []agreement.Item{{Name: "v", Kind: agreement.Exact, Ref: agreement.V(ref.V, 0), New: agreement.V(now.V, 0)}}
		},
	}
	s := Study{Name: "x", Results: h.decode}
	as, err := compareStudy(s, []byte(`{"v": 1}`), []byte(`{"v": 2}`), Quick, hostPair{match: true})
	if err != nil || len(as.Items) != 1 || as.Items[0].Ref.Est != 1 || as.Items[0].New.Est != 2 || decodes != 2 {
		t.Errorf("compareStudy: %+v, %v, %d decodes", as.Items, err, decodes)
	}
	decodes = 0
	as, r, err := selfCompare(s, []byte(`{"v": 3}`), Quick)
	if err != nil || len(as.Items) != 1 || as.Items[0].New.Est != 3 || decodes != 1 {
		t.Fatalf("selfCompare: %+v, %v, %d decodes", as.Items, err, decodes)
	}
	if ch := r.Changes(); ch != nil {
		t.Errorf("changes of a study without any: %v", ch)
	}
	if rs, m := r.Resampler(); rs != nil || m != "" {
		t.Errorf("resampler of a study without one: %v, %q", rs, m)
	}

	// With changes and a resampler, each gets the decoded results.
	h.Changes = func(ref *res) []agreement.Change { return []agreement.Change{{Name: "double", Size: ref.V}} }
	h.Resampler = func(ref *res) agreement.Resampler { return nil }
	h.Method = "none drawn"
	r, err = h.decode("x.json", []byte(`{"v": 0.5}`))
	if err != nil {
		t.Fatal(err)
	}
	if ch := r.Changes(); len(ch) != 1 || ch[0].Size != 0.5 {
		t.Errorf("changes: %v", ch)
	}
	if _, m := r.Resampler(); m != "none drawn" {
		t.Errorf("method %q", m)
	}

	// Two studies' results do not compare.
	other, _ := resultsOf[struct{}]{Decode: jsonnum.Decode[struct{}]}.decode("y.json", []byte(`{}`))
	if _, err := r.Items(other); err == nil || !strings.Contains(err.Error(), "two studies' results") {
		t.Errorf("items of two studies' results: %v", err)
	}

	// The decoder's error, with the file named.
	if _, err := compareStudy(s, []byte(`{"v": 1}`), []byte(`{"w": 1}`), Quick, hostPair{}); err == nil || !strings.Contains(err.Error(), `compare x: the new run's results/x.json: field w: unknown field`) {
		t.Errorf("a bad new run: %v", err)
	}
	if _, _, err := selfCompare(s, []byte(`[`), Quick); err == nil || !strings.Contains(err.Error(), "the reference run's results/x.json") {
		t.Errorf("bad reference results: %v", err)
	}
	fail := resultsOf[res]{Decode: func(string, []byte) (*res, error) { return nil, errors.New("schema 9") }}
	if _, err := compareStudy(Study{Name: "x", Results: fail.decode}, []byte(`{}`), []byte(`{}`), Quick, hostPair{}); err == nil || !strings.Contains(err.Error(), "schema 9") {
		t.Errorf("a decoder's own check: %v", err)
	}
}
