package claims

import (
	"os"
	"strings"
	"testing"
)

// TestLabel holds Label to RuleFile's table, bad input included: an
// alternative that is not measurable is left out of n, and a stated
// verdict that is not assessable or not measurable gives no label
// whatever the alternatives say.
func TestLabel(t *testing.T) {
	R, N, M, A := Reproduced, NotReproduced, NotMeasurable, NotAssessable
	for _, tc := range []struct {
		name   string
		stated Verdict
		alts   []Verdict
		k, n   int
		label  string
	}{
		{"no alternative", R, nil, 1, 1, Robust},
		{"empty alternatives", R, []Verdict{}, 1, 1, Robust},
		{"holds everywhere", R, []Verdict{R, R}, 3, 3, Robust},
		{"fails in one", R, []Verdict{R, N, R}, 3, 4, Fragile},
		{"fails in every alternative", R, []Verdict{N, N}, 1, 3, Fragile},
		{"first rule's direction only counts as failing", R, []Verdict{DirectionOnly}, 1, 2, Fragile},
		{"an unmeasurable alternative is left out of n", R, []Verdict{R, M}, 2, 2, Robust},
		{"only unmeasurable alternatives: no alternative", R, []Verdict{M, M}, 1, 1, Robust},
		{"an alternative not assessable does not hold", R, []Verdict{A}, 1, 2, Fragile},
		{"fails as stated", N, []Verdict{R, R}, 2, 3, Fails},
		{"fails as stated, no alternative", N, nil, 0, 1, Fails},
		{"direction only as stated fails", DirectionOnly, []Verdict{R}, 1, 2, Fails},
		{"calibrated", A, []Verdict{R}, 1, 2, NotJudged},
		{"not measurable", M, nil, 0, 1, NotJudged},
		{"not measurable as stated, reproduced elsewhere", M, []Verdict{R, R}, 2, 3, NotJudged},
	} {
		k, n, label := Label(tc.stated, tc.alts)
		if k != tc.k || n != tc.n || label != tc.label {
			t.Errorf("%s: Label = %d of %d, %s; want %d of %d, %s", tc.name, k, n, label, tc.k, tc.n, tc.label)
		}
	}
}

// TestCurveSummary: a curve with nothing varied says "1 of 1, no
// alternative" (or 0 of 1 when it fails); a claim not judged names its
// stated verdict, never "0 of 1", which would read as a failure.
func TestCurveSummary(t *testing.T) {
	for _, tc := range []struct {
		c    Curve
		want string
	}{
		{Curve{Stated: Reproduced, K: 1, N: 1, Label: Robust}, "1 of 1, no alternative"},
		{Curve{Stated: NotReproduced, K: 0, N: 1, Label: Fails}, "0 of 1, no alternative"},
		{Curve{Stated: Reproduced, K: 13, N: 20, Label: Fragile}, "holds in 13 of 20"},
		{Curve{Stated: NotReproduced, K: 2, N: 3, Label: Fails}, "holds in 2 of 3"},
		{Curve{Stated: NotMeasurable, K: 0, N: 1, Label: NotJudged}, "stated: not measurable here"},
		{Curve{Stated: NotAssessable, K: 1, N: 2, Label: NotJudged}, "stated: not assessable (calibrated)"},
	} {
		if got := tc.c.Summary(); got != tc.want {
			t.Errorf("%s %d of %d: Summary = %q, want %q", tc.c.Label, tc.c.K, tc.c.N, got, tc.want)
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
