package tlsjoin

import (
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
