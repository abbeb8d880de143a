package claims

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"pqrepro/internal/jsonnum"
	"pqrepro/internal/repro"
)

func byID(rep Report) map[string]Evaluated {
	m := map[string]Evaluated{}
	for _, c := range rep.Claims {
		m[c.ID] = c
	}
	return m
}

func TestPanickingClaimIsNotMeasurable(t *testing.T) {
	r, _ := NewResults(nil, nil)
	out := Evaluate(r, []Claim{{ID: "X", Eval: func(*Results) Outcome { panic("bug") }}})
	if out[0].Verdict != NotMeasurable || !strings.Contains(out[0].Reason, "bug") {
		t.Errorf("%+v", out[0])
	}
}

// fakeResults is a study's results type for the engine's tests.
type fakeResults struct {
	Value jsonnum.Num `json:"value"`
	Run   string      `json:"run"`
}

// fakeCatalogue is a study "x" whose one claim says value = 42, and a
// claim derived from it.
func fakeCatalogue() Catalogue {
	rule := On("x", func(r *fakeResults) Outcome {
		v, err := Need("x", Field{Path: "value", Value: float64(r.Value)})
		if err != nil {
			return Unmeasurable(err)
		}
		return JudgeMagnitude(v[0], 42, 0.1, Ms)
	})
	return Catalogue{Study: "x", Package: "analysis/x", Numbers: map[string]string{"ClaimsXTolPct": "10"},
		Claims: []Claim{
			{ID: "X1", Study: "x", Published: "42 ms", Agreement: "within ±10 %", Rationale: "r", Eval: rule},
			{ID: "X2", Study: "x", Published: "42 ms", Agreement: "within ±10 %", Rationale: "r", Eval: rule, DerivedFrom: []string{"X1"}},
		}}
}

func TestOfAndNeed(t *testing.T) {
	r, err := NewResults(map[string][]byte{"x": []byte(`{"value": 41, "run": "20261201T090000Z-quick"}`),
		"null": []byte(`{"value": null, "run": ""}`), "renamed": []byte(`{"valeur": 41, "run": ""}`)}, map[string]string{"y": "no dataset pinned: run `mage y:run`"})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		study, want string
		verdict     Verdict
	}{
		{"x", "", Reproduced},
		{"null", `results/null.json has no value (the value is null`, NotMeasurable},
		{"renamed", `results/renamed.json: field valeur: unknown field`, NotMeasurable},
		{"y", "mage y:run", NotMeasurable},
		{"z", "no results for study z", NotMeasurable},
	} {
		c := fakeCatalogue().Claims[0]
		c.Eval = On(tc.study, func(r *fakeResults) Outcome {
			v, err := Need(tc.study, Field{Path: "value", Value: float64(r.Value)})
			if err != nil {
				return Unmeasurable(err)
			}
			return JudgeMagnitude(v[0], 42, 0.1, Ms)
		})
		o := Evaluate(r, []Claim{c})[0]
		if o.Verdict != tc.verdict || !strings.Contains(o.Reason, tc.want) {
			t.Errorf("%s: %s (%s), want %s (%q)", tc.study, o.Verdict, o.Reason, tc.verdict, tc.want)
		}
	}
	// Read as one type, a study's results are not another's.
	if _, err := Of[fakeResults](r, "x"); err != nil {
		t.Fatal(err)
	}
	if _, err := Of[struct{ Value float64 }](r, "x"); err == nil || !strings.Contains(err.Error(), "wrong study") {
		t.Errorf("second type: %v", err)
	}
	if _, err := NewResults(map[string][]byte{"x": []byte("{")}, nil); err == nil {
		t.Error("corrupt results accepted")
	}
	// The file that does not decode is not a property of its study: Err
	// names it, and RunTimed fails on it.
	if err := r.Err(); err == nil || !strings.Contains(err.Error(), "results/renamed.json: field valeur: unknown field") {
		t.Errorf("Err = %v, want the renamed file's field", err)
	}
	if _, err := RunTimed(r, []Claim{{ID: "R1", Eval: On("renamed", func(*fakeResults) Outcome { return Outcome{} })}}, nil); err == nil {
		t.Error("RunTimed judged results that do not decode")
	}
}

