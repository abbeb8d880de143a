package pipeline

import (
	"context"
	"os"

	"path/filepath"
	"pqrepro/analysis/agreement"
	"strings"
	"testing"
)

// TestCalibration: at a small K on the committed (full) results the
// report is the same for the same seed, has the false-alarm rate and one
// power line per injected change, and a study without a reference run is
// named, not skipped.
func TestCalibration(t *testing.T) {
	var plans []studyPlan
	for _, s := range Studies() {
		p := studyPlan{s: s, ref: "data/" + s.Name + "/committed"}
		b, err := os.ReadFile(filepath.Join("..", "results", s.Name+".json"))
		if err != nil {
			t.Fatal(err)
		}
		p.refResults = b
		plans = append(plans, p)
	}
	plans = append(plans, studyPlan{s: Study{Name: "other"}})
	a, err := calibration(context.Background(), Full, plans, 20, 7)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := calibration(context.Background(), Full, plans, 20, 7)
	if a != b {
		t.Errorf("the same K and seed gave different reports:\n%s\n%s", a, b)
	}
	for _, want := range []string{"K = 20 pseudo-replicate pairs, seed 7", "other not calibrated: no full reference run",
		"resampling: rounds resampled with replacement", "resampling: repetitions resampled", "resampling: parametric within the run",
		"false alarms (NOT REPRODUCED with nothing changed), resampling the records: ", "false alarms (NOT REPRODUCED with nothing changed), parametric (comparison): ",
		"power, every ML-KEM-1024 handshake slower (Study A) at 50 %, resampling the records: ", "power, every ML-KEM-1024 handshake slower (Study A) at 50 %, parametric (comparison): ",
		"power, ML-DSA-87's increase reversed (Study A, claims A1a-A1c; 100 % = fully reversed) at 100 %", "power, the hybrid's increase reversed (Study A, claims A3a-A3c; 100 % = fully reversed) at 100 %", "power, ML-DSA signing slower (Study C) at 20 %, resampling the records: 20 of 20", "power, ML-DSA signing slower (Study C) at 20 %, parametric (comparison): 20 of 20"} {
		if !strings.Contains(a, want) {
			t.Errorf("report lacks %q:\n%s", want, a)
		}
	}
	if c, _ := calibration(context.Background(), Full, plans, 20, 8); c == a {
		t.Error("another seed gave the same report")
	}
	if !strings.Contains(a, "between-run variance not estimated") {
		t.Errorf("the report does not say that τ² is not estimated:\n%s", a)
	}
	// A between-run sd of 100 % of each time reaches the judgement (the
	// same seed gives another power line for ML-KEM-1024), and the runs
	// are named.
	for i := range plans {
		if plans[i].s.Name == "tls" {
			plans[i].between = agreement.BetweenRun{Runs: []string{"r1", "r2", "r3"}, Tau2Rel: 1, Items: 1}
		}
	}
	wide, err := calibration(context.Background(), Full, plans, 20, 7)
	if err != nil {
		t.Fatal(err)
	}
	line := func(report string) string {
		for _, l := range strings.Split(report, "\n") {
			if strings.Contains(l, "handshake slower (Study A) at 50 %, resampling the records") {
				return l
			}
		}
		return ""
	}
	if !strings.Contains(wide, "from 3 runs: r1, r2, r3") || line(wide) == "" || line(wide) == line(a) {
		t.Errorf("τ² did not reach the calibration:\n%s", wide)
	}
}

func TestFillDocBlock(t *testing.T) {
	doc := filepath.Join(t.TempDir(), "a.md")
	os.WriteFile(doc, []byte("x\n<!-- calibration:quick -->\nold\n<!-- end calibration:quick -->\ny\n"), 0o644)
	if err := fillDocBlock(doc, "quick", "new\n"); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(doc); string(b) != "x\n<!-- calibration:quick -->\n```\nnew\n```\n<!-- end calibration:quick -->\ny\n" {
		t.Errorf("%q", b)
	}
	if err := fillDocBlock(doc, "full", "new\n"); err == nil || !strings.Contains(err.Error(), "calibration:full") {
		t.Errorf("no block: %v", err)
	}
}

// TestCalibrationDocIsCurrent fails when a calibration docs/agreement.md
// quotes was computed on other inputs than this tree's: other reference
// runs, another set of committed runs, or other analysis code.
func TestCalibrationDocIsCurrent(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", calibrationDoc))
	if err != nil {
		t.Fatal(err)
	}
	for _, profile := range []string{Quick, Full} {
		begin, end := "<!-- calibration:"+profile+" -->", "<!-- end calibration:"+profile+" -->"
		i, j := strings.Index(string(b), begin), strings.Index(string(b), end)
		if i < 0 || j < i {
			t.Errorf("%s has no calibration block for the %s profile", calibrationDoc, profile)
			continue
		}
		digest, k, seed := calibrationDigest(string(b)[i:j])
		now, err := calibrationInputs("..", profile, k, seed)
		if err != nil {
			t.Fatal(err)
		}
		if digest != now {
			t.Errorf("%s quotes a calibration at the %s profile computed on inputs %q, but this tree's are %q: its figures are stale; run `PQREPRO_PROFILE=%s go run mage.go calibrate` (K = %d, seed %d: set PQREPRO_CALIBRATE_K and PQREPRO_CALIBRATE_SEED to match) and commit the doc",
				calibrationDoc, profile, digest, now, profile, k, seed)
		}
	}
}

// TestCalibrationInputs checks that the digest moves with each input.
func TestCalibrationInputs(t *testing.T) {
	root := t.TempDir()
	write := func(rel, text string) {
		p := filepath.Join(root, rel)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("analysis/agreement/rule.go", "package agreement\n")
	write("pipeline/calibrate.go", "package pipeline\n")
	digest := func() string {
		d, err := calibrationInputs(root, Quick, 200, 1)
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	base := digest()
	if d, _ := calibrationInputs(root, Quick, 200, 1); d != base {
		t.Fatal("the same tree gave two digests")
	}
	for _, tc := range []struct {
		name   string
		change func()
		moves  bool
	}{
		{"a test file", func() { write("analysis/agreement/rule_test.go", "package agreement\n") }, false},
		{"another pipeline file", func() { write("pipeline/docs.go", "package pipeline\n") }, false},
		{"analysis code", func() { write("analysis/agreement/rule.go", "package agreement // changed\n") }, true},
		{"calibration code", func() { write("pipeline/calibrate.go", "package pipeline // changed\n") }, true},
		{"a new run", func() { write("data/tls/20261204T000000Z-quick/meta.json", "{}") }, true},
	} {
		before := digest()
		tc.change()
		if moved := digest() != before; moved != tc.moves {
			t.Errorf("%s: digest moved %v, want %v", tc.name, moved, tc.moves)
		}
	}
	if d, _ := calibrationInputs(root, Quick, 20, 1); d == digest() {
		t.Error("K does not move the digest")
	}
	text := "calibration of `all` at the quick profile: K = 20 pseudo-replicate pairs, seed 7 (x)\n" + inputsLine("0123456789abcdef") + "\n"
	if d, k, s := calibrationDigest(text); d != "0123456789abcdef" || k != 20 || s != 7 {
		t.Errorf("calibrationDigest = %q, %d, %d", d, k, s)
	}
}
