package tlsjoin

import (
	"bytes"
	"compress/gzip"
	"reflect"
	"strings"
	"testing"
)

func TestInprocRoundTrip(t *testing.T) {
	conns := []Conn{
		{Seq: 0, Config: "ed25519/X25519", Warmup: true, Client: "127.0.0.1:50000", Server: "127.0.0.1:4001", StartNs: 1764590400000000000, ClientNs: 900000, ServerNs: 800000},
		{Seq: 1, Config: "mldsa87/MLKEM1024/chain", Client: "127.0.0.1:50001", Server: "127.0.0.1:4002", StartNs: 1764590400001000000, ClientNs: 1, ServerNs: 2},
	}
	b, err := MarshalInproc(conns)
	if err != nil {
		t.Fatal(err)
	}
	b2, _ := MarshalInproc(conns)
	if string(b) != string(b2) {
		t.Error("MarshalInproc is not deterministic")
	}
	got, err := ReadInproc(b, InprocFile)
	if err != nil || !reflect.DeepEqual(got, conns) {
		t.Fatalf("round trip: %v\n%+v\nwant %+v", err, got, conns)
	}
	if Servers(got)[0] != "127.0.0.1:4001" || len(Servers(got)) != 2 {
		t.Errorf("servers %v", Servers(got))
	}
}

func TestReadInprocBad(t *testing.T) {
	for name, in := range map[string][]byte{
		"not gzip":   []byte("seq,config\n"),
		"bad header": mustGz(t, "seq,config\n"),
		"bad number": mustGz(t, strings.Join(InprocColumns, ",")+"\nx,c,false,a,b,1,2,3\n"),
		"bad bool":   mustGz(t, strings.Join(InprocColumns, ",")+"\n1,c,maybe,a,b,1,2,3\n"),
		"short row":  mustGz(t, strings.Join(InprocColumns, ",")+"\n1,c\n"),
	} {
		if _, err := ReadInproc(in, InprocFile); err == nil || !strings.Contains(err.Error(), InprocFile) {
			t.Errorf("%s: err = %v, want one naming %s", name, err, InprocFile)
		}
	}
}

func FuzzReadInproc(f *testing.F) {
	good, _ := MarshalInproc([]Conn{{Seq: 1, Config: "c", Client: "a", Server: "b", StartNs: 5, ClientNs: 6, ServerNs: 7}})
	f.Add(good)
	f.Add([]byte{0x1f, 0x8b})
	f.Fuzz(func(t *testing.T, b []byte) {
		conns, err := ReadInproc(b, InprocFile)
		if err != nil {
			return
		}
		again, err := MarshalInproc(conns)
		if err != nil {
			t.Fatal(err)
		}
		if back, err := ReadInproc(again, InprocFile); err != nil || !reflect.DeepEqual(back, conns) {
			t.Fatalf("re-read: %v", err)
		}
	})
}

func mustGz(t *testing.T, s string) []byte {
	t.Helper()
	return gzBytes(s)
}
func gzBytes(s string) []byte {
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	zw.Write([]byte(s))
	zw.Close()
	return b.Bytes()
}
