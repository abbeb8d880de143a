package sample

import (
	"bytes"
	"compress/gzip"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestRead(t *testing.T) {
	for _, c := range []struct {
		name, in, column string
		want             []float64
		errLine          int // 0: no error expected unless errSub set
		errSub           string
	}{
		{"plain", "1\n2.5\n-3e-1\n", "", []float64{1, 2.5, -0.3}, 0, ""},
		{"blank and comments", "# ms\n\n 4 \n\n5\n", "", []float64{4, 5}, 0, ""},
		{"crlf", "1\r\n2\r\n", "", []float64{1, 2}, 0, ""},
		{"empty", "", "", nil, 0, "no values"},
		{"only comments", "# nothing\n\n", "", nil, 0, "no values"},
		{"non-numeric", "1\n2\nabc\n", "", nil, 3, "\"abc\" is not a number"},
		{"nan", "1\nNaN\n", "", nil, 2, "not a finite number"},
		{"inf", "+Inf\n", "", nil, 1, "not a finite number"},
		{"two fields", "1 2\n", "", nil, 1, "not a number"},
		{"csv", "id,ths_ms\n1,3.5\n2,4.25\n", "ths_ms", []float64{3.5, 4.25}, 0, ""},
		{"csv quoted bom", "\ufeff\"a\",\"b\"\n\"x\",\"7\"\n", "b", []float64{7}, 0, ""},
		{"csv missing column", "id,ths\n1,2\n", "bytes", nil, 1, "no column \"bytes\""},
		{"csv short row", "a,b\n1,2\n3\n", "b", nil, 3, "row has 1 fields"},
		{"csv bad value", "a,b\n1,2\n3,x\n", "b", nil, 3, "\"x\" is not a number"},
		{"csv nan", "a,b\n1,nan\n", "b", nil, 2, "not a finite"},
		{"csv header only", "a,b\n", "b", nil, 0, "no values"},
		{"csv empty", "", "b", nil, 0, "no header row"},
		{"csv bad quote", "a,b\n1,\"2\n", "b", nil, 2, "bad CSV"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := Read(strings.NewReader(c.in), "f.txt", c.column)
			if c.errSub != "" {
				var e *Error
				if !errors.As(err, &e) {
					t.Fatalf("error %v, want *Error", err)
				}
				if e.File != "f.txt" || e.Line != c.errLine || !strings.Contains(err.Error(), c.errSub) {
					t.Fatalf("error %q (line %d), want line %d containing %q", err, e.Line, c.errLine, c.errSub)
				}
				if c.errLine > 0 && !strings.HasPrefix(err.Error(), "f.txt:") {
					t.Fatalf("error %q does not start with file:line", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(c.want) {
				t.Fatalf("got %v, want %v", got, c.want)
			}
			for i := range got {
				if got[i] != c.want[i] {
					t.Fatalf("got %v, want %v", got, c.want)
				}
			}
		})
	}
}

func TestReadFile(t *testing.T) {
	dir := t.TempDir()
	plain := filepath.Join(dir, "a.txt")
	if err := os.WriteFile(plain, []byte("1\n2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	zw.Write([]byte("x,y\n1,5\n2,6\n"))
	zw.Close()
	gz := filepath.Join(dir, "b.csv.gz")
	if err := os.WriteFile(gz, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	if x, err := ReadFile(plain, ""); err != nil || len(x) != 2 {
		t.Fatalf("plain: %v %v", x, err)
	}
	if x, err := ReadFile(gz, "y"); err != nil || len(x) != 2 || x[1] != 6 {
		t.Fatalf("gz: %v %v", x, err)
	}
	if _, err := ReadFile(filepath.Join(dir, "missing"), ""); err == nil || !strings.Contains(err.Error(), "missing") {
		t.Fatalf("missing file: %v", err)
	}
	if _, err := ReadFile(plain+".gz", ""); err == nil {
		t.Fatal("missing gz: no error")
	}
	bad := filepath.Join(dir, "bad.gz")
	os.WriteFile(bad, []byte("not gzip"), 0o644)
	if _, err := ReadFile(bad, ""); err == nil || !strings.Contains(err.Error(), "bad.gz") {
		t.Fatalf("bad gz: %v", err)
	}
}

// FuzzRead checks that no input makes the readers panic, that every error
// names the file, and that every value returned is finite.
func FuzzRead(f *testing.F) {
	for _, s := range []string{"1\n2\n", "", "a,b\n1,2\n", "# c\n\n3e400\n", "NaN", "x,\"y\n", "1\r\n\r\n2"} {
		f.Add(s, "")
		f.Add(s, "b")
	}
	f.Fuzz(func(t *testing.T, in, column string) {
		xs, err := Read(strings.NewReader(in), "fuzz.txt", column)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "fuzz.txt") {
				t.Fatalf("error does not name the file: %v", err)
			}
			return
		}
		if len(xs) == 0 {
			t.Fatal("no error and no values")
		}
		for _, v := range xs {
			if v != v || v > 1.7976931348623157e308 || v < -1.7976931348623157e308 {
				t.Fatalf("non-finite value %v", v)
			}
		}
	})
}
