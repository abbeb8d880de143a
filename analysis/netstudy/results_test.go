package netstudy

import (
	"bytes"
	"testing"

	"pqrepro/internal/jsonnum/jsonnumtest"
)

// TestDecodeResultsDefects: the committed results/net.json decodes, and
// each defect planted in it is an error that names the file and the
// field. The first row is issue 44's: every diff_pct a string.
func TestDecodeResultsDefects(t *testing.T) {
	decode := func(name string, b []byte) error { _, err := DecodeResults(name, b); return err }
	jsonnumtest.CheckDefects(t, ResultsFile, jsonnumtest.Committed(t, "../../results/net.json"), decode, []jsonnumtest.Defect{
		{Name: "every diff_pct a string", Edit: jsonnumtest.Every("diff_pct", jsonnumtest.AsString),
			Field: "comparisons[0].diff_pct", Want: `want a number or null, got string "10.2421168498"`},
		{Name: "string for number", Edit: jsonnumtest.Set("reproduced.diff_ms_min", "0.742"),
			Field: "reproduced.diff_ms_min", Want: `got string "0.742"`},
		{Name: "missing field", Edit: jsonnumtest.Delete("comparisons[2].diff_pct"),
			Field: "comparisons[2].diff_pct", Want: "missing"},
		{Name: "unknown field", Edit: jsonnumtest.Set("comparisons[2].diff_pc", 1),
			Field: "comparisons[2].diff_pc", Want: "unknown field"},
		{Name: "p above 1", Edit: jsonnumtest.Set("comparisons[1].p_block_z", 1.5),
			Field: "comparisons[1].p_block_z", Want: "want a number in [0, 1], got 1.5"},
		{Name: "negative count", Edit: jsonnumtest.Set("reproduced.handshakes", -1),
			Field: "reproduced.handshakes", Want: "want a number >= 0, got -1"},
		{Name: "null for an integer", Edit: jsonnumtest.Set("reproduced.round", nil),
			Field: "reproduced.round", Want: "want an integer, got null"},
		{Name: "truncated", Bytes: func(b []byte) []byte { return b[:len(b)/2] }, Want: "truncated"},
		{Name: "NaN", Bytes: func(b []byte) []byte {
			return bytes.Replace(b, []byte(`"diff_pct": 10.2421168498`), []byte(`"diff_pct": NaN`), 1)
		}, Want: "not valid JSON"},
	})
}

// FuzzDecodeResults: no input panics DecodeResults, and what it accepts
// is accepted again once encoded.
func FuzzDecodeResults(f *testing.F) {
	jsonnumtest.Fuzz(f, ResultsFile, jsonnumtest.Committed(f, "../../results/net.json"), DecodeResults)
}
