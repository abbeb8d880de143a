package pipeline

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"pqrepro/analysis/agreement"
)

// TestCompareStudy: every registered study's committed results agree with
// themselves on a matching host; a field renamed in the results is an
// error; a new run of another profile has every item not judged, saying
// why.
func TestCompareStudy(t *testing.T) {
	match := hostPair{match: true}
	for _, name := range []string{"tls", "net", "pico"} {
		b, err := os.ReadFile(filepath.Join("..", "results", name+".json"))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		s := registered(name)
		as, err := compareStudy(s, b, b, Full, match)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		rep := agreement.Judge(agreement.DefaultRule, as)
		if c := rep.Counts(); c.Inconsistent != 0 || c.Judged < c.Items/2 {
			t.Errorf("%s compared with itself: %s", name, c)
		}
		quick := []byte(strings.Replace(string(b), `"profile": "full"`, `"profile": "quick"`, 1))
		as, err = compareStudy(s, b, quick, Full, match)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if c := agreement.Judge(agreement.DefaultRule, as).Counts(); c.NotJudged[agreement.ReasonProfileDiffers] != c.Items {
			t.Errorf("%s against a quick run: %s", name, c)
		}
		if _, err := compareStudy(s, b, []byte(`{"profle":"full"}`), Full, match); err == nil || !strings.Contains(err.Error(), "results/"+name+".json: field profle: unknown field") {
			t.Errorf("%s: a renamed field: %v", name, err)
		}
	}
	if as, err := compareStudy(Study{Name: "other"}, []byte(`{}`), []byte(`{}`), Quick, match); err != nil || as.Items != nil {
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
