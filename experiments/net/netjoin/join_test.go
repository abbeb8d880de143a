package netjoin

import (
	"reflect"
	"testing"
	"time"

	"pqrepro/datasets/netdata"
	"pqrepro/experiments/instruments/capture"
	"pqrepro/experiments/instruments/rederive"
)

func rec(client string, at int64) capture.Record {
	ch := at + 10
	ths := at // unique per record, so the test can tell which record a row took
	return capture.Record{Client: client, Server: "10.77.0.2:4433", SynNs: &at, ClientHelloNs: &ch, ThsNs: &ths, Complete: true}
}

// A reused 4-tuple is told apart by time: each attempt takes the first
// unused record that starts after it and before the next attempt.
func TestJoinReusedTuple(t *testing.T) {
	ms := int64(time.Millisecond)
	rows := []*netdata.Row{
		{Client: "c:1", Server: "10.77.0.2:4433", StartNs: 0, OK: true},
		{Client: "c:1", Server: "10.77.0.2:4433", StartNs: 10 * ms, OK: true},
		{Client: "c:2", Server: "10.77.0.2:4433", StartNs: 20 * ms, OK: true}, // its packets never reached the capture
		{Client: "c:1", Server: "10.77.0.2:4433", StartNs: 30 * ms, OK: false},
	}
	caps := []capture.Record{rec("c:1", 31*ms), rec("c:1", 11*ms), rec("c:1", 1*ms)}
	ji := Join(rows, caps, time.Second)
	if ji.Connections != 3 || ji.Joined != 3 || ji.Unmatched != 1 {
		t.Errorf("join info %+v, want 3 connections, 3 joined, 1 unmatched", ji)
	}
	want := []int64{1 * ms, 11 * ms, -1, 31 * ms}
	for i, r := range rows {
		got := int64(-1)
		if r.Cap != nil {
			got = *r.Cap.ThsNs
		}
		if got != want[i] {
			t.Errorf("row %d joined the record at %d, want %d", i, got, want[i])
		}
	}
}

// The join keeps every field of the capture reader's record that
// records.csv.gz has a column for.
func TestFromCapture(t *testing.T) {
	ths := int64(7)
	r := capture.Record{ThsNs: &ths, Complete: true, Group: "X25519MLKEM768", HRR: true, Retransmissions: 1,
		PacketsC2S: 2, PacketsS2C: 3, FrameBytesC2S: 4, FrameBytesS2C: 5, TCPPayloadBytesC2S: 6, TCPPayloadBytesS2C: 8}
	want := netdata.Capture{ThsNs: &ths, Complete: true, Group: "X25519MLKEM768", HRR: true, Retransmissions: 1,
		PacketsC2S: 2, PacketsS2C: 3, FrameBytesC2S: 4, FrameBytesS2C: 5, PayloadBytesC2S: 6, PayloadBytesS2C: 8}
	if got := fromCapture(&r); !reflect.DeepEqual(got, want) {
		t.Errorf("fromCapture = %+v, want %+v", got, want)
	}
}

// Study B's file names are those the records stage reads.
func TestFileNamesAgreeWithRederive(t *testing.T) {
	for _, c := range [][2]string{
		{netdata.RecordsFile, rederive.RecordsFile},
		{netdata.InprocFile, rederive.InprocFile},
		{netdata.MetaFile, rederive.MetaFile},
		{netdata.CaptureName("s"), "captures/s" + rederive.CaptureExt},
	} {
		if c[0] != c[1] {
			t.Errorf("netdata names %q, rederive %q", c[0], c[1])
		}
	}
}

// A transfer row (our extension) without a full response, a ClientHello,
// a last byte in the capture or a capture record has no time to last
// byte, only the reason; a handshake-only row gets no transfer cells.
func TestTransferIncomplete(t *testing.T) {
	ms := int64(time.Millisecond)
	full := func(start int64, client string) *netdata.Row {
		return &netdata.Row{Client: client, Server: "10.77.0.2:4433", StartNs: start, OK: true, ResponseBytes: 100, ResponseRead: 100}
	}
	short := full(0, "c:1")
	short.ResponseRead, short.Failure = 60, "response-eof"
	noEnd := full(10*ms, "c:2") // the record shows no FIN: no last byte
	noCH := full(20*ms, "c:3")
	noCap := full(30*ms, "c:4")
	hsOnly := &netdata.Row{Client: "c:5", Server: "10.77.0.2:4433", StartNs: 40 * ms, OK: true}
	r3 := rec("c:3", 21*ms)
	r3.ClientHelloNs = nil
	caps := []capture.Record{rec("c:1", 1*ms), rec("c:2", 11*ms), r3, rec("c:5", 41*ms)}
	Join([]*netdata.Row{short, noEnd, noCH, noCap, hsOnly}, caps, time.Second)
	for _, tc := range []struct {
		row  *netdata.Row
		want string
	}{{short, netdata.IncompleteShort}, {noEnd, netdata.IncompleteNoEnd}, {noCH, netdata.IncompleteNoStart}, {noCap, netdata.IncompleteNoCapture}} {
		if x := tc.row.Xfer; x == nil || x.Incomplete != tc.want || x.TTLBNs != nil || x.TTLBSynNs != nil {
			t.Errorf("row %s: transfer %+v, want incomplete %q and no time", tc.row.Client, x, tc.want)
		}
	}
	if hsOnly.Xfer != nil || hsOnly.Cap == nil {
		t.Errorf("handshake-only row: transfer %+v, capture %v", hsOnly.Xfer, hsOnly.Cap)
	}
}

// The mechanism's W and A come from the capture record, -1 where it
// lacks what they need; A rounds up to whole segments.
func TestMechanism(t *testing.T) {
	v := func(x int64) *int64 { return &x }
	for _, tc := range []struct {
		name         string
		rec          capture.Record
		wantW, wantA int
	}{
		{"both", capture.Record{SynNs: v(1), SynAckNs: v(2), ResponseStartNs: v(9), ResponseWindow: 14, AckedAtResponse: 2921, SegmentSize: 1460}, 14, 3},
		{"exact segments", capture.Record{SynNs: v(1), SynAckNs: v(2), ResponseStartNs: v(9), ResponseWindow: 10, AckedAtResponse: 2920, SegmentSize: 1460}, 10, 2},
		{"nothing acknowledged", capture.Record{SynNs: v(1), SynAckNs: v(2), ResponseStartNs: v(9), ResponseWindow: 10, AckedAtResponse: 0, SegmentSize: 1460}, 10, 0},
		{"no SYN-ACK", capture.Record{SynNs: v(1), ResponseStartNs: v(9), ResponseWindow: 0, AckedAtResponse: 100, SegmentSize: 1460}, -1, 1},
		{"no response", capture.Record{SynNs: v(1), SynAckNs: v(2), AckedAtResponse: -1, SegmentSize: 1460}, -1, -1},
		{"no MSS", capture.Record{SynNs: v(1), SynAckNs: v(2), ResponseStartNs: v(9), ResponseWindow: 3, AckedAtResponse: 500}, 3, -1},
	} {
		if w, a := mechanism(&tc.rec); w != tc.wantW || a != tc.wantA {
			t.Errorf("%s: W %d A %d, want %d %d", tc.name, w, a, tc.wantW, tc.wantA)
		}
	}
}
