package tlsdata

import (
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
)

func i64(v int64) *int64 { return &v }

// sampleRecords makes n plausible records over a few configurations,
// deterministically from seed; every fourth is a warm-up and a few have
// absent values.
func sampleRecords(n int, seed uint64) []Record {
	rng := rand.New(rand.NewPCG(seed, 1))
	cfgs := []ConfigID{
		{CertKey: "ed25519", Group: "X25519"},
		{CertKey: "mldsa87", Group: "X25519"},
		{CertKey: "ecdsa-p256", Group: "X25519MLKEM768", Chain: true},
		{CertKey: "ed25519", Group: "MLKEM1024", HRR: true},
		{CertKey: "mldsa65", Group: "SecP384r1MLKEM1024", HRR: true, Stack: StackOpenSSL},
	}
	out := make([]Record, n)
	t := int64(1_780_000_000_000_000_000)
	for i := range out {
		c := cfgs[rng.IntN(len(cfgs))]
		t += 1_000_000 + rng.Int64N(1_000_000)
		ths := 2_000_000 + rng.Int64N(8_000_000)
		r := Record{
			Seq: i * 2, Config: c.ID(), CertKey: c.CertKey, Group: c.Group, Chain: c.Chain, Warmup: i%4 == 0,
			Client: fmt.Sprintf("127.0.0.1:%d", 40000+i), Server: "127.0.0.1:8443",
			SynNs: i64(t), ClientHelloNs: i64(t + 60_000), ServerHelloNs: i64(t + 900_000),
			ServerFlightEndNs: i64(t + 950_000), ClientFinishedNs: i64(t + 60_000 + ths), FinNs: i64(t + 70_000 + ths),
			HRR: c.HRR, NegotiatedGroup: c.Group, Retransmissions: rng.IntN(2),
			PacketsC2S: 6, PacketsS2C: 7, FrameBytesC2S: 1800, FrameBytesS2C: 9000,
			TCPPayloadBytesC2S: 1400, TCPPayloadBytesS2C: 8600, ThsNs: i64(ths), Complete: true,
			InprocClientNs: i64(ths + 150_000), InprocServerNs: i64(ths - 100_000),
			Stack: c.StackName(), Path: KnownPaths[i%len(KnownPaths)],
		}
		if i%7 == 3 { // a connection the capture saw only partly
			r.ClientFinishedNs, r.ThsNs, r.FinNs, r.Complete = nil, nil, nil, false
			r.InprocServerNs = nil
		}
		if i%11 == 5 {
			r.NegotiatedGroup, r.ServerHelloNs, r.ServerFlightEndNs = "", nil, nil
			r.ClientFinishedNs, r.ThsNs, r.Complete = nil, nil, false
		}
		out[i] = r
	}
	return out
}

func TestRoundTrip(t *testing.T) {
	rs := sampleRecords(200, 1)
	b, err := MarshalRecords(rs)
	if err != nil {
		t.Fatal(err)
	}
	got, err := ReadRecords(bytes.NewReader(b), "records.csv.gz")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, rs) {
		t.Fatalf("round trip differs:\n got %+v\nwant %+v", got[0], rs[0])
	}
	// Same records, same bytes; gzip header carries no name and no time.
	b2, _ := MarshalRecords(slices.Clone(rs))
	if !bytes.Equal(b, b2) {
		t.Fatal("two writes of the same records differ")
	}
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	if zr.Name != "" || !zr.ModTime.IsZero() || zr.Comment != "" {
		t.Fatalf("gzip header has name %q, time %v, comment %q; want none", zr.Name, zr.ModTime, zr.Comment)
	}
}

func TestPlainCSVIsRead(t *testing.T) {
	rs := sampleRecords(5, 2)
	var b bytes.Buffer
	if err := writeCSV(&b, rs); err != nil {
		t.Fatal(err)
	}
	want := ColumnsV1
	for _, r := range rs {
		if r.StackName() != StackGo || r.PathOrDefault() != DefaultPath {
			want = Columns
		}
	}
	if !strings.HasPrefix(b.String(), strings.Join(want, ",")+"\n") {
		t.Fatalf("header line is %q", strings.SplitN(b.String(), "\n", 2)[0])
	}
	got, err := ReadRecords(&b, "r.csv")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, rs) {
		t.Fatal("plain CSV round trip differs")
	}
}

