package capture

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

// FuzzRead: any input must give a result without panicking; damage offsets
// lie inside the input; a record without a ClientHello says why; no frame
// adds more bytes than a frame can have.
func FuzzRead(f *testing.F) {
	full := threeConns()
	f.Add(full)
	f.Add(full[:len(full)/2])
	f.Add(toPcapng(f, full, []byte("x\n")))
	sy := newSynth(LinkSLL2)
	sy.conn(cli6, srv6, synthOpts{group: 0x11ed, hrr: true, reorder: true, retransmitCH: true})
	f.Add(sy.buf.Bytes())
	sy = newSynth(LinkEthernet)
	sy.snap = 104
	sy.conn(cli4, srv4, synthOpts{group: 0x11ec, reorder: true})
	f.Add(sy.buf.Bytes())
	f.Add(roundTripCapture(true, true, true, false))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		res, err := Read(bytes.NewReader(data), ReadOptions{KeyLog: []byte("CLIENT_HANDSHAKE_TRAFFIC_SECRET 00 00\n")})
		var d *DamageError
		if err != nil && !errors.As(err, &d) {
			t.Fatalf("non-damage error from a byte slice: %v", err)
		}
		if d != nil && (d.Offset < 0 || d.Offset > int64(len(data))) {
			t.Fatalf("damage offset %d outside input of %d bytes", d.Offset, len(data))
		}
		for _, r := range res.Records {
			if r.ClientHelloNs == nil && !strings.Contains(r.Reason, ReasonNoClientHello) {
				t.Fatalf("record without ClientHello and reason: %v %q", r, r.Reason)
			}
			if r.Complete != (r.SynNs != nil && r.ClientHelloNs != nil && r.ServerHelloNs != nil && r.ClientFinishedNs != nil) {
				t.Fatalf("complete %v disagrees with the times: %v", r.Complete, r)
			}
			if r.FrameBytesC2S > int64(r.PacketsC2S)*(maxFrame+64) || r.FrameBytesS2C > int64(r.PacketsS2C)*(maxFrame+64) ||
				r.FrameBytesC2S < 0 || r.FrameBytesS2C < 0 {
				t.Fatalf("frame bytes %d/%d for %d/%d packets", r.FrameBytesC2S, r.FrameBytesS2C, r.PacketsC2S, r.PacketsS2C)
			}
			if r.ClientHello2Ns != nil && (!r.HRR || r.ClientHelloNs == nil) {
				t.Fatalf("a second ClientHello without a HelloRetryRequest or a first ClientHello: %v", r)
			}
			if r.Complete && r.ThsNs == nil {
				t.Fatalf("complete record without Ths: %v", r)
			}
			if n, ok := r.RoundTrips(); ok && (n < 1 || !r.Complete || n > r.flights+1) || !ok && n != 0 {
				t.Fatalf("RoundTrips() = %d, %v with %d flights, complete %v", n, ok, r.flights, r.Complete)
			}
		}
	})
}
