package tlsjoin

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"pqrepro/datasets/tlsdata"
	"pqrepro/experiments/instruments/capture"
)

// TestJoinEmulated: on an emulated path the records carry the client
// group list and the link's RTT, and a connection whose
// HelloRetryRequest is not the one its group list predicts is an error
// naming the list.
func TestJoinEmulated(t *testing.T) {
	i64 := func(v int64) *int64 { return &v }
	path := tlsdata.EmulatedPath(1)
	rec := func(client string, syn int64, group string, hrr bool) capture.Record {
		return capture.Record{Client: client, Server: "10.77.0.2:4000", SynNs: i64(syn), ClientHelloNs: i64(syn + 10), ServerHelloNs: i64(syn + 20),
			ClientFinishedNs: i64(syn + 40), ThsNs: i64(30), Group: group, HRR: hrr, Complete: true, PacketsC2S: 5, PacketsS2C: 5}
	}
	kem := tlsdata.ConfigID{CertKey: "ed25519", Group: "MLKEM1024", Stack: tlsdata.StackOpenSSLCLI, Groups: tlsdata.ClientGroupsX25519First}
	base := tlsdata.ConfigID{CertKey: "ed25519", Group: "X25519", Stack: tlsdata.StackOpenSSLCLI, Groups: tlsdata.ClientGroupsX25519First}
	configs := []Config{
		{Name: kem.ID(), CertKey: "ed25519", Group: "MLKEM1024", Stack: tlsdata.StackOpenSSLCLI, KeyShare: "direct", Path: path, ClientGroups: kem.Groups, LinkRTTNs: 2_100_000},
		{Name: base.ID(), CertKey: "ed25519", Group: "X25519", Stack: tlsdata.StackOpenSSLCLI, KeyShare: "direct", Path: path, ClientGroups: base.Groups, LinkRTTNs: 2_100_000},
	}
	conns := []Conn{
		{Seq: 0, Config: kem.ID(), Client: "10.77.0.1:40000", Server: "10.77.0.2:4000", StartNs: 100, ClientNs: 100, ServerNs: -1, Path: path},
		{Seq: 1, Config: base.ID(), Client: "10.77.0.1:40001", Server: "10.77.0.2:4000", StartNs: 300, ClientNs: 100, ServerNs: -1, Path: path},
	}
	good := []capture.Record{rec("10.77.0.1:40000", 110, "MLKEM1024", true), rec("10.77.0.1:40001", 310, "X25519", false)}
	recs, _, err := Join(configs, Servers(conns), conns, good)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range recs {
		if r.ClientGroups != tlsdata.ClientGroupsX25519First || r.LinkRTTNs == nil || *r.LinkRTTNs != 2_100_000 || r.Path != path {
			t.Errorf("record %s: groups %q rtt %v path %q", r.Config, r.ClientGroups, r.LinkRTTNs, r.Path)
		}
		if err := r.Check(); err != nil {
			t.Error(err)
		}
	}
	for _, tc := range []struct {
		caps []capture.Record
		want string
	}{
		{[]capture.Record{rec("10.77.0.1:40000", 110, "MLKEM1024", false), good[1]}, "no HelloRetryRequest; the client group list x25519-first expects one"},
		{[]capture.Record{good[0], rec("10.77.0.1:40001", 310, "X25519", true)}, "a HelloRetryRequest; none was expected (the client group list x25519-first)"},
	} {
		if _, _, err := Join(configs, Servers(conns), conns, tc.caps); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("err %v, want %q", err, tc.want)
		}
	}
}