func TestParseConfig(t *testing.T) {
	good := map[string]ConfigID{
		"ed25519/X25519":                      {CertKey: "ed25519", Group: "X25519"},
		"mldsa87/X25519":                      {CertKey: "mldsa87", Group: "X25519"},
		"ed25519/SecP384r1MLKEM1024":          {CertKey: "ed25519", Group: "SecP384r1MLKEM1024"},
		"ecdsa-p256/X25519MLKEM768/chain":     {CertKey: "ecdsa-p256", Group: "X25519MLKEM768", Chain: true},
		"ed25519/MLKEM1024/hrr":               {CertKey: "ed25519", Group: "MLKEM1024", HRR: true},
		"mldsa44/SecP256r1MLKEM768/chain/hrr": {CertKey: "mldsa44", Group: "SecP256r1MLKEM768", Chain: true, HRR: true},
	}
	for id, want := range good {
		c, err := ParseConfigID(id)
		if err != nil || c != want {
			t.Errorf("ParseConfigID(%q) = %+v, %v; want %+v", id, c, err, want)
		}
		if c.ID() != id {
			t.Errorf("ID() = %q, want %q", c.ID(), id)
		}
	}
	for _, id := range []string{"", "ed25519", "ed25519/", "ecdsap256/X25519", "Ed25519/X25519", "ed25519/x25519",
		"ed25519/X25519/hrr/chain", "ed25519/X25519/chain/chain", "ed25519/X25519/foo", "ed25519/X25519/chain/hrr/x"} {
		if _, err := ParseConfigID(id); err == nil {
			t.Errorf("ParseConfigID(%q) accepted", id)
		}
	}
}

func TestReadErrors(t *testing.T) {
	header := strings.Join(Columns, ",") + "\n"
	good := "0,ed25519/X25519,ed25519,X25519,false,false,127.0.0.1:1,127.0.0.1:2,1,2,3,4,5,6,false,X25519,0,6,7,100,200,80,180,3,true,10,9,go,bridge\n"
	if _, err := ReadRecords(strings.NewReader(header+good), "ok.csv"); err != nil {
		t.Fatalf("good row refused: %v", err)
	}
	// A file of before the stack and path columns: read, as Go on loopback.
	legacy := strings.Join(ColumnsV1, ",") + "\n" + strings.TrimSuffix(good, ",go,bridge\n") + "\n"
	if rs, err := ReadRecords(strings.NewReader(legacy), "old.csv"); err != nil || rs[0].Path != "loopback" || rs[0].Stack != StackGo {
		t.Fatalf("legacy file: %v, %+v", err, rs)
	}
	// mutate replaces column col of the good row.
	mutate := func(col, v string) string {
		cells := strings.Split(strings.TrimSuffix(good, "\n"), ",")
		cells[slices.Index(Columns, col)] = v
		return strings.Join(cells, ",") + "\n"
	}
	cases := []struct {
		name, in, want string
	}{
		{"empty file", "", "r.csv: empty file"},
		{"header only", header, "r.csv: no records"},
		{"wrong header", strings.Replace(header, "ths_ns", "ths", 1) + good, "r.csv:1: header column 24 is \"ths\", want \"ths_ns\""},
		{"short header", "seq,config\n", "r.csv:1: wrong number of fields"},
		{"stack-only header", strings.Join(Columns[:len(Columns)-1], ",") + "\n", "r.csv:1: wrong number of fields"},
		{"bad path", header + mutate("path", "wifi"), "r.csv:2: path \"wifi\": want one of loopback, bridge"},
		{"empty path", header + mutate("path", ""), "r.csv:2: column path: empty"},
		{"legacy header, new row", strings.Join(ColumnsV1, ",") + "\n" + good, "r.csv:2: wrong number of fields"},
		{"short row", header + "0,ed25519/X25519\n", "r.csv:2: wrong number of fields"},
		{"bad seq", header + mutate("seq", "x"), "r.csv:2: column seq: \"x\" is not a whole number"},
		{"negative seq", header + mutate("seq", "-1"), "r.csv:2: column seq: -1 out of range"},
		{"non-canonical", header + mutate("syn_ns", "+1"), "r.csv:2: column syn_ns: \"+1\" is not in canonical"},
		{"bad bool", header + mutate("warmup", "yes"), "r.csv:2: column warmup: \"yes\", want true or false"},
		{"empty config", header + mutate("config", ""), "r.csv:2: column config: empty"},
		{"bad config", header + mutate("config", "rsa/X25519"), "r.csv:2: config \"rsa/X25519\": unknown cert key"},
		{"stack disagrees", header + mutate("stack", "openssl"), "r.csv:2: config ed25519/X25519 disagrees with stack=openssl (want go)"},
		{"empty stack", header + mutate("stack", ""), "r.csv:2: column stack: empty"},
		{"config disagrees", header + mutate("config", "mldsa87/X25519"), "r.csv:2: config mldsa87/X25519 disagrees with cert_key=ed25519"},
		{"chain disagrees", header + mutate("chain", "true"), "disagrees with cert_key=ed25519 group=X25519 chain=true"},
		{"ths mismatch", header + mutate("ths_ns", "4"), "r.csv:2: ths_ns 4 is not client_finished_ns - client_hello_ns = 3"},
		{"complete without finished", header + mutate("client_finished_ns", ""), "r.csv:2: complete is true but"},
		{"negative bytes", header + mutate("frame_bytes_c2s", "-5"), "r.csv:2: column frame_bytes_c2s: -5 out of range"},
		{"negative timer", header + mutate("inproc_client_ns", "-5"), "r.csv:2: inproc_client_ns is negative"},
		{"seq not increasing", header + good + good, "r.csv:3: column seq: seq 0 after 0"},
		{"bad quote", header + "\"0,\n", "r.csv:"},
		{"truncated gzip", string(truncatedGzip(t)), "r.csv: unexpected EOF"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := ReadRecords(strings.NewReader(c.in), "r.csv")
			if err == nil {
				t.Fatalf("accepted")
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %q, want it to contain %q", err, c.want)
			}
			var pe *ParseError
			if !errors.As(err, &pe) || pe.File != "r.csv" {
				t.Fatalf("error %v is not a ParseError naming the file", err)
			}
		})
	}
}

