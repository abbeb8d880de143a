package tlsdata

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"slices"
	"strings"
	"testing"
)

// serverEndRecords are emulatedRecords with the server end's times and
// second ClientHellos. Arrivals are 1 ms later, the flight's end 1 ms
// earlier; the server end misses a few connections and the SYN of a few
// more.
func serverEndRecords(n int, seed uint64) []Record {
	const owd = 1_000_000
	rs := emulatedRecords(n, seed)
	for i, r := range slices.All(rs) {
		if r.HRR && r.ClientHelloNs != nil {
			r.ClientHello2Ns = i64(*r.ClientHelloNs + 2*owd)
		}
		if i%6 != 4 { // else the server-end capture lacks the connection
			r.SrvClientHelloNs = add(r.ClientHelloNs, owd)
			r.SrvClientHello2Ns = add(r.ClientHello2Ns, owd)
			r.SrvServerFlightEndNs = add(r.ServerFlightEndNs, -owd)
			r.SrvClientFinishedNs = add(r.ClientFinishedNs, owd)
		}
		if i%6 < 4 { // else it lacks the SYN, or the connection
			r.SrvSynNs = add(r.SynNs, owd)
		}
		rs[i] = r
	}
	return rs
}

// add is *p + d, nil when p is.
func add(p *int64, d int64) *int64 {
	if p == nil {
		return nil
	}
	return i64(*p + d)
}

// gunzipHeader is the first line of a records.csv.gz.
func gunzipHeader(t *testing.T, b []byte) string {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(zr).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSuffix(line, "\n")
}

// TestServerEndRoundTrip: the six server-end times are written under
// ColumnsServerEnd and read back unchanged, empty cells included.
func TestServerEndRoundTrip(t *testing.T) {
	got := roundTrip(t, serverEndRecords(60, 11), ColumnsServerEnd)
	var hrr2, missing, noSyn int
	for _, r := range got {
		if r.SrvClientHello2Ns != nil {
			hrr2++
		}
		if r.SrvClientHelloNs == nil {
			missing++
		} else if r.SrvSynNs == nil {
			noSyn++
		}
	}
	if hrr2 == 0 || missing == 0 || noSyn == 0 {
		t.Fatalf("sample lacks a case: %d second ClientHellos, %d missed, %d without SYN", hrr2, missing, noSyn)
	}
}

// TestServerEndHeaderOnlyWhenAsked: records without server-end times keep
// the header and bytes they had. MarshalRecordsServerEnd writes
// ColumnsServerEnd anyway, with the six cells empty, and reads back.
func TestServerEndHeaderOnlyWhenAsked(t *testing.T) {
	for _, rs := range [][]Record{sampleRecords(30, 4), emulatedRecords(30, 4)} {
		before, err := MarshalRecords(rs)
		if err != nil {
			t.Fatal(err)
		}
		got, err := ReadRecords(bytes.NewReader(before), "old.csv.gz")
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range got {
			if r.serverEndColumns() {
				t.Fatalf("an older header read with server-end times: %+v", r)
			}
		}
		after, err := MarshalRecords(got)
		if err != nil || !bytes.Equal(before, after) {
			t.Fatalf("older header: re-written bytes differ (%v)", err)
		}
		forced, err := MarshalRecordsServerEnd(rs)
		if err != nil {
			t.Fatal(err)
		}
		if h := gunzipHeader(t, forced); h != strings.Join(ColumnsServerEnd, ",") {
			t.Fatalf("MarshalRecordsServerEnd header %q", h)
		}
		back, err := ReadRecords(bytes.NewReader(forced), "forced.csv.gz")
		if err != nil {
			t.Fatal(err)
		}
		if again, err := MarshalRecords(back); err != nil || !bytes.Equal(again, before) {
			t.Fatalf("forced header: read back and written as before, the bytes differ (%v)", err)
		}
	}
}

// TestServerEndCheck: a second ClientHello needs a HelloRetryRequest, at
// either end.
func TestServerEndCheck(t *testing.T) {
	var base Record
	for _, r := range serverEndRecords(20, 5) {
		if !r.HRR {
			base = r
			break
		}
	}
	for _, mod := range []func(*Record){
		func(r *Record) { r.ClientHello2Ns = i64(1) },
		func(r *Record) { r.SrvClientHello2Ns = i64(1) },
	} {
		r := base
		mod(&r)
		if err := r.Check(); err == nil || !strings.Contains(err.Error(), "HelloRetryRequest") {
			t.Errorf("Check: %v, want the HelloRetryRequest named", err)
		}
	}
}