// serverEndCase is one emulated path's connections and their records at
// the client's end. Seq 0 is direct, seq 1 through a HelloRetryRequest,
// seq 2 direct again, seq 3 reuses seq 0's 4-tuple later.
func serverEndCase() (configs []Config, conns []Conn, cli []capture.Record) {
	i64 := func(v int64) *int64 { return &v }
	path := tlsdata.EmulatedPath(1)
	kem := tlsdata.ConfigID{CertKey: "ed25519", Group: "MLKEM1024", Stack: tlsdata.StackOpenSSLCLI, Groups: tlsdata.ClientGroupsX25519First}
	base := tlsdata.ConfigID{CertKey: "ed25519", Group: "X25519", Stack: tlsdata.StackOpenSSLCLI, Groups: tlsdata.ClientGroupsX25519First}
	configs = []Config{
		{Name: kem.ID(), CertKey: "ed25519", Group: "MLKEM1024", Stack: tlsdata.StackOpenSSLCLI, KeyShare: "direct", Path: path, ClientGroups: kem.Groups, LinkRTTNs: 2_000_000},
		{Name: base.ID(), CertKey: "ed25519", Group: "X25519", Stack: tlsdata.StackOpenSSLCLI, KeyShare: "direct", Path: path, ClientGroups: base.Groups, LinkRTTNs: 2_000_000},
	}
	const srv = "10.77.0.2:4000"
	for i, c := range []struct {
		client string
		cfg    tlsdata.ConfigID
	}{{"10.77.0.1:40000", base}, {"10.77.0.1:40001", kem}, {"10.77.0.1:40002", base}, {"10.77.0.1:40000", base}} {
		start := int64(1_000_000_000 + i*100_000_000)
		hrr := c.cfg.Group != "X25519"
		conns = append(conns, Conn{Seq: i, Config: c.cfg.ID(), Client: c.client, Server: srv, StartNs: start, ClientNs: 20_000_000, ServerNs: -1, Path: path})
		// One round trip of 2 ms per flight: SYN, ClientHello, [HRR], Finished.
		syn := start + 100_000
		ch := syn + 2_000_000
		r := capture.Record{Client: c.client, Server: srv, SynNs: i64(syn), ClientHelloNs: i64(ch), Group: c.cfg.Group, HRR: hrr, Complete: true, PacketsC2S: 5, PacketsS2C: 5}
		if hrr {
			r.ClientHello2Ns = i64(ch + 2_000_000)
			ch += 2_000_000
		}
		r.ServerHelloNs, r.ServerFlightEndNs, r.ClientFinishedNs = i64(ch+2_000_000), i64(ch+2_100_000), i64(ch+2_200_000)
		r.ThsNs = i64(*r.ClientFinishedNs - *r.ClientHelloNs)
		cli = append(cli, r)
	}
	return configs, conns, cli
}

// atServer is c as the server's end of a 1 ms one-way link sees it. The
// client's packets arrive 1 ms later, the server's leave 1 ms earlier.
func atServer(c capture.Record) capture.Record {
	shift := func(p *int64, d int64) *int64 {
		if p == nil {
			return nil
		}
		v := *p + d
		return &v
	}
	s := c
	s.SynNs, s.ClientHelloNs, s.ClientHello2Ns = shift(c.SynNs, 1_000_000), shift(c.ClientHelloNs, 1_000_000), shift(c.ClientHello2Ns, 1_000_000)
	s.ServerHelloNs, s.ServerFlightEndNs = shift(c.ServerHelloNs, -1_000_000), shift(c.ServerFlightEndNs, -1_000_000)
	s.ClientFinishedNs = shift(c.ClientFinishedNs, 1_000_000)
	return s
}

