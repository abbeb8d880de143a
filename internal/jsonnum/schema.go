package jsonnum

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// Advice is what to do about a results file (file, as the error names
// it) that does not read. A results file is an output of the build: the
// build writes it again, or git restores the committed one with the lock
// entry that seals it (a file edited and re-sealed by hand leaves the
// build nothing to redo).
func Advice(file string) string {
	const rebuild = "rebuild it with `go run mage.go build`"
	if !strings.HasPrefix(file, "results/") || strings.ContainsAny(file, " \t") {
		return rebuild
	}
	return rebuild + ", or restore the committed file with `git checkout -- " + file + " pqrepro.lock`"
}

// A FieldError says where a results file breaks its schema and how.
// Field is the JSON path ("comparisons[2].diff_pct"), empty for the
// whole file; Problem is what is wrong ("want a number, got string
// \"12.3\"").
type FieldError struct {
	File    string
	Field   string
	Problem string
}

func (e *FieldError) Error() string {
	if e.Field == "" {
		return fmt.Sprintf("%s: %s; %s", e.File, e.Problem, Advice(e.File))
	}
	return fmt.Sprintf("%s: field %s: %s; %s", e.File, e.Field, e.Problem, Advice(e.File))
}

// check reports the first place where the JSON value v (decoded with
// UseNumber) does not fit the type t, as a FieldError without File.
//
// The schema is the Go type the writer encodes, read strictly: every key
// is a field of the type, spelt exactly (encoding/json would also take
// "Diff_Pct"); every field without omitempty or omitzero is present,
// since the writer always writes it; a number is a JSON number (a string
// "12.3" is not), in range for its Go type and for its field's range tag
// (`range:"0,1"`: inclusive bounds, either may be empty); null only
// where the writer writes null (Num's NaN, a nil pointer, slice or map).
// Types with their own UnmarshalJSON other than Num are left to it.
func check(t reflect.Type, v any, path string, r bounds) *FieldError {
	fail := func(format string, args ...any) *FieldError {
		return &FieldError{Field: path, Problem: fmt.Sprintf(format, args...)}
	}
	if v == nil {
		switch t.Kind() {
		case reflect.Pointer, reflect.Slice, reflect.Map, reflect.Interface:
			return nil
		}
		if t == numType {
			return nil
		}
		return fail("want %s, got null", want(t))
	}
	switch {
	case t == numType:
		n, ok := v.(json.Number)
		if !ok {
			return fail("want a number or null, got %s", got(v))
		}
		return r.check(path, n, 64)
	case t == rawType || t.Kind() == reflect.Interface:
		return nil
	case reflect.PointerTo(t).Implements(unmarshalerType) || t.Implements(unmarshalerType):
		return nil
	}
	switch t.Kind() {
	case reflect.Pointer:
		return check(t.Elem(), v, path, r)
	case reflect.Struct:
		obj, ok := v.(map[string]any)
		if !ok {
			return fail("want an object, got %s", got(v))
		}
		// An unknown key first: a renamed field is also a missing one,
		// and the unknown name is the one to look for.
		fields := fieldsOf(t)
		for _, k := range slices.Sorted(maps.Keys(obj)) {
			if !slices.ContainsFunc(fields, func(f field) bool { return f.name == k }) {
				return &FieldError{Field: join(path, k), Problem: "unknown field (not in the schema of the analysis that reads the file)"}
			}
		}
		for _, f := range fields {
			e, ok := obj[f.name]
			if !ok {
				if f.required {
					return &FieldError{Field: join(path, f.name), Problem: "missing (the analysis always writes it)"}
				}
				continue
			}
			if err := check(f.typ, e, join(path, f.name), f.bounds); err != nil {
				return err
			}
		}
		return nil
	case reflect.Map:
		obj, ok := v.(map[string]any)
		if !ok {
			return fail("want an object, got %s", got(v))
		}
		for _, k := range slices.Sorted(maps.Keys(obj)) {
			if err := check(t.Elem(), obj[k], join(path, k), r); err != nil {
				return err
			}
		}
		return nil
	case reflect.Slice, reflect.Array:
		if t.Elem().Kind() == reflect.Uint8 && t.Kind() == reflect.Slice {
			if _, ok := v.(string); !ok {
				return fail("want a base64 string, got %s", got(v))
			}
			return nil
		}
		arr, ok := v.([]any)
		if !ok {
			return fail("want an array, got %s", got(v))
		}
		if t.Kind() == reflect.Array && len(arr) != t.Len() {
			return fail("want %d elements, got %d", t.Len(), len(arr))
		}
		for i, e := range arr {
			if err := check(t.Elem(), e, fmt.Sprintf("%s[%d]", path, i), r); err != nil {
				return err
			}
		}
		return nil
	case reflect.String:
		if _, ok := v.(string); !ok {
			return fail("want a string, got %s", got(v))
		}
		return nil
	case reflect.Bool:
		if _, ok := v.(bool); !ok {
			return fail("want true or false, got %s", got(v))
		}
		return nil
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		n, ok := v.(json.Number)
		if !ok {
			return fail("want %s, got %s", want(t), got(v))
		}
		var err error
		if t.Kind() >= reflect.Uint { // the unsigned kinds follow the signed ones
			_, err = strconv.ParseUint(string(n), 10, t.Bits())
		} else {
			_, err = strconv.ParseInt(string(n), 10, t.Bits())
		}
		if err != nil {
			return fail("want %s of %d bits, got %s", want(t), t.Bits(), n)
		}
		return r.check(path, n, 64)
	case reflect.Float32, reflect.Float64:
		n, ok := v.(json.Number)
		if !ok {
			return fail("want a number, got %s", got(v))
		}
		return r.check(path, n, t.Bits())
	}
	return fail("has Go type %s, which results files do not use", t)
}

