package pipeline

import (
	"strings"
	"testing"

	"pqrepro/internal/settings"
	"pqrepro/reproduce"
)

// flipRun is an analysed quiet run of Study A on host with results b.
func flipRun(id, host string, b []byte) reproduce.QuietRun {
	meta := `{"profile":"quick","spec_design_sha256":"one design","host":` + host + `,"go":{"version":"go1.27.3"}}`
	return reproduce.QuietRun{ID: id, Run: "data/tls/" + id, Meta: []byte(meta), Results: b}
}

// flipReport is the calibration of the whole verdict line of Study A on
// runs.
func flipReport(t *testing.T, runs []reproduce.QuietRun) string {
	t.Helper()
	out, err := reproduce.FlipCalibration(reproduceStudy(t, "tls"), settings.Quick, catalogues(), runs)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestCalibrateFlips: two runs on each of two hosts, A2a flipping between
// the hosts (the runs): no false alarm on unlike hosts, the flips
// counted as held, and the planted ML-KEM-1024 change caught wherever the
// reference did not already find ML-KEM-1024 significant.
func TestCalibrateFlips(t *testing.T) {
	ref, now := flipResults(t, flipRef, flipRefBase, 0), flipResults(t, flipNew, flipNewBase, 0)
	runs := []reproduce.QuietRun{
		flipRun("20261201T000000Z-quick", amdHost, ref), flipRun("20261201T010000Z-quick", amdHost, ref),
		flipRun("20261201T020000Z-quick", intelHost, now), flipRun("20261201T030000Z-quick", intelHost, now),
	}
	out := flipReport(t, runs)
	// 8 pairs across hosts, 4 on one host, no false alarm; every pair
	// across hosts held a flip. With ML-KEM-1024 1 ms slower: against an
	// AMD reference (A2a not reproduced) the flip is real and caught;
	// against an Intel reference (A2a reproduced) there is no flip, and
	// the raw increase is not judged across hosts: not caught.
	mustContain(t, out, "cross-host fit: false alarms 0 of 8 pairs", "on one host: false alarms 0 of 4 pairs", "goal at most 5 %: met",
		"and 8 pair(s) with a flip held", "power against ML-KEM-1024 slower by 1 ms in every round (claims A2a-A2c): 4 of 8", "(claims A2a-A2c): 4 of 4")
	// Runs of another design are never paired.
	runs[3].Meta = []byte(strings.Replace(string(runs[3].Meta), "one design", "another design", 1))
	if out := flipReport(t, runs); !strings.Contains(out, "cross-host fit: false alarms 0 of 4 pairs") || !strings.Contains(out, "on one host: false alarms 0 of 2 pairs") {
		t.Errorf("with one run of another design, want 4 pairs across hosts and 2 on one:\n%s", out)
	}
	if out := flipReport(t, runs[:1]); !strings.Contains(out, "no pair of runs of one design") {
		t.Errorf("one run: %s", out)
	}
}

// reproduceStudy is the registered study name as the reproduce side
// sees it.
func reproduceStudy(t *testing.T, name string) reproduce.Study {
	t.Helper()
	for _, s := range (Config{Root: ".."}).reproduceConfig().Studies {
		if s.Name == name {
			return s
		}
	}
	t.Fatalf("study %s is not registered", name)
	return reproduce.Study{}
}
