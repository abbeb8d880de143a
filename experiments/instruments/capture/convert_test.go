package capture

import (
	"bytes"
	"io"
	"testing"
	"time"

	"github.com/google/gopacket"
	"github.com/google/gopacket/layers"
	"github.com/google/gopacket/pcapgo"
)

// toPcapng converts a synthetic pcap into pcapng with a DSB before the packets.
func toPcapng(t testing.TB, pcap []byte, secrets []byte) []byte {
	t.Helper()
	src, err := NewSource(bytes.NewReader(pcap))
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	w, err := pcapgo.NewNgWriterInterface(&out, pcapgo.NgInterface{Name: "x", LinkType: layers.LinkType(src.linkType), TimestampResolution: 9}, pcapgo.NgWriterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	w.Flush()
	if err := WriteDSB(&out, secrets); err != nil {
		t.Fatal(err)
	}
	eachPacket(t, src, func(p Packet) {
		ci := gopacket.CaptureInfo{Timestamp: time.Unix(0, p.TsNs), CaptureLength: len(p.Data), Length: p.OrigLen}
		if err := w.WritePacket(ci, p.Data); err != nil {
			t.Fatal(err)
		}
	})
	w.Flush()
	return out.Bytes()
}

// eachPacket calls fn with every packet of src; damage fails the test.
func eachPacket(t testing.TB, src *Source, fn func(Packet)) {
	t.Helper()
	for {
		p, err := src.Next()
		if err == io.EOF {
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		fn(p)
	}
}
