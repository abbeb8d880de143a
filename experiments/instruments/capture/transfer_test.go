package capture

import (
	"bytes"
	"net/netip"
	"testing"
)

// transferCapture writes one TLS 1.3 connection that carries a response
// after its handshake (Study B's transfer block): flights 10 ms apart on
// a 10 ms SYN round trip, the response's second segment lost and sent
// again a flight later, then the server's close_notify (24 bytes) and
// FIN. It returns the capture and the time the retransmission completed
// the response in order; with lose, the retransmission never comes.
func transferCapture(t testing.TB, lose bool) ([]byte, int64) {
	t.Helper()
	const rttNs = 10_000_000
	sy := newSynth(LinkEthernet)
	c, sv := netip.MustParseAddrPort("10.0.0.1:40000"), netip.MustParseAddrPort("10.0.0.2:4433")
	st, _ := handshakeStreams(0x001D)
	ch := clientHello(300)
	cs, ss := uint32(1000), uint32(5000)
	A := uint8(flagACK)
	sy.frame(c, sv, cs, 0, flagSYN, nil)
	cs++
	sy.ts += rttNs
	sy.frame(sv, c, ss, cs, flagSYN|flagACK, nil)
	ss++
	sy.frame(c, sv, cs, ss, A, ch)
	cs += uint32(len(ch))
	sy.ts += rttNs
	sy.frame(sv, c, ss, cs, A, st[1]) // flight 1: ServerHello .. Finished
	ss += uint32(len(st[1]))
	fin := st[0][len(ch):]
	req := tlsRecord(23, make([]byte, 30))
	sy.frame(c, sv, cs, ss, A, append(append([]byte{}, fin...), req...))
	cs += uint32(len(fin) + len(req))
	resp := tlsRecord(23, make([]byte, 4000))
	closeNotify := tlsRecord(23, make([]byte, 19))
	sy.ts += rttNs
	sy.frame(sv, c, ss, cs, A, resp[:1400]) // flight 2
	sy.ts += rttNs
	sy.frame(sv, c, ss+2800, cs, A, resp[2800:]) // flight 3, behind a hole
	sy.frame(sv, c, ss+uint32(len(resp)), cs, A, closeNotify)
	var done int64
	if !lose {
		sy.ts += rttNs
		sy.frame(sv, c, ss+1400, cs, A, resp[1400:2800]) // flight 4 fills the hole
		done = sy.ts
	}
	end := ss + uint32(len(resp)+len(closeNotify))
	sy.frame(sv, c, end, cs, flagFIN|A, nil)
	sy.frame(c, sv, cs, end+1, flagFIN|A, nil)
	return sy.buf.Bytes(), done
}

// The response's last byte is when the stream is complete in order up to
// the close_notify (the retransmission that filled the hole, not the
// later segment that arrived first), and the server's flights are counted
// from its ServerHello to that byte.
func TestResponseEnd(t *testing.T) {
	b, done := transferCapture(t, false)
	res, err := Read(bytes.NewReader(b), ReadOptions{})
	if err != nil || len(res.Records) != 1 {
		t.Fatalf("read: %v, %d records", err, len(res.Records))
	}
	r := &res.Records[0]
	ns, ok := r.ResponseEnd(24)
	if !ok || ns != done {
		t.Errorf("ResponseEnd = %d, %v; want %d (the retransmission)", ns, ok, done)
	}
	if n := r.Flights(ns); n != 4 {
		t.Errorf("Flights = %d, want 4 (handshake, response, after the loss, the retransmission)", n)
	}
	if r.SynAckNs == nil || r.SynNs == nil || *r.SynAckNs-*r.SynNs != 10_010_000 {
		t.Errorf("SYN round trip: syn %v synack %v", r.SynNs, r.SynAckNs)
	}
	if !r.Complete || r.ThsNs == nil {
		t.Errorf("the handshake's record changed: complete %v ths %v (%s)", r.Complete, r.ThsNs, r.Reason)
	}
}

// A response whose hole is never filled has no last byte: ResponseEnd says
// so instead of taking the later segment's time.
func TestResponseEndIncomplete(t *testing.T) {
	b, _ := transferCapture(t, true)
	res, err := Read(bytes.NewReader(b), ReadOptions{})
	if err != nil || len(res.Records) != 1 {
		t.Fatalf("read: %v, %d records", err, len(res.Records))
	}
	if ns, ok := res.Records[0].ResponseEnd(24); ok {
		t.Errorf("ResponseEnd = %d, ok; want none (a hole before the last byte)", ns)
	}
}

