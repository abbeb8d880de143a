package tlsdata

import (
	"bytes"
	"reflect"
	"strings"
	"testing"
)

// emulatedRecords are sampleRecords moved onto emulated paths with the
// gap model's columns filled.
func emulatedRecords(n int, seed uint64) []Record {
	rs := sampleRecords(n, seed)
	for i := range rs {
		r := &rs[i]
		c, _ := ParseConfigID(r.Config)
		c.HRR, c.Stack, c.Groups = false, StackOpenSSLCLI, ClientGroupModes[i%len(ClientGroupModes)]
		r.Config, r.Stack, r.ClientGroups, r.HRR = c.ID(), StackOpenSSLCLI, c.GroupsName(), ExpectHRR(c.GroupsName(), c.Group)
		r.Path = EmulatedPath([]float64{0, 0.5, 1, 2}[i%4])
		r.RoundTrips, r.LinkRTTNs = i64(int64(1+i%3)), i64(int64(1000+i))
		if i%5 == 2 {
			r.RoundTrips = nil
		}
	}
	return rs
}

func TestEmulatedRoundTrip(t *testing.T) {
	rs := emulatedRecords(60, 7)
	roundTrip(t, rs, ColumnsEmulated)
	var b bytes.Buffer
	// A file with the older header still reads: per-config, no counts.
	old := sampleRecords(20, 3)
	if err := writeCSV(&b, old); err != nil {
		t.Fatal(err)
	}
	got, err := ReadRecords(&b, "old.csv")
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range got {
		if r.ClientGroupsName() != ClientGroupsPerConfig || r.RoundTrips != nil || r.LinkRTTNs != nil {
			t.Fatalf("old file read with %q %v %v", r.ClientGroups, r.RoundTrips, r.LinkRTTNs)
		}
	}
}

// roundTrip writes rs, checks the header is header, and reads rs back.
func roundTrip(t *testing.T, rs []Record, header []string) []Record {
	t.Helper()
	var b bytes.Buffer
	if err := writeCSV(&b, rs); err != nil {
		t.Fatal(err)
	}
	if first := strings.SplitN(b.String(), "\n", 2)[0]; first != strings.Join(header, ",") {
		t.Fatalf("header %q", first)
	}
	got, err := ReadRecords(&b, "r.csv")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, rs) {
		t.Fatalf("round trip differs:\n got %+v\nwant %+v", got[0], rs[0])
	}
	return got
}

func TestEmulatedPath(t *testing.T) {
	for _, tc := range []struct {
		in   string
		d    float64
		good bool
	}{
		{"emulated-0ms", 0, true}, {"emulated-0.5ms", 0.5, true}, {"emulated-2ms", 2, true}, {"emulated-1.25ms", 1.25, true},
		{"emulated-2.0ms", 0, false}, {"emulated--1ms", 0, false}, {"emulated-ms", 0, false}, {"emulated-1", 0, false},
		{"emulated-101ms", 0, false}, {"emulated-NaNms", 0, false}, {"emulated-1e0ms", 0, false}, {"emulatedx", 0, false},
	} {
		d, ok := ParseEmulatedPath(tc.in)
		if ok != tc.good || d != tc.d {
			t.Errorf("ParseEmulatedPath(%q) = %v, %v; want %v, %v", tc.in, d, ok, tc.d, tc.good)
		}
		if ok && EmulatedPath(d) != tc.in {
			t.Errorf("EmulatedPath(%v) = %q", d, EmulatedPath(d))
		}
		if ValidPath(tc.in) != tc.good {
			t.Errorf("ValidPath(%q) = %v", tc.in, !tc.good)
		}
	}
}

func TestConfigIDGroups(t *testing.T) {
	c, err := ParseConfigID("mldsa87/X25519/chain/openssl-cli/groups-x25519-first")
	if err != nil || c != (ConfigID{CertKey: "mldsa87", Group: "X25519", Chain: true, Stack: StackOpenSSLCLI, Groups: ClientGroupsX25519First}) || c.ID() != "mldsa87/X25519/chain/openssl-cli/groups-x25519-first" {
		t.Fatalf("%+v, %v", c, err)
	}
	if (ConfigID{CertKey: "ed25519", Group: "X25519", Groups: ClientGroupsPerConfig}).ID() != "ed25519/X25519" {
		t.Fatal("per-config named in the ID")
	}
	for _, id := range []string{"ed25519/X25519/groups-per-config", "ed25519/X25519/groups-x25519-first/chain", "ed25519/X25519/groups-nope",
		"ed25519/X25519/groups-x25519-first/groups-strongest-first"} {
		if _, err := ParseConfigID(id); err == nil {
			t.Errorf("ParseConfigID(%q) accepted", id)
		}
	}
}

func TestExpectHRR(t *testing.T) {
	for _, tc := range []struct {
		mode, group string
		hrr         bool
	}{
		{ClientGroupsPerConfig, "MLKEM1024", false}, {ClientGroupsX25519First, "X25519", false},
		{ClientGroupsX25519First, "MLKEM1024", true}, {ClientGroupsX25519First, "SecP384r1MLKEM1024", true},
		{ClientGroupsStrongestFirst, "SecP384r1MLKEM1024", false}, {ClientGroupsStrongestFirst, "X25519", true},
		{"", "X25519", false},
	} {
		if got := ExpectHRR(tc.mode, tc.group); got != tc.hrr {
			t.Errorf("ExpectHRR(%q, %q) = %v", tc.mode, tc.group, got)
		}
	}
}

func TestEmulatedCheck(t *testing.T) {
	base := emulatedRecords(4, 9)[1]
	for _, tc := range []struct {
		name string
		mod  func(*Record)
		want string
	}{
		{"bad path", func(r *Record) { r.Path = "emulated-x" }, "path"},
		{"unknown mode", func(r *Record) { r.ClientGroups = "all" }, "client_groups"},
		{"mode vs config", func(r *Record) { r.ClientGroups = ClientGroupsPerConfig }, "disagrees with client_groups"},
		{"zero round trips", func(r *Record) { r.RoundTrips = i64(0) }, "round_trips"},
		{"negative rtt", func(r *Record) { r.LinkRTTNs = i64(-1) }, "link_rtt_ns"},
	} {
		r := base
		tc.mod(&r)
		if err := r.Check(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
}
