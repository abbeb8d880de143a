package netstudy

import (
	"math"
	"strings"
	"testing"

	"pqrepro/datasets/netdata"
)

// normalisedFixture is one comparison on a 10 Mbit/s link whose hybrid
// carries 1,250 more IP bytes each way (2 ms of serialisation), and a
// probe whose hybrid takes 0.2 ms (before) and 0.22 ms (after) more CPU.
func normalisedFixture() (*Results, netdata.ProbeMeta) {
	r := &Results{
		Design: Design{Groups: []string{"X25519", "X25519MLKEM768"},
			Scenarios: []netdata.Scenario{{Name: "far", RTTms: 78.7, RateBps: 10_000_000}}},
		Toolchains:  &Toolchains{Primary: "go1.24.4"},
		Comparisons: []Comparison{{Scenario: "far", Round: 1000, DiffMs: 2.42, DiffSEMs: 0.1}},
		Series: []Series{
			{Scenario: "far", Round: 1000, Group: "X25519", FrameC2S: 1000, FrameS2C: 2000},
			{Scenario: "far", Round: 1000, Group: "X25519MLKEM768", FrameC2S: 2250, FrameS2C: 3250},
		},
	}
	span := func(ms float64) netdata.ProbeSpan { return netdata.ProbeSpan{MedianMs: ms, P25Ms: ms, P75Ms: ms} }
	pm := netdata.ProbeMeta{
		Probe: &netdata.HostProbe{N: 1000,
			Before: map[string]map[string]netdata.ProbeSpan{"go1.24.4": {"X25519": span(0.5), "X25519MLKEM768": span(0.7)}},
			After:  map[string]map[string]netdata.ProbeSpan{"go1.24.4": {"X25519": span(0.5), "X25519MLKEM768": span(0.72)}}},
		SelfTests: map[string]netdata.SelfTest{"far-1000-X25519": {Scenario: "far", OK: true}},
	}
	return r, pm
}

func TestNormalisedDifferences(t *testing.T) {
	r, pm := normalisedFixture()
	got := NormalisedDifferences(r, pm)
	if len(got) != 1 {
		t.Fatalf("%d items, want 1", len(got))
	}
	n := got[0]
	// cpu = (0.2 + 0.22) / 2 = 0.21; bytes = 8 * 2500 / 1e7 s = 2 ms.
	near := func(a Num, b float64) bool { return math.Abs(float64(a)-b) < 1e-9 }
	if n.NotJudged != "" || !near(n.CPUMs, 0.21) || !near(n.BytesMs, 2) || !near(n.PredictedMs, 2.21) || !near(n.Ratio, 2.42/2.21) || n.ExtraBytes != 2500 {
		t.Errorf("NormalisedDifferences = %+v", n)
	}

	for _, tc := range []struct {
		name   string
		change func(*Results, *netdata.ProbeMeta)
		want   string
	}{
		{"no probe", func(r *Results, pm *netdata.ProbeMeta) { pm.Probe = nil }, "no host probe in this run"},
		{"probe failed", func(r *Results, pm *netdata.ProbeMeta) {
			pm.Probe.After, pm.Probe.Errors = nil, map[string]string{"after": "endpoint probe: exit status 1"}
		}, "the host probe after the series failed: endpoint probe: exit status 1"},
		{"other toolchain", func(r *Results, pm *netdata.ProbeMeta) { r.Toolchains.Primary = "go1.27.3" }, "has no go1.27.3 X25519 and X25519MLKEM768"},
		{"remote servers", func(r *Results, pm *netdata.ProbeMeta) { pm.Remote = true }, "remote host"},
		{"self-test failed", func(r *Results, pm *netdata.ProbeMeta) {
			pm.SelfTests["far-1000-X25519MLKEM768"] = netdata.SelfTest{Scenario: "far", OK: false}
		}, "the link failed its self-test in [far-1000-X25519MLKEM768]"},
		{"drift", func(r *Results, pm *netdata.ProbeMeta) {
			pm.Probe.After["go1.24.4"]["X25519MLKEM768"] = netdata.ProbeSpan{MedianMs: 1.0, P25Ms: 1, P75Ms: 1}
		}, "moved 13.6 % between the before and after probes (2.200 -> 2.500 ms; bound 10 %)"},
		{"below the smallest prediction", func(r *Results, pm *netdata.ProbeMeta) {
			r.Design.Scenarios[0].RateBps = 1_000_000_000
			pm.Probe.Before["go1.24.4"]["X25519MLKEM768"] = netdata.ProbeSpan{MedianMs: 0.6, P25Ms: 0.6, P75Ms: 0.6}
			pm.Probe.After["go1.24.4"]["X25519MLKEM768"] = netdata.ProbeSpan{MedianMs: 0.6, P25Ms: 0.6, P75Ms: 0.6}
		}, "predicted difference 0.120 ms is below"},
		{"no rate", func(r *Results, pm *netdata.ProbeMeta) { r.Design.Scenarios[0].RateBps = 0 }, "no recorded link rate"},
		{"no series", func(r *Results, pm *netdata.ProbeMeta) { r.Series = r.Series[:1] }, "a group's series is missing"},
		{"no difference", func(r *Results, pm *netdata.ProbeMeta) { r.Comparisons[0].DiffMs = Num(math.NaN()) }, "no median difference"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, pm := normalisedFixture()
			tc.change(r, &pm)
			n := NormalisedDifferences(r, pm)[0]
			if !strings.Contains(n.NotJudged, tc.want) || !math.IsNaN(float64(n.Ratio)) {
				t.Errorf("NotJudged = %q, ratio %v; want a reason containing %q and no ratio", n.NotJudged, n.Ratio, tc.want)
			}
		})
	}
}

// The model's sentence says what its ratios are, or why there are none,
// in generated words only.
func TestModelSentence(t *testing.T) {
	nan := Num(math.NaN())
	for _, tc := range []struct {
		name string
		ns   []NormalisedDifference
		want string
	}{
		{"none", nil, "This run has no comparison to set beside a prediction."},
		{"no probe", []NormalisedDifference{{Scenario: "lan", Ratio: nan, NotJudged: "no host probe in this run"}, {Scenario: "far", Ratio: nan, NotJudged: "no host probe in this run"}},
			"No difference of this run is set beside a prediction (Table~\\ref{tab:net-model}): no host probe in this run."},
		{"two reasons", []NormalisedDifference{{Scenario: "lan", Ratio: nan, NotJudged: "a"}, {Scenario: "far", Ratio: nan, NotJudged: "b"}},
			"notes give the 2 reasons"},
		{"mixed", []NormalisedDifference{{Scenario: "lan", Ratio: nan, NotJudged: "below"}, {Scenario: "far", Round: 1, Ratio: 0.5}, {Scenario: "far", Round: 2, Ratio: 0.7}},
			"Observed over predicted ranges from 0.50 to 0.70 over the 2 of 3 comparisons whose prediction is formed (median per scenario: far 0.60; Table~\\ref{tab:net-model}); the other one is not formed, for the reason"},
	} {
		got := modelSentence(&Results{Normalised: tc.ns})
		if !strings.Contains(got, tc.want) {
			t.Errorf("%s: %q, want it to contain %q", tc.name, got, tc.want)
		}
	}
}