// stageTree is a tree for the claims stage of fakeCatalogue, with
// results the content of results/x.json.
func stageTree(t *testing.T, results []byte) string {
	t.Helper()
	root := t.TempDir()
	for name, content := range map[string]string{
		"go.mod":               "module pqrepro\n",
		"analysis/claims/x.go": "package claims\n",
		"analysis/x/x.go":      "package x\n",
		"results/x.json":       string(results),
		RuleFile:               "# rule\n",
		HistoryFile:            "first\tX1\tunknown\tunknown\tnot read\n",
		PreregistrationFile:    "b324b49942fa2187e9ea974fdb2394b90285d70b 2026-12-01T05:09:46Z\n",
		TimingFile: "data x 20261201T090000Z-quick 2026-12-01T09:00:00Z\n" +
			"rule X1 b324b49942fa2187e9ea974fdb2394b90285d70b 2026-12-01T05:09:46Z\n" +
			"rule X2 b324b49942fa2187e9ea974fdb2394b90285d70b 2026-12-01T05:09:46Z\n",
	} {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// TestMalformedResultsFailTheStage: a results file, a view of it or an
// alternative that does not fit its study's type stops the claims stage
// with an error naming the file and the field, where it used to publish
// the study's claims as not measurable; what the last good build wrote
// is kept.
func TestMalformedResultsFailTheStage(t *testing.T) {
	cat := fakeCatalogue()
	bad := []byte(`{"value": "41.5", "run": "20261201T090000Z-quick"}`)
	good := []byte(`{"value": 41.5, "run": "20261201T090000Z-quick"}`)
	const want = `results/x.json: field value: want a number or null, got string "41.5"`

	r, err := NewResults(map[string][]byte{"x": bad}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := RunTimed(r, cat.Claims, nil); err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("RunTimed: %v, want %q", err, want)
	}
	view := View{Name: "v", Of: func([]byte) ([]byte, bool, error) { return bad, true, nil }}
	if _, err := evalView("x", view, map[string][]byte{"x": good}, nil, cat.Claims); err == nil || !strings.Contains(err.Error(), `view "v" of study x: `+want) {
		t.Errorf("a malformed view: %v", err)
	}
	alts := map[string]Alternatives{"x": {Alternatives: []Alternative{{Kind: KindCell, Name: "cell b", Results: bad}}}}
	if _, err := Curves(map[string][]byte{"x": good}, nil, cat.Claims, alts, nil); err == nil || !strings.Contains(err.Error(), `alternative cell "cell b" of study x`) || !strings.Contains(err.Error(), want) {
		t.Errorf("a malformed alternative: %v", err)
	}
	if _, err := Curves(map[string][]byte{"x": bad}, nil, cat.Claims, nil, nil); err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("Curves on malformed results: %v", err)
	}

	root := stageTree(t, good)
	e := &repro.Engine{Root: root, Stages: []*repro.Stage{Stage([]StudyClaims{{Name: "x", Label: "X", Results: "results/x.json", Catalogue: cat}})}}
	if _, err := e.Build(context.Background()); err != nil {
		t.Fatal(err)
	}
	sealed, _ := os.ReadFile(filepath.Join(root, JSONFile))
	if err := os.WriteFile(filepath.Join(root, "results", "x.json"), bad, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Build(context.Background()); err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("the stage on malformed results: %v, want %q", err, want)
	}
	if now, _ := os.ReadFile(filepath.Join(root, JSONFile)); string(now) != string(sealed) {
		t.Errorf("%s was rewritten by the failed build", JSONFile)
	}
	alt := `{"alternatives": [{"kind": "cell", "name": "b", "results": {}}], "unavailable": [], "extra": 1}`
	if err := os.WriteFile(filepath.Join(root, "results", "x.json"), good, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "results", "x-alternatives.json"), []byte(alt), 0o644); err != nil {
		t.Fatal(err)
	}
	e.Stages = []*repro.Stage{Stage([]StudyClaims{{Name: "x", Label: "X", Results: "results/x.json", Catalogue: cat, Alternatives: "results/x-alternatives.json"}})}
	if _, err := e.Build(context.Background()); err == nil || !strings.Contains(err.Error(), "results/x-alternatives.json: field extra: unknown field") {
		t.Errorf("the stage on a malformed alternatives file: %v", err)
	}
}

