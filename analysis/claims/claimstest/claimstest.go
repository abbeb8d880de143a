// Package claimstest holds the checks every study's claims get in its
// own tests. That is, the catalogue's form (IDs, rules, rationales,
// derivations) and the golden verdict table on the committed results,
// which proves that moving or refactoring a rule changed no verdict.
package claimstest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"

	"pqrepro/analysis/claims"
)

// Evaluate runs the catalogue on results (encoded as the study's results
// file) and returns the evaluated claims by ID.
func Evaluate(t testing.TB, cat claims.Catalogue, results any) map[string]claims.Evaluated {
	t.Helper()
	b, err := json.Marshal(results)
	if err != nil {
		t.Fatal(err)
	}
	r, err := claims.NewResults(map[string][]byte{cat.Study: b}, nil)
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]claims.Evaluated{}
	for _, e := range claims.Run(r, cat.Claims).Claims {
		m[e.ID] = e
	}
	return m
}

// CheckCatalogue checks a study's catalogue. That is, every claim of
// the study, an ID of the paper's scheme with the study's letter (A1a,
// B1, C12), unique, with a rule and its rationale, derived only from
// claims that exist; every claim but an observation of ours quotes the
// original's sentence it comes from; no two counted claims measure one
// quantity (claims.CheckOneQuantity); every published value of its
// Source said where it comes from.
func CheckCatalogue(t *testing.T, cat claims.Catalogue, letter string) {
	t.Helper()
	id := regexp.MustCompile(`^` + letter + `[1-9][0-9]*[a-z]?$`)
	ids := map[string]bool{}
	for _, c := range cat.Claims {
		if !id.MatchString(c.ID) {
			t.Errorf("%s: not an ID of the paper's scheme (%s)", c.ID, id)
		}
		if ids[c.ID] {
			t.Errorf("%s: duplicate ID", c.ID)
		}
		ids[c.ID] = true
		if c.Study != cat.Study {
			t.Errorf("%s: study %q in the catalogue of %q", c.ID, c.Study, cat.Study)
		}
		if strings.TrimSpace(c.Rationale) == "" || strings.TrimSpace(c.Agreement) == "" || strings.TrimSpace(c.Published) == "" || c.Eval == nil {
			t.Errorf("%s: no published value, rule, rationale or evaluation", c.ID)
		}
	}
	for _, err := range claims.CheckOneQuantity(cat.Claims) {
		t.Error(err)
	}
	for _, c := range cat.Claims {
		if c.Observation == "" && (strings.TrimSpace(c.Quote.Text) == "" || c.Quote.Where == "" || c.Quote.Lang == "") {
			t.Errorf("%s: no quote of the original's sentence it comes from (text, language, where it was read)", c.ID)
		}
		if c.Observation != "" && c.Quote.Text != "" {
			t.Errorf("%s: an observation of ours quotes the original", c.ID)
		}
		if c.Quote.Verbatim && c.Quote.Lang != "en" && c.Quote.English == "" {
			t.Errorf("%s: a verbatim quote in %s without our translation", c.ID, c.Quote.Lang)
		}
		for _, d := range c.DerivedFrom {
			if !ids[d] || d == c.ID {
				t.Errorf("%s: derived from unknown claim %q", c.ID, d)
			}
		}
	}
	if cat.Source.Authors == "" || cat.Source.Title == "" || cat.Source.Venue == "" || cat.Source.Where == "" {
		t.Errorf("study %s: incomplete citation %+v", cat.Study, cat.Source)
	}
	if cat.Package == "" {
		t.Errorf("study %s: no package (the claims stage would not rerun when a rule changes)", cat.Study)
	}
}

// CheckGolden compares a study's verdict table on its committed results
// with the golden file.
//
// It evaluates the catalogue on the committed results file (a path
// relative to the test's directory) and compares the verdict table (ID,
// statement, published value, rule, rationale, ours, verdict, reason)
// with the golden file; update rewrites it. A missing results file
// skips the test with the reason.
func CheckGolden(t *testing.T, cat claims.Catalogue, resultsFile, golden string, update bool) {
	t.Helper()
	b, err := os.ReadFile(resultsFile)
	if err != nil {
		t.Skipf("no committed %s to evaluate the claims on: %v", resultsFile, err)
	}
	r, err := claims.NewResults(map[string][]byte{cat.Study: b}, nil)
	if err != nil {
		t.Fatal(err)
	}
	rows := claims.Run(r, cat.Claims).Claims
	for _, e := range rows {
		if e.Verdict == claims.NotMeasurable {
			t.Errorf("%s is not measurable on the committed results: %s", e.ID, e.Reason)
		}
	}
	got, err := json.MarshalIndent(rows, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	got = append(got, '\n')
	if update {
		if err := os.WriteFile(golden, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (create it with -update and review it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("the verdict table on %s differs from %s: a rule, a tolerance or a text changed (if intended, rerun with -update and review the diff):\n%s", resultsFile, golden, firstDiff(string(want), string(got)))
	}
}

// firstDiff shows the first differing line of two texts.
func firstDiff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := 0; i < len(w) || i < len(g); i++ {
		var a, b string
		if i < len(w) {
			a = w[i]
		}
		if i < len(g) {
			b = g[i]
		}
		if a != b {
			return fmt.Sprintf("line %d:\n  golden: %s\n  now:    %s", i+1, a, b)
		}
	}
	return "(no line differs)"
}
