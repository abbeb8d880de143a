package capture

import (
	"bytes"
	"errors"
	"testing"
)

// FuzzRead: any input must give a result without panicking; damage offsets
// lie inside the input; only connections with a ClientHello are records.
func FuzzRead(f *testing.F) {
	full := threeConns()
	f.Add(full)
	f.Add(full[:len(full)/2])
	f.Add(toPcapng(f, full, []byte("x\n")))
	sy := newSynth(LinkSLL2)
	sy.conn(cli6, srv6, synthOpts{group: 0x11ed, hrr: true, reorder: true, retransmitCH: true})
	f.Add(sy.buf.Bytes())
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
			if r.ClientHelloNs == nil {
				t.Fatalf("record without ClientHello: %v", r)
			}
			if r.Complete && r.ThsNs == nil {
				t.Fatalf("complete record without Ths: %v", r)
			}
		}
	})
}