// responseStartCapture writes one connection whose SYNs carry MSS options
// (client 1460, server mss) and whose response comes in two flights: four
// segments at 1 ms spacing inside the first SYN round trip (10 ms), then
// two more a round trip later. The client has acknowledged the server's
// handshake flight (acked bytes) before the response starts.
func responseStartCapture(t testing.TB, mss uint16, ackAll bool) (b []byte, start int64, acked int) {
	t.Helper()
	const rttNs = 10_000_000
	sy := newSynth(LinkEthernet)
	c, sv := netip.MustParseAddrPort("10.0.0.1:40000"), netip.MustParseAddrPort("10.0.0.2:4433")
	st, _ := handshakeStreams(0x001D)
	ch := clientHello(300)
	cs, ss := uint32(1000), uint32(0xFFFFFF00) // the server's sequence wraps
	A := uint8(flagACK)
	opt := func(m uint16) []byte { return []byte{1, 1, 2, 4, byte(m >> 8), byte(m), 4, 2} } // NOP NOP MSS SACK-permitted
	sy.frameOpts(c, sv, cs, 0, flagSYN, opt(1460), nil)
	cs++
	sy.ts += rttNs
	sy.frameOpts(sv, c, ss, cs, flagSYN|flagACK, opt(mss), nil)
	isn := ss
	ss++
	sy.frame(c, sv, cs, ss, A, ch)
	cs += uint32(len(ch))
	sy.ts += rttNs
	sy.frame(sv, c, ss, cs, A, st[1])
	ss += uint32(len(st[1]))
	ack := ss
	if !ackAll {
		ack = ss - 100
	}
	fin := st[0][len(ch):]
	req := tlsRecord(23, make([]byte, 30))
	sy.frame(c, sv, cs, ack, A, append(append([]byte{}, fin...), req...))
	cs += uint32(len(fin) + len(req))
	resp := tlsRecord(23, make([]byte, 6*1000-5))
	closeNotify := tlsRecord(23, make([]byte, 19))
	sy.ts += rttNs
	for i := range 6 {
		if i == 4 {
			sy.ts += rttNs
		}
		sy.frame(sv, c, ss+uint32(i*1000), cs, A, resp[i*1000:(i+1)*1000])
		if i == 0 {
			start = sy.ts
		}
		sy.ts += 1_000_000
	}
	end := ss + uint32(len(resp))
	sy.frame(sv, c, end, cs, A, closeNotify)
	end += uint32(len(closeNotify))
	sy.frame(sv, c, end, cs, flagFIN|A, nil)
	sy.frame(c, sv, cs, end+1, flagFIN|A, nil)
	return sy.buf.Bytes(), start, int(ack - isn - 1)
}

// The response's start, the segments in flight within one SYN round trip
// of it, what the client had acknowledged by then and the segment size
// are read from the capture (Study B's registered mechanism, W and A).
func TestResponseStart(t *testing.T) {
	for _, tc := range []struct {
		name    string
		mss     uint16
		ackAll  bool
		wantMSS int
	}{
		{"server MSS smaller", 1200, true, 1200},
		{"client MSS smaller", 9000, true, 1460},
		{"handshake partly acknowledged", 1460, false, 1460},
		{"server SYN without MSS", 0, true, 1460},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, start, acked := responseStartCapture(t, tc.mss, tc.ackAll)
			res, err := Read(bytes.NewReader(b), ReadOptions{})
			if err != nil || len(res.Records) != 1 {
				t.Fatalf("read: %v, %d records", err, len(res.Records))
			}
			r := &res.Records[0]
			if r.ResponseStartNs == nil || *r.ResponseStartNs != start {
				t.Errorf("ResponseStartNs = %v, want %d", r.ResponseStartNs, start)
			}
			if r.ResponseWindow != 4 {
				t.Errorf("ResponseWindow = %d, want 4 (the segments before the round trip's wait)", r.ResponseWindow)
			}
			if r.AckedAtResponse != int64(acked) {
				t.Errorf("AckedAtResponse = %d, want %d", r.AckedAtResponse, acked)
			}
			if r.SegmentSize != tc.wantMSS {
				t.Errorf("SegmentSize = %d, want %d", r.SegmentSize, tc.wantMSS)
			}
		})
	}
}

// A connection with no data after the client's Finished has no response
// start; one without SYNs has no window and no acknowledged count.
func TestResponseStartAbsent(t *testing.T) {
	b, _ := transferCapture(t, false)
	res, err := Read(bytes.NewReader(b), ReadOptions{})
	if err != nil || len(res.Records) != 1 {
		t.Fatalf("read: %v", err)
	}
	r := &res.Records[0]
	if r.ResponseStartNs == nil || r.ResponseWindow != 1 || r.SegmentSize != 0 {
		t.Errorf("start %v window %d mss %d; want a start, 1 segment in the first round trip, no MSS", r.ResponseStartNs, r.ResponseWindow, r.SegmentSize)
	}
}

func TestMSSOption(t *testing.T) {
	for _, tc := range []struct {
		opts []byte
		want uint16
	}{
		{nil, 0},
		{[]byte{2, 4, 5, 0xb4}, 1460},
		{[]byte{1, 1, 4, 2, 2, 4, 0x23, 0x28}, 9000},
		{[]byte{0, 2, 4, 5, 0xb4}, 0},      // end of list first
		{[]byte{3, 3, 7, 2, 4, 1, 0}, 256}, // window scale, then MSS
		{[]byte{8, 10, 0, 0}, 0},           // a length beyond the options
		{[]byte{2, 1, 5, 0xb4}, 0},         // a length below 2
		{[]byte{2}, 0},
	} {
		if got := mssOption(tc.opts); got != tc.want {
			t.Errorf("mssOption(% x) = %d, want %d", tc.opts, got, tc.want)
		}
	}
}