var (
	numType         = reflect.TypeFor[Num]()
	rawType         = reflect.TypeFor[json.RawMessage]()
	unmarshalerType = reflect.TypeFor[json.Unmarshaler]()
)

// bounds is a field's range tag: inclusive, NaN for no bound.
type bounds struct{ lo, hi float64 }

var noBounds = bounds{math.NaN(), math.NaN()}

// check parses n as a float of bits bits and reports a value out of
// range for it or for b.
func (b bounds) check(path string, n json.Number, bits int) *FieldError {
	f, err := strconv.ParseFloat(string(n), bits)
	if err != nil {
		return &FieldError{Field: path, Problem: fmt.Sprintf("want a finite number, got %s", n)}
	}
	if f < b.lo || f > b.hi {
		return &FieldError{Field: path, Problem: fmt.Sprintf("want a number %s, got %s", b, n)}
	}
	return nil
}

func (b bounds) String() string {
	switch {
	case math.IsNaN(b.hi):
		return fmt.Sprintf(">= %g", b.lo)
	case math.IsNaN(b.lo):
		return fmt.Sprintf("<= %g", b.hi)
	}
	return fmt.Sprintf("in [%g, %g]", b.lo, b.hi)
}

// parseBounds reads a range tag, "lo,hi" with either bound empty.
func parseBounds(tag string) (bounds, error) {
	lo, hi, ok := strings.Cut(tag, ",")
	b := noBounds
	if !ok {
		return b, fmt.Errorf("range tag %q: want \"lo,hi\"", tag)
	}
	var err error
	if lo != "" {
		if b.lo, err = strconv.ParseFloat(lo, 64); err != nil {
			return b, fmt.Errorf("range tag %q: %w", tag, err)
		}
	}
	if hi != "" {
		if b.hi, err = strconv.ParseFloat(hi, 64); err != nil {
			return b, fmt.Errorf("range tag %q: %w", tag, err)
		}
	}
	return b, nil
}

// field is a struct field as encoding/json names it.
type field struct {
	name     string
	typ      reflect.Type
	required bool
	bounds   bounds
}

var fieldCache sync.Map // reflect.Type -> []field