func truncatedGzip(t *testing.T) []byte {
	b, err := MarshalRecords(sampleRecords(50, 3))
	if err != nil {
		t.Fatal(err)
	}
	return b[:len(b)/2]
}

func TestWriteRefusesInvalid(t *testing.T) {
	rs := sampleRecords(3, 4)
	bad := slices.Clone(rs)
	bad[1].Config = "ed25519/X448"
	if _, err := MarshalRecords(bad); err == nil || !strings.Contains(err.Error(), "record 1") {
		t.Errorf("invalid config: %v", err)
	}
	bad = slices.Clone(rs)
	bad[2].Seq = bad[1].Seq
	if _, err := MarshalRecords(bad); err == nil || !strings.Contains(err.Error(), "strictly increasing") {
		t.Errorf("repeated seq: %v", err)
	}
}

// FuzzReadRecords checks that the reader never panics and that whatever it
// accepts is written back and read again unchanged.
func FuzzReadRecords(f *testing.F) {
	b, _ := MarshalRecords(sampleRecords(3, 5))
	f.Add(b)
	var plain bytes.Buffer
	_ = writeCSV(&plain, sampleRecords(4, 6))
	f.Add(plain.Bytes())
	f.Add([]byte(strings.Join(Columns, ",") + "\n"))
	var emu bytes.Buffer
	_ = writeCSV(&emu, emulatedRecords(4, 8))
	f.Add(emu.Bytes())
	var srv bytes.Buffer
	_ = writeCSV(&srv, serverEndRecords(6, 8))
	f.Add(srv.Bytes())
	f.Add([]byte("seq\n1\n"))
	f.Add([]byte{0x1f, 0x8b, 8, 0})
	f.Fuzz(func(t *testing.T, in []byte) {
		rs, err := ReadRecords(bytes.NewReader(in), "fuzz")
		if err != nil {
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("error %v is not a *ParseError", err)
			}
			return
		}
		out, err := MarshalRecords(rs)
		if err != nil {
			t.Fatalf("accepted records do not write back: %v", err)
		}
		again, err := ReadRecords(bytes.NewReader(out), "again")
		if err != nil {
			t.Fatalf("written records do not read back: %v", err)
		}
		if !reflect.DeepEqual(again, rs) {
			t.Fatal("write/read changed the records")
		}
	})
}

