package pipeline

import (
	"context"
	"os"

	"path/filepath"
	"pqrepro/analysis/agreement"
	"pqrepro/internal/settings"
	"pqrepro/reproduce"
	"strings"
	"testing"
)

// TestCalibration: at a small K on the committed (full) results the
// report is the same for the same seed, has the false-alarm rate and one
// power line per injected change, and a study without a reference run is
// named, not skipped.
func TestCalibration(t *testing.T) {
	var plans []reproduce.Comparison
	for _, s := range (Config{Root: ".."}).reproduceConfig().Studies {
		p := reproduce.Comparison{Study: s, Ref: "data/" + s.Name + "/committed"}
		b, err := os.ReadFile(filepath.Join("..", "results", s.Name+".json"))
		if err != nil {
			t.Fatal(err)
		}
		p.RefResults = b
		plans = append(plans, p)
	}
	plans = append(plans, reproduce.Comparison{Study: reproduce.Study{Name: "other"}})
	a, err := reproduce.Calibration(context.Background(), settings.Full, plans, 20, 7)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := reproduce.Calibration(context.Background(), settings.Full, plans, 20, 7)
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
	if c, _ := reproduce.Calibration(context.Background(), settings.Full, plans, 20, 8); c == a {
		t.Error("another seed gave the same report")
	}
	if !strings.Contains(a, "between-run variance not estimated") {
		t.Errorf("the report does not say that τ² is not estimated:\n%s", a)
	}
	// A between-run sd of 100 % of each time reaches the judgement (the
	// same seed gives another power line for ML-KEM-1024), and the runs
	// are named.
	for i := range plans {
		if plans[i].Study.Name == "tls" {
			plans[i].Between = agreement.BetweenRun{Runs: []string{"r1", "r2", "r3"}, Tau2Rel: 1, Items: 1}
		}
	}
	wide, err := reproduce.Calibration(context.Background(), settings.Full, plans, 20, 7)
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

// TestCalibrationDocIsCurrent fails when a calibration docs/agreement.md
// quotes was computed on other inputs than this tree's: other reference
// runs, another set of committed runs, or other analysis code.
func TestCalibrationDocIsCurrent(t *testing.T) {
	const calibrationDoc = "docs/agreement.md"
	b, err := os.ReadFile(filepath.Join("..", calibrationDoc))
	if err != nil {
		t.Fatal(err)
	}
	for _, profile := range []string{settings.Quick, settings.Full} {
		begin, end := "<!-- calibration:"+profile+" -->", "<!-- end calibration:"+profile+" -->"
		i, j := strings.Index(string(b), begin), strings.Index(string(b), end)
		if i < 0 || j < i {
			t.Errorf("%s has no calibration block for the %s profile", calibrationDoc, profile)
			continue
		}
		digest, k, seed := reproduce.CalibrationDigest(string(b)[i:j])
		now, err := reproduce.CalibrationInputs("..", profile, (Config{Root: ".."}).reproduceConfig().Studies, k, seed)
		if err != nil {
			t.Fatal(err)
		}
		if digest != now {
			t.Errorf("%s quotes a calibration at the %s profile computed on inputs %q, but this tree's are %q: its figures are stale; run `PQREPRO_PROFILE=%s go run mage.go calibrate` (K = %d, seed %d: set PQREPRO_CALIBRATE_K and PQREPRO_CALIBRATE_SEED to match) and commit the doc",
				calibrationDoc, profile, digest, now, profile, k, seed)
		}
	}
}
