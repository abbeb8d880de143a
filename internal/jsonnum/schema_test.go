package jsonnum

import (
	"errors"
	"math"
	"strings"
	"testing"
)

// schemaFixture has a field of every kind a results file uses.
type schemaFixture struct {
	Study   string             `json:"study"`
	N       int                `json:"n" range:"0,"`
	Seed    uint64             `json:"seed"`
	Level   float64            `json:"level" range:"0,1"`
	OK      bool               `json:"ok"`
	Rows    []schemaRow        `json:"rows"`
	ByName  map[string]float64 `json:"by_name"`
	Ptr     *schemaRow         `json:"ptr"`
	Opt     int                `json:"opt,omitempty"`
	private int
	schemaEmbedded
}

type schemaRow struct {
	DiffPct Num   `json:"diff_pct"`
	P       Num   `json:"p" range:"0,1"`
	ACF     []Num `json:"acf" range:"-1,1"`
}

type schemaEmbedded struct {
	Note string `json:"note"`
}

const schemaGood = `{"study": "x", "n": 3, "seed": 18446744073709551615, "level": 0.95, "ok": true,
  "rows": [{"diff_pct": 12.3, "p": 0.01, "acf": [0.5, null]}, {"diff_pct": null, "p": null, "acf": null}],
  "by_name": {"ml-kem-512": 1.5, "a.b": 2}, "ptr": null, "note": ""}`

// TestDecodeSchema: the fixture decodes; each defect is a FieldError
// naming the file and the field, and saying what is wrong and what to do.
func TestDecodeSchema(t *testing.T) {
	v, err := Decode[schemaFixture]("results/x.json", []byte(schemaGood))
	if err != nil {
		t.Fatal(err)
	}
	if v.Rows[0].DiffPct != 12.3 || !math.IsNaN(float64(v.Rows[1].P)) || v.ByName["a.b"] != 2 || v.Seed != math.MaxUint64 {
		t.Errorf("decoded %+v", v)
	}
	edit := func(old, new string) string {
		if !strings.Contains(schemaGood, old) {
			t.Fatalf("the fixture has no %q", old)
		}
		return strings.Replace(schemaGood, old, new, 1)
	}
	for _, tc := range []struct {
		name, in, field, want string
	}{
		{"string for number", edit(`"diff_pct": 12.3`, `"diff_pct": "12.3"`), "rows[0].diff_pct", `want a number or null, got string "12.3"`},
		{"string for float", edit(`"level": 0.95`, `"level": "0.95"`), "level", `want a number, got string "0.95"`},
		{"string for int", edit(`"n": 3`, `"n": "3"`), "n", `want an integer, got string "3"`},
		{"float for int", edit(`"n": 3`, `"n": 3.5`), "n", "want an integer of 64 bits, got 3.5"},
		{"negative for uint", edit(`"seed": 18446744073709551615`, `"seed": -1`), "seed", "want an integer >= 0"},
		{"overflow", edit(`"seed": 18446744073709551615`, `"seed": 18446744073709551616`), "seed", "want an integer >= 0 of 64 bits"},
		{"huge number", edit(`"level": 0.95`, `"level": 1e999`), "level", "want a finite number, got 1e999"},
		{"null for int", edit(`"n": 3`, `"n": null`), "n", "want an integer, got null"},
		{"null for string", edit(`"study": "x"`, `"study": null`), "study", "want a string, got null"},
		{"number for string", edit(`"study": "x"`, `"study": 1`), "study", "want a string, got number 1"},
		{"string for bool", edit(`"ok": true`, `"ok": "true"`), "ok", `want true or false, got string "true"`},
		{"object for array", edit(`"acf": null`, `"acf": {}`), "rows[1].acf", "want an array, got an object"},
		{"missing", edit(`"study": "x", `, ``), "study", "missing"},
		{"missing in an element", edit(`"diff_pct": null, `, ``), "rows[1].diff_pct", "missing"},
		{"missing embedded", edit(`, "note": ""`, ``), "note", "missing"},
		{"unknown", edit(`"ok": true`, `"ok": true, "extra": 1`), "extra", "unknown field"},
		{"unknown in an element", edit(`"p": 0.01`, `"p": 0.01, "q": 1`), "rows[0].q", "unknown field"},
		{"case differs", edit(`"study"`, `"Study"`), "Study", "unknown field"},
		{"private", edit(`"ok": true`, `"ok": true, "private": 1`), "private", "unknown field"},
		{"p above 1", edit(`"p": 0.01`, `"p": 1.5`), "rows[0].p", "want a number in [0, 1], got 1.5"},
		{"level below 0", edit(`"level": 0.95`, `"level": -0.1`), "level", "want a number in [0, 1], got -0.1"},
		{"negative count", edit(`"n": 3`, `"n": -3`), "n", "want a number >= 0, got -3"},
		{"range in a slice", edit(`[0.5, null]`, `[0.5, -2]`), "rows[0].acf[1]", "want a number in [-1, 1], got -2"},
		{"map key", edit(`"ml-kem-512": 1.5`, `"ml-kem-512": "1.5"`), "by_name.ml-kem-512", "want a number"},
		{"odd map key", edit(`"a.b": 2`, `"a.b": "2"`), `by_name["a.b"]`, "want a number"},
		{"pointer", edit(`"ptr": null`, `"ptr": {"diff_pct": 1, "p": 2, "acf": []}`), "ptr.p", "want a number in [0, 1]"},
		{"truncated", schemaGood[:len(schemaGood)/2], "", "truncated"},
		{"NaN", edit(`"level": 0.95`, `"level": NaN`), "", "not valid JSON"},
		{"two values", schemaGood + " {}", "", "more than one JSON value"},
		{"not an object", `[]`, "", "want an object, got an array"},
		{"empty", ``, "", "not valid JSON"},
	} {
		_, err := Decode[schemaFixture]("results/x.json", []byte(tc.in))
		var fe *FieldError
		if !errors.As(err, &fe) {
			t.Errorf("%s: %v, want a FieldError", tc.name, err)
			continue
		}
		if fe.File != "results/x.json" || fe.Field != tc.field || !strings.Contains(fe.Problem, tc.want) {
			t.Errorf("%s: file %q field %q problem %q; want field %q and %q", tc.name, fe.File, fe.Field, fe.Problem, tc.field, tc.want)
		}
		if msg := err.Error(); !strings.HasPrefix(msg, "results/x.json: ") || !strings.Contains(msg, "go run mage.go build") {
			t.Errorf("%s: the message names no file or says nothing to do: %s", tc.name, msg)
		}
	}
}