// TestJoinServerEnd joins two vantage points of one emulated path. Each
// connection gets the server end's times of its own connection (the
// reused 4-tuple included), the HRR connection both second ClientHellos;
// a connection the server end lacks is kept with empty columns and
// counted with its reason, one whose SYN it lacks has an empty
// srv_syn_ns; and the records are written under ColumnsServerEnd.
func TestJoinServerEnd(t *testing.T) {
	configs, conns, cli := serverEndCase()
	path := conns[0].Path
	var srv []capture.Record
	for i, c := range cli {
		s := atServer(c)
		switch i {
		case 2:
			continue // the server-end capture lacks seq 2
		case 3:
			s.SynNs, s.Complete = nil, false
		}
		srv = append(srv, s)
	}
	slices.Reverse(srv) // the join must not depend on the order
	recs, js, err := JoinPaths(configs, conns, map[string][]capture.Record{path: cli}, map[string][]capture.Record{path: srv})
	if err != nil {
		t.Fatal(err)
	}
	if len(js.ServerEnd) != 1 {
		t.Fatalf("server-end stats %+v", js.ServerEnd)
	}
	se := js.ServerEnd[0]
	if se.Path != path || se.Capture != "capture-emulated-1ms-server.pcapng" || se.Joined != 3 || se.NoSyn != 1 || se.Missing != 1 ||
		len(se.Misses) != 1 || !strings.Contains(se.Misses[0], "seq 2") || len(js.Misses()) != 1 {
		t.Fatalf("server-end stats %+v, misses %q", se, js.Misses())
	}
	for i, r := range recs {
		want := atServer(cli[i])
		got := []*int64{r.SrvSynNs, r.SrvClientHelloNs, r.SrvClientHello2Ns, r.SrvServerFlightEndNs, r.SrvClientFinishedNs}
		exp := []*int64{want.SynNs, want.ClientHelloNs, want.ClientHello2Ns, want.ServerFlightEndNs, want.ClientFinishedNs}
		switch i {
		case 2:
			exp = make([]*int64, 5)
		case 3:
			exp[0] = nil
		}
		if !reflect.DeepEqual(got, exp) {
			t.Errorf("seq %d: server end %v, want %v", r.Seq, ptrs(got), ptrs(exp))
		}
		if (r.ClientHello2Ns != nil) != r.HRR || (r.HRR && *r.ClientHello2Ns != *cli[i].ClientHello2Ns) {
			t.Errorf("seq %d: client_hello2_ns %v with hrr %v", r.Seq, ptrs([]*int64{r.ClientHello2Ns}), r.HRR)
		}
	}
	b, err := MarshalRecords(recs, js)
	if err != nil {
		t.Fatal(err)
	}
	if h := strings.SplitN(gunzipString(t, b), "\n", 2)[0]; h != strings.Join(tlsdata.ColumnsServerEnd, ",") {
		t.Errorf("header %q", h)
	}
	// Without a server-end capture nothing changes: the older header and
	// no second ClientHello (so committed runs keep their bytes).
	recs, js, err = JoinPaths(configs, conns, map[string][]capture.Record{path: cli}, nil)
	if err != nil || len(js.ServerEnd) != 0 || recs[1].ClientHello2Ns != nil {
		t.Fatalf("one vantage point: %v, %+v, %v", err, js.ServerEnd, recs[1].ClientHello2Ns)
	}
	if b, _ := MarshalRecords(recs, js); !strings.HasPrefix(gunzipString(t, b), strings.Join(tlsdata.ColumnsEmulated, ",")+"\n") {
		t.Error("one vantage point: not the ColumnsEmulated header")
	}
}

// TestJoinServerEndErrors: ambiguous, disagreeing and stray server-end
// records are errors naming the problem. That is, two in one
// connection's window, a HelloRetryRequest only one end saw, and a
// server-end handshake no connection made.
func TestJoinServerEndErrors(t *testing.T) {
	configs, conns, cli := serverEndCase()
	path := conns[0].Path
	var srv []capture.Record
	for _, c := range cli {
		srv = append(srv, atServer(c))
	}
	stray := atServer(cli[0])
	stray.Client = "10.77.0.1:49999"
	noHRR := atServer(cli[1])
	noHRR.HRR = false
	dup := atServer(cli[2])
	*dup.SynNs += 1000
	for _, tc := range []struct {
		srv  []capture.Record
		want string
	}{
		{append(slices.Clone(srv), dup), "seq 2 (ed25519/X25519/openssl-cli/groups-x25519-first, 10.77.0.1:40002 -> 10.77.0.2:4000): 2 server-end capture records match"},
		{[]capture.Record{srv[0], noHRR, srv[2], srv[3]}, "seq 1 (ed25519/MLKEM1024/openssl-cli/groups-x25519-first, 10.77.0.1:40001 -> 10.77.0.2:4000): the server-end capture shows hrr=false"},
		{append(slices.Clone(srv), stray), "1 handshakes to the run's servers that match no connection of the run (first: 10.77.0.1:49999 -> 10.77.0.2:4000)"},
	} {
		_, _, err := JoinPaths(configs, conns, map[string][]capture.Record{path: cli}, map[string][]capture.Record{path: tc.srv})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("err %v\nwant %q", err, tc.want)
		}
	}
}

