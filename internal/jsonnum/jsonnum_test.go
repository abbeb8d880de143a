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