func TestStageThroughEngine(t *testing.T) {
	root := stageTree(t, []byte(`{"value": 41.5, "run": "20261201T090000Z-quick"}`))
	st := Stage([]StudyClaims{
		{Name: "x", Label: "X", Results: "results/x.json", Catalogue: fakeCatalogue()},
		{Name: "y", Label: "Y", Missing: "no dataset"},
	})
	if !slices.Equal(st.Code, []string{"analysis/claims", "analysis/x"}) {
		t.Errorf("code = %v, want the engine and the package that states the claims", st.Code)
	}
	e := &repro.Engine{Root: root, Stages: []*repro.Stage{st}}
	if _, err := e.Build(context.Background()); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(filepath.Join(root, JSONFile))
	var rep Report
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Counts[Reproduced] != 1 || rep.Derived != 1 || len(rep.Runs) != 1 || !rep.Runs[0].AfterRules {
		t.Errorf("counts = %v, derived %d, runs %+v", rep.Counts, rep.Derived, rep.Runs)
	}
	tex, _ := os.ReadFile(filepath.Join(root, LatexFile))
	nums, _ := os.ReadFile(filepath.Join(root, NumbersFile))
	tex = append(tex, nums...)
	if rep.Preregistered[Reproduced] != 1 || rep.Claims[0].Timing == nil || !rep.Claims[0].Timing.Preregistered {
		t.Errorf("timing: %+v %+v", rep.Preregistered, rep.Claims[0].Timing)
	}
	for _, want := range []string{`\newcommand{\ClaimsReproduced}{1}`, `\newcommand{\ClaimsDerived}{1}`, `\newcommand{\ClaimsXTolPct}{10}`,
		`\newcommand{\ClaimsPreregistered}{1}`, "pre-reg.",
		"from X1", `\label{tab:claims-X}`, "X1 &", "41.500 ms"} {
		if !strings.Contains(string(tex), want) {
			t.Errorf("claims.tex lacks %q", want)
		}
	}
	if text := Text(rep, map[string]string{"x": "X"}); !strings.Contains(text, "1 is reproduced") {
		t.Errorf("text table:\n%s", text)
	}
}

