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
