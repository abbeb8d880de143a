package netstudy

import (
	"reflect"
	"testing"

	"pqrepro/datasets/netdata"
)

// fromRecord: milliseconds and byte counts from the capture's record; a
// row without one has neither a latency nor bytes; a file without the
// toolchain column reads as netdata.LegacyToolchain.
func TestFromRecord(t *testing.T) {
	ths := int64(1500000)
	joined := netdata.Row{Scenario: "lan", Round: 10, Group: "X25519", Seq: 3, OK: true, Toolchain: "go1.24.4",
		Cap: &netdata.Capture{ThsNs: &ths, Retransmissions: 2, FrameBytesC2S: 100, FrameBytesS2C: 200, PayloadBytesC2S: 50, PayloadBytesS2C: 150}}
	want := Row{Line: 2, Scenario: "lan", Round: 10, Group: "X25519", Seq: 3, OK: true, HasThs: true, ThsMs: 1.5,
		HasBytes: true, Frame: [2]float64{100, 200}, Payload: [2]float64{50, 150}, Retrans: 2, Toolchain: "go1.24.4"}
	if got := fromRecord(joined, 2); !reflect.DeepEqual(got, want) {
		t.Errorf("joined row\n got %+v\nwant %+v", got, want)
	}
	lost := netdata.Row{Scenario: "far", Round: 1, Group: "X25519", Failure: "timeout"}
	want = Row{Line: 7, Scenario: "far", Round: 1, Group: "X25519", Failure: "timeout", Toolchain: netdata.LegacyToolchain}
	if got := fromRecord(lost, 7); !reflect.DeepEqual(got, want) {
		t.Errorf("row without a capture record\n got %+v\nwant %+v", got, want)
	}
}

// primary keeps the design's first toolchain; without toolchains, all.
func TestPrimary(t *testing.T) {
	rows := []Row{{Toolchain: "go1.24.4"}, {Toolchain: "go1.27.3"}, {Toolchain: "go1.24.4"}}
	d := &Design{Toolchains: []string{"go1.24.4", "go1.27.3"}}
	kept, others := primary(d, rows)
	if len(kept) != 2 || others != 1 || kept[0].Toolchain != "go1.24.4" {
		t.Errorf("primary kept %d (%+v), left out %d; want 2 and 1", len(kept), kept, others)
	}
	if all, n := primary(&Design{}, rows); len(all) != 3 || n != 0 {
		t.Errorf("without toolchains primary kept %d, left out %d; want all", len(all), n)
	}
}
