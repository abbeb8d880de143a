package capture

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
)

// recordView is everything a study reads of a record, as text: its
// exported fields, the reason and key log check, the SYN round trip, the
// response's last byte (a close_notify's 24 bytes before the FIN), the
// server's flights up to it and the handshake's round trips.
func recordView(t testing.TB, r *Record) string {
	t.Helper()
	j, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	end, ok := r.ResponseEnd(24)
	rt, rtOK := r.RoundTrips()
	var synack int64 = -1
	if r.SynAckNs != nil {
		synack = *r.SynAckNs
	}
	return fmt.Sprintf("%s reason=%q check=%q verified=%v synack=%d end=%d,%v flights=%d rt=%d,%v",
		j, r.Reason, r.FinishedCheck, r.ClientFinishedVerified, synack, end, ok, r.Flights(end), rt, rtOK)
}

// readViews reads a capture and returns its records' views.
func readViews(t testing.TB, b []byte, opt ReadOptions) []string {
	t.Helper()
	res, err := Read(bytes.NewReader(b), opt)
	if err != nil {
		t.Fatalf("read: %v", err)
	}
	var out []string
	for i := range res.Records {
		out = append(out, recordView(t, &res.Records[i]))
	}
	return out
}

// trimmed trims b and checks that trimming is deterministic and that a
// trimmed capture trims to itself.
func trimmed(t testing.TB, b []byte) ([]byte, TrimStats) {
	t.Helper()
	var out, again, twice bytes.Buffer
	st, err := Trim(&out, bytes.NewReader(b))
	if err != nil {
		t.Fatalf("trim: %v", err)
	}
	if st.In != int64(len(b)) || st.Out != int64(out.Len()) {
		t.Errorf("stats say %d bytes in, %d out; read %d, wrote %d", st.In, st.Out, len(b), out.Len())
	}
	if _, err := Trim(&again, bytes.NewReader(b)); err != nil || !bytes.Equal(again.Bytes(), out.Bytes()) {
		t.Errorf("trimming the same capture twice gave other bytes (%v)", err)
	}
	if _, err := Trim(&twice, bytes.NewReader(out.Bytes())); err != nil || !bytes.Equal(twice.Bytes(), out.Bytes()) {
		t.Errorf("trimming a trimmed capture changed it (%v)", err)
	}
	return out.Bytes(), st
}

// A trimmed capture gives the reader the same records as the original,
// to the response's last byte and the flights: on transfer connections
// (a hole filled late, or never), handshakes with a HelloRetryRequest, a
// capture cut by tcpdump -s, IPv6 and a pcapng file with a key log.
func TestTrimSameRecords(t *testing.T) {
	xfer, _ := transferCapture(t, false)
	lost, _ := transferCapture(t, true)
	sy := newSynth(LinkSLL2)
	sy.conn(cli6, srv6, synthOpts{group: 0x11ed, hrr: true, reorder: true, retransmitCH: true})
	v6 := sy.buf.Bytes()
	sy = newSynth(LinkEthernet)
	sy.snap = 104
	sy.conn(cli4, srv4, synthOpts{group: 0x11ec, reorder: true})
	cases := map[string][]byte{
		"transfer":            xfer,
		"transfer, lost":      lost,
		"transfer, pcapng":    toPcapng(t, xfer, []byte("CLIENT_RANDOM 00 00\n")),
		"three connections":   threeConns(),
		"round trips":         roundTripCapture(true, true, true, false),
		"no client Finished":  roundTripCapture(false, true, false, true),
		"IPv6, HRR, reorder":  v6,
		"snap length 104":     sy.buf.Bytes(),
		"handshake not there": withoutPackets(t, xfer, 5),
	}
	for name, b := range cases {
		t.Run(name, func(t *testing.T) {
			out, st := trimmed(t, b)
			want, got := readViews(t, b, ReadOptions{}), readViews(t, out, ReadOptions{})
			if strings.Join(want, "\n") != strings.Join(got, "\n") {
				t.Errorf("records differ after trimming (%d of %d packets cut)\noriginal: %s\ntrimmed:  %s", st.Cut, st.Packets, want, got)
			}
			if strings.HasPrefix(name, "transfer") && (st.Cut == 0 || len(out) >= len(b)) {
				t.Errorf("%d packets cut, %d -> %d bytes: the response was not trimmed", st.Cut, len(b), len(out))
			}
		})
	}
}

