package jsonnum

import (
	"encoding/json"
	"math"
	"testing"
)

func TestNum(t *testing.T) {
	for _, tc := range []struct {
		in   float64
		want string
	}{
		{1.5, "1.5"}, {0.1 + 0.2, "0.3"}, {1.0000000000001, "1"}, {123456789.123456, "123456789.123"},
		{math.NaN(), "null"}, {math.Inf(1), "null"}, {0, "0"},
	} {
		b, err := json.Marshal(Num(tc.in))
		if err != nil || string(b) != tc.want {
			t.Errorf("Marshal(%v) = %s, %v; want %s", tc.in, b, err, tc.want)
		}
	}
	var n Num
	if err := json.Unmarshal([]byte("null"), &n); err != nil || !math.IsNaN(float64(n)) {
		t.Errorf("null read back as %v, %v", n, err)
	}
	if err := json.Unmarshal([]byte("2.25"), &n); err != nil || n != 2.25 {
		t.Errorf("2.25 read back as %v, %v", n, err)
	}
	if err := json.Unmarshal([]byte(`"x"`), &n); err == nil {
		t.Error("a string was read as a number")
	}
}

func TestMarshal(t *testing.T) {
	type inner struct {
		B float64 `json:"b"`
		A int     `json:"a"`
	}
	v := struct {
		Z   string  `json:"z"`
		Y   Num     `json:"y"`
		In  inner   `json:"in"`
		Big float64 `json:"big"`
	}{Z: "<&>", Y: Num(math.NaN()), In: inner{B: 1.5056695000000002, A: 133000000}, Big: 1e21}
	b, err := Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	want := "{\n  \"big\": 1e+21,\n  \"in\": {\n    \"a\": 133000000,\n    \"b\": 1.5056695\n  },\n  \"y\": null,\n  \"z\": \"<&>\"\n}\n"
	if string(b) != want {
		t.Errorf("got\n%s\nwant\n%s", b, want)
	}
	if _, err := Marshal(func() {}); err == nil {
		t.Error("a func was encoded")
	}
}

func TestDecode(t *testing.T) {
	type r struct {
		A Num `json:"a"`
	}
	v, err := Decode[r]("x.json", []byte(`{"a": null}`))
	if err != nil || !math.IsNaN(float64(v.A)) {
		t.Errorf("null: %v, %v", v, err)
	}
	for _, bad := range []string{`{"b": 1}`, `{"a": 1} {}`, `{`, `[]`} {
		if _, err := Decode[r]("x.json", []byte(bad)); err == nil {
			t.Errorf("%s accepted", bad)
		}
	}
}
