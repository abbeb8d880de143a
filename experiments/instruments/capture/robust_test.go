package capture

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math"
	"os"
	"strings"
	"testing"

	"github.com/google/gopacket/layers"
	"github.com/google/gopacket/pcapgo"
)

func readOne(t *testing.T, data []byte, opt ReadOptions) (*Result, Record) {
	t.Helper()
	res, err := Read(bytes.NewReader(data), opt)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Records) != 1 {
		t.Fatalf("%d records, want 1: %v", len(res.Records), res.Records)
	}
	return res, res.Records[0]
}

// TestGapNeverFilled: a ClientHello segment that never arrives leaves an
// incomplete record saying why, not a vanished connection.
func TestGapNeverFilled(t *testing.T) {
	st, _ := handshakeStreams(0x11ec)
	ss := segStream{c: cli4, s: srv4, streams: st}
	cases := []struct {
		name   string
		segs   []synthSeg
		reason string
	}{
		{"ClientHello start lost", []synthSeg{{0, 100, len(st[0]) - 100}, {1, 0, len(st[1])}},
			"no_client_hello;no_client_finished;gap_c2s"},
		{"server flight start lost", []synthSeg{{0, 0, 309}, {1, 200, len(st[1]) - 200}, {0, 309, len(st[0]) - 309}},
			"no_server_hello;no_client_finished;gap_s2c"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			sy := newSynth(LinkEthernet)
			sy.segments(ss, c.segs)
			res, r := readOne(t, sy.buf.Bytes(), ReadOptions{})
			if r.Complete || r.Reason != c.reason {
				t.Errorf("complete %v reason %q, want %q", r.Complete, r.Reason, c.reason)
			}
			if !strings.Contains(strings.Join(res.Warnings(), "\n"), "1 of 1 records are incomplete") {
				t.Errorf("warnings %q", res.Warnings())
			}
		})
	}
	// A lost first segment of a connection that is not TLS is still no record
	// when nothing waits behind a hole.
	sy := newSynth(LinkEthernet)
	sy.conn(cli4, srv4, synthOpts{notTLS: true})
	if res, _ := Read(bytes.NewReader(sy.buf.Bytes()), ReadOptions{}); len(res.Records) != 0 {
		t.Errorf("HTTP connection reported: %v", res.Records)
	}
}

// TestSnapLen reads captures cut like tcpdump -s N: header fields equal the
// uncut capture's; fields that need cut bytes are empty with a reason.
func TestSnapLen(t *testing.T) {
	full := newSynth(LinkEthernet)
	full.conn(cli4, srv4, synthOpts{group: 0x11ec})
	_, want := readOne(t, full.buf.Bytes(), ReadOptions{})
	cases := []struct {
		snap     int
		group    string
		complete bool
		reason   string
	}{
		{128, "X25519MLKEM768", true, ""},
		{104, "", true, "group_not_captured"}, // ServerHello random captured, key_share not
		{60, "", false, "no_client_hello;no_server_hello;no_client_finished;snaplen_c2s;snaplen_s2c"},
	}
	for _, c := range cases {
		sy := newSynth(LinkEthernet)
		sy.snap = c.snap
		sy.conn(cli4, srv4, synthOpts{group: 0x11ec})
		res, r := readOne(t, sy.buf.Bytes(), ReadOptions{})
		if res.SnapCut == 0 {
			t.Errorf("snap %d: no frame counted as cut", c.snap)
		}
		if r.Group != c.group || r.Complete != c.complete || r.Reason != c.reason {
			t.Errorf("snap %d: group %q complete %v reason %q; want %q %v %q", c.snap, r.Group, r.Complete, r.Reason, c.group, c.complete, c.reason)
		}
		if r.FrameBytesC2S != want.FrameBytesC2S || r.FrameBytesS2C != want.FrameBytesS2C ||
			r.TCPPayloadBytesC2S != want.TCPPayloadBytesC2S || r.TCPPayloadBytesS2C != want.TCPPayloadBytesS2C ||
			r.PacketsC2S != want.PacketsC2S || r.PacketsS2C != want.PacketsS2C || r.Retransmissions != 0 ||
			val(r.SynNs) != val(want.SynNs) || val(r.FinNs) != val(want.FinNs) {
			t.Errorf("snap %d: header fields differ from the uncut capture:\n%+v\n%+v", c.snap, r, want)
		}
		if c.complete && (val(r.ClientHelloNs) != val(want.ClientHelloNs) || val(r.ServerHelloNs) != val(want.ServerHelloNs) ||
			val(r.ClientFinishedNs) != val(want.ClientFinishedNs) || val(r.ThsNs) != val(want.ThsNs)) {
			t.Errorf("snap %d: handshake times differ", c.snap)
		}
	}
}

