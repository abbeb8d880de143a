package reproduce

import (
	"math"
	"strings"
	"testing"

	"pqrepro/analysis/agreement"
)

func testCrossHost(t *testing.T) crossHost {
	t.Helper()
	var vs []agreement.HostValue
	for i, h := range []string{"A", "B", "C"} {
		for j, r := range []float64{1.10, 1.20, 1.15} {
			vs = append(vs, agreement.HostValue{Host: h, Run: h + string(rune('0'+j)), Ratio: r + 0.01*float64(i)})
		}
	}
	it := &crossHostItem{name: "hybrid", values: vs, left: []string{"X: drifted"}}
	it.fit, it.fitErr = agreement.FitCrossHost(vs, CrossHostLevel)
	if it.fitErr != nil {
		t.Fatal(it.fitErr)
	}
	it.holdout = agreement.HoldOutHosts(vs, CrossHostLevel, CrossHostSlower)
	lone := &crossHostItem{name: "pq-kem"}
	lone.fit, lone.fitErr = agreement.FitCrossHost(nil, CrossHostLevel)
	return crossHost{runs: 10, left: []string{"Y: busy"}, items: []*crossHostItem{lone, it}}
}

// TestCrossHostJudge: a new run's item inside the hosts' interval is
// consistent, one far outside is counted, and an item the run or the fit
// cannot judge says why and is not counted.
func TestCrossHostJudge(t *testing.T) {
	ch := testCrossHost(t)
	for _, tc := range []struct {
		name    string
		now     agreement.Normalised
		want    string
		outside int
	}{
		{"inside", agreement.Normalised{Name: "hybrid", Observed: 3.5, Predicted: 3, Ratio: 3.5 / 3}, "consistent: inside", 0},
		{"outside", agreement.Normalised{Name: "hybrid", Observed: 9, Predicted: 3, Ratio: 3}, "OUTSIDE", 1},
		{"the run's own reason", agreement.Normalised{Name: "hybrid", Ratio: math.NaN(), NotJudged: "drifted 29 %"}, "not judged: drifted 29 %", 0},
		{"no fit", agreement.Normalised{Name: "pq-kem", Ratio: 1}, "not judged: 0 host(s)", 0},
		{"unknown item", agreement.Normalised{Name: "other", Ratio: 1}, "no committed run measured this item", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lines, outside, _ := ch.judge("tls", []agreement.Normalised{tc.now})
			if len(lines) != 1 || !strings.Contains(lines[0], tc.want) || outside != tc.outside {
				t.Errorf("got %q, %d outside; want %q, %d", lines, outside, tc.want, tc.outside)
			}
		})
	}
	rep := ch.report("tls")
	for _, want := range []string{"10 quiet run(s)", "1 left out", "hybrid: ratio", "leave-one-host-out: false alarms 0 of 9", "host A: 1.10, 1.20, 1.15", "pq-kem: not judged across hosts"} {
		if !strings.Contains(rep, want) {
			t.Errorf("report lacks %q:\n%s", want, rep)
		}
	}
}

// TestSummaryDiffersAcrossHosts: an item outside its cross-host interval
// makes the overall line NOT REPRODUCED.
func TestSummaryDiffersAcrossHosts(t *testing.T) {
	s := &summary{items: &agreement.Report{}}
	if s.differs() {
		t.Fatal("an empty summary differs")
	}
	s.crossOutside = 1
	if !s.differs() {
		t.Error("an item outside its cross-host interval does not make the summary differ")
	}
}

// Runs left out of an item are counted by reason, the commonest first.
func TestReasonCounts(t *testing.T) {
	if got := reasonCounts(nil); got != "" {
		t.Errorf("reasonCounts(nil) = %q", got)
	}
	got := reasonCounts([]string{"r1: no host probe in this run", "r2: the probe failed", "r3: no host probe in this run", "odd",
		"r4: moved 16.5 % (2.996 -> 2.501 ms)", "r5: moved 21.6 % (3.338 -> 2.616 ms)", "r6: moved 22.7 % (2.510 -> 3.079 ms)"})
	if want := " (3: moved 16.5 % (2.996 -> 2.501 ms), the others alike with other figures; 2: no host probe in this run; 1: odd; 1: the probe failed)"; got != want {
		t.Errorf("reasonCounts = %q, want %q", got, want)
	}
}