// TestAdvice: a committed results file is restored with its lock entry
// or rebuilt; a file elsewhere (a new run's) is rebuilt.
func TestAdvice(t *testing.T) {
	_, err := Decode[schemaFixture]("results/x.json", []byte(`{}`))
	if err == nil || !strings.HasSuffix(err.Error(), "; rebuild it with `go run mage.go build`, or restore the committed file with `git checkout -- results/x.json pqrepro.lock`") {
		t.Errorf("committed file: %v", err)
	}
	_, err = Decode[schemaFixture]("the new run's results/x.json", []byte(`{}`))
	if err == nil || strings.Contains(err.Error(), "git checkout") {
		t.Errorf("a new run's file: %v", err)
	}
}

// TestRangeTagOnNoNumber: a range tag on a field that holds no number is
// a bug of the type, found when the type is first read.
func TestRangeTagOnNoNumber(t *testing.T) {
	type bad struct {
		B bool `json:"b" range:"0,1"`
	}
	defer func() {
		if recover() == nil {
			t.Error("no panic")
		}
	}()
	Decode[bad]("x.json", []byte(`{"b": true}`))
}

// FuzzDecode: no input panics Decode, and what it accepts encodes and is
// accepted again.
func FuzzDecode(f *testing.F) {
	f.Add([]byte(schemaGood))
	f.Add([]byte(`{"rows": [{"p": "1"}]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		v, err := Decode[schemaFixture]("results/x.json", b)
		if err != nil {
			return
		}
		out, err := Marshal(v)
		if err != nil {
			t.Fatalf("accepted %q, which does not encode: %v", b, err)
		}
		if _, err := Decode[schemaFixture]("results/x.json", out); err != nil {
			t.Fatalf("accepted %q, encoded as %q, is refused: %v", b, out, err)
		}
	})
}