// The committed real capture (a loopback handshake with its key log) is
// the same to the reader trimmed, the key log check included.
func TestTrimGolden(t *testing.T) {
	b, err := os.ReadFile("testdata/golden.pcapng")
	if err != nil {
		t.Fatal(err)
	}
	out, st := trimmed(t, b)
	want, got := readViews(t, b, ReadOptions{}), readViews(t, out, ReadOptions{})
	if strings.Join(want, "\n") != strings.Join(got, "\n") {
		t.Errorf("records differ after trimming (%d of %d packets cut)\noriginal: %s\ntrimmed:  %s", st.Cut, st.Packets, want, got)
	}
	t.Logf("golden.pcapng: %d packets, %d cut, %d -> %d bytes", st.Packets, st.Cut, len(b), len(out))
}

// Past the handshake only headers remain, the original length kept, and
// the handshake's packets are whole.
func TestTrimKeepsHandshakeWhole(t *testing.T) {
	b, _ := transferCapture(t, false)
	out, _ := trimmed(t, b)
	orig, cut := packets(t, b), packets(t, out)
	if len(orig) != len(cut) {
		t.Fatalf("%d packets, %d after trimming", len(orig), len(cut))
	}
	for i := range orig {
		o, c := orig[i], cut[i]
		if o.OrigLen != c.OrigLen || o.TsNs != c.TsNs {
			t.Errorf("packet %d: length %d at %d, trimmed %d at %d", i, o.OrigLen, o.TsNs, c.OrigLen, c.TsNs)
		}
		// Packets 0-4: SYN, SYN-ACK, ClientHello, the server's flight,
		// the client's Finished with its request: whole.
		whole := i < 5 || o.flags&flagSYN != 0
		if whole && !bytes.Equal(o.Data, c.Data) {
			t.Errorf("packet %d of the handshake was cut to %d of %d bytes", i, len(c.Data), len(o.Data))
		}
		if !whole && o.payload > 0 && len(c.Data) != len(o.Data)-o.payload {
			t.Errorf("packet %d: %d bytes kept of %d, want the %d header bytes", i, len(c.Data), len(o.Data), len(o.Data)-o.payload)
		}
	}
}

type testPacket struct {
	Packet
	payload int // captured TCP payload bytes
	flags   uint8
}

