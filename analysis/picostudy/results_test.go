package picostudy

import (
	"testing"

	"pqrepro/internal/jsonnum/jsonnumtest"
)

// TestDecodeResultsDefects: the committed results/pico.json decodes, and
// each defect planted in it is an error that names the file and the
// field.
func TestDecodeResultsDefects(t *testing.T) {
	decode := func(name string, b []byte) error { _, err := DecodeResults(name, b); return err }
	jsonnumtest.CheckDefects(t, ResultsFile, jsonnumtest.Committed(t, "../../results/pico.json"), decode, []jsonnumtest.Defect{
		{Name: "string for number", Edit: jsonnumtest.Set("schemes.ml-dsa-44.ops.sign.mean_ms", "12.3"),
			Field: "schemes.ml-dsa-44.ops.sign.mean_ms", Want: `want a number, got string "12.3"`},
		{Name: "every speedup a string", Edit: jsonnumtest.Every("speedup", jsonnumtest.AsString),
			Field: "mlkem_vs_ecdh.ml-kem-1024.speedup", Want: "got string"},
		{Name: "missing field", Edit: jsonnumtest.Delete("schemes.ml-dsa-44.ops.sign.n"),
			Field: "schemes.ml-dsa-44.ops.sign.n", Want: "missing"},
		{Name: "unknown field", Edit: jsonnumtest.Set("schemes.ml-dsa-44.ops.sign.mean", 1),
			Field: "schemes.ml-dsa-44.ops.sign.mean", Want: "unknown field"},
		{Name: "negative CV", Edit: jsonnumtest.Set("schemes.ml-dsa-44.ops.sign.cv", -0.5),
			Field: "schemes.ml-dsa-44.ops.sign.cv", Want: "want a number >= 0, got -0.5"},
		{Name: "saving above 1", Edit: jsonnumtest.Set("mlkem_vs_ecdh.ml-kem-512.energy_saving", 1.2),
			Field: "mlkem_vs_ecdh.ml-kem-512.energy_saving", Want: "want a number <= 1, got 1.2"},
		{Name: "negative size", Edit: jsonnumtest.Set("sram_bytes", -1),
			Field: "sram_bytes", Want: "want a number >= 0, got -1"},
		{Name: "null for a number", Edit: jsonnumtest.Set("mlkem_vs_ecdh.ml-kem-512.speedup", nil),
			Field: "mlkem_vs_ecdh.ml-kem-512.speedup", Want: "want a number, got null"},
		{Name: "truncated", Bytes: func(b []byte) []byte { return b[:len(b)/3] }, Want: "truncated"},
		{Name: "NaN", Bytes: func(b []byte) []byte { return append([]byte(`{"seed": NaN, `), b[1:]...) }, Want: "not valid JSON"},
	})
}

// FuzzDecodeResults: no input panics DecodeResults, and what it accepts
// is accepted again once encoded.
func FuzzDecodeResults(f *testing.F) {
	jsonnumtest.Fuzz(f, ResultsFile, jsonnumtest.Committed(f, "../../results/pico.json"), DecodeResults)
}
