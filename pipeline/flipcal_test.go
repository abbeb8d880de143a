package pipeline

import (
	"strings"
	"testing"

	"pqrepro/analysis/agreement"
)

// flipRun is an analysed quiet run of Study A on host with results b.
func flipRun(t *testing.T, id, host string, b []byte) analysedRun {
	t.Helper()
	fp, err := agreement.ReadFingerprint([]byte(`{"host":` + host + `,"go":{"version":"go1.27.3"}}`))
	if err != nil {
		t.Fatal(err)
	}
	info := runInfo{Profile: Quick, DesignSHA: "one design"}
	info.host = fp
	return analysedRun{id: id, run: "data/tls/" + id, info: info, results: b}
}

// TestCalibrateFlips: two runs on each of two hosts, A2a flipping between
// the hosts (the runs): no false alarm on unlike hosts, the flips
// counted as held, and the planted ML-KEM-1024 change caught wherever the
// reference did not already find ML-KEM-1024 significant.
func TestCalibrateFlips(t *testing.T) {
	tls := studyNamed(t, "tls")
	ref, now := flipResults(t, flipRef, flipRefBase, 0), flipResults(t, flipNew, flipNewBase, 0)
	runs := []analysedRun{
		flipRun(t, "20261201T000000Z-quick", amdHost, ref), flipRun(t, "20261201T010000Z-quick", amdHost, ref),
		flipRun(t, "20261201T020000Z-quick", intelHost, now), flipRun(t, "20261201T030000Z-quick", intelHost, now),
	}
	fc := calibrateFlips(tls, Quick, runs)
	if fc.across.pairs != 8 || fc.within.pairs != 4 {
		t.Fatalf("pairs across %d, within %d; want 8 and 4", fc.across.pairs, fc.within.pairs)
	}
	if fc.across.alarms != 0 || fc.within.alarms != 0 {
		t.Errorf("false alarms across %d (%s), within %d (%s); want none", fc.across.alarms, fc.across.firstAlarmReason, fc.within.alarms, fc.within.firstAlarmReason)
	}
	if fc.across.held != 8 {
		t.Errorf("%d pairs across hosts held a flip; want all 8", fc.across.held)
	}
	// With ML-KEM-1024 1 ms slower: against an AMD reference (A2a not
	// reproduced) the flip is real and caught; against an Intel
	// reference (A2a reproduced) there is no flip, and the raw increase
	// is not judged across hosts: not caught.
	if fc.across.planted != 8 || fc.across.caught != 4 || fc.within.caught != 4 {
		t.Errorf("planted %d, caught across %d, within %d; want 8, 4, 4", fc.across.planted, fc.across.caught, fc.within.caught)
	}
	out := fc.report()
	mustContain(t, out, "false alarms 0 of 8 pairs", "goal at most 5 %: met", "8 pair(s) with a flip held", "power against ML-KEM-1024 slower by 1 ms in every round")
	// Runs of another design are never paired.
	runs[3].info.DesignSHA = "another design"
	if fc := calibrateFlips(tls, Quick, runs); fc.across.pairs+fc.within.pairs != 6 {
		t.Errorf("with one run of another design: %d pairs, want 6", fc.across.pairs+fc.within.pairs)
	}
	if fc := calibrateFlips(tls, Quick, runs[:1]); !strings.Contains(fc.report(), "no pair of runs of one design") {
		t.Errorf("one run: %s", fc.report())
	}
}

func studyNamed(t *testing.T, name string) Study {
	t.Helper()
	for _, s := range Studies() {
		if s.Name == name {
			return s
		}
	}
	t.Fatalf("study %s is not registered", name)
	return Study{}
}
