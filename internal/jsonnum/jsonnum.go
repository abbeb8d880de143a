// Package jsonnum is how results files write numbers: a float64 rounded
// to Digits significant digits, and null where it is NaN or infinite.
//
// Rounding makes results portable byte for byte: Go may fuse x*y+z into
// one FMA instruction on arm64, ppc64 and s390x but not on amd64, and a
// last-bit difference would otherwise change results/<study>.json and
// everything rendered from it. Null says that a statistic is undefined
// (the SD of one value) instead of breaking encoding/json, which refuses
// NaN; null reads back as NaN.
package jsonnum

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"reflect"
	"strconv"
)

// Digits is the number of significant digits kept: far more than any
// measurement here supports (1 ns in 10 s is 1e-10).
const Digits = 12

// Num is a float64 in a results file.
type Num float64

// MarshalJSON writes the value rounded to Digits significant digits in
// encoding/json's float64 form, or null.
func (n Num) MarshalJSON() ([]byte, error) {
	f := float64(n)
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return []byte("null"), nil
	}
	f, _ = strconv.ParseFloat(strconv.FormatFloat(f, 'g', Digits, 64), 64)
	return json.Marshal(f)
}

// UnmarshalJSON reads a number, or null as NaN.
func (n *Num) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		*n = Num(math.NaN())
		return nil
	}
	var f float64
	if err := json.Unmarshal(b, &f); err != nil {
		return err
	}
	*n = Num(f)
	return nil
}

// Summary is a sample's descriptive statistics as results files write
// them (analysis/stats.Summary.JSON makes one): JSON names, numbers as Num.
type Summary struct {
	N      int `json:"n" range:"0,"`
	Mean   Num `json:"mean"`
	SD     Num `json:"sd" range:"0,"`
	CV     Num `json:"cv"`
	Min    Num `json:"min"`
	Q1     Num `json:"q1"`
	Median Num `json:"median"`
	Q3     Num `json:"q3"`
	IQR    Num `json:"iqr" range:"0,"`
	P95    Num `json:"p95"`
	P99    Num `json:"p99"`
	Max    Num `json:"max"`
}

// Marshal encodes v canonically for a results file. That is, indented
// JSON with every object's keys sorted (struct fields included), every
// number rounded to Digits significant digits (so plain float64 fields
// are as portable as Num ones), no HTML escaping, and a final newline.
func Marshal(v any) ([]byte, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("encode results: %w", err)
	}
	// Decoding into maps and encoding again sorts every object's keys;
	// UseNumber keeps each number's text for round to work on.
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var g any
	if err := dec.Decode(&g); err != nil {
		return nil, fmt.Errorf("canonicalise results: %w", err)
	}
	var out bytes.Buffer
	enc := json.NewEncoder(&out)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(round(g)); err != nil {
		return nil, fmt.Errorf("canonicalise results: %w", err)
	}
	return out.Bytes(), nil
}

// round rounds every non-integer number below v to Digits significant
// digits; integers are kept exactly.
func round(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			x[k] = round(e)
		}
	case []any:
		for i, e := range x {
			x[i] = round(e)
		}
	case json.Number:
		if _, err := x.Int64(); err == nil {
			return x
		}
		f, err := x.Float64()
		if err != nil {
			return x
		}
		b, _ := Num(f).MarshalJSON()
		return json.Number(b)
	}
	return v
}

// Decode reads a results file into a new T, strictly. The bytes b must be
// one JSON value that fits T's schema (check: no unknown or missing field,
// a number where T has one and in its range, null only where the writer
// writes null). A file that does not is a *FieldError naming the file
// (name) and the field, so that the stage reading it fails instead of
// judging what a zero value or a skipped claim would make of it.
func Decode[T any](name string, b []byte) (*T, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var g any
	if err := dec.Decode(&g); err != nil {
		return nil, &FieldError{File: name, Problem: syntaxProblem(err, len(b))}
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, &FieldError{File: name, Problem: "more than one JSON value, or text after it"}
	}
	if fe := check(reflect.TypeFor[T](), g, "", noBounds); fe != nil {
		fe.File = name
		return nil, fe
	}
	var v T
	dec = json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&v); err != nil {
		// What check let through and encoding/json refuses (a key
		// written twice, the first time mistyped).
		return nil, &FieldError{File: name, Problem: err.Error()}
	}
	return &v, nil
}
