package claims

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"pqrepro/internal/repro"
)

// tlsResults builds a minimal results/tls.json with the given increases
// (ms, %, Holm p) per role.
func tlsResults(t *testing.T, base float64, inc map[string][3]float64, kwP float64) []byte {
	t.Helper()
	var comps []map[string]any
	for _, role := range []string{"pq-sig", "pq-kem", "hybrid"} {
		v := inc[role]
		delta := 0.9
		if v[0] < 0 {
			delta = -0.9
		}
		comps = append(comps, map[string]any{"role": role, "median_diff_ms": v[0], "median_diff_pct": v[1], "p_holm": v[2],
			"median_baseline_ms": base, "cliff_delta": map[string]any{"delta": delta}})
	}
	b, err := json.Marshal(map[string]any{"families": map[string]any{"paper": map[string]any{
		"comparisons": comps, "kruskal_wallis": map[string]any{"p": kwP, "epsilon2": 0.7}}}})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func byID(rep Report) map[string]Evaluated {
	m := map[string]Evaluated{}
	for _, c := range rep.Claims {
		m[c.ID] = c
	}
	return m
}

func TestStudyAVerdicts(t *testing.T) {
	// As published: everything reproduced.
	r, err := NewResults(map[string][]byte{"tls": tlsResults(t, 3.9, map[string][3]float64{
		"pq-sig": {4.651, 120, 1e-9}, "pq-kem": {5.072, 128, 1e-9}, "hybrid": {9.048, 228, 1e-9}}, 1e-12)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	got := byID(Run(r, studyA()))
	for id, c := range got {
		if c.Verdict != Reproduced {
			t.Errorf("%s with the published values: %s (%s)", id, c.Verdict, c.Reason)
		}
	}
	// Our Go results: larger relative signature cost, small KEM cost.
	r, _ = NewResults(map[string][]byte{"tls": tlsResults(t, 0.45, map[string][3]float64{
		"pq-sig": {1.07, 237, 1e-9}, "pq-kem": {0.08, 18, 0.2}, "hybrid": {1.31, 290, 1e-9}}, 1e-12)}, nil)
	got = byID(Run(r, studyA()))
	// +290 % against +228 % is outside the ±25 % window (A3b was
	// reproduced under the former ±50 %).
	want := map[string]Verdict{
		"A1a": Reproduced, "A1b": DirectionOnly, "A1c": DirectionOnly,
		"A2a": DirectionOnly, "A2b": DirectionOnly, "A3a": Reproduced, "A3b": DirectionOnly,
		"A4": NotReproduced, "A5": Reproduced, "A6": NotReproduced, "A7": Reproduced,
	}
	for id, v := range want {
		if got[id].Verdict != v {
			t.Errorf("%s = %s (%s), want %s", id, got[id].Verdict, got[id].Reason, v)
		}
	}
	// A reversed effect is not reproduced.
	r, _ = NewResults(map[string][]byte{"tls": tlsResults(t, 3.9, map[string][3]float64{
		"pq-sig": {-1, -20, 1e-9}, "pq-kem": {5, 128, 1e-9}, "hybrid": {9, 228, 1e-9}}, 0.5)}, nil)
	got = byID(Run(r, studyA()))
	if got["A1a"].Verdict != NotReproduced || got["A1b"].Verdict != NotReproduced || got["A7"].Verdict != NotReproduced {
		t.Errorf("reversed: A1a %s, A1b %s, A7 %s", got["A1a"].Verdict, got["A1b"].Verdict, got["A7"].Verdict)
	}
}

func TestMissingStudyAndMissingValues(t *testing.T) {
	r, _ := NewResults(map[string][]byte{"tls": []byte(`{"families":{"paper":{"comparisons":[]}}}`)},
		map[string]string{"net": "no dataset pinned for Study B: run `mage net:run`"})
	rep := Run(r, Catalogue())
	for _, c := range rep.Claims {
		if c.Verdict != NotMeasurable {
			t.Errorf("%s: %s, want not measurable", c.ID, c.Verdict)
		}
		if c.Reason == "" {
			t.Errorf("%s: not measurable without a reason", c.ID)
		}
	}
	m := byID(rep)
	if !strings.Contains(m["B1"].Reason, "mage net:run") {
		t.Errorf("B1 reason = %q, want the missing study's reason", m["B1"].Reason)
	}
	if !strings.Contains(m["A1a"].Reason, "no element with role=pq-sig") {
		t.Errorf("A1a reason = %q, want the missing path", m["A1a"].Reason)
	}
	if rep.Counts[NotMeasurable] != rep.Independent() {
		t.Errorf("counts %v", rep.Counts)
	}
}

func TestGet(t *testing.T) {
	r, _ := NewResults(map[string][]byte{"x": []byte(`{"a":{"list":[{"k":"p","v":1.5},{"k":"q","v":null},{"k":"q2","v":"s"}]}}`)}, nil)
	for _, tc := range []struct {
		path string
		want float64
		err  string
	}{
		{"a.list[k=p].v", 1.5, ""},
		{"a.list[0].v", 1.5, ""},
		{"a.list[k=q].v", 0, "null"},
		{"a.list[k=q2].v", 0, "not a number"},
		{"a.list[k=z].v", 0, "no element with k=z"},
		{"a.list[9].v", 0, "out of range"},
		{"a.nope", 0, "no key nope"},
		{"a.list.v", 0, "not inside an object"},
		{"a[0]", 0, "not a list"},
	} {
		v, err := r.Num("x", tc.path)
		if tc.err == "" {
			if err != nil || v != tc.want {
				t.Errorf("%s = %v, %v", tc.path, v, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tc.err) {
			t.Errorf("%s: err = %v, want %q", tc.path, err, tc.err)
		}
	}
	if _, err := NewResults(map[string][]byte{"x": []byte("{")}, nil); err == nil {
		t.Error("corrupt results accepted")
	}
}

func TestPanickingClaimIsNotMeasurable(t *testing.T) {
	r, _ := NewResults(nil, nil)
	out := Evaluate(r, []Claim{{ID: "X", Eval: func(*Results) Outcome { panic("bug") }}})
	if out[0].Verdict != NotMeasurable || !strings.Contains(out[0].Reason, "bug") {
		t.Errorf("%+v", out[0])
	}
}

// TestCommittedResults evaluates the claims on the repository's committed
// results: every claim of a study that has results must be evaluable
// (no missing path), which catches a results schema drifting away from
// the catalogue.
func TestCommittedResults(t *testing.T) {
	files := map[string][]byte{}
	for _, study := range []string{"tls", "net", "pico"} {
		b, err := os.ReadFile(filepath.Join("..", "..", "results", study+".json"))
		if err == nil {
			files[study] = b
		}
	}
	if len(files) == 0 {
		t.Skip("no committed results/*.json yet: nothing to check the catalogue against")
	}
	r, err := NewResults(files, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range Run(r, Catalogue()).Claims {
		if _, has := files[c.Study]; has && c.Verdict == NotMeasurable {
			t.Errorf("%s (study %s has results) is not measurable: %s", c.ID, c.Study, c.Reason)
		}
	}
}

func TestStageThroughEngine(t *testing.T) {
	root := t.TempDir()
	os.WriteFile(filepath.Join(root, "go.mod"), []byte("module pqrepro\n"), 0o644)
	os.MkdirAll(filepath.Join(root, "analysis", "claims"), 0o755)
	os.WriteFile(filepath.Join(root, "analysis", "claims", "x.go"), []byte("package claims\n"), 0o644)
	os.MkdirAll(filepath.Join(root, "results"), 0o755)
	os.WriteFile(filepath.Join(root, "results", "tls.json"), tlsResults(t, 3.9, map[string][3]float64{
		"pq-sig": {4.651, 120, 1e-9}, "pq-kem": {5.072, 128, 1e-9}, "hybrid": {9.048, 228, 1e-9}}, 1e-12), 0o644)
	os.WriteFile(filepath.Join(root, PreregistrationFile), []byte("b324b49942fa2187e9ea974fdb2394b90285d70b 2026-12-01T05:09:46Z\n"), 0o644)
	st := Stage(map[string]string{"tls": "results/tls.json"}, map[string]string{"net": "no dataset", "pico": "no dataset"})
	e := &repro.Engine{Root: root, Stages: []*repro.Stage{st}}
	if _, err := e.Build(context.Background()); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(filepath.Join(root, JSONFile))
	var rep Report
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	// 13 Study A claims, of which A4 is derived: 12 counted.
	if rep.Counts[Reproduced] != 12 || rep.Derived != 1+5 {
		t.Errorf("counts = %v, derived %d", rep.Counts, rep.Derived)
	}
	tex, _ := os.ReadFile(filepath.Join(root, LatexFile))
	nums, _ := os.ReadFile(filepath.Join(root, NumbersFile))
	tex = append(tex, nums...)
	for _, want := range []string{`\newcommand{\ClaimsReproduced}{12}`, `\newcommand{\ClaimsDerived}{6}`, "from A1b, A1c", `\label{tab:claims-A}`, "A3b &"} {
		if !strings.Contains(string(tex), want) {
			t.Errorf("claims.tex lacks %q", want)
		}
	}
	if !strings.Contains(Text(rep), "12 reproduced") {
		t.Errorf("text table:\n%s", Text(rep))
	}
}

func TestStudyCOnRecordedResults(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "pico", "testdata", "golden", "results", "pico.json"))
	if err != nil {
		t.Skipf("analysis/pico's golden results are missing: %v", err)
	}
	r, err := NewResults(map[string][]byte{"pico": b}, nil)
	if err != nil {
		t.Fatal(err)
	}
	got := byID(Run(r, studyC()))
	for id, c := range got {
		if c.Verdict == NotMeasurable {
			t.Errorf("%s not measurable on a complete Study C result: %s", id, c.Reason)
		}
	}
	// The recorded quick run: ML-KEM-512 32.5 ms (35.7), ECDH 710 ms (617),
	// ML-DSA-87 stack 119.6 KB (119.6), M4 ratios 1.94-3.11 (1.8-1.9); ECDH
	// is 15.1 % slower than published, just outside the 15 % tolerance; a
	// ratio above 3 is no longer a modest advantage.
	for id, want := range map[string]Verdict{"C1": Reproduced, "C3": NotReproduced, "C4": DirectionOnly, "C15": Reproduced, "C17": NotReproduced, "C13": Reproduced} {
		if got[id].Verdict != want {
			t.Errorf("%s = %s (%s: %s), want %s", id, got[id].Verdict, got[id].Ours, got[id].Reason, want)
		}
	}
}

// TestEveryRuleStatesItsRationale: a rule without a stated reason and a
// derived claim whose sources do not exist are catalogue bugs.
func TestEveryRuleStatesItsRationale(t *testing.T) {
	ids := map[string]bool{}
	for _, c := range Catalogue() {
		if ids[c.ID] {
			t.Errorf("%s: duplicate ID", c.ID)
		}
		ids[c.ID] = true
	}
	for _, c := range Catalogue() {
		if strings.TrimSpace(c.Rationale) == "" || strings.TrimSpace(c.Agreement) == "" {
			t.Errorf("%s: no rationale or rule", c.ID)
		}
		for _, d := range c.DerivedFrom {
			if !ids[d] || d == c.ID {
				t.Errorf("%s: derived from unknown claim %q", c.ID, d)
			}
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
	if !strings.Contains(Numbers(rep), `\newcommand{\ClaimsTotal}{3}`) {
		t.Errorf("numbers:\n%s", Numbers(rep))
	}
}

// TestFallingRule: B7 needs the relative increase to fall at every step
// of RTT, not only from first to last.
func TestFallingRule(t *testing.T) {
	mk := func(pcts ...float64) *Results {
		var comps []map[string]any
		for i, p := range pcts {
			comps = append(comps, map[string]any{"round": 10000.0, "rtt_ms": float64(10 * (i + 1)), "diff_pct": p},
				map[string]any{"round": 1000.0, "rtt_ms": float64(10 * (i + 1)), "diff_pct": 100 - p})
		}
		b, _ := json.Marshal(map[string]any{"comparisons": comps, "reproduced": map[string]any{"round": 10000}})
		r, err := NewResults(map[string][]byte{"net": b}, nil)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	for _, tc := range []struct {
		pcts []float64
		want Verdict
	}{
		{[]float64{47, 10, 2.5}, Reproduced},
		{[]float64{15.8, 1.6, 2.3}, DirectionOnly},
		{[]float64{2, 3, 4}, NotReproduced},
		{[]float64{5, 5, 1}, DirectionOnly},
	} {
		o := judgeFalling(mk(tc.pcts...))
		if o.Verdict != tc.want {
			t.Errorf("%v: %s (%s), want %s", tc.pcts, o.Verdict, o.Reason, tc.want)
		}
	}
	if o := judgeFalling(mk(3)); o.Verdict != NotMeasurable {
		t.Errorf("one scenario: %s, want not measurable", o.Verdict)
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
	files := []string{"catalogue.go", "catalogue_c.go", "claims.go"}
	if err := exec.Command("git", "cat-file", "-e", rules.Commit+"^{commit}").Run(); err != nil {
		t.Skipf("not a git checkout with the rules commit %s (%v): cannot compare the record with the history", rules.Commit[:12], err)
	}
	if dirty, _ := exec.Command("git", "status", "--porcelain", "--", "catalogue.go", "catalogue_c.go", "claims.go").Output(); len(dirty) > 0 {
		t.Skip("the rules have uncommitted changes: commit them, then record the commit in preregistration.txt")
	}
	if err := exec.Command("git", "merge-base", "--is-ancestor", rules.Commit, "HEAD").Run(); err != nil {
		t.Fatalf("the rules commit %s is not in this history: %v", rules.Commit, err)
	}
	first, err := exec.Command("git", "log", "-1", "--format=%H", rules.Commit, "--", "catalogue.go", "catalogue_c.go", "claims.go").Output()
	if err != nil || strings.TrimSpace(string(first)) != rules.Commit {
		t.Errorf("the rules commit %s did not change the rules' files (last change at or before it: %q)", rules.Commit, strings.TrimSpace(string(first)))
	}
	out, err := exec.Command("git", append([]string{"log", "--format=%H", rules.Commit + "..HEAD", "--"}, files...)...).Output()
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

// TestNetWithoutFlagged: the view swaps in the comparisons and summary
// without the flagged handshakes; a verdict that changes is counted, and
// results without the view give none.
func TestNetWithoutFlagged(t *testing.T) {
	net := func(higher int) map[string]any {
		return map[string]any{"comparisons": 9, "target_higher_latency": higher, "round": 10000}
	}
	doc := map[string]any{
		"reproduced":  net(9),
		"comparisons": []any{},
		"hygiene": map[string]any{"without_flagged": map[string]any{
			"reproduced":  net(8),
			"comparisons": []any{},
		}},
	}
	b, _ := json.Marshal(doc)
	var b1 Claim
	for _, c := range Catalogue() {
		if c.ID == "B1" {
			b1 = c
		}
	}
	rb, err := netWithoutFlagged(map[string][]byte{"net": b}, nil, []Claim{b1})
	if err != nil || rb == nil {
		t.Fatalf("view: %v, %v", rb, err)
	}
	if len(rb.Claims) != 1 || rb.Claims[0].Verdict != Reproduced || rb.Claims[0].ViewVerdict != DirectionOnly || rb.Changed != 1 {
		t.Errorf("B1 without flagged: %+v", rb)
	}
	delete(doc, "hygiene")
	b, _ = json.Marshal(doc)
	if rb, err := netWithoutFlagged(map[string][]byte{"net": b}, nil, Catalogue()); rb != nil || err != nil {
		t.Errorf("no view: %+v, %v", rb, err)
	}
	if rb, err := netWithoutFlagged(map[string][]byte{}, nil, Catalogue()); rb != nil || err != nil {
		t.Errorf("no net results: %+v, %v", rb, err)
	}
	if n := Numbers(Report{Robustness: []Robustness{{Study: "net", Claims: make([]RobustnessItem, 8), Changed: 1}}}); !strings.Contains(n, `\newcommand{\ClaimsNetFlaggedChanged}{1}`) || !strings.Contains(n, `\newcommand{\ClaimsNetFlaggedChecked}{8}`) {
		t.Errorf("numbers:\n%s", n)
	}
}
