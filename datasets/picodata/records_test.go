package picodata_test

import (
	"bytes"
	"compress/gzip"
	"errors"
	"io"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"pqrepro/datasets/picodata"
)

func TestMeasurementsRoundTrip(t *testing.T) {
	ms := []picodata.Measurement{
		{Scheme: "ml-kem-512", Op: "keygen", Iter: 0, Micros: 8968, Cycles: 1192716, Stack: 6200, Heap: 208, OK: true},
		{Scheme: "ml-dsa-87", Op: "sign", Iter: 99, Micros: 1 << 40, Cycles: 1<<64 - 1, Stack: 1<<32 - 1, Heap: 0, OK: false},
	}
	a, err := picodata.EncodeMeasurements(ms)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := picodata.EncodeMeasurements(ms)
	if !bytes.Equal(a, b) {
		t.Fatal("two encodings differ")
	}
	zr, err := gzip.NewReader(bytes.NewReader(a))
	if err != nil {
		t.Fatal(err)
	}
	if !zr.ModTime.IsZero() || zr.Name != "" || zr.OS != 255 {
		t.Errorf("gzip header carries host data: %+v", zr.Header)
	}
	got, err := picodata.DecodeMeasurements(bytes.NewReader(a))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, ms) {
		t.Errorf("round trip:\n got %+v\nwant %+v", got, ms)
	}
	empty, _ := picodata.EncodeMeasurements(nil)
	if got, err := picodata.DecodeMeasurements(bytes.NewReader(empty)); err != nil || len(got) != 0 {
		t.Errorf("empty: %v %v", got, err)
	}
}

