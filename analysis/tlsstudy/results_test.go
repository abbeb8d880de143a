package tlsstudy

import (
	"os"
	"testing"

	"pqrepro/analysis/claims"
	"pqrepro/internal/jsonnum"
	"pqrepro/internal/jsonnum/jsonnumtest"
)

// TestDecodeResultsDefects: the committed results/tls.json decodes, and
// each defect planted in it is an error that names the file and the
// field.
func TestDecodeResultsDefects(t *testing.T) {
	decode := func(name string, b []byte) error { _, err := DecodeResults(name, b); return err }
	jsonnumtest.CheckDefects(t, ResultsFile, jsonnumtest.Committed(t, "../../results/tls.json"), decode, []jsonnumtest.Defect{
		{Name: "string for number", Edit: jsonnumtest.Set("families.paper.comparisons[2].median_diff_pct", "12.3"),
			Field: "families.paper.comparisons[2].median_diff_pct", Want: `want a number or null, got string "12.3"`},
		{Name: "every median_diff_pct a string", Edit: jsonnumtest.Every("median_diff_pct", jsonnumtest.AsString),
			Field: "families.matrix.comparisons[0].median_diff_pct", Want: "got string"},
		{Name: "missing field", Edit: jsonnumtest.Delete("families.paper.comparisons[2].p_holm"),
			Field: "families.paper.comparisons[2].p_holm", Want: "missing"},
		{Name: "unknown field", Edit: jsonnumtest.Set("families.paper.comparisons[2].p_holms", 0.01),
			Field: "families.paper.comparisons[2].p_holms", Want: "unknown field"},
		{Name: "p above 1", Edit: jsonnumtest.Set("families.paper.kruskal_wallis.p", 2),
			Field: "families.paper.kruskal_wallis.p", Want: "want a number in [0, 1], got 2"},
		{Name: "negative count", Edit: jsonnumtest.Set("families.paper.comparisons[2].n_target", -1000),
			Field: "families.paper.comparisons[2].n_target", Want: "want a number >= 0, got -1000"},
		{Name: "string for an integer", Edit: jsonnumtest.Set("schema", "1"),
			Field: "schema", Want: `want an integer, got string "1"`},
		{Name: "truncated", Bytes: func(b []byte) []byte { return b[:len(b)-2] }, Want: "truncated"},
		{Name: "NaN", Bytes: func(b []byte) []byte { return append([]byte(`{"schema": NaN, `), b[1:]...) }, Want: "not valid JSON"},
	})
}

// TestCommittedAlternatives: results/tls-alternatives.json and the
// results of each alternative in it read strictly, as the claims stage
// reads them.
func TestCommittedAlternatives(t *testing.T) {
	b, err := os.ReadFile("../../" + AlternativesFile)
	if err != nil {
		t.Skipf("no committed %s: %v", AlternativesFile, err)
	}
	alts, err := jsonnum.Decode[claims.Alternatives](AlternativesFile, b)
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range alts.Alternatives {
		if a.Results == nil {
			continue
		}
		if _, err := jsonnum.Decode[Results](AlternativesFile+" "+a.Name, a.Results); err != nil {
			t.Error(err)
		}
	}
}

// FuzzDecodeResults: no input panics DecodeResults, and what it accepts
// is accepted again once encoded.
func FuzzDecodeResults(f *testing.F) {
	jsonnumtest.Fuzz(f, ResultsFile, jsonnumtest.Committed(f, "../../results/tls.json"), DecodeResults)
}
