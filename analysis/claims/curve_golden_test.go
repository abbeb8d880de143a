package claims

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

var update = flag.Bool("update", false, "rewrite testdata/curve.golden.json and history.txt from git")

// curveFixture is a two-study design whose curves cover every label and
// every bad input RuleFile names: an alternative not recorded, one that
// lacks what a claim reads (null), a claim with no alternative, a calibrated
// claim, a study without results and a derived claim (no curve).
func curveFixture() (map[string][]byte, map[string]string, []Claim, map[string]Alternatives, []FirstRule) {
	type res struct {
		X, P, C float64
		Q       *float64
	}
	get := func(r *Results) (*res, Outcome, bool) {
		v, err := Of[res](r, "t")
		if err != nil {
			return nil, Unmeasurable(err), false
		}
		return v, Outcome{}, true
	}
	magnitude := func(field func(*res) float64, published, tol float64) func(*Results) Outcome {
		return func(r *Results) Outcome {
			v, o, ok := get(r)
			if !ok {
				return o
			}
			return JudgeMagnitude(field(v), published, tol, Times)
		}
	}
	significant := func(r *Results) Outcome {
		v, o, ok := get(r)
		if !ok {
			return o
		}
		o = Outcome{Ours: "p = " + PValue(v.P), Verdict: Reproduced}
		if v.P >= Alpha {
			o.Verdict, o.Reason = NotReproduced, "not significant"
		}
		return o
	}
	onlyStated := func(r *Results) Outcome {
		v, o, ok := get(r)
		if !ok {
			return o
		}
		if v.Q == nil {
			return Unmeasurable(Missing("t", "Q", "this specification does not record it"))
		}
		return JudgeMagnitude(*v.Q, 3, 0.1, Times)
	}
	fromU := func(r *Results) Outcome {
		if _, err := Of[struct{ Y float64 }](r, "u"); err != nil {
			return Unmeasurable(err)
		}
		return Outcome{Ours: "as published", Verdict: Reproduced}
	}
	x := func(v *res) float64 { return v.X }
	c := func(v *res) float64 { return v.C }
	cat := []Claim{
		{ID: "T1", Study: "t", Measures: "p", Eval: significant},
		{ID: "T2", Study: "t", Measures: "x", Eval: magnitude(x, 1, 0.1)},
		{ID: "T2b", Study: "t", Measures: "x", DerivedFrom: []string{"T2"}, Eval: magnitude(x, 1, 0.1)},
		{ID: "T3", Study: "t", Measures: "c", Eval: magnitude(c, 1, 0.1)},
		{ID: "T4", Study: "t", Measures: "c'", Calibrated: "chosen from the published value", Eval: magnitude(c, 2, 0.1)},
		{ID: "T5", Study: "t", Measures: "q", Eval: onlyStated},
		{ID: "U1", Study: "u", Measures: "y", Eval: fromU},
		{ID: "V1", Study: "v", Measures: "z", Eval: func(r *Results) Outcome {
			_, err := Of[struct{}](r, "v")
			return Unmeasurable(err)
		}},
	}
	files := map[string][]byte{
		"t": []byte(`{"X": 1.05, "P": 0.01, "C": 2, "Q": 3.1}`),
		"u": []byte(`{"Y": 1}`),
	}
	missing := map[string]string{"v": "no pinned run of study v"}
	alts := map[string]Alternatives{
		"t": {Alternatives: []Alternative{
			{Kind: KindCell, Name: "cell b", Results: []byte(`{"X": 1.02, "P": 0.02, "C": 2.1, "Q": null}`)},
			{Kind: KindThs, Name: "SYN -> client Finished", Results: []byte(`{"X": 1.08, "P": 0.03, "C": 1.9, "Q": null}`)},
			{Kind: KindThs, Name: "SYN -> FIN", Missing: "the records carry no FIN timestamp"},
			{Kind: KindRun, Name: "another host's run", Results: []byte(`{"X": 1.5, "P": 0.04, "C": 1.05, "Q": null}`)},
		}},
		"u": {Unavailable: []string{"cell: the design has one cell"}},
	}
	firsts := []FirstRule{{ID: "T2", Commit: "0123456789abcdef0123456789abcdef01234567", Text: "within 50 %", Eval: magnitude(x, 1, 0.5)}}
	return files, missing, cat, alts, firsts
}

// TestCurvesGolden holds the curve of curveFixture, the table's robust?
// cell of each claim and the paper's sentence to
// testdata/curve.golden.json (rewrite it with -update).
func TestCurvesGolden(t *testing.T) {
	rep, err := Curves(curveFixture())
	if err != nil {
		t.Fatal(err)
	}
	cells := map[string]string{}
	for _, c := range rep.Curves {
		cells[c.ID] = fmt.Sprintf("%s, %s", c.Label, c.Summary())
	}
	got, err := json.MarshalIndent(struct {
		Report   CurveReport       `json:"report"`
		Cells    map[string]string `json:"cells"`
		Sentence string            `json:"sentence"`
	}{rep, cells, CurveSentence(rep)}, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	got = append(got, '\n')
	path := filepath.Join("testdata", "curve.golden.json")
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (create it with -update)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("the curve differs from %s (rewrite it with -update if the change is meant):\n%s", path, got)
	}
}