// fieldsOf lists t's JSON fields, an embedded struct's promoted. A bad
// range tag is a bug of the type and panics.
func fieldsOf(t reflect.Type) []field {
	if fs, ok := fieldCache.Load(t); ok {
		return fs.([]field)
	}
	var fs []field
	for _, sf := range reflect.VisibleFields(t) {
		if !sf.IsExported() || len(sf.Index) > 1 && !promoted(t, sf.Index) {
			continue
		}
		tag, hasTag := sf.Tag.Lookup("json")
		name, opts, _ := strings.Cut(tag, ",")
		if name == "-" && opts == "" {
			continue
		}
		if k := sf.Type.Kind(); sf.Anonymous && !hasTag && (k == reflect.Struct || k == reflect.Pointer && sf.Type.Elem().Kind() == reflect.Struct) {
			continue // its fields are listed by VisibleFields
		}
		if name == "" {
			name = sf.Name
		}
		f := field{name: name, typ: sf.Type, bounds: noBounds,
			required: !slices.ContainsFunc(strings.Split(opts, ","), func(o string) bool { return o == "omitempty" || o == "omitzero" })}
		if rt, ok := sf.Tag.Lookup("range"); ok {
			b, err := parseBounds(rt)
			if err != nil {
				panic(fmt.Sprintf("jsonnum: %s.%s: %v", t, sf.Name, err))
			}
			if !numeric(sf.Type) {
				panic(fmt.Sprintf("jsonnum: %s.%s: a range tag on %s, which holds no number", t, sf.Name, sf.Type))
			}
			f.bounds = b
		}
		fs = append(fs, f)
	}
	fieldCache.Store(t, fs)
	return fs
}

// numeric reports whether t is a number, or pointers, slices, arrays or
// maps of numbers: what a range tag may bound.
func numeric(t reflect.Type) bool {
	for t != numType {
		switch t.Kind() {
		case reflect.Pointer, reflect.Slice, reflect.Array, reflect.Map:
			t = t.Elem()
			continue
		case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
			reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Float32, reflect.Float64:
			return true
		}
		return false
	}
	return true
}

// promoted reports whether the field at index is reached through
// untagged embedded structs only, as encoding/json promotes fields.
func promoted(t reflect.Type, index []int) bool {
	for _, i := range index[:len(index)-1] {
		sf := t.Field(i)
		if _, tagged := sf.Tag.Lookup("json"); !sf.Anonymous || tagged {
			return false
		}
		t = sf.Type
		if t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
	}
	return true
}

// want names what a value of type t looks like in JSON.
func want(t reflect.Type) string {
	switch t.Kind() {
	case reflect.Struct:
		return "an object"
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return "an integer"
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return "an integer >= 0"
	case reflect.Float32, reflect.Float64:
		return "a number"
	}
	return "a value"
}

// got describes a JSON value for an error: its kind and, when short,
// its text.
func got(v any) string {
	switch x := v.(type) {
	case string:
		if len(x) > 40 {
			return fmt.Sprintf("string %q...", x[:40])
		}
		return fmt.Sprintf("string %q", x)
	case json.Number:
		return "number " + string(x)
	case bool:
		return fmt.Sprintf("%t", x)
	case []any:
		return "an array"
	case map[string]any:
		return "an object"
	}
	return fmt.Sprintf("%T", v)
}

var ident = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_-]*$`)

// join appends a key to a JSON path: .key, or ["key"] when the key is
// not a plain name.
func join(path, key string) string {
	switch {
	case !ident.MatchString(key):
		return path + "[" + strconv.Quote(key) + "]"
	case path == "":
		return key
	}
	return path + "." + key
}

// syntaxProblem says what is wrong with text that is not one JSON value.
func syntaxProblem(err error, size int) string {
	var se *json.SyntaxError
	switch {
	case errors.As(err, &se) && int(se.Offset) >= size:
		return fmt.Sprintf("not valid JSON: %v at the end of the file (truncated?)", se)
	case errors.As(err, &se):
		return fmt.Sprintf("not valid JSON: %v at byte %d", se, se.Offset)
	case errors.Is(err, io.ErrUnexpectedEOF):
		return "not valid JSON: the file ends inside a value (truncated?)"
	}
	return "not valid JSON: " + err.Error()
}
