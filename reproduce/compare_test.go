package reproduce

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"pqrepro/analysis/agreement"
	"pqrepro/internal/settings"
)

// fakeResults are a fake study's results: one exact item, v.
type fakeResults struct{ V float64 }

func (r fakeResults) Items(now Results) ([]agreement.Item, error) {
	n := now.(fakeResults)
	return []agreement.Item{{Name: "v", Kind: agreement.Exact, Ref: agreement.V(r.V, 0), New: agreement.V(n.V, 0)}}, nil
}
func (fakeResults) Changes() []agreement.Change              { return nil }
func (fakeResults) Resampler() (agreement.Resampler, string) { return nil, "" }

// TestCompareStudy: results agree with themselves on a matching host; a
// new run of another profile has every item not judged, saying why; the
// decoder's error names the file and the study; a study without item
// rules compares nothing.
func TestCompareStudy(t *testing.T) {
	match := hostPair{match: true}
	s := Study{Name: "x", Results: func(name string, b []byte) (Results, error) {
		var r struct {
			V float64 `json:"v"`
		}
		if err := json.Unmarshal(b, &r); err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		return fakeResults{V: r.V}, nil
	}}
	full, quick := []byte(`{"profile": "full", "v": 1}`), []byte(`{"profile": "quick", "v": 1}`)
	as, err := compareStudy(s, full, full, settings.Full, match)
	if err != nil {
		t.Fatal(err)
	}
	if c := agreement.Judge(agreement.DefaultRule, as).Counts(); c.Inconsistent != 0 || c.Judged != 1 {
		t.Errorf("compared with itself: %s", c)
	}
	if as, err = compareStudy(s, full, quick, settings.Full, match); err != nil {
		t.Fatal(err)
	}
	if c := agreement.Judge(agreement.DefaultRule, as).Counts(); c.NotJudged[agreement.ReasonProfileDiffers] != c.Items {
		t.Errorf("against a quick run: %s", c)
	}
	if _, err := compareStudy(s, full, []byte(`[`), settings.Full, match); err == nil || !strings.Contains(err.Error(), "compare x: the new run's results/x.json") {
		t.Errorf("bad new results: %v", err)
	}
	if _, _, err := selfCompare(s, []byte(`[`), settings.Quick); err == nil || !strings.Contains(err.Error(), "compare x: the reference run's results/x.json") {
		t.Errorf("bad reference results: %v", err)
	}
	if as, err := compareStudy(Study{Name: "other"}, []byte(`{}`), []byte(`{}`), settings.Quick, match); err != nil || as.Items != nil {
		t.Errorf("a study without item rules: %v, %v", as, err)
	}
}

// TestCompareHosts: the same fingerprint matches; another CPU differs and
// says so; a run without meta.json does not match.
func TestCompareHosts(t *testing.T) {
	root := t.TempDir()
	write := func(run, cpu string) {
		os.MkdirAll(filepath.Join(root, run), 0o755)
		os.WriteFile(filepath.Join(root, run, "meta.json"), []byte(`{"host":{"cpu_model":"`+cpu+`","cores":2,"kernel":"Linux 6.18","arch":"amd64","memory_kb":24731708},"go":{"version":"go1.27.3"}}`), 0o644)
	}
	write("data/x/a", "Intel(R) Xeon(R) Processor")
	write("data/x/b", "Intel(R) Xeon(R) Processor")
	write("data/x/c", "AMD EPYC")
	if h := compareHosts(root, "data/x/a", root, "data/x/b"); !h.match {
		t.Errorf("same host: %+v", h)
	}
	if h := compareHosts(root, "data/x/a", root, "data/x/c"); h.match || !strings.Contains(h.note, `CPU "Intel(R) Xeon(R) Processor" vs "AMD EPYC"`) {
		t.Errorf("another CPU: %+v", h)
	}
	os.MkdirAll(filepath.Join(root, "data/x/f"), 0o755)
	os.WriteFile(filepath.Join(root, "data/x/f", "meta.json"), []byte(`{"host":{"cpu_model":"Intel(R) Xeon(R) Processor","cores":2,"kernel":"Linux 6.18","arch":"amd64","memory_kb":24731708,"cpu_flags":{"aes":true,"avx512f":true},"cpu_flags_sha256":"ab"},"go":{"version":"go1.27.3"}}`), 0o644)
	if h := compareHosts(root, "data/x/a", root, "data/x/f"); !h.match || h.note != "cpu flags not recorded in the reference run" {
		t.Errorf("a reference run without CPU flags: %+v", h)
	}
	if h := compareHosts(root, "data/x/a", root, "data/x/none"); h.match || !strings.Contains(h.note, "the new run's host is unknown") {
		t.Errorf("no meta.json: %+v", h)
	}
}
