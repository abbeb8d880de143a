package tlsstudy

import (
	"math"
	"strings"
	"testing"

	"pqrepro/analysis/claims"
	"pqrepro/analysis/claims/claimstest"
	"pqrepro/analysis/tlscompare"
)

func TestClaimsCatalogue(t *testing.T) { claimstest.CheckCatalogue(t, Claims(), "A") }

// TestClaimsGolden: the verdict table on the committed results/tls.json
// equals testdata/claims.golden.json, written before the rules moved
// here from analysis/claims: no rule, tolerance or text changed.
func TestClaimsGolden(t *testing.T) {
	claimstest.CheckGolden(t, Claims(), "../../results/tls.json", "testdata/claims.golden.json", *update)
}

// paperResults is a results/tls.json with the paper family only: per role
// the increase in ms and %, the Holm p and Cliff's delta (+-0.9 by sign).
func paperResults(base float64, inc map[string][3]float64, kwP float64) *Results {
	f := &Family{Kruskal: Kruskal{P: Num(kwP), Epsilon2: 0.7}, Friedman: tlscompare.Friedman{P: Num(kwP)}}
	for _, role := range Roles[1:] {
		v := inc[role]
		delta := 0.9
		if v[0] < 0 {
			delta = -0.9
		}
		f.Comparisons = append(f.Comparisons, Comparison{Role: role, MedianDiffMs: Num(v[0]), MedianDiffPct: Num(v[1]), PHolm: Num(v[2]),
			Rounds:           tlscompare.RoundComparison{IncreaseMs: Num(v[0]), IncreasePct: Num(v[1])},
			MedianBaselineMs: Num(base), Cliff: Cliff{Delta: Num(delta)}})
	}
	return &Results{Families: map[string]*Family{"paper": f}}
}

func TestStudyAVerdicts(t *testing.T) {
	// As published: everything reproduced.
	got := claimstest.Evaluate(t, Claims(), paperResults(3.9, map[string][3]float64{
		"pq-sig": {4.651, 120, 1e-9}, "pq-kem": {5.072, 128, 1e-9}, "hybrid": {9.048, 228, 1e-9}}, 1e-12))
	for id, c := range got {
		if c.Verdict != claims.Reproduced {
			t.Errorf("%s with the published values: %s (%s)", id, c.Verdict, c.Reason)
		}
	}
	// Our Go results: larger relative signature cost, small KEM cost.
	got = claimstest.Evaluate(t, Claims(), paperResults(0.45, map[string][3]float64{
		"pq-sig": {1.07, 237, 1e-9}, "pq-kem": {0.08, 18, 0.2}, "hybrid": {1.31, 290, 1e-9}}, 1e-12))
	// +290 % against +228 % is outside the ±25 % window (A3b was
	// reproduced under the former ±50 %); a miss with the published sign
	// is not reproduced, its direction shown as published; A2a's p = 0.2
	// is not significant.
	want := map[string]claims.Verdict{
		"A1a": claims.Reproduced, "A1b": claims.NotReproduced, "A1c": claims.NotReproduced,
		"A2a": claims.NotReproduced, "A2b": claims.NotReproduced, "A3a": claims.Reproduced, "A3b": claims.NotReproduced,
		"A4": claims.NotReproduced, "A5": claims.Reproduced, "A6": claims.NotReproduced, "A7": claims.Reproduced,
	}
	for id, v := range want {
		if got[id].Verdict != v {
			t.Errorf("%s = %s (%s), want %s", id, got[id].Verdict, got[id].Reason, v)
		}
	}
	if got["A1c"].Direction != claims.AsPublished || got["A1a"].Effect == "" {
		t.Errorf("A1c direction %q, A1a effect %q", got["A1c"].Direction, got["A1a"].Effect)
	}
	// A reversed effect is not reproduced.
	got = claimstest.Evaluate(t, Claims(), paperResults(3.9, map[string][3]float64{
		"pq-sig": {-1, -20, 1e-9}, "pq-kem": {5, 128, 1e-9}, "hybrid": {9, 228, 1e-9}}, 0.5))
	if got["A1a"].Verdict != claims.NotReproduced || got["A1b"].Verdict != claims.NotReproduced || got["A7"].Verdict != claims.NotReproduced {
		t.Errorf("reversed: A1a %s, A1b %s, A7 %s", got["A1a"].Verdict, got["A1b"].Verdict, got["A7"].Verdict)
	}
}