// ptrs shows times for messages.
func ptrs(ps []*int64) []string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = "nil"
		if p != nil {
			out[i] = strconv.FormatInt(*p, 10)
		}
	}
	return out
}

// TestDeriveServerEnd derives an emulated run from pcapng bytes at both
// ends and at one. The capture package's golden capture (two direct
// handshakes, one through a HelloRetryRequest) stands for both ends of a
// link of no delay, so the server end's times are the client end's.
// Without the server-end capture (ErrNoCapture) the run is derived as
// before issue 42.
func TestDeriveServerEnd(t *testing.T) {
	pcap, err := os.ReadFile("../../instruments/capture/testdata/golden.pcapng")
	if err != nil {
		t.Fatal(err)
	}
	res, err := capture.Read(bytes.NewReader(pcap), capture.ReadOptions{})
	if err != nil || len(res.Records) != 3 {
		t.Fatalf("golden capture: %v, %d records", err, len(res.Records))
	}
	path := tlsdata.EmulatedPath(0)
	var configs []Config
	var conns []Conn
	for i, r := range res.Records {
		id := tlsdata.ConfigID{CertKey: "ed25519", Group: r.Group, HRR: r.HRR}
		c := Config{Name: id.ID(), CertKey: "ed25519", Group: r.Group, KeyShare: map[bool]string{true: "hrr", false: "direct"}[r.HRR], Path: path}
		if !slices.ContainsFunc(configs, func(o Config) bool { return o.Name == c.Name }) {
			configs = append(configs, c)
		}
		start := *r.SynNs - 1000
		conns = append(conns, Conn{Seq: i, Config: c.Name, Client: r.Client, Server: r.Server, StartNs: start, ClientNs: *r.ClientFinishedNs - start + 1000, ServerNs: 1, Path: path})
	}
	cj, err := json.Marshal(configs)
	if err != nil {
		t.Fatal(err)
	}
	inproc, err := MarshalInproc(conns)
	if err != nil {
		t.Fatal(err)
	}
	derive := func(serverEnd bool) []tlsdata.Record {
		t.Helper()
		recs, js, err := DeriveRecords(cj, inproc, func(name string) (io.ReadCloser, error) {
			if name == CaptureFor(path) || serverEnd && name == ServerCaptureFor(path) {
				return io.NopCloser(bytes.NewReader(pcap)), nil
			}
			return nil, fmt.Errorf("%s: %w", name, ErrNoCapture)
		})
		if err != nil {
			t.Fatal(err)
		}
		b, err := MarshalRecords(recs, js)
		if err != nil {
			t.Fatal(err)
		}
		header := tlsdata.ColumnsEmulated
		if serverEnd {
			header = tlsdata.ColumnsServerEnd
		}
		if h := strings.SplitN(gunzipString(t, b), "\n", 2)[0]; h != strings.Join(header, ",") {
			t.Errorf("server end %v: header %q", serverEnd, h)
		}
		return recs
	}
	for i, r := range derive(true) {
		c := res.Records[i]
		got := []*int64{r.SrvSynNs, r.SrvClientHelloNs, r.SrvClientHello2Ns, r.SrvServerFlightEndNs, r.SrvClientFinishedNs, r.ClientHello2Ns}
		want := []*int64{c.SynNs, c.ClientHelloNs, c.ClientHello2Ns, c.ServerFlightEndNs, c.ClientFinishedNs, c.ClientHello2Ns}
		if !reflect.DeepEqual(got, want) || (r.ClientHello2Ns != nil) != (i == 2) {
			t.Errorf("seq %d: %v, want %v", i, ptrs(got), ptrs(want))
		}
	}
	for _, r := range derive(false) {
		if r.ClientHello2Ns != nil || r.SrvClientHelloNs != nil {
			t.Errorf("seq %d: server-end times without a server-end capture", r.Seq)
		}
	}
}
