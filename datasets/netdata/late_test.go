package netdata

import (
	"bytes"
	"compress/gzip"
	"reflect"
	"strings"
	"testing"
)

func sampleLate() []LateEvent {
	return []LateEvent{
		{Series: "wan-1000-X25519-go1.24.4", Scenario: "wan", Round: 1000, Toolchain: "go1.24.4", Dir: DirBtoA, Proto: 6, SrcPort: 4433, DstPort: 50001, Bytes: 1280, DueNs: 1_700_000_000_000_000_000, WrittenNs: 1_700_000_000_002_000_000},
		{Series: "lan-1000-X25519-go1.24.4", Scenario: "lan", Round: 1000, Toolchain: "go1.24.4", Dir: DirAtoB, Proto: 6, SrcPort: 50000, DstPort: 4433, Bytes: 60, DueNs: 1_700_000_000_000_000_000, WrittenNs: 1_700_000_000_001_500_000},
		{Series: "wan-1000-X25519-go1.24.4-alone", Scenario: "wan", Round: 1000, Toolchain: "go1.24.4", Control: true, Dir: DirAtoB, Proto: 17, SrcPort: 40000, DstPort: 9, Bytes: 92, DueNs: 5, WrittenNs: 5},
		{Series: "wan-1000-X25519-go1.24.4", Scenario: "wan", Round: 1000, Toolchain: "go1.24.4", Dir: DirAtoB, Proto: 6, SrcPort: 50001, DstPort: 4433, Bytes: 1500, DueNs: 1_700_000_000_000_000_000, WrittenNs: 1_700_000_000_002_000_000},
	}
}

func TestLateRoundTrip(t *testing.T) {
	in := sampleLate()
	b, err := EncodeLate(in)
	if err != nil {
		t.Fatal(err)
	}
	b2, _ := EncodeLate(in)
	if !bytes.Equal(b, b2) {
		t.Error("EncodeLate is not deterministic")
	}
	got, err := ReadLate(bytes.NewReader(b), LateFile)
	if err != nil {
		t.Fatal(err)
	}
	want := append([]LateEvent(nil), in...)
	SortLate(want)
	if !reflect.DeepEqual(got, want) {
		t.Errorf("round trip:\n got %+v\nwant %+v", got, want)
	}
	// Sorted: series, then write time, then direction (a->b before b->a).
	if got[0].Series != "lan-1000-X25519-go1.24.4" || got[1].Dir != DirAtoB || got[2].Dir != DirBtoA || !got[3].Control {
		t.Errorf("order: %+v", got)
	}
	if in[1].LateNs() != 1_500_000 || in[0].ClientPort() != 50001 || in[1].ClientPort() != 50000 {
		t.Errorf("LateNs %d, client ports %d %d", in[1].LateNs(), in[0].ClientPort(), in[1].ClientPort())
	}
}

func TestLateEmpty(t *testing.T) {
	b, err := EncodeLate(nil)
	if err != nil {
		t.Fatal(err)
	}
	got, err := ReadLate(bytes.NewReader(b), LateFile)
	if err != nil || len(got) != 0 {
		t.Errorf("empty record: %v, %v", got, err)
	}
}

func TestEncodeLateRefusesInvalid(t *testing.T) {
	e := sampleLate()[0]
	e.WrittenNs = e.DueNs - 1
	if _, err := EncodeLate([]LateEvent{e}); err == nil || !strings.Contains(err.Error(), "due") {
		t.Errorf("written before due: err %v", err)
	}
}

func TestParseLateBad(t *testing.T) {
	head := strings.Join(LateColumns, ",") + "\n"
	good := "s,wan,1000,go1.24.4,0,a->b,6,50000,4433,60,10,20\n"
	for _, c := range []struct{ name, body, want string }{
		{"empty", "", "empty"},
		{"other header", "series,scenario\n", "header"},
		{"short row", head + "s,wan,1000\n", "wrong number of fields"},
		{"bad round", head + strings.Replace(good, ",1000,", ",x,", 1), "round"},
		{"round 0", head + strings.Replace(good, ",1000,", ",0,", 1), "round 0"},
		{"bad control", head + strings.Replace(good, ",0,a->b", ",2,a->b", 1), "control"},
		{"bad dir", head + strings.Replace(good, "a->b", "up", 1), "dir"},
		{"port too big", head + strings.Replace(good, "50000", "70000", 1), "src_port"},
		{"proto too big", head + strings.Replace(good, ",6,", ",300,", 1), "proto"},
		{"written before due", head + strings.Replace(good, ",10,20", ",20,10", 1), "due"},
		{"no series", head + "," + good[2:], "empty series"},
		{"zero bytes", head + strings.Replace(good, ",60,", ",0,", 1), "bytes"},
	} {
		_, err := ParseLate([]byte(c.body), "late.csv")
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), "late.csv") {
			t.Errorf("%s: err %v, want one naming the file and %q", c.name, err, c.want)
		}
	}
	if evs, err := ParseLate([]byte(head+good), "late.csv"); err != nil || len(evs) != 1 {
		t.Errorf("good row: %v %v", evs, err)
	}
}

func TestReadLateNotGzip(t *testing.T) {
	if _, err := ReadLate(strings.NewReader("series,..."), "x.csv.gz"); err == nil {
		t.Error("plain text accepted as gzip")
	}
	// Truncated gzip stream.
	b, _ := EncodeLate(sampleLate())
	if _, err := ReadLate(bytes.NewReader(b[:len(b)-10]), "x.csv.gz"); err == nil || !strings.Contains(err.Error(), "truncated") {
		t.Errorf("truncated file: err %v", err)
	}
}

// FuzzParseLate: the reader never panics, and whatever it accepts encodes
// and reads back to the same events.
func FuzzParseLate(f *testing.F) {
	b, _ := EncodeLate(sampleLate())
	zr, _ := gzip.NewReader(bytes.NewReader(b))
	var body bytes.Buffer
	body.ReadFrom(zr)
	f.Add(body.Bytes())
	f.Add([]byte(strings.Join(LateColumns, ",") + "\n"))
	f.Add([]byte("series\n\"a"))
	f.Fuzz(func(t *testing.T, in []byte) {
		evs, err := ParseLate(in, "fuzz")
		if err != nil {
			return
		}
		b, err := EncodeLate(evs)
		if err != nil {
			t.Fatalf("accepted events do not encode: %v", err)
		}
		back, err := ReadLate(bytes.NewReader(b), "fuzz")
		if err != nil {
			t.Fatalf("re-read: %v", err)
		}
		SortLate(evs)
		if len(evs) != len(back) || (len(evs) > 0 && !reflect.DeepEqual(evs, back)) {
			t.Fatalf("round trip changed the events:\n%+v\n%+v", evs, back)
		}
	})
}
