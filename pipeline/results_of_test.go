package pipeline

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"pqrepro/analysis/agreement"
	"pqrepro/internal/jsonnum"
	"pqrepro/internal/settings"
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
	ref, err := h.decode("ref.json", []byte(`{"v": 1}`))
	if err != nil {
		t.Fatal(err)
	}
	now, err := h.decode("now.json", []byte(`{"v": 2}`))
	if err != nil {
		t.Fatal(err)
	}
	items, err := ref.Items(now)
	if err != nil || len(items) != 1 || items[0].Ref.Est != 1 || items[0].New.Est != 2 || decodes != 2 {
		t.Errorf("two runs: %+v, %v, %d decodes", items, err, decodes)
	}
	decodes = 0
	r, err := h.decode("self.json", []byte(`{"v": 3}`))
	if err != nil {
		t.Fatal(err)
	}
	if items, err := r.Items(r); err != nil || len(items) != 1 || items[0].New.Est != 3 || decodes != 1 {
		t.Fatalf("a run with itself: %+v, %v, %d decodes", items, err, decodes)
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
	if _, err := h.decode("the new run's results/x.json", []byte(`{"w": 1}`)); err == nil || !strings.Contains(err.Error(), `the new run's results/x.json: field w: unknown field`) {
		t.Errorf("a bad new run: %v", err)
	}
	if _, err := h.decode("the reference run's results/x.json", []byte(`[`)); err == nil || !strings.Contains(err.Error(), "the reference run's results/x.json") {
		t.Errorf("bad reference results: %v", err)
	}
	fail := resultsOf[res]{Decode: func(string, []byte) (*res, error) { return nil, errors.New("schema 9") }}
	if _, err := fail.decode("x.json", []byte(`{}`)); err == nil || !strings.Contains(err.Error(), "schema 9") {
		t.Errorf("a decoder's own check: %v", err)
	}
}

// TestRegisteredResults: every registered study's committed results
// decode with its Results hook and agree with themselves on a matching
// host; a field renamed in the results is an error naming the file.
func TestRegisteredResults(t *testing.T) {
	for _, name := range []string{"tls", "net", "pico"} {
		b, err := os.ReadFile(filepath.Join("..", "results", name+".json"))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		s := registered(name)
		r, err := s.Results("results/"+name+".json", b)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		items, err := r.Items(r)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		as := agreement.Study{Name: name, RefProfile: settings.Full, NewProfile: settings.Full, HostsMatch: true, Items: items}
		if c := agreement.Judge(agreement.DefaultRule, as).Counts(); c.Inconsistent != 0 || c.Judged < c.Items/2 {
			t.Errorf("%s compared with itself: %s", name, c)
		}
		if _, err := s.Results("results/"+name+".json", []byte(`{"profle":"full"}`)); err == nil || !strings.Contains(err.Error(), "results/"+name+".json: field profle: unknown field") {
			t.Errorf("%s: a renamed field: %v", name, err)
		}
	}
}

// registered is the registered study of that name, or a study with only
// the name when there is none.
func registered(name string) Study {
	for _, s := range Studies() {
		if s.Name == name {
			return s
		}
	}
	return Study{Name: name}
}
