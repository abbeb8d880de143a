package netjoin

import (
	"bytes"
	"compress/gzip"
	"io"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"pqrepro/experiments/capture"
)

func TestInprocRoundTrip(t *testing.T) {
	rows := []Row{
		{Series: "lan-20-X25519", Scenario: "lan", Round: 20, Group: "X25519", Seq: 0, Index: 0, StartNs: 100, OK: true, Client: "10.77.0.1:40000", Server: "10.77.0.2:4433", ClientNs: 5, ServerNs: 4, Toolchain: LegacyToolchain},
		{Series: "lan-20-X25519", Scenario: "lan", Round: 20, Group: "X25519", Seq: 1, Index: 1, StartNs: 200, Failure: "timeout", Server: "10.77.0.2:4433", Toolchain: LegacyToolchain},
	}
	b, err := EncodeInproc(rows)
	if err != nil {
		t.Fatal(err)
	}
	got, err := ReadInproc(b, "inproc.csv.gz")
	if err != nil || !reflect.DeepEqual(got, rows) {
		t.Fatalf("round trip: %v\n%+v\nwant %+v", err, got, rows)
	}
}

// TestToolchainColumn: a run whose every row is LegacyToolchain's is
// written without the toolchain column (the bytes runs before the column
// have), one with another toolchain carries it in both files, and both
// read back.
func TestToolchainColumn(t *testing.T) {
	old := []Row{{Series: "lan-20-X25519", Scenario: "lan", Round: 20, Group: "X25519", StartNs: 1, OK: true, Client: "c", Server: "s", Toolchain: LegacyToolchain}}
	both := append(slices.Clone(old), Row{Series: "lan-20-X25519-go1.24.4", Scenario: "lan", Round: 20, Group: "X25519", StartNs: 2, OK: true, Client: "c", Server: "s", Toolchain: "go1.24.4"})
	for _, tc := range []struct {
		rows            []Row
		records, inproc []string
	}{{old, ColumnsV1, InprocColumnsV1}, {both, Columns, InprocColumns}} {
		rb, err := EncodeRecords(tc.rows)
		if err != nil {
			t.Fatal(err)
		}
		ib, err := EncodeInproc(tc.rows)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range []struct {
			b      []byte
			header []string
		}{{rb, tc.records}, {ib, tc.inproc}} {
			if h := header(t, f.b); h != strings.Join(f.header, ",") {
				t.Errorf("header %q, want %q", h, strings.Join(f.header, ","))
			}
		}
		got, err := ReadInproc(ib, "inproc.csv.gz")
		if err != nil || !reflect.DeepEqual(got, tc.rows) {
			t.Fatalf("inproc round trip: %v\n%+v", err, got)
		}
	}
}

func header(t *testing.T, b []byte) string {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	all, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	return strings.SplitN(string(all), "\n", 2)[0]
}

func rec(client string, at int64) capture.Record {
	ch := at + 10
	ths := int64(1000)
	return capture.Record{Client: client, Server: "10.77.0.2:4433", SynNs: &at, ClientHelloNs: &ch, ThsNs: &ths, Complete: true}
}

// A reused 4-tuple is told apart by time: each attempt takes the first
// unused record that starts after it and before the next attempt.
func TestJoinReusedTuple(t *testing.T) {
	ms := int64(time.Millisecond)
	rows := []*Row{
		{Client: "c:1", Server: "10.77.0.2:4433", StartNs: 0, OK: true},
		{Client: "c:1", Server: "10.77.0.2:4433", StartNs: 10 * ms, OK: true},
		{Client: "c:2", Server: "10.77.0.2:4433", StartNs: 20 * ms, OK: true}, // its packets never reached the capture
		{Client: "c:1", Server: "10.77.0.2:4433", StartNs: 30 * ms, OK: false},
	}
	caps := []capture.Record{rec("c:1", 31*ms), rec("c:1", 11*ms), rec("c:1", 1*ms)}
	ji := Join(rows, caps, time.Second)
	if ji.Connections != 3 || ji.Joined != 3 || ji.Unmatched != 1 {
		t.Errorf("join info %+v, want 3 connections, 3 joined, 1 unmatched", ji)
	}
	want := []int64{1 * ms, 11 * ms, -1, 31 * ms}
	for i, r := range rows {
		got := int64(-1)
		if r.Cap != nil {
			got = *r.Cap.SynNs
		}
		if got != want[i] {
			t.Errorf("row %d joined the record at %d, want %d", i, got, want[i])
		}
	}
}

func TestReadInprocBad(t *testing.T) {
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	zw.Write([]byte(strings.Join(InprocColumnsV1, ",") + "\ns,lan,x,X25519,0,0,1,true,,c,s,,\n"))
	zw.Close()
	if _, err := ReadInproc(b.Bytes(), "inproc.csv.gz"); err == nil || !strings.Contains(err.Error(), "inproc.csv.gz line 2") {
		t.Errorf("err = %v", err)
	}
	if _, err := ReadInproc([]byte("plain"), "inproc.csv.gz"); err == nil {
		t.Error("not gzip: no error")
	}
}

func FuzzReadInproc(f *testing.F) {
	good, _ := EncodeInproc([]Row{{Series: "s", Scenario: "lan", Round: 1, Group: "g", StartNs: 1, OK: true, Client: "c", Server: "s"}})
	f.Add(good)
	f.Fuzz(func(t *testing.T, b []byte) {
		rows, err := ReadInproc(b, "inproc.csv.gz")
		if err != nil {
			return
		}
		again, err := EncodeInproc(rows)
		if err != nil {
			t.Fatal(err)
		}
		if back, err := ReadInproc(again, "inproc.csv.gz"); err != nil || !reflect.DeepEqual(back, rows) {
			t.Fatalf("re-read: %v", err)
		}
	})
}