func ExampleReadRecords() {
	ths := int64(3_900_000)
	rs := []Record{{
		Seq: 0, Config: "ed25519/X25519", CertKey: "ed25519", Group: "X25519",
		Client: "127.0.0.1:40000", Server: "127.0.0.1:8443",
		ClientHelloNs: i64(1_000), ServerHelloNs: i64(900_000), ClientFinishedNs: i64(1_000 + ths),
		NegotiatedGroup: "X25519", PacketsC2S: 6, PacketsS2C: 6, ThsNs: &ths, Complete: true,
	}}
	b, err := MarshalRecords(rs) // what WriteRecords writes into records.csv.gz
	if err != nil {
		fmt.Println(err)
		return
	}
	got, err := ReadRecords(bytes.NewReader(b), "data/tls/example/records.csv.gz")
	if err != nil {
		fmt.Println(err)
		return
	}
	r := got[0]
	fmt.Println(r.Config, r.NegotiatedGroup, r.Complete, *r.ThsNs, r.InprocClientNs == nil)

	_, err = ReadRecords(strings.NewReader(strings.Join(Columns, ",")+"\n0,ed25519/X25519,ed25519,X25519,maybe"), "bad.csv")
	fmt.Println(err)
	// Output:
	// ed25519/X25519 X25519 true 3900000 true
	// bad.csv:2: wrong number of fields
}

// TestReadV1 reads a file written before the stack column: every record
// is a Go one, and the header without the column is still refused when
// it is not exactly the old one.
func TestReadV1(t *testing.T) {
	header := strings.Join(ColumnsV1, ",") + "\n"
	row := "0,ed25519/X25519/hrr,ed25519,X25519,false,false,127.0.0.1:1,127.0.0.1:2,1,2,3,4,5,6,true,X25519,0,6,7,100,200,80,180,3,true,10,9\n"
	rs, err := ReadRecords(strings.NewReader(header+row), "v1.csv")
	if err != nil || len(rs) != 1 || rs[0].Stack != StackGo {
		t.Fatalf("%+v, %v", rs, err)
	}
	if _, err := ReadRecords(strings.NewReader(header+strings.Replace(row, "ed25519/X25519/hrr", "ed25519/X25519/hrr/openssl", 1)), "v1.csv"); err == nil || !strings.Contains(err.Error(), "disagrees with stack=go") {
		t.Fatalf("an openssl config in a file without a stack column: %v", err)
	}
	if _, err := ReadRecords(strings.NewReader(strings.Replace(header, "seq", "sequence", 1)+row), "v1.csv"); err == nil {
		t.Fatal("a renamed column in an old header was accepted")
	}
}

func TestParseConfigIDStack(t *testing.T) {
	c, err := ParseConfigID("mldsa87/MLKEM1024/chain/hrr/openssl")
	if err != nil || c != (ConfigID{CertKey: "mldsa87", Group: "MLKEM1024", Chain: true, HRR: true, Stack: StackOpenSSL}) || c.ID() != "mldsa87/MLKEM1024/chain/hrr/openssl" {
		t.Fatalf("%+v, %v", c, err)
	}
	for _, id := range []string{"ed25519/X25519/openssl/hrr", "ed25519/X25519/openssl/openssl", "ed25519/X25519/go"} {
		if _, err := ParseConfigID(id); err == nil {
			t.Errorf("ParseConfigID(%q) accepted", id)
		}
	}
}

// TestGoOnlyRunsKeepTheirBytes: a run whose records are all Go's on
// loopback is written without the stack and path columns, exactly as
// before the columns existed, and one with an OpenSSL or a bridge record
// carries them; both read back the same.
func TestGoOnlyRunsKeepTheirBytes(t *testing.T) {
	var goOnly, mixed []Record
	for _, r := range sampleRecords(40, 3) {
		if r.StackName() == StackGo && r.PathOrDefault() == DefaultPath {
			goOnly = append(goOnly, r)
		}
		mixed = append(mixed, r)
	}
	for _, tc := range []struct {
		rs     []Record
		header []string
	}{{goOnly, ColumnsV1}, {mixed, Columns}} {
		var b bytes.Buffer
		if err := writeCSV(&b, tc.rs); err != nil {
			t.Fatal(err)
		}
		if first := strings.SplitN(b.String(), "\n", 2)[0]; first != strings.Join(tc.header, ",") {
			t.Errorf("header %q, want %q", first, strings.Join(tc.header, ","))
		}
		got, err := ReadRecords(&b, "r.csv")
		if err != nil || len(got) != len(tc.rs) {
			t.Fatalf("read back: %d records, %v", len(got), err)
		}
		for i := range got {
			if got[i].StackName() != tc.rs[i].StackName() || got[i].PathOrDefault() != tc.rs[i].PathOrDefault() {
				t.Errorf("record %d: stack %s path %s, want %s %s", i, got[i].StackName(), got[i].PathOrDefault(), tc.rs[i].StackName(), tc.rs[i].PathOrDefault())
			}
		}
	}
}