// patchOrig sets the original length of the pcap record starting at off.
func patchOrig(b []byte, off int, orig uint32) []byte {
	b = bytes.Clone(b)
	binary.LittleEndian.PutUint32(b[off+12:], orig)
	return b
}

// TestOrigLenChecked: a damaged original length (one flipped byte, or one
// below the captured length) is corrected from the IP length and flagged.
func TestOrigLenChecked(t *testing.T) {
	sy := newSynth(LinkEthernet)
	sy.conn(cli4, srv4, synthOpts{group: 29})
	good := sy.buf.Bytes()
	_, want := readOne(t, good, ReadOptions{})
	// The fourth packet record is the ClientHello segment.
	off := 24
	for range 3 {
		off += 16 + int(binary.LittleEndian.Uint32(good[off+8:]))
	}
	incl := binary.LittleEndian.Uint32(good[off+8:])
	for _, orig := range []uint32{889193259, incl | 0x35000000, incl - 10, incl + 1000} {
		res, r := readOne(t, patchOrig(good, off, orig), ReadOptions{})
		if r.FrameBytesC2S != want.FrameBytesC2S || r.Reason != ReasonOrigLen || res.OrigLenCorrected != 1 {
			t.Errorf("orig %d: frame bytes %d (want %d), reason %q, corrected %d", orig, r.FrameBytesC2S, want.FrameBytesC2S, r.Reason, res.OrigLenCorrected)
		}
	}
	// An IP total length beyond a wholly captured frame.
	bad := bytes.Clone(good)
	ipTotal := off + 16 + 14 + 2
	binary.BigEndian.PutUint16(bad[ipTotal:], binary.BigEndian.Uint16(bad[ipTotal:])+1000)
	res, r := readOne(t, bad, ReadOptions{})
	if r.TCPPayloadBytesC2S != want.TCPPayloadBytesC2S || r.FrameBytesC2S != want.FrameBytesC2S || r.Reason != ReasonOrigLen ||
		res.OrigLenCorrected != 1 || res.SnapCut != 0 || !r.Complete {
		t.Errorf("IP length +1000: payload %d (want %d), reason %q, corrected %d, cut %d, complete %v",
			r.TCPPayloadBytesC2S, want.TCPPayloadBytesC2S, r.Reason, res.OrigLenCorrected, res.SnapCut, r.Complete)
	}
}