// TestStudyAMissingValues: a comparison or a value the results lack makes
// the claim not measurable, with the reason naming the field.
func TestStudyAMissingValues(t *testing.T) {
	nan := Num(0)
	nan.UnmarshalJSON([]byte("null"))
	r := paperResults(3.9, map[string][3]float64{"pq-sig": {4.651, 120, 1e-9}, "pq-kem": {5.072, 128, 1e-9}, "hybrid": {9.048, 228, 1e-9}}, 1e-12)
	r.Families["paper"].Comparisons = r.Families["paper"].Comparisons[1:] // no pq-sig
	r.Families["paper"].Comparisons[0].PHolm = nan                        // pq-kem's p is null
	got := claimstest.Evaluate(t, Claims(), r)
	for id, want := range map[string]string{
		"A1a": "families.paper.comparisons[role=pq-sig] (no element with role=pq-sig)",
		"A4":  "no element with role=pq-sig",
		"A2a": "families.paper.comparisons[role=pq-kem].p_holm (the value is null",
	} {
		if got[id].Verdict != claims.NotMeasurable || !strings.Contains(got[id].Reason, want) {
			t.Errorf("%s: %s (%s), want not measurable naming %q", id, got[id].Verdict, got[id].Reason, want)
		}
	}
	if got["A2b"].Verdict == claims.NotMeasurable {
		t.Errorf("A2b needs no p-value: %s", got["A2b"].Reason)
	}
	got = claimstest.Evaluate(t, Claims(), &Results{})
	if got["A7"].Verdict != claims.NotMeasurable || !strings.Contains(got["A7"].Reason, "no paper family") {
		t.Errorf("A7 without families: %+v", got["A7"])
	}
}

// TestStudyAToleranceSeparatesConfigurations: studyATol is the largest
// tolerance whose windows around the published increases keep the hybrid
// apart from the other two configurations.
func TestStudyAToleranceSeparatesConfigurations(t *testing.T) {
	h := Published.Increases["hybrid"]
	for _, role := range []string{"pq-sig", "pq-kem"} {
		o := Published.Increases[role]
		if !(h.IncreaseMs*(1-studyATol) > o.IncreaseMs*(1+studyATol)) || !(h.IncreasePct*(1-studyATol) > o.IncreasePct*(1+studyATol)) {
			t.Errorf("the hybrid's window overlaps %s's at ±%.0f %%", role, 100*studyATol)
		}
	}
}

// TestPublishedPairsDisagree: the baseline that ML-DSA-87's published pair
// implies (3.86-3.89 ms) does not overlap what ML-KEM-1024's and the
// hybrid's imply (3.95-3.98 ms), even allowing for rounding.
func TestPublishedPairsDisagree(t *testing.T) {
	sLo, sHi := ImpliedBaseline(Published.Increases["pq-sig"])
	if math.Abs(sLo-3.86) > 0.005 || math.Abs(sHi-3.89) > 0.005 {
		t.Errorf("ML-DSA-87 implies %.3f-%.3f ms, want 3.86-3.89", sLo, sHi)
	}
	for _, role := range []string{"pq-kem", "hybrid"} {
		lo, hi := ImpliedBaseline(Published.Increases[role])
		if lo < 3.945 || hi > 3.985 || !(lo > sHi) {
			t.Errorf("%s implies %.3f-%.3f ms: want within 3.95-3.98 and above ML-DSA-87's %.3f", role, lo, hi, sHi)
		}
	}
}
