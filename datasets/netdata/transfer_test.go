package netdata

import (
	"bytes"
	"compress/gzip"
	"flag"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/golden")

// transferRows are rows of the transfer block (our extension): one with a
// time to last byte, one whose response ended short (incomplete, with its
// reason and no time), one without a capture record.
func transferRows() []Row {
	return []Row{
		{Scenario: "far", Round: 200, Group: "X25519", Seq: 0, Index: 0, StartNs: 1764590400000000000, OK: true, Client: "10.77.0.1:40000",
			Cap:      &Capture{ThsNs: i64(79000000), Complete: true, Group: "X25519", PacketsC2S: 40, PacketsS2C: 80, FrameBytesC2S: 3000, FrameBytesS2C: 110000, PayloadBytesC2S: 900, PayloadBytesS2C: 104000},
			ClientNs: 160000000, ServerNs: 80000000, Toolchain: "go1.24.4",
			ResponseBytes: 102400, ResponseRead: 102400, ClientTTLBNs: 400000000,
			Xfer: &Transfer{TTLBNs: i64(320000000), TTLBSynNs: i64(399000000), RoundTrips: 4, Stalls: 2}},
		{Scenario: "far", Round: 200, Group: "X25519", Seq: 1, Index: 1, StartNs: 1764590401000000000, OK: false, Failure: "eof", Client: "10.77.0.1:40001",
			Cap:       &Capture{ThsNs: i64(79000000), Complete: true, Group: "X25519", PacketsC2S: 20, PacketsS2C: 30},
			Toolchain: "go1.24.4", ResponseBytes: 102400, ResponseRead: 60000,
			Xfer: &Transfer{RoundTrips: 3, Incomplete: IncompleteShort}},
		{Scenario: "far", Round: 200, Group: "X25519", Seq: 2, Index: 2, StartNs: 1764590402000000000, OK: true, Client: "10.77.0.1:40002",
			Toolchain: "go1.24.4", ResponseBytes: 102400, ResponseRead: 102400, ClientTTLBNs: 410000000,
			Xfer: &Transfer{Incomplete: IncompleteNoCapture}},
	}
}

// TestGoldenHeaders: each kind of run is written under its own header, byte
// for byte as the golden files say: runs before the toolchain column
// (ColumnsV1), runs with it (Columns), and the transfer block
// (TransferColumns); the older two are what every committed run has, so
// adding the transfer block must leave them as they are.
func TestGoldenHeaders(t *testing.T) {
	for _, tc := range []struct {
		name string
		rows []Row
		want []string
	}{
		{"records-v1", sampleRows(LegacyToolchain), ColumnsV1},
		{"records-v2", sampleRows("go1.24.4"), Columns},
		{"transfer", transferRows(), TransferColumns},
	} {
		b, err := EncodeRecords(tc.rows)
		if err != nil {
			t.Fatal(err)
		}
		if h := header(t, b); h != strings.Join(tc.want, ",") {
			t.Errorf("%s: header %q, want %q", tc.name, h, strings.Join(tc.want, ","))
		}
		zr, err := gzip.NewReader(bytes.NewReader(b))
		if err != nil {
			t.Fatal(err)
		}
		text, err := io.ReadAll(zr)
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join("testdata", "golden", tc.name+".csv")
		if *update {
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, text, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%v (run go test -update once)", err)
		}
		if !bytes.Equal(text, want) {
			t.Errorf("%s: written\n%s\nwant (%s)\n%s", tc.name, text, path, want)
		}
		got, err := ReadRecords(bytes.NewReader(gz(string(want))), tc.name)
		if err != nil || !reflect.DeepEqual(got, tc.rows) {
			t.Errorf("%s: golden file reads back as\n%+v (%v)\nwant %+v", tc.name, got, err, tc.rows)
		}
	}
}

// A mix of handshake-only and transfer rows keeps the handshake rows'
// transfer cells empty, and inproc files carry the in-process cells.
func TestTransferInprocRoundTrip(t *testing.T) {
	rows := transferRows()
	for i := range rows {
		rows[i].Cap, rows[i].Xfer, rows[i].Series, rows[i].Server = nil, nil, "far-102400B-X25519-go1.24.4", "10.77.0.2:4433"
	}
	rows = append(rows, Row{Series: "lan-20-X25519-go1.24.4", Scenario: "lan", Round: 20, Group: "X25519", StartNs: 1, OK: true, Client: "c", Server: "s", Toolchain: "go1.24.4"})
	b, err := EncodeInproc(rows)
	if err != nil {
		t.Fatal(err)
	}
	if h := header(t, b); h != strings.Join(TransferInprocColumns, ",") {
		t.Errorf("header %q", h)
	}
	got, err := ReadInproc(b, "transfer-inproc.csv.gz")
	if err != nil || !reflect.DeepEqual(got, rows) {
		t.Fatalf("round trip: %v\n%+v\nwant %+v", err, got, rows)
	}
}

// TestReadTransferBad: a transfer row is a size > 0 with either a time to
// last byte or the reason there is none, never both; a handshake-only
// row has no transfer cells.
func TestReadTransferBad(t *testing.T) {
	head := strings.Join(TransferColumns, ",") + "\n"
	base := "far,200,X25519,0,0,1,true,,c,1000,true,X25519,false,0,7,6,900,2400,600,2100,5,4,go1.24.4,"
	readBad(t, head, base, []badCase{
		{"zero size", "0,0,,5,6,2,0,", `response_bytes "0": want a whole number of at least 1`},
		{"negative size", "-5,0,,5,6,2,0,", `response_bytes "-5": want a whole number of at least 1`},
		{"ttlb and incomplete", "10,10,,5,6,2,0,short_response", `incomplete "short_response": must be empty when ttlb_ns is given`},
		{"neither", "10,10,,,,2,0,", `incomplete "": empty, want the reason`},
		{"syn without ttlb", "10,5,,,6,2,0,short_response", `ttlb_syn_ns "6": given without ttlb_ns`},
		{"zero ttlb", "10,10,,0,6,2,0,", `ttlb_ns "0": want a whole number of at least 1`},
		{"negative stalls", "10,10,,5,6,2,-1,", `stalls "-1": want a whole number of at least 0`},
		{"cells without size", ",,,5,,,,", `ttlb_ns "5": must be empty without response_bytes`},
	})
}

// controlledRows are rows of the controlled block (issue 41): the
// handshake-only connection (size 0) and a transfer, each with the
// congestion control read back and its place in the series.
func controlledRows() []Row {
	rows := transferRows()[:2]
	for i := range rows {
		rows[i].Controlled, rows[i].CC, rows[i].Position = true, "cubic", 2*i+1
	}
	x0, x1 := *rows[0].Xfer, *rows[1].Xfer
	x0.RespWindow, x0.HsAckedSegs = 7, 3   // the mechanism's W and A
	x1.RespWindow, x1.HsAckedSegs = -1, -1 // no time to last byte: none
	rows[0].Xfer, rows[1].Xfer = &x0, &x1
	rows = append([]Row{{Scenario: "far", Round: 200, Group: "X25519MLKEM768", Seq: 0, Index: 0, StartNs: 1764590399000000000, OK: true, Client: "10.77.0.1:39999",
		Cap:      &Capture{ThsNs: i64(80000000), Complete: true, Group: "X25519MLKEM768", PacketsC2S: 9, PacketsS2C: 8},
		ClientNs: 161000000, ServerNs: 81000000, Toolchain: "go1.24.4", Controlled: true, CC: "cubic", Position: 0}}, rows...)
	return rows
}

// TestControlledGolden: the controlled block's rows are written under
// ControlledColumns, byte for byte as the golden file says, size 0 with
// empty transfer cells, and read back unchanged; the older headers'
// golden files (TestGoldenHeaders) are untouched by the new columns.
func TestControlledGolden(t *testing.T) {
	rows := controlledRows()
	b, err := EncodeRecords(rows)
	if err != nil {
		t.Fatal(err)
	}
	if h := header(t, b); h != strings.Join(ControlledColumns, ",") {
		t.Fatalf("header %q", h)
	}
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	text, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join("testdata", "golden", "controlled.csv")
	if *update {
		if err := os.WriteFile(path, text, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update once)", err)
	}
	if !bytes.Equal(text, want) {
		t.Errorf("written\n%s\nwant (%s)\n%s", text, path, want)
	}
	got, err := ReadRecords(bytes.NewReader(gz(string(want))), "controlled")
	if err != nil || !reflect.DeepEqual(got, rows) {
		t.Errorf("golden file reads back as\n%+v (%v)\nwant %+v", got, err, rows)
	}
	// Without a controlled row the header is the transfer block's, as
	// before the controlled block existed.
	if b, _ := EncodeRecords(transferRows()); header(t, b) != strings.Join(TransferColumns, ",") {
		t.Errorf("transfer rows without the controlled block: header %q", header(t, b))
	}
	// inproc keeps cc and position too.
	in := controlledRows()
	for i := range in {
		in[i].Cap, in[i].Xfer, in[i].Series, in[i].Server = nil, nil, "far-102400B-cubic-go1.24.4", "10.77.0.2:4433"
	}
	ib, err := EncodeInproc(in)
	if err != nil {
		t.Fatal(err)
	}
	if h := header(t, ib); h != strings.Join(ControlledInprocColumns, ",") {
		t.Errorf("inproc header %q", h)
	}
	if got, err := ReadInproc(ib, "transfer-inproc.csv.gz"); err != nil || !reflect.DeepEqual(got, in) {
		t.Errorf("inproc round trip: %v\n%+v\nwant %+v", err, got, in)
	}
}

// TestReadControlledBad: a controlled row needs a position; its size 0
// (the handshake-only connection) has no time to last byte; sizes stay
// >= 0; the older transfer header still refuses size 0.
func TestReadControlledBad(t *testing.T) {
	head := strings.Join(ControlledColumns, ",") + "\n"
	base := "far,200,X25519,0,0,1,true,,c,1000,true,X25519,false,0,7,6,900,2400,600,2100,5,4,go1.24.4,"
	readBad(t, head, base, []badCase{
		{"no position", "10,10,,5,6,2,0,,bbr,,,", `position "": want a whole number of at least 0`},
		{"negative position", "10,10,,5,6,2,0,,bbr,-1,,", `position "-1": want a whole number of at least 0`},
		{"negative size", "-5,0,,5,6,2,0,,bbr,0,,", `response_bytes "-5": want a whole number of at least 0`},
		{"size 0 with a ttlb", "0,0,,5,6,2,0,,bbr,0,,", `ttlb_ns "5": must be empty for size 0`},
		{"size 0 incomplete", "0,0,,,,,,short_response,bbr,0,,", `incomplete "short_response": must be empty for size 0`},
		{"size 0 with a window", "0,0,,,,,,,bbr,0,4,", `resp_window "4": must be empty for size 0`},
		{"cc without size", ",,,,,,,,bbr,,,", `cc "bbr": must be empty without response_bytes`},
		{"window without a ttlb", "10,5,,,,2,0,short_response,bbr,0,4,", `resp_window "4": must be empty without ttlb_ns`},
		{"acked without a ttlb", "10,5,,,,2,0,short_response,bbr,0,,2", `hs_acked_segs "2": must be empty without ttlb_ns`},
		{"negative window", "10,10,,5,6,2,0,,bbr,0,-1,2", `resp_window "-1": want a whole number of at least 0`},
		{"fractional acked", "10,10,,5,6,2,0,,bbr,0,4,1.5", `hs_acked_segs "1.5": want a whole number`},
	})
	ok := "0,0,,,,,,,bbr,3,,"
	rows, err := ReadRecords(bytes.NewReader(gz(head+base+ok+"\n")), "t.csv.gz")
	if err != nil || len(rows) != 1 || !rows[0].Controlled || rows[0].ResponseBytes != 0 || rows[0].CC != "bbr" || rows[0].Position != 3 || rows[0].Xfer != nil {
		t.Errorf("size 0 row: %+v, %v", rows, err)
	}
}

// badCase is a row's transfer cells and the error they must cause.
type badCase struct{ name, xfer, want string }

// readBad reads each case's row (head, base and its cells) and wants its
// error.
func readBad(t *testing.T, head, base string, cases []badCase) {
	t.Helper()
	for _, tc := range cases {
		_, err := ReadRecords(bytes.NewReader(gz(head+base+tc.xfer+"\n")), "t.csv.gz")
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want ...%q...", tc.name, err, tc.want)
		}
	}
}
