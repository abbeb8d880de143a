package netdata

import (
	"bytes"
	"compress/gzip"
	"errors"
	"io"
	"reflect"
	"slices"
	"strings"
	"testing"
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
	xfer, _ := EncodeInproc([]Row{{Series: "s", Scenario: "lan", Round: 1, Group: "g", StartNs: 1, OK: true, Client: "c", Server: "s", ResponseBytes: 10, ResponseRead: 10, ClientTTLBNs: 5}})
	f.Add(xfer)
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

func i64(v int64) *int64 { return &v }

// sampleRows are rows of both kinds: joined with a capture record (one
// with a latency, one without: a capture that saw no client Finished) and
// without one (an attempt whose packets the capture did not see).
func sampleRows(toolchain string) []Row {
	return []Row{
		{Scenario: "lan", Round: 20, Group: "X25519", Seq: 0, Index: 0, StartNs: 1764590400000000000, OK: true, Client: "10.77.0.1:40000",
			Cap: &Capture{ThsNs: i64(1234567), Complete: true, Group: "X25519", Retransmissions: 0, PacketsC2S: 7, PacketsS2C: 6,
				FrameBytesC2S: 900, FrameBytesS2C: 2400, PayloadBytesC2S: 600, PayloadBytesS2C: 2100},
			ClientNs: 1300000, ServerNs: 1100000, Toolchain: toolchain},
		{Scenario: "lan", Round: 20, Group: "X25519MLKEM768", Seq: 0, Index: 1, StartNs: 1764590400002000000, OK: false, Failure: "timeout", Client: "10.77.0.1:40001",
			Cap:       &Capture{Complete: false, HRR: true, Retransmissions: 3, PacketsC2S: 4, PacketsS2C: 1, FrameBytesC2S: 1400, FrameBytesS2C: 60},
			Toolchain: toolchain},
		{Scenario: "far", Round: 1, Group: "X25519", Seq: 3, Index: 9, StartNs: 1764590400009000000, OK: false, Failure: "refused", Toolchain: toolchain},
	}
}

// TestRecordsRoundTrip: what EncodeRecords writes, ReadRecords reads back
// as the same rows, under either header.
func TestRecordsRoundTrip(t *testing.T) {
	for _, tc := range []string{LegacyToolchain, "go1.24.4"} {
		rows := sampleRows(tc)
		b, err := EncodeRecords(rows)
		if err != nil {
			t.Fatal(err)
		}
		got, err := ReadRecords(bytes.NewReader(b), "records.csv.gz")
		if err != nil {
			t.Fatalf("%s: %v", tc, err)
		}
		if !reflect.DeepEqual(got, rows) {
			t.Errorf("%s: round trip\n got %+v\nwant %+v", tc, got, rows)
		}
	}
}

func gz(s string) []byte {
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	zw.Write([]byte(s))
	zw.Close()
	return b.Bytes()
}

// TestReadRecordsBad: every kind of damage is an error naming the file,
// the line and the column.
func TestReadRecordsBad(t *testing.T) {
	good, _ := EncodeRecords(sampleRows(LegacyToolchain)[:1])
	head := strings.Join(ColumnsV1, ",") + "\n"
	row := "lan,20,X25519,0,0,1,true,,c,1000,true,X25519,false,0,7,6,900,2400,600,2100,5,4"
	set := func(col, v string) string {
		cells := strings.Split(row, ",")
		cells[slices.Index(ColumnsV1, col)] = v
		return head + strings.Join(cells, ",") + "\n"
	}
	for _, tc := range []struct {
		name string
		in   []byte
		want string
	}{
		{"not gzip", []byte(head + row + "\n"), "r.csv.gz: gzip: invalid header"},
		{"truncated gzip", good[:len(good)-5], "r.csv.gz: unexpected EOF"},
		{"empty", gz(""), "r.csv.gz: header is not"},
		{"wrong header", gz(strings.Replace(head, "ths_ns", "ths", 1) + row + "\n"), "r.csv.gz: header is not scenario,round"},
		{"extra column", gz(strings.TrimSuffix(head, "\n") + ",x\n" + row + ",1\n"), "r.csv.gz: header is not"},
		{"short row", gz(head + "lan,20\n"), "r.csv.gz: record on line 2: wrong number of fields"},
		{"bad number", gz(set("ths_ns", "fast")), `r.csv.gz line 2: ths_ns "fast": want a whole number of at least 1`},
		{"zero ths", gz(set("ths_ns", "0")), `r.csv.gz line 2: ths_ns "0": want a whole number of at least 1`},
		{"round 0", gz(set("round", "0")), `r.csv.gz line 2: round "0": want a whole number of at least 1`},
		{"negative bytes", gz(set("frame_bytes_c2s", "-1")), `r.csv.gz line 2: frame_bytes_c2s "-1": want a whole number of at least 0`},
		{"bad bool", gz(set("ok", "yes")), `r.csv.gz line 2: ok "yes": want true or false`},
		{"empty scenario", gz(set("scenario", "")), `r.csv.gz line 2: scenario "": empty, want a value`},
		{"failure without reason", gz(set("ok", "false")), "r.csv.gz line 2: failure is empty"},
		{"capture partly empty", gz(set("cap_complete", "")), `r.csv.gz line 2: ths_ns "1000": the capture's cells must all be empty`},
		{"bytes missing", gz(set("payload_bytes_s2c", "")), `r.csv.gz line 2: payload_bytes_s2c "": want a whole number`},
		{"empty toolchain", gz(strings.Join(Columns, ",") + "\n" + row + ",\n"), `r.csv.gz line 2: toolchain "": empty`},
	} {
		_, err := ReadRecords(bytes.NewReader(tc.in), "r.csv.gz")
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want %q...", tc.name, err, tc.want)
		}
	}
	// An I/O error is wrapped, not swallowed.
	if _, err := ReadRecords(errReader{}, "r.csv.gz"); !errors.Is(err, errBroken) {
		t.Errorf("read error: %v, want it wrapped", err)
	}
}

var errBroken = errors.New("broken disk")

type errReader struct{}

func (errReader) Read([]byte) (int, error) { return 0, errBroken }

func FuzzReadRecords(f *testing.F) {
	for _, tc := range []string{LegacyToolchain, "go1.24.4"} {
		b, _ := EncodeRecords(sampleRows(tc))
		f.Add(b)
	}
	f.Add(gz(strings.Join(ColumnsV1, ",") + "\nlan,1,g,0,0,0,false,reset,,,,,,,,,,,,,,\n"))
	if b, err := EncodeRecords(transferRows()); err == nil {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		rows, err := ReadRecords(bytes.NewReader(b), "records.csv.gz")
		if err != nil {
			if !strings.HasPrefix(err.Error(), "records.csv.gz") {
				t.Fatalf("error does not name the file: %v", err)
			}
			return
		}
		// Whatever reads writes back and reads as the same rows.
		again, err := EncodeRecords(rows)
		if err != nil {
			t.Fatal(err)
		}
		back, err := ReadRecords(bytes.NewReader(again), "records.csv.gz")
		if err != nil || !reflect.DeepEqual(back, rows) {
			t.Fatalf("re-read: %v", err)
		}
	})
}
