package tlsjoin

import (
	"bytes"
	"compress/gzip"
	"io"
	"reflect"
	"slices"
	"strings"
	"testing"

	"pqrepro/experiments/instruments/capture"
)

func TestInprocRoundTrip(t *testing.T) {
	conns := []Conn{
		{Seq: 0, Config: "ed25519/X25519", Warmup: true, Client: "127.0.0.1:50000", Server: "127.0.0.1:4001", StartNs: 1764590400000000000, ClientNs: 900000, ServerNs: 800000, Path: "loopback"},
		{Seq: 1, Config: "mldsa87/MLKEM1024/chain", Client: "127.0.0.1:50001", Server: "127.0.0.1:4002", StartNs: 1764590400001000000, ClientNs: 1, ServerNs: 2, Path: "loopback"},
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

// TestInprocPaths: a loopback-only run's inproc.csv.gz has the header it
// had before the path factor; a run with a bridge connection carries the
// path column, and both read back.
func TestInprocPaths(t *testing.T) {
	lo := []Conn{{Seq: 0, Config: "ed25519/X25519", Client: "127.0.0.1:1", Server: "127.0.0.1:2", StartNs: 5, ClientNs: 6, ServerNs: 7, Path: "loopback"}}
	both := append(slices.Clone(lo), Conn{Seq: 1, Config: "ed25519/X25519", Client: "172.17.0.2:1", Server: "172.17.0.3:2", StartNs: 8, ClientNs: 9, ServerNs: 10, Path: "bridge"})
	for _, tc := range []struct {
		conns  []Conn
		header []string
	}{{lo, InprocColumns}, {both, InprocColumnsPath}} {
		b, err := MarshalInproc(tc.conns)
		if err != nil {
			t.Fatal(err)
		}
		if first := strings.SplitN(gunzipString(t, b), "\n", 2)[0]; first != strings.Join(tc.header, ",") {
			t.Errorf("header %q, want %q", first, strings.Join(tc.header, ","))
		}
		got, err := ReadInproc(b, InprocFile)
		if err != nil || !reflect.DeepEqual(got, tc.conns) {
			t.Fatalf("round trip: %v\n%+v", err, got)
		}
	}
	bad := mustGz(t, strings.Join(InprocColumnsPath, ",")+"\n1,c,false,a,b,1,2,3,wifi\n")
	if _, err := ReadInproc(bad, InprocFile); err == nil || !strings.Contains(err.Error(), `path "wifi"`) {
		t.Errorf("unknown path: %v", err)
	}
}

// TestJoinPaths joins a run on both paths: each connection with the
// record of its own path's capture, rows in run order, a path without a
// capture refused.
func TestJoinPaths(t *testing.T) {
	i64 := func(v int64) *int64 { return &v }
	rec := func(client, server string, syn int64) capture.Record {
		return capture.Record{Client: client, Server: server, SynNs: i64(syn), ClientHelloNs: i64(syn + 10), ServerHelloNs: i64(syn + 20),
			ClientFinishedNs: i64(syn + 40), ThsNs: i64(30), Group: "X25519", Complete: true, PacketsC2S: 5, PacketsS2C: 5}
	}
	configs := []Config{
		{Name: "ed25519/X25519", CertKey: "ed25519", Group: "X25519"},
		{Name: "ed25519/X25519", CertKey: "ed25519", Group: "X25519", Path: "bridge"},
	}
	conns := []Conn{
		{Seq: 0, Config: "ed25519/X25519", Client: "172.17.0.2:40000", Server: "172.17.0.3:4000", StartNs: 100, ClientNs: 100, ServerNs: 50, Path: "bridge"},
		{Seq: 1, Config: "ed25519/X25519", Client: "127.0.0.1:40000", Server: "127.0.0.1:4000", StartNs: 300, ClientNs: 100, ServerNs: 50, Path: "loopback"},
		{Seq: 2, Config: "ed25519/X25519", Client: "172.17.0.2:40001", Server: "172.17.0.3:4000", StartNs: 500, ClientNs: 100, ServerNs: 50, Path: "bridge"},
	}
	caps := map[string][]capture.Record{
		"loopback": {rec("127.0.0.1:40000", "127.0.0.1:4000", 310)},
		"bridge":   {rec("172.17.0.2:40000", "172.17.0.3:4000", 110), rec("172.17.0.2:40001", "172.17.0.3:4000", 510)},
	}
	rs, js, err := JoinPaths(configs, conns, caps, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) != 3 || js.Measured != 3 || js.CaptureConnections != 3 {
		t.Fatalf("%d records, %+v", len(rs), js)
	}
	for i, want := range []string{"bridge", "loopback", "bridge"} {
		if rs[i].Seq != i || rs[i].Path != want || rs[i].Client != conns[i].Client {
			t.Errorf("record %d: seq %d path %s client %s", i, rs[i].Seq, rs[i].Path, rs[i].Client)
		}
	}
	if _, _, err := JoinPaths(configs, conns, map[string][]capture.Record{"loopback": caps["loopback"]}, nil); err == nil || !strings.Contains(err.Error(), "path bridge: 2 connections, but no capture (capture-bridge.pcapng)") {
		t.Errorf("missing bridge capture: %v", err)
	}
	if _, _, err := JoinPaths(configs[:1], conns, caps, nil); err == nil || !strings.Contains(err.Error(), "configuration not in configs.json for path bridge") {
		t.Errorf("configs without the bridge path: %v", err)
	}
}

func TestCaptureFor(t *testing.T) {
	for p, want := range map[string]string{"": "capture.pcapng", "loopback": "capture.pcapng", "bridge": "capture-bridge.pcapng"} {
		if got := CaptureFor(p); got != want {
			t.Errorf("CaptureFor(%q) = %s, want %s", p, got, want)
		}
	}
	if CaptureFor("bridge") != BridgeCaptureName {
		t.Error("BridgeCaptureName disagrees with CaptureFor")
	}
	if got := ServerCaptureFor("emulated-0.5ms"); got != "capture-emulated-0.5ms-server.pcapng" || got == CaptureFor("emulated-0.5ms") {
		t.Errorf("ServerCaptureFor = %s", got)
	}
}

func gunzipString(t *testing.T, b []byte) string {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	out, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
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
