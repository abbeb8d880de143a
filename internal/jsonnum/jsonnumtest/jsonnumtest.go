// Package jsonnumtest holds the checks every study's results decoder
// gets in its own tests: defects planted in the committed results file,
// each of which must be an error naming the file and the field, and a
// fuzz target. One package, so that the three studies' tests plant
// defects and fuzz the same way.
package jsonnumtest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
)

// Committed reads a committed results file (path relative to the test's
// folder); the test skips without it, as in a tree without results.
func Committed(t testing.TB, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Skipf("no committed %s: %v", path, err)
	}
	return b
}

// A Defect is one fault planted in a good results file. Edit changes the
// file decoded as JSON (numbers as json.Number), or Bytes changes its
// text. The decoder's error must name the file, Field (a JSON path as
// the error spells it, "comparisons[2].diff_pct"; "" for a defect of
// the whole file) and Want, and say what to do.
type Defect struct {
	Name  string
	Edit  func(doc map[string]any) error
	Bytes func(b []byte) []byte
	Field string
	Want  string
}

// CheckDefects plants each defect in good (the results file named file)
// and checks decode's error for it.
func CheckDefects(t *testing.T, file string, good []byte, decode func(name string, b []byte) error, defects []Defect) {
	t.Helper()
	if err := decode(file, good); err != nil {
		t.Fatalf("the good file does not decode: %v", err)
	}
	for _, d := range defects {
		t.Run(d.Name, func(t *testing.T) {
			bad, err := Plant(good, d)
			if err != nil {
				t.Fatal(err)
			}
			err = decode(file, bad)
			if err == nil {
				t.Fatalf("accepted")
			}
			msg := err.Error()
			want := []string{file, d.Want, "go run mage.go build"}
			if d.Field != "" {
				want = append(want, "field "+d.Field+":")
			}
			for _, w := range want {
				if !strings.Contains(msg, w) {
					t.Errorf("the error does not say %q:\n%s", w, msg)
				}
			}
		})
	}
}

// Plant returns good with the defect d.
func Plant(good []byte, d Defect) ([]byte, error) {
	if d.Bytes != nil {
		return d.Bytes(bytes.Clone(good)), nil
	}
	dec := json.NewDecoder(bytes.NewReader(good))
	dec.UseNumber()
	var doc map[string]any
	if err := dec.Decode(&doc); err != nil {
		return nil, err
	}
	if err := d.Edit(doc); err != nil {
		return nil, fmt.Errorf("defect %s: %w", d.Name, err)
	}
	return json.Marshal(doc)
}

// Set is an Edit that sets the value at path (keys and [indexes], as in
// "comparisons[2].diff_pct").
func Set(path string, v any) func(map[string]any) error {
	return func(doc map[string]any) error {
		parent, key, err := parentOf(doc, path)
		if err != nil {
			return err
		}
		parent[key] = v
		return nil
	}
}

// Delete is an Edit that removes the key at path.
func Delete(path string) func(map[string]any) error {
	return func(doc map[string]any) error {
		parent, key, err := parentOf(doc, path)
		if err != nil {
			return err
		}
		if _, ok := parent[key]; !ok {
			return fmt.Errorf("%s: no such key", path)
		}
		delete(parent, key)
		return nil
	}
}

// Every is an Edit that replaces the value of every key named key,
// wherever it is, by f of it. It is an error when there is none.
func Every(key string, f func(v any) any) func(map[string]any) error {
	return func(doc map[string]any) error {
		n := 0
		var walk func(v any)
		walk = func(v any) {
			switch x := v.(type) {
			case map[string]any:
				for k, e := range x {
					if k == key {
						x[k] = f(e)
						n++
						continue
					}
					walk(e)
				}
			case []any:
				for _, e := range x {
					walk(e)
				}
			}
		}
		walk(doc)
		if n == 0 {
			return fmt.Errorf("no key %q", key)
		}
		return nil
	}
}

// AsString turns a number into the string of its text ("12.3"), the
// issue 44 defect; other values are kept.
func AsString(v any) any {
	if n, ok := v.(json.Number); ok {
		return string(n)
	}
	return v
}

// parentOf walks path in doc to the object holding its last key.
func parentOf(doc map[string]any, path string) (map[string]any, string, error) {
	var cur any = doc
	parts := strings.Split(path, ".")
	for i, p := range parts {
		name, rest, _ := strings.Cut(p, "[")
		obj, ok := cur.(map[string]any)
		if !ok {
			return nil, "", fmt.Errorf("%s: %s is not an object", path, strings.Join(parts[:i], "."))
		}
		if i == len(parts)-1 && rest == "" {
			return obj, name, nil
		}
		cur, ok = obj[name]
		if !ok {
			return nil, "", fmt.Errorf("%s: no key %q", path, name)
		}
		for rest != "" {
			idx, after, _ := strings.Cut(rest, "]")
			j, err := strconv.Atoi(idx)
			arr, ok := cur.([]any)
			if err != nil || !ok || j < 0 || j >= len(arr) {
				return nil, "", fmt.Errorf("%s: no element [%s]", path, idx)
			}
			cur = arr[j]
			rest = strings.TrimPrefix(after, "[")
		}
	}
	return nil, "", fmt.Errorf("%s: the path ends in an array element", path)
}

// Fuzz fuzzes decode, a study's decoder of the results file named file,
// from seed, the committed file. No input may panic it, an error must name
// the file, and what it accepts must be accepted again once encoded (the
// decoded value is a results file's, whole).
func Fuzz[T any](f *testing.F, file string, seed []byte, decode func(name string, b []byte) (*T, error)) {
	f.Add(seed)
	f.Add([]byte(`{}`))
	f.Add([]byte(`null`))
	f.Fuzz(func(t *testing.T, b []byte) {
		v, err := decode(file, b)
		if err != nil {
			if !strings.Contains(err.Error(), file) {
				t.Fatalf("the error does not name %s: %v", file, err)
			}
			return
		}
		again, err := json.Marshal(v)
		if err != nil {
			t.Fatalf("accepted input does not encode: %v", err)
		}
		if _, err := decode(file, again); err != nil {
			t.Fatalf("accepted input, encoded, is refused: %v", err)
		}
	})
}