// packets decodes every packet of a capture, copying its bytes.
func packets(t testing.TB, b []byte) []testPacket {
	t.Helper()
	src, err := NewSource(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	var out []testPacket
	eachPacket(t, src, func(p Packet) {
		var s segment
		tp := testPacket{Packet: p}
		tp.Data = bytes.Clone(p.Data)
		if decode(p.LinkType, p.Data, &s) == decOK {
			tp.payload, tp.flags = len(s.payload), s.flags
		}
		out = append(out, tp)
	})
	return out
}

// withoutPackets returns a classic pcap without its first n packets: a
// capture that began after the handshake.
func withoutPackets(t testing.TB, b []byte, n int) []byte {
	t.Helper()
	out := bytes.NewBuffer(bytes.Clone(b[:24]))
	off := 24
	for i := 0; off < len(b); i++ {
		incl := int(binary.LittleEndian.Uint32(b[off+8:]))
		if i >= n {
			out.Write(b[off : off+16+incl])
		}
		off += 16 + incl
	}
	return out.Bytes()
}

// A capture without the connection's handshake has no last byte to give,
// before and after trimming: begun after it, the connection is no record
// (the join's no_capture_record); without its ClientHello, the record
// says why it is incomplete, and has no time to count a TTLB from (the
// join's no_client_hello: experiments/net/netjoin).
func TestTrimNoHandshake(t *testing.T) {
	b, _ := transferCapture(t, false)
	for _, n := range []int{5, 2} {
		c := withoutPackets(t, b, n)
		if n == 2 { // SYN and SYN-ACK kept: drop only the ClientHello
			c = bytes.Clone(b[:24])
			for i, p := range packets(t, b) {
				if i != 2 {
					c = binary.LittleEndian.AppendUint32(c, uint32(p.TsNs/1e9))
					c = binary.LittleEndian.AppendUint32(c, uint32(p.TsNs%1e9))
					c = binary.LittleEndian.AppendUint32(c, uint32(len(p.Data)))
					c = binary.LittleEndian.AppendUint32(c, uint32(p.OrigLen))
					c = append(c, p.Data...)
				}
			}
		}
		tr, _ := trimmed(t, c)
		for name, x := range map[string][]byte{"original": c, "trimmed": tr} {
			res, err := Read(bytes.NewReader(x), ReadOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if n == 5 {
				if len(res.Records) != 0 {
					t.Errorf("%s, begun after the handshake: %d records, want none", name, len(res.Records))
				}
				continue
			}
			if len(res.Records) != 1 {
				t.Fatalf("%s, without its ClientHello: %d records, want 1", name, len(res.Records))
			}
			r := &res.Records[0]
			if r.Complete || r.ClientHelloNs != nil || r.ThsNs != nil {
				t.Errorf("%s: a ClientHello, Ths or a complete record without one: %v", name, r)
			}
			if !strings.Contains(r.Reason, ReasonNoClientHello) {
				t.Errorf("%s: reason %q lacks %s", name, r.Reason, ReasonNoClientHello)
			}
		}
	}
}

// A damaged capture is an error, not a trimmed capture.
func TestTrimDamaged(t *testing.T) {
	b, _ := transferCapture(t, false)
	var out bytes.Buffer
	_, err := Trim(&out, bytes.NewReader(b[:len(b)-7]))
	var d *DamageError
	if !errors.As(err, &d) {
		t.Errorf("trim of a truncated capture: %v, want a *DamageError", err)
	}
}

// FuzzTrim: any input trims without panicking; when it trims, the
// reader finds the same records in the trimmed capture (response end and
// flights included), and trimming again changes nothing.
func FuzzTrim(f *testing.F) {
	xfer, _ := transferCapture(f, false)
	lost, _ := transferCapture(f, true)
	f.Add(xfer)
	f.Add(lost)
	f.Add(toPcapng(f, xfer, []byte("x\n")))
	f.Add(threeConns())
	f.Add(roundTripCapture(true, true, true, false))
	f.Add(withoutPackets(f, xfer, 5))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		var out bytes.Buffer
		st, err := Trim(&out, bytes.NewReader(data))
		if err != nil {
			var d *DamageError
			if !errors.As(err, &d) {
				t.Fatalf("non-damage error from a byte slice: %v", err)
			}
			return
		}
		if st.Out > st.In {
			t.Fatalf("trimmed to %d bytes from %d", st.Out, st.In)
		}
		res, err := Read(bytes.NewReader(data), ReadOptions{})
		if err != nil {
			t.Fatalf("trimmed a capture the reader finds damaged: %v", err)
		}
		want := make([]string, len(res.Records))
		for i := range res.Records {
			want[i] = recordView(t, &res.Records[i])
		}
		got := readViews(t, out.Bytes(), ReadOptions{})
		if strings.Join(want, "\n") != strings.Join(got, "\n") {
			t.Fatalf("records differ after trimming\noriginal: %s\ntrimmed:  %s", want, got)
		}
		var again bytes.Buffer
		if _, err := Trim(&again, bytes.NewReader(out.Bytes())); err != nil || !bytes.Equal(again.Bytes(), out.Bytes()) {
			t.Fatalf("trimming a trimmed capture changed it (%v)", err)
		}
	})
}
