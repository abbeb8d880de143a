package netstudy

import (
	"math"
	"strings"
	"testing"

	"pqrepro/analysis/claims"
	"pqrepro/analysis/claims/claimstest"
)

func TestClaimsCatalogue(t *testing.T) { claimstest.CheckCatalogue(t, Claims(), "B") }

// TestClaimsGolden: the verdict table on the committed results/net.json
// equals testdata/claims.golden.json, written before the rules moved
// here from analysis/claims: no rule, tolerance or text changed.
func TestClaimsGolden(t *testing.T) {
	claimstest.CheckGolden(t, Claims(), "../../results/net.json", "testdata/claims.golden.json", *update)
}

// TestFallingRule: B7 needs the relative increase to fall at every step
// of RTT, not only from first to last, in the largest round.
func TestFallingRule(t *testing.T) {
	mk := func(pcts ...float64) *Results {
		r := &Results{Reproduced: Reproduced{Round: 10000}}
		for i, p := range pcts {
			r.Comparisons = append(r.Comparisons, Comparison{Round: 10000, RTTms: float64(10 * (i + 1)), DiffPct: Num(p)},
				Comparison{Round: 1000, RTTms: float64(10 * (i + 1)), DiffPct: Num(100 - p)})
		}
		return r
	}
	for _, tc := range []struct {
		pcts []float64
		want claims.Verdict
	}{
		{[]float64{47, 10, 2.5}, claims.Reproduced},
		{[]float64{15.8, 1.6, 2.3}, claims.NotReproduced},
		{[]float64{2, 3, 4}, claims.NotReproduced},
		{[]float64{5, 5, 1}, claims.NotReproduced},
	} {
		o := judgeFalling(mk(tc.pcts...))
		if o.Verdict != tc.want {
			t.Errorf("%v: %s (%s), want %s", tc.pcts, o.Verdict, o.Reason, tc.want)
		}
		// The direction is its own column: fastest above slowest.
		if wantDir := map[bool]claims.Direction{true: claims.AsPublished, false: claims.Opposite}[tc.pcts[0] > tc.pcts[2]]; o.Direction != wantDir {
			t.Errorf("%v: direction %q, want %q", tc.pcts, o.Direction, wantDir)
		}
	}
	if o := judgeFalling(mk(3)); o.Verdict != claims.NotMeasurable {
		t.Errorf("one scenario: %s, want not measurable", o.Verdict)
	}
	if o := judgeFalling(mk(3, math.NaN())); o.Verdict != claims.NotMeasurable || !strings.Contains(o.Reason, "comparisons[2].diff_pct") {
		t.Errorf("a null increase: %s (%s), want not measurable naming the field", o.Verdict, o.Reason)
	}
}

// TestStudyBRoundAndMissing: on a round other than the published one a
// claim about the 10,000 round is not measurable; a null value is not measurable, naming
// the field; a missing study gives its reason.
func TestStudyBRoundAndMissing(t *testing.T) {
	r := &Results{Reproduced: Reproduced{Round: 1000, Comparisons: 9, HigherLatency: 9, HigherBytes: 9,
		DiffMsMin: 0.742, DiffMsMax: Num(math.NaN()), FrameGrowthMin: 100, FrameGrowthMax: 110}}
	got := claimstest.Evaluate(t, Claims(), r)
	if got["B3"].Verdict != claims.NotMeasurable || !strings.Contains(got["B3"].Reason, "largest round is 1000") {
		t.Errorf("B3 in round 1000: %+v", got["B3"])
	}
	if got["B4"].Verdict != claims.NotMeasurable || !strings.Contains(got["B4"].Reason, "reproduced.diff_ms_max (the value is null") {
		t.Errorf("B4 with a null difference: %+v", got["B4"])
	}
	if got["B1"].Verdict != claims.Reproduced || got["B8"].Verdict != claims.Reproduced {
		t.Errorf("B1 %s, B8 %s", got["B1"].Verdict, got["B8"].Verdict)
	}
	res, _ := claims.NewResults(nil, map[string]string{"net": "no dataset pinned for Study B: run `mage net:run`"})
	for _, e := range claims.Run(res, Claims().Claims).Claims {
		if e.Verdict != claims.NotMeasurable || !strings.Contains(e.Reason, "mage net:run") {
			t.Errorf("%s without results: %s (%s)", e.ID, e.Verdict, e.Reason)
		}
	}
}

// TestNoRuleAsksForSignificance: the original establishes no statistical
// significance (QuoteNoSignificance), so no rule of Study B may ask for
// one.
func TestNoRuleAsksForSignificance(t *testing.T) {
	for _, c := range Claims().Claims {
		a := strings.ToLower(c.Agreement)
		if (strings.Contains(a, "signific") && !strings.Contains(a, "no test")) || strings.Contains(a, "p <") {
			t.Errorf("%s asks for significance (%q), which the original did not establish (%q)", c.ID, c.Agreement, QuoteNoSignificance.Text)
		}
	}
}

// TestJudgeSmallestScenario: B3 reads the scenario-level interval of the
// scenario with the smallest difference: inside the window reproduced,
// straddling a bound or outside it not reproduced, none not measurable.
func TestJudgeSmallestScenario(t *testing.T) {
	nan := Num(math.NaN())
	mk := func(lo, mean, hi Num) *Results {
		return &Results{Reproduced: Reproduced{Round: 10000, DiffMsMin: mean}, Scenarios: []ScenarioEffect{
			{Scenario: "far", K: 3, MeanMs: 2.0, LowerMs: 1.9, UpperMs: 2.1},
			{Scenario: "lan", K: 3, MeanMs: mean, LowerMs: lo, UpperMs: hi},
			{Scenario: "one", K: 1, MeanMs: nan, LowerMs: nan, UpperMs: nan},
		}}
	}
	for _, tc := range []struct {
		lo, mean, hi Num
		want         claims.Verdict
		reason       string
	}{
		{0.6, 0.7, 0.8, claims.Reproduced, ""},
		{0.139, 0.424, 0.709, claims.NotReproduced, "straddles"}, // today's lan: the floor 0.371 inside the interval
		{0.9, 1.0, 1.2, claims.NotReproduced, "straddles"},       // the ceiling 1.113
		{0.1, 0.2, 0.3, claims.NotReproduced, "lies outside"},    // wholly below
		{0.1, 0.7, 1.5, claims.NotReproduced, "straddles"},       // wider than the window
		{0.371, 0.742, 1.113, claims.Reproduced, ""},             // on the bounds
	} {
		o := judgeSmallestScenario(mk(tc.lo, tc.mean, tc.hi))
		if o.Verdict != tc.want || !strings.Contains(o.Reason, tc.reason) || !strings.Contains(o.Ours, "lan") {
			t.Errorf("[%v, %v]: %s (%s; %s), want %s (%q)", tc.lo, tc.hi, o.Verdict, o.Reason, o.Ours, tc.want, tc.reason)
		}
	}
	if o := judgeSmallestScenario(&Results{Scenarios: []ScenarioEffect{{Scenario: "one", K: 1, MeanMs: nan}}}); o.Verdict != claims.NotMeasurable {
		t.Errorf("no scenario interval: %s, want not measurable", o.Verdict)
	}
}