// TestStageKnowsNoStudy: labels and the catalogue come from the caller;
// a study the stage has never heard of gets its tables.
func TestStageKnowsNoStudy(t *testing.T) {
	rep := Report{Claims: []Evaluated{{ID: "D1", Study: "quux", Published: "1 ms", Verdict: NotMeasurable}}}
	tex, err := Latex(rep, map[string]string{"quux": "D"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(tex, `\label{tab:claims-D}`) || !strings.Contains(tex, "Study D:") {
		t.Errorf("Latex with label D:\n%s", tex)
	}
	if text := Text(rep, nil); !regexp.MustCompile(`D1 +quux`).MatchString(text) {
		t.Errorf("Text without labels shows the name:\n%s", text)
	}
	st := Stage([]StudyClaims{{Name: "quux", Label: "D", Missing: "no run", Catalogue: Catalogue{Study: "quux", Package: "analysis/quux", Claims: []Claim{{ID: "D1"}, {ID: "D2"}}}}})
	if !slices.Equal(st.Code, []string{"analysis/claims", "analysis/quux"}) || st.Params["label.quux"] != "D" || st.Params["missing.quux"] != "no run" || st.Params["claims.quux"] != "D1 D2" {
		t.Errorf("stage code %v, params %v", st.Code, st.Params)
	}
}

func TestNumbersRefusesBadMacros(t *testing.T) {
	for _, nums := range []map[string]string{{"Claims1": "x"}, {"ClaimsTotal": "3"}} {
		if _, err := Numbers(Report{}, nil, Catalogue{Study: "x", Numbers: nums}); err == nil {
			t.Errorf("%v accepted", nums)
		}
	}
}

// TestCalibratedAndDerivedAreNotCounted: a calibrated claim is not
// assessable whatever its numbers, a derived one is shown, not counted.
func TestCalibratedAndDerivedAreNotCounted(t *testing.T) {
	r, _ := NewResults(nil, nil)
	ok := func(*Results) Outcome { return Outcome{Ours: "1", Verdict: Reproduced} }
	rep := Run(r, []Claim{
		{ID: "X1", Eval: ok},
		{ID: "X2", Eval: ok, DerivedFrom: []string{"X1"}},
		{ID: "X3", Eval: ok, Calibrated: "chosen from it"},
		{ID: "X4", Eval: func(*Results) Outcome { return Outcome{Verdict: NotMeasurable, Reason: "no data"} }, Calibrated: "chosen"},
	})
	m := byID(rep)
	if m["X3"].Verdict != NotAssessable || !strings.Contains(m["X3"].Reason, "chosen from it") || m["X3"].Ours != "1" {
		t.Errorf("calibrated: %+v", m["X3"])
	}
	if m["X4"].Verdict != NotMeasurable {
		t.Errorf("calibrated without data: %s, want not measurable", m["X4"].Verdict)
	}
	if rep.Counts[Reproduced] != 1 || rep.Counts[NotAssessable] != 1 || rep.Derived != 1 || rep.Independent() != 3 {
		t.Errorf("counts %v, derived %d", rep.Counts, rep.Derived)
	}
	if nums, err := Numbers(rep, nil); err != nil || !strings.Contains(nums, `\newcommand{\ClaimsTotal}{3}`) {
		t.Errorf("numbers: %v\n%s", err, nums)
	}
}

func TestPreregistration(t *testing.T) {
	r, err := ParsePreregistration([]byte("# c\nb324b49942fa2187e9ea974fdb2394b90285d70b 2026-12-01T05:09:46Z\n"))
	if err != nil || r.Commit[:7] != "b324b49" || r.Date.Hour() != 5 {
		t.Fatalf("%+v %v", r, err)
	}
	am, err := ParsePreregistration([]byte("b324b49942fa2187e9ea974fdb2394b90285d70b 2026-12-01T05:09:46Z\namend 6cb7dbf2fd529d56b0c69be3f7a74fe3fcf18b77 wording only\n"))
	if err != nil || len(am.Amendments) != 1 || am.Amendments[0].Reason != "wording only" {
		t.Errorf("amendment: %+v %v", am, err)
	}
	for _, bad := range []string{"", "# only\n", "b324 2026-12-01T05:09:46Z", "b324b49942fa2187e9ea974fdb2394b90285d70b yesterday",
		"b324b49942fa2187e9ea974fdb2394b90285d70b 2026-12-01T05:09:46Z\namend 6cb7dbf2fd529d56b0c69be3f7a74fe3fcf18b77\n",
		"b324b49942fa2187e9ea974fdb2394b90285d70b 2026-12-01T05:09:46Z\n6cb7dbf2fd529d56b0c69be3f7a74fe3fcf18b77 2026-12-01T06:31:42Z\n",
		"amend 6cb7dbf2fd529d56b0c69be3f7a74fe3fcf18b77 why\n"} {
		if _, err := ParsePreregistration([]byte(bad)); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
	before, _ := judgedRun("tls", []byte(`{"input":{"path":"data/tls/20261130T124752Z-full/records.csv.gz"}}`), r)
	after, _ := judgedRun("net", []byte(`{"run":"20261201T090000Z-quick"}`), r)
	if before.AfterRules || !after.AfterRules || before.Run != "20261130T124752Z-full" {
		t.Errorf("before %+v, after %+v", before, after)
	}
	if _, err := judgedRun("x", []byte(`{}`), r); err == nil {
		t.Error("results without a run accepted")
	}
}

// TestPreregistrationMatchesHistory: every commit that touched the rules'
// files since the recorded rules commit is a recorded amendment, so a
// rule edit cannot slip in under the old date (which decides which runs
// the paper calls pre-registered).
func TestPreregistrationMatchesHistory(t *testing.T) {
	b, err := os.ReadFile("preregistration.txt")
	if err != nil {
		t.Fatal(err)
	}
	rules, err := ParsePreregistration(b)
	if err != nil {
		t.Fatal(err)
	}
	git := func(args ...string) *exec.Cmd {
		c := exec.Command("git", args...)
		c.Dir = filepath.Join("..", "..")
		return c
	}
	if err := git("cat-file", "-e", rules.Commit+"^{commit}").Run(); err != nil {
		t.Skipf("not a git checkout with the rules commit %s (%v): cannot compare the record with the history", rules.Commit[:12], err)
	}
	if dirty, _ := git(append([]string{"status", "--porcelain", "--"}, RulesFiles...)...).Output(); len(dirty) > 0 {
		t.Skip("the rules have uncommitted changes: commit them, then record the commit in preregistration.txt")
	}
	if err := git("merge-base", "--is-ancestor", rules.Commit, "HEAD").Run(); err != nil {
		t.Fatalf("the rules commit %s is not in this history: %v", rules.Commit, err)
	}
	first, err := git(append([]string{"log", "-1", "--format=%H", rules.Commit, "--"}, RulesFiles...)...).Output()
	if err != nil || strings.TrimSpace(string(first)) != rules.Commit {
		t.Errorf("the rules commit %s did not change the rules' files (last change at or before it: %q)", rules.Commit, strings.TrimSpace(string(first)))
	}
	out, err := git(append([]string{"log", "--format=%H", rules.Commit + "..HEAD", "--"}, RulesFiles...)...).Output()
	if err != nil {
		t.Fatal(err)
	}
	amended := map[string]bool{}
	for _, a := range rules.Amendments {
		amended[a.Commit] = true
	}
	for _, c := range strings.Fields(string(out)) {
		if !amended[c] {
			t.Errorf("commit %s changed the rules' files after the recorded rules commit %s: record it as \"amend %s <why no rule changed>\", or, if a rule changed, make it the rules commit (the runs recorded before it are then not pre-registered)", c[:12], rules.Commit[:12], c)
		}
	}
}

// TestRulesFilesExist: every listed file that is not a registered
// location of the past is in the tree, so that a rules file renamed
// again is not silently left out of the history check.
func TestRulesFilesExist(t *testing.T) {
	for _, f := range RulesFiles {
		if f == "analysis/claims/catalogue.go" || f == "analysis/claims/catalogue_c.go" || f == "analysis/netstudy/ttlbclaims.go" {
			continue
		}
		if _, err := os.Stat(filepath.Join("..", "..", filepath.FromSlash(f))); err != nil {
			t.Errorf("rules file %s: %v", f, err)
		}
	}
}

// TestViews: a view's results re-evaluate the study's claims without
// changing a verdict; a verdict that would change is counted, results
// without the view or no results give none, a failing view is an error,
// and the view's macros are 0 and 0 when it has nothing to say.
func TestViews(t *testing.T) {
	cat := fakeCatalogue()
	v := View{Name: "far", Macro: "ClaimsXFar", Of: func(b []byte) ([]byte, bool, error) {
		if strings.Contains(string(b), "noview") {
			return nil, false, nil
		}
		if strings.Contains(string(b), "broken") {
			return nil, false, errors.New("broken view")
		}
		return []byte(`{"value": 60, "run": ""}`), true, nil
	}}
	files := map[string][]byte{"x": []byte(`{"value": 41.5, "run": ""}`)}
	rb, err := evalView("x", v, files, nil, cat.Claims)
	if err != nil || rb == nil {
		t.Fatalf("view: %v, %v", rb, err)
	}
	if len(rb.Claims) != 2 || rb.Claims[0].Verdict != Reproduced || rb.Claims[0].ViewVerdict == Reproduced || rb.Changed != 2 {
		t.Errorf("the view's re-evaluation: %+v", rb)
	}
	for name, f := range map[string]map[string][]byte{"no view": {"x": []byte(`{"value": 41.5, "noview": 1}`)}, "no results": {}} {
		if rb, err := evalView("x", v, f, nil, cat.Claims); rb != nil || err != nil {
			t.Errorf("%s: %+v, %v", name, rb, err)
		}
	}
	if _, err := evalView("x", v, map[string][]byte{"x": []byte(`{"broken": 1}`)}, nil, cat.Claims); err == nil || !strings.Contains(err.Error(), "broken view") {
		t.Errorf("a failing view: %v", err)
	}
	n, err := Numbers(Report{Robustness: []Robustness{*rb}}, []View{v})
	if err != nil || !strings.Contains(n, `\newcommand{\ClaimsXFarChanged}{2}`) || !strings.Contains(n, `\newcommand{\ClaimsXFarChecked}{2}`) {
		t.Errorf("numbers (%v):\n%s", err, n)
	}
	if n, _ := Numbers(Report{}, []View{v}); !strings.Contains(n, `\newcommand{\ClaimsXFarChecked}{0}`) {
		t.Errorf("numbers without the view's results:\n%s", n)
	}
}

// TestOneMeasuredQuantity: two counted claims measuring one quantity, a
// counted claim naming none, and a derived claim naming one are each
// reported; derived claims and observations are not counted.
func TestOneMeasuredQuantity(t *testing.T) {
	ok := func(*Results) Outcome { return Outcome{Ours: "1", Verdict: Reproduced} }
	good := []Claim{{ID: "X1", Measures: "q1", Eval: ok}, {ID: "X2", Measures: "q2", Eval: ok},
		{ID: "X3", DerivedFrom: []string{"X1"}, Eval: ok}, {ID: "X4", Observation: "ours", Eval: ok}}
	if errs := CheckOneQuantity(good); len(errs) != 0 {
		t.Errorf("good catalogue: %v", errs)
	}
	for _, bad := range [][]Claim{
		{{ID: "X1", Measures: "q"}, {ID: "X2", Measures: "q"}},
		{{ID: "X1"}},
		{{ID: "X1", Measures: "q"}, {ID: "X2", Measures: "q2", DerivedFrom: []string{"X1"}}},
	} {
		if errs := CheckOneQuantity(bad); len(errs) != 1 {
			t.Errorf("%+v: %v, want one error", bad, errs)
		}
	}
	r, _ := NewResults(nil, nil)
	rep := Run(r, good)
	if rep.Counts[Reproduced] != 2 || rep.Derived != 1 || rep.Observations != 1 || rep.Independent() != 2 {
		t.Errorf("counts %v, derived %d, observations %d", rep.Counts, rep.Derived, rep.Observations)
	}
}

// TestJudgeVocabulary: a miss with the published sign is not reproduced,
// with the direction recorded as published; a reversed one is opposite.
func TestJudgeVocabulary(t *testing.T) {
	f := func(x float64) string { return "x" }
	for _, tc := range []struct {
		ours float64
		v    Verdict
		d    Direction
	}{{10, Reproduced, AsPublished}, {5, NotReproduced, AsPublished}, {-10, NotReproduced, Opposite}, {0, NotReproduced, Opposite}} {
		if o := JudgeValue(tc.ours, 10, 0.25, f); o.Verdict != tc.v || o.Direction != tc.d {
			t.Errorf("JudgeValue(%g): %s %s, want %s %s", tc.ours, o.Verdict, o.Direction, tc.v, tc.d)
		}
	}
	if o := JudgeRange(40, 50, 56, 83, 30, "x", "outside", "none"); o.Verdict != NotReproduced || o.Direction != AsPublished || o.Reason != "outside" {
		t.Errorf("range miss with the effect: %+v", o)
	}
}

// TestCountSentence: the counts in words, with "is" for one and "none"
// for a verdict without claims (never "1 are" or "0 are").
func TestCountSentence(t *testing.T) {
	got := CountSentence(map[Verdict]int{Reproduced: 12, NotReproduced: 1, NotAssessable: 5})
	want := "Of 18 counted claims, 12 are reproduced, 1 is not reproduced and 5 are not assessable (calibrated); none is not measurable here."
	if got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
	rep := Report{Preregistered: map[Verdict]int{Reproduced: 1}, PostHoc: map[Verdict]int{Reproduced: 3, NotReproduced: 2}}
	if got := TimingSentence(rep); got != "The rule of 1 of them predates the data that judge them (1 reproduced); the other 5 were written after data of their study had been seen (3 reproduced)." {
		t.Errorf("timing: %q", got)
	}
}

// TestTiming: the table parses, a claim's rule older than its study's
// data is pre-registered, a missing claim or study is an error, and
// malformed lines are refused.
func TestTiming(t *testing.T) {
	tb, err := ParseTiming([]byte("# c\ndata x 20261130T114655Z-quick 2026-11-30T11:46:55Z\n" +
		"rule X1 4683144a9f5d89667d58bd7987e5026ee89fed20 2026-11-30T11:40:00Z\n" +
		"rule X2 b324b49942fa2187e9ea974fdb2394b90285d70b 2026-12-01T05:09:46Z\n"))
	if err != nil {
		t.Fatal(err)
	}
	if c, err := tb.Of("X1", "x"); err != nil || !c.Preregistered {
		t.Errorf("X1: %+v %v", c, err)
	}
	if c, err := tb.Of("X2", "x"); err != nil || c.Preregistered {
		t.Errorf("X2: %+v %v", c, err)
	}
	if _, err := tb.Of("X3", "x"); err == nil {
		t.Error("a claim without a rule line accepted")
	}
	if _, err := tb.Of("X1", "y"); err == nil {
		t.Error("a study without a data line accepted")
	}
	for _, bad := range []string{"rule X1 abc 2026-11-30T11:40:00Z", "data x y", "rule X1 4683144a9f5d89667d58bd7987e5026ee89fed20 today",
		"data x a 2026-11-30T11:40:00Z\ndata x b 2026-11-30T11:40:00Z", "what X1 4683144a9f5d89667d58bd7987e5026ee89fed20 2026-11-30T11:40:00Z"} {
		if _, err := ParseTiming([]byte(bad)); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

// TestTimingMatchesHistory: every line of timing.txt agrees with git's
// history: a study's data line names the earlier of its first data
// commit and its earliest committed run, with that date; a rule line
// names a commit of this history, with its committer date, that touched
// the rules' files.
func TestTimingMatchesHistory(t *testing.T) {
	b, err := os.ReadFile("timing.txt")
	if err != nil {
		t.Fatal(err)
	}
	tm, err := ParseTiming(b)
	if err != nil {
		t.Fatal(err)
	}
	git := func(args ...string) (string, error) {
		c := exec.Command("git", args...)
		c.Dir = filepath.Join("..", "..")
		out, err := c.Output()
		return strings.TrimSpace(string(out)), err
	}
	if shallow, err := git("rev-parse", "--is-shallow-repository"); err != nil || shallow != "false" {
		t.Skipf("not a complete git history (shallow: %q, %v): the table cannot be checked against it; it stays as committed", shallow, err)
	}
	for study, d := range tm.Data {
		first, err := git("log", "--diff-filter=A", "--reverse", "--format=%H %cI", "--", "data/"+study)
		if err != nil || first == "" {
			t.Errorf("data %s: no commit added data/%s (%v)", study, study, err)
			continue
		}
		commit, date, _ := strings.Cut(strings.SplitN(first, "\n", 2)[0], " ")
		ev, evDate := commit, date
		runs, _ := git("ls-tree", "--name-only", "HEAD", "data/"+study+"/")
		for _, r := range strings.Fields(runs) {
			m := runIDRe.FindStringSubmatch(filepath.Base(r))
			if m == nil {
				continue
			}
			st, err := time.Parse("20060102T150405Z", m[1])
			if err != nil {
				continue
			}
			cd, _ := time.Parse(time.RFC3339, evDate)
			if st.Before(cd) {
				ev, evDate = m[0], st.Format(time.RFC3339)
			}
		}
		want, _ := time.Parse(time.RFC3339, evDate)
		if d.Evidence != ev || !d.Date.Equal(want) {
			t.Errorf("data %s: recorded %s %s, the history says %s %s", study, d.Evidence, d.Date.Format(time.RFC3339), ev, evDate)
		}
	}
	for id, r := range tm.Rules {
		date, err := git("show", "-s", "--format=%cI", r.Commit)
		if err != nil {
			t.Errorf("rule %s: commit %s not in this history: %v", id, r.Commit[:12], err)
			continue
		}
		if d, _ := time.Parse(time.RFC3339, date); !d.Equal(r.Date) {
			t.Errorf("rule %s: commit %s is dated %s, recorded %s", id, r.Commit[:12], date, r.Date.Format(time.RFC3339))
		}
		if _, err := git("merge-base", "--is-ancestor", r.Commit, "HEAD"); err != nil {
			t.Errorf("rule %s: commit %s is not an ancestor of HEAD", id, r.Commit[:12])
		}
		files, _ := git(append([]string{"show", "--name-only", "--format=", r.Commit, "--"}, RulesFiles...)...)
		if files == "" {
			t.Errorf("rule %s: commit %s touched none of the rules' files", id, r.Commit[:12])
		}
	}
}

// TestPValueFloor: a verdict table prints no p below stats.PFloor, the
// floor of every printed p (issue 31: A7 printed 3.9e-12).
func TestPValueFloor(t *testing.T) {
	for _, tc := range []struct {
		p    float64
		want string
	}{{0.0023, "= 0.0023"}, {5.7e-6, "= 5.7e-06"}, {1e-6, "= 1e-06"}, {3.9e-12, "< 1e-06"}, {0, "< 1e-06"}} {
		if got := PValue(tc.p); got != tc.want {
			t.Errorf("PValue(%g) = %q, want %q", tc.p, got, tc.want)
		}
	}
}
