package claims

import (
	"os"
	"strings"
	"testing"
)

// TestLabel holds Label to RuleFile's table.
func TestLabel(t *testing.T) {
	R, N := Reproduced, NotReproduced
	for _, tc := range []struct {
		name   string
		stated Verdict
		alts   []Verdict
		k, n   int
		label  string
	}{
		{"no alternative", R, nil, 1, 1, Robust},
		{"holds everywhere", R, []Verdict{R, R}, 3, 3, Robust},
		{"fails in one", R, []Verdict{R, N, R}, 3, 4, Fragile},
		{"first rule's direction only counts as failing", R, []Verdict{DirectionOnly}, 1, 2, Fragile},
		{"fails as stated", N, []Verdict{R, R}, 2, 3, Fails},
		{"fails as stated, no alternative", N, nil, 0, 1, Fails},
		{"calibrated", NotAssessable, []Verdict{R}, 1, 2, NotJudged},
		{"not measurable", NotMeasurable, nil, 0, 1, NotJudged},
	} {
		k, n, label := Label(tc.stated, tc.alts)
		if k != tc.k || n != tc.n || label != tc.label {
			t.Errorf("%s: Label = %d of %d, %s; want %d of %d, %s", tc.name, k, n, label, tc.k, tc.n, tc.label)
		}
	}
}

// TestRuleFileStatesLabels checks that the committed rule names every
// label Label gives.
func TestRuleFileStatesLabels(t *testing.T) {
	b, err := os.ReadFile("robustness-rule.txt")
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range []string{Robust, Fragile, Fails, NotJudged, "1 of 1, no alternative"} {
		if !strings.Contains(string(b), l) {
			t.Errorf("%s does not state %q", RuleFile, l)
		}
	}
}

// TestCurvesNoAlternative: a claim with no alternative says "1 of 1, no
// alternative"; an alternative that cannot be computed is left out of n
// with its reason; a first rule is judged on today's results.
func TestCurvesNoAlternative(t *testing.T) {
	val := func(r *Results) float64 {
		v, err := Of[struct{ X float64 }](r, "s")
		if err != nil {
			return -1
		}
		return v.X
	}
	cat := []Claim{
		{ID: "S1", Study: "s", Measures: "x", Eval: func(r *Results) Outcome {
			return JudgeMagnitude(val(r), 1, 0.1, Times)
		}},
	}
	files := map[string][]byte{"s": []byte(`{"X": 1.05}`)}
	rep, err := Curves(files, nil, cat, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := rep.Curves[0].Summary(); got != "1 of 1, no alternative" || rep.Curves[0].Label != Robust || rep.NoAlternative != 1 {
		t.Errorf("no alternative: %q %s %d", got, rep.Curves[0].Label, rep.NoAlternative)
	}
	alts := map[string]Alternatives{"s": {Alternatives: []Alternative{
		{Kind: KindRun, Name: "other", Results: []byte(`{"X": 2}`)},
		{Kind: KindThs, Name: "syn", Missing: "not recorded"},
	}}}
	first := []FirstRule{{ID: "S1", Commit: "abcdef0123", Text: "within 50 %", Eval: func(r *Results) Outcome {
		return JudgeMagnitude(val(r), 1, 0.5, Times)
	}}}
	rep, err = Curves(files, nil, cat, alts, first)
	if err != nil {
		t.Fatal(err)
	}
	c := rep.Curves[0]
	if c.Summary() != "holds in 2 of 3" || c.Label != Fragile || len(c.Left) != 1 || c.Left[0].Reason != "not recorded" {
		t.Errorf("curve = %+v", c)
	}
}
