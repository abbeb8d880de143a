package gzcsv

import (
	"bytes"
	"reflect"
	"strings"
	"testing"
)

func TestRoundTrip(t *testing.T) {
	v1 := []string{"a", "b"}
	v2 := []string{"a", "b", "c"}
	rows := [][]string{{"1", "x,y", ""}, {"2", "\"q\"", "z"}}
	b, err := Marshal(v2, rows)
	if err != nil {
		t.Fatal(err)
	}
	again, _ := Marshal(v2, rows)
	if !bytes.Equal(b, again) {
		t.Fatal("two encodings of the same rows differ")
	}
	i, got, err := Unmarshal(b, "f.csv.gz", v1, v2)
	if err != nil || i != 1 || !reflect.DeepEqual(got, rows) {
		t.Fatalf("Unmarshal = %d, %q, %v; want 1, %q", i, got, err, rows)
	}
}

func TestUnmarshalBad(t *testing.T) {
	good, _ := Marshal([]string{"a", "b"}, [][]string{{"1", "2"}})
	short, _ := Marshal([]string{"a", "b"}, [][]string{{"1"}})
	for _, tc := range []struct {
		name string
		in   []byte
		want string
	}{
		{"not gzip", []byte("a,b\n1,2\n3,4\n5,6\n"), "f.csv.gz: gzip: invalid header"},
		{"truncated", good[:len(good)-4], "f.csv.gz: unexpected EOF"},
		{"wrong header", good, "f.csv.gz: header is not a,c nor a,b,c"},
		{"short row", short, "f.csv.gz: record on line 2: wrong number of fields"},
	} {
		_, _, err := Unmarshal(tc.in, "f.csv.gz", []string{"a", "c"}, []string{"a", "b", "c"})
		if tc.name == "short row" {
			_, _, err = Unmarshal(tc.in, "f.csv.gz", []string{"a", "b"})
		}
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want %q", tc.name, err, tc.want)
		}
	}
}