// TestTimestampOverflow: pcapng timestamps, offsets and resolutions whose
// nanoseconds do not fit an int64 are damage, not wrapped numbers.
func TestTimestampOverflow(t *testing.T) {
	cases := []struct {
		ifc  ngIface
		ts   uint64
		want int64
		ok   bool
	}{
		{ngIface{tsShift: 6}, 1_700_000_000_000_000, 1_700_000_000_000_000_000, true},
		{ngIface{tsShift: 6, tsOffset: 10}, 1, 10_000_001_000, true},
		{ngIface{tsShift: 6}, math.MaxUint64, 0, false},
		{ngIface{tsShift: 9}, 1 << 63, 0, false},
		{ngIface{tsShift: 0}, 10_000_000_000, 0, false},
		{ngIface{tsShift: 0, tsPow2: true}, 1 << 40, 0, false},
		{ngIface{tsShift: 30, tsPow2: true}, 3 << 30, 3_000_000_000, true},
		{ngIface{tsShift: 9, tsOffset: maxTsOffset}, uint64(math.MaxInt64 - maxTsOffset*1e9 + 1), 0, false},
		{ngIface{tsShift: 12}, 5_000_000, 5_000, true},
	}
	for _, c := range cases {
		got, ok := c.ifc.ns(c.ts)
		if ok != c.ok || (ok && got != c.want) {
			t.Errorf("%+v ns(%d) = %d, %v; want %d, %v", c.ifc, c.ts, got, ok, c.want, c.ok)
		}
	}
	// if_tsoffset of 1e10 s in a file: damage at the interface block.
	var out bytes.Buffer
	w, err := pcapgo.NewNgWriterInterface(&out, pcapgo.NgInterface{Name: "x", LinkType: layers.LinkTypeEthernet, TimestampResolution: 9, TimestampOffset: 1e10}, pcapgo.NgWriterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	w.Flush()
	_, err = Read(bytes.NewReader(out.Bytes()), ReadOptions{})
	var d *DamageError
	if !errors.As(err, &d) || !strings.Contains(d.Reason, "offset") {
		t.Errorf("if_tsoffset 1e10: err %v, want damage naming the offset", err)
	}
}

// TestUnknownLinkType: packets of a link type the reader cannot decode are
// counted per link type and reported.
func TestUnknownLinkType(t *testing.T) {
	sy := newSynth(147) // a user-defined link type (DLT_USER0)
	sy.conn(cli4, srv4, synthOpts{group: 29})
	res, err := Read(bytes.NewReader(sy.buf.Bytes()), ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	w := strings.Join(res.Warnings(), "\n")
	if len(res.Records) != 0 || res.Skipped.UnknownLink != res.Packets || res.UnknownLinkTypes[147] != res.Packets ||
		!strings.Contains(w, "147 (9 packets)") || !strings.Contains(w, "skipped 9 of 9 packets") {
		t.Errorf("skipped %+v, link types %v, warnings %q", res.Skipped, res.UnknownLinkTypes, w)
	}
}

// goldenWithoutSecrets returns the golden capture's packets as a classic
// pcap without its Decryption Secrets Block, and the secrets.
func goldenWithoutSecrets(t *testing.T) ([]byte, []byte) {
	t.Helper()
	b, err := os.ReadFile(goldenCapture)
	if err != nil {
		t.Fatal(err)
	}
	src, err := NewSource(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	w := pcapgo.NewWriterNanos(&out)
	first := true
	eachPacket(t, src, func(p Packet) {
		if first {
			w.WriteFileHeader(262144, layers.LinkType(p.LinkType))
			first = false
		}
		binary.Write(&out, binary.LittleEndian, [4]uint32{uint32(p.TsNs / 1e9), uint32(p.TsNs % 1e9), uint32(len(p.Data)), uint32(p.OrigLen)})
		out.Write(p.Data)
	})
	return out.Bytes(), src.Secrets
}

// keyLogVariants are key logs for the golden capture: each must be told
// apart in the records or the warnings.
func keyLogVariants(t *testing.T) (pcap []byte, variants map[string][]byte) {
	pcap, secrets := goldenWithoutSecrets(t)
	var mismatched, wrong bytes.Buffer
	for line := range bytes.Lines(secrets) {
		f := strings.Fields(string(line))
		if len(f) != 3 {
			continue
		}
		cr := []byte(f[1])
		cr[0] ^= 1 // another client random
		mismatched.WriteString(f[0] + " " + string(cr) + " " + f[2] + "\n")
		sec := []byte(f[2])
		sec[len(sec)-1] = "10"[sec[len(sec)-1]&1] // another secret
		wrong.WriteString(f[0] + " " + f[1] + " " + string(sec) + "\n")
	}
	return pcap, map[string][]byte{
		"none":       nil,
		"correct":    secrets,
		"garbage":    []byte("this is not\na key log\n\x00\xff\n"),
		"mismatched": mismatched.Bytes(),
		"wrong":      wrong.Bytes(),
		"partly bad": append([]byte("CLIENT_HANDSHAKE_TRAFFIC_SECRET zz 00\nshort line\n"), secrets...),
	}
}

func TestKeyLogVariants(t *testing.T) {
	pcap, variants := keyLogVariants(t)
	want := map[string]struct {
		check   string
		warning string
	}{
		"none":       {"", ""},
		"correct":    {CheckVerified, ""},
		"garbage":    {"", "none of its 3 lines is a key log line"},
		"mismatched": {CheckNoSecret, "belongs to a connection in the capture"},
		"wrong":      {CheckDecryptFailed, "did not decrypt"},
		"partly bad": {CheckVerified, "2 of"},
	}
	for name, kl := range variants {
		t.Run(name, func(t *testing.T) {
			res, err := Read(bytes.NewReader(pcap), ReadOptions{KeyLog: kl})
			if err != nil || len(res.Records) != 3 {
				t.Fatalf("err %v, %d records", err, len(res.Records))
			}
			for _, r := range res.Records {
				if r.FinishedCheck != want[name].check || r.ClientFinishedVerified != (want[name].check == CheckVerified) {
					t.Errorf("record %v: check %q verified %v, want %q", r, r.FinishedCheck, r.ClientFinishedVerified, want[name].check)
				}
			}
			var kw []string
			for _, w := range res.Warnings() {
				if strings.HasPrefix(w, "key log") {
					kw = append(kw, w)
				}
			}
			if (want[name].warning == "") != (len(kw) == 0) || !strings.Contains(strings.Join(kw, "\n"), want[name].warning) {
				t.Errorf("key log warnings %q, want one containing %q", kw, want[name].warning)
			}
		})
	}
	// A key log that contradicts the capture's own secrets is reported.
	ng, err := os.ReadFile(goldenCapture)
	if err != nil {
		t.Fatal(err)
	}
	res, err := Read(bytes.NewReader(ng), ReadOptions{KeyLog: variants["wrong"]})
	if err != nil || res.KeyLog.Conflicts == 0 || res.KeyLog.Verified != 3 {
		t.Errorf("wrong key log beside the capture's secrets: err %v, stats %+v", err, res.KeyLog)
	}
}

// TestDirectoryIsNotDamage: reading a directory is an I/O error, not
// "file shorter than a capture header".
func TestDirectoryIsNotDamage(t *testing.T) {
	f, err := os.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	_, err = Read(f, ReadOptions{})
	var d *DamageError
	if err == nil || errors.As(err, &d) {
		t.Errorf("directory: err %v, want an I/O error", err)
	}
}

// TestHalfSequenceSpaceAway: a segment exactly 2^31 bytes behind the next
// expected one (the serial-number distance int32 cannot negate) is an old
// retransmission, not a panic.
func TestHalfSequenceSpaceAway(t *testing.T) {
	sy := newSynth(LinkEthernet)
	sy.frame(cli4, srv4, 1000, 0, flagSYN, nil)
	sy.frame(cli4, srv4, 1001+1<<31, 0, flagACK, clientHello(300))
	sy.frame(cli4, srv4, 1001, 0, flagACK, clientHello(300))
	_, r := readOne(t, sy.buf.Bytes(), ReadOptions{})
	if r.Retransmissions != 1 || r.ClientHelloNs == nil {
		t.Errorf("record %v, retransmissions %d", r, r.Retransmissions)
	}
}