func TestHostTimingsRoundTrip(t *testing.T) {
	hs := []picodata.HostTiming{
		{Scheme: "ml-kem-512", Op: "keygen", Lib: "circl", N: 2, Durations: []time.Duration{20000, 21000}},
		{Scheme: "ml-kem-512", Op: "keygen", Lib: "crypto/mlkem", N: 1, Durations: []time.Duration{15000}},
	}
	b, err := picodata.EncodeHostTimings(hs)
	if err != nil {
		t.Fatal(err)
	}
	got, err := picodata.DecodeHostTimings(bytes.NewReader(b))
	if err != nil || !reflect.DeepEqual(got, hs) {
		t.Errorf("round trip %+v (%v)", got, err)
	}
	head := strings.Join(picodata.HostTimingsHeader, ",") + "\n"
	for name, in := range map[string][]byte{
		"not gzip": []byte("x"), "bad header": gz("a,b\n"), "negative": gz(head + "a,b,c,0,-1\n"),
		"no library": gz(head + "a,b,,0,1\n"), "short": gz(head + "a,b,c,0\n"),
	} {
		if _, err := picodata.DecodeHostTimings(bytes.NewReader(in)); !errors.Is(err, picodata.ErrRecords) {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func FuzzDecodeHostTimings(f *testing.F) {
	b, _ := picodata.EncodeHostTimings([]picodata.HostTiming{{Scheme: "a", Op: "b", Lib: "c", N: 1, Durations: []time.Duration{5}}})
	f.Add(b)
	f.Fuzz(func(t *testing.T, b []byte) {
		hs, err := picodata.DecodeHostTimings(bytes.NewReader(b))
		if err != nil {
			return
		}
		for _, h := range hs {
			if h.N != len(h.Durations) || h.N == 0 {
				t.Fatalf("inconsistent %+v", h)
			}
		}
	})
}

func gz(s string) []byte {
	var b bytes.Buffer
	w := gzip.NewWriter(&b)
	w.Write([]byte(s))
	w.Close()
	return b.Bytes()
}

func TestDecodeMeasurementsRejects(t *testing.T) {
	head := strings.Join(picodata.MeasurementsHeader, ",") + "\n"
	good, _ := picodata.EncodeMeasurements([]picodata.Measurement{{Scheme: "a", Op: "b", OK: true}})
	for name, in := range map[string][]byte{
		"not gzip":     []byte("scheme,op\n"),
		"truncated":    good[:len(good)-6],
		"empty":        gz(""),
		"wrong header": gz("scheme,op,i,us,cycles,stack,heap\n"),
		"short row":    gz(head + "a,b,1,2,3,4,5\n"),
		"bad number":   gz(head + "a,b,1,2,x,4,5,1\n"),
		"negative":     gz(head + "a,b,-1,2,3,4,5,1\n"),
		"bad ok":       gz(head + "a,b,1,2,3,4,5,yes\n"),
		"empty scheme": gz(head + ",b,1,2,3,4,5,1\n"),
		"stack > 32b":  gz(head + "a,b,1,2,3,4294967296,5,1\n"),
	} {
		if _, err := picodata.DecodeMeasurements(bytes.NewReader(in)); !errors.Is(err, picodata.ErrRecords) {
			t.Errorf("%s: error %v, want picodata.ErrRecords", name, err)
		}
	}
}

func FuzzDecodeMeasurements(f *testing.F) {
	good, _ := picodata.EncodeMeasurements([]picodata.Measurement{{Scheme: "ml-kem-512", Op: "keygen", Micros: 1, OK: true}})
	f.Add(good)
	f.Add(gz(strings.Join(picodata.MeasurementsHeader, ",") + "\na,b,1,2,3,4,5,0\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		ms, err := picodata.DecodeMeasurements(bytes.NewReader(b))
		if err != nil {
			return
		}
		// Whatever decodes re-encodes and decodes to the same records.
		again, err := picodata.EncodeMeasurements(ms)
		if err != nil {
			t.Fatal(err)
		}
		ms2, err := picodata.DecodeMeasurements(bytes.NewReader(again))
		if err != nil || !reflect.DeepEqual(ms, ms2) && len(ms) > 0 {
			t.Fatalf("re-encoding changed the records: %v", err)
		}
	})
}

// The decoders' errors wrap the cause as well as ErrRecords, so that a
// caller can tell a truncated file from a damaged row.
func TestDecodeErrorsWrapTheCause(t *testing.T) {
	good, _ := picodata.EncodeMeasurements([]picodata.Measurement{{Scheme: "a", Op: "b", OK: true}})
	head := strings.Join(picodata.MeasurementsHeader, ",") + "\n"
	for _, tc := range []struct {
		name  string
		in    []byte
		cause error
		text  string
	}{
		{"truncated gzip", good[:len(good)-6], io.ErrUnexpectedEOF, "bad measurements file: row 3: unexpected EOF"},
		{"not gzip", []byte("scheme,op,i,us,cycles,stack,heap,ok\n"), gzip.ErrHeader, "bad measurements file: not gzip: gzip: invalid header"},
		{"bad number", gz(head + "a,b,1,2,x,4,5,1\n"), strconv.ErrSyntax, `bad measurements file: row 2: strconv.ParseUint: parsing "x": invalid syntax`},
	} {
		_, err := picodata.DecodeMeasurements(bytes.NewReader(tc.in))
		if !errors.Is(err, picodata.ErrRecords) || !errors.Is(err, tc.cause) || err.Error() != tc.text {
			t.Errorf("%s: error %v, want %q wrapping ErrRecords and %v", tc.name, err, tc.text, tc.cause)
		}
	}
}

// TestMeasurementsLoopColumns: the rejection-loop counts ride in four
// more columns only when a measurement has them; a file without them
// keeps today's header, and impossible counts are refused.
func TestMeasurementsLoopColumns(t *testing.T) {
	plain := []picodata.Measurement{{Scheme: "ml-kem-512", Op: "keygen", Cycles: 1, OK: true}}
	a, _ := picodata.EncodeMeasurements(plain)
	zr, _ := gzip.NewReader(bytes.NewReader(a))
	head, _ := io.ReadAll(zr)
	if !strings.HasPrefix(string(head), strings.Join(picodata.MeasurementsHeader, ",")+"\n") {
		t.Errorf("no counts: header %q, want today's", strings.SplitN(string(head), "\n", 2)[0])
	}
	ms := append(plain, picodata.Measurement{Scheme: "ml-dsa-44", Op: "sign", Cycles: 9, OK: true,
		Loop: picodata.DSALoop{Iters: 5, R0Checks: 2, Ct0Checks: 1, Hints: 1}})
	b, err := picodata.EncodeMeasurements(ms)
	if err != nil {
		t.Fatal(err)
	}
	got, err := picodata.DecodeMeasurements(bytes.NewReader(b))
	if err != nil || !reflect.DeepEqual(got, ms) {
		t.Fatalf("round trip with counts: %+v, %v", got, err)
	}
	for _, bad := range []picodata.DSALoop{{Iters: 0, Hints: 1}, {Iters: 2, R0Checks: 3, Ct0Checks: 1, Hints: 1}, {Iters: 3, R0Checks: 2, Ct0Checks: 2, Hints: 0}} {
		ms[1].Loop = bad
		b, _ := picodata.EncodeMeasurements(ms)
		if _, err := picodata.DecodeMeasurements(bytes.NewReader(b)); err == nil || !strings.Contains(err.Error(), "cannot come from one signature") {
			t.Errorf("counts %+v: err %v", bad, err)
		}
	}
}
