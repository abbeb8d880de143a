package capture

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// quickTransferCaptures returns the transfer series' captures (the series
// named by a size in bytes, "...-10240B-...") of the newest committed
// Study B quick run that holds them, or nil.
func quickTransferCaptures(t testing.TB) []string {
	runs, _ := filepath.Glob("../../../data/net/*-quick")
	slices.Reverse(runs)
	for _, r := range runs {
		if m, _ := filepath.Glob(filepath.Join(r, "captures", "*B-*.pcapng.gz")); len(m) > 0 {
			return m
		}
	}
	return nil
}

// trimmedOf gunzips and trims a committed capture as the runner does.
func trimmedOf(t testing.TB, path string) []byte {
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if _, err := Trim(&out, zr); err != nil {
		t.Fatalf("trim %s: %v", path, err)
	}
	return out.Bytes()
}

func gzipSize(t testing.TB, b []byte) int {
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	zw.Write(b)
	zw.Close()
	return buf.Len()
}

func roundTrip(t testing.TB, name string, in []byte) []byte {
	t.Helper()
	enc, err := EncodeCapture(in)
	if err != nil {
		t.Fatalf("%s: encode: %v", name, err)
	}
	back, err := DecodeCapture(enc)
	if err != nil {
		t.Fatalf("%s: decode: %v", name, err)
	}
	if !bytes.Equal(back, in) {
		t.Fatalf("%s: decoded %d bytes differ from the %d encoded", name, len(back), len(in))
	}
	return enc
}

// TestCodecQuickRun round-trips the committed quick run's transfer
// captures, trimmed as the runner trims them, and logs the sizes.
func TestCodecQuickRun(t *testing.T) {
	caps := quickTransferCaptures(t)
	if len(caps) == 0 {
		t.Skip("no committed Study B quick run with transfer captures")
	}
	var raw, gz, col, pkts, conns int64
	var streams [numStreams]int64
	zw, _ := codecZstd()
	for _, p := range caps {
		tr := trimmedOf(t, p)
		enc := roundTrip(t, p, tr)
		res, err := Read(bytes.NewReader(tr), ReadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		raw, gz, col, pkts = raw+int64(len(tr)), gz+int64(gzipSize(t, tr)), col+int64(len(enc)), pkts+res.Packets
		conns += int64(len(res.Records))
		var e codecState
		e.encode(tr)
		for i := range e.s {
			streams[i] += int64(len(zw.EncodeAll(e.s[i], nil)))
		}
	}
	t.Logf("%d trimmed transfer captures, %d connections, %d packets: %d bytes, gzip -9 %d (%.2f B/packet), %s %d (%.2f B/packet, %.1fx smaller than gzip)",
		len(caps), conns, pkts, raw, gz, float64(gz)/float64(pkts), CodecExt, col, float64(col)/float64(pkts), float64(gz)/float64(col))
	// Each stream compressed alone: those that grow with connections
	// (handshake payloads, verbatim blocks, new flows) and the rest, which
	// grow with packets.
	var perConn, perPkt int64
	for i, n := range streams {
		if i == sRaw || i == sPay || i == sAddr || i == sFrame {
			perConn += n
		} else {
			perPkt += n
		}
		t.Logf("stream %2d: %7d bytes zstd'd alone", i, n)
	}
	t.Logf("per connection %.0f bytes, per packet %.2f bytes (streams compressed alone)", float64(perConn)/float64(conns), float64(perPkt)/float64(pkts))
}

// codecFixtures are the package's captures: the golden capture, synthetic
// ones of every supported link type (pcap and pcapng), and their trims.
func codecFixtures(t testing.TB) map[string][]byte {
	fx := map[string][]byte{}
	golden, err := os.ReadFile("testdata/golden.pcapng")
	if err != nil {
		t.Fatal(err)
	}
	fx["golden.pcapng"] = golden
	fx["threeConns.pcap"] = threeConns()
	fx["threeConns.pcapng"] = toPcapng(t, threeConns(), []byte("CLIENT_RANDOM 00 00\n"))
	fx["roundTrips.pcap"] = roundTripCapture(true, true, true, false)
	for _, link := range []uint32{LinkEthernet, LinkSLL, LinkSLL2, LinkRaw, LinkNull, LinkIPv4} {
		sy := newSynth(link)
		sy.conn(cli4, srv4, synthOpts{group: 0x11ec, reorder: true})
		sy.conn(cli6, srv6, synthOpts{group: 0x11ed, hrr: true, retransmitCH: true})
		fx[fmt.Sprintf("synth-link%d.pcapng", link)] = toPcapng(t, sy.buf.Bytes(), nil)
	}
	for name, b := range maps.Clone(fx) {
		var out bytes.Buffer
		if _, err := Trim(&out, bytes.NewReader(b)); err != nil {
			t.Fatalf("trim %s: %v", name, err)
		}
		fx["trimmed-"+name] = out.Bytes()
	}
	return fx
}

func TestCodecFixtures(t *testing.T) {
	for name, b := range codecFixtures(t) {
		roundTrip(t, name, b)
	}
}

// TestCodecEmpty: an empty input is a capture of no blocks.
func TestCodecEmpty(t *testing.T) {
	roundTrip(t, "empty", nil)
}

// ngFile is a pcapng file: a section header, one interface of the link
// type, and an Enhanced Packet Block per frame.
func ngFile(link uint16, frames ...[]byte) []byte {
	le := binary.LittleEndian
	b := le.AppendUint32(nil, ngSHB)
	b = le.AppendUint32(b, 28)
	b = le.AppendUint32(b, ngBOM)
	b = le.AppendUint16(b, 1)
	b = le.AppendUint16(b, 0)
	b = le.AppendUint64(b, ^uint64(0))
	b = le.AppendUint32(b, 28)
	b = le.AppendUint32(b, ngIDB)
	b = le.AppendUint32(b, 20)
	b = le.AppendUint16(b, link)
	b = le.AppendUint16(b, 0)
	b = le.AppendUint32(b, 262144)
	b = le.AppendUint32(b, 20)
	for i, f := range frames {
		n := 32 + pad4(len(f))
		b = le.AppendUint32(b, ngEPB)
		b = le.AppendUint32(b, uint32(n))
		b = le.AppendUint32(b, 0)
		b = le.AppendUint32(b, 0x61a8)
		b = le.AppendUint32(b, uint32(1_000_000*i))
		b = le.AppendUint32(b, uint32(len(f)))
		b = le.AppendUint32(b, uint32(len(f)))
		b = append(b, f...)
		b = append(b, make([]byte, pad4(len(f))-len(f))...)
		b = le.AppendUint32(b, uint32(n))
	}
	return b
}

// tcp4 is an Ethernet frame of an IPv4/TCP segment with correct checksums.
func tcp4(seq uint32, ipOpts, tcpOpts, payload []byte) []byte {
	tcp := make([]byte, 20, 20+len(tcpOpts)+len(payload))
	binary.BigEndian.PutUint16(tcp[0:], 40000)
	binary.BigEndian.PutUint16(tcp[2:], 443)
	binary.BigEndian.PutUint32(tcp[4:], seq)
	tcp[12] = byte((20+len(tcpOpts))/4) << 4
	tcp[13] = 0x18
	binary.BigEndian.PutUint16(tcp[14:], 501)
	tcp = append(append(tcp, tcpOpts...), payload...)
	ip := make([]byte, 20+len(ipOpts))
	ip[0] = 0x40 | byte(len(ip)/4)
	binary.BigEndian.PutUint16(ip[2:], uint16(len(ip)+len(tcp)))
	ip[8], ip[9] = 64, 6
	copy(ip[12:], []byte{10, 0, 0, 1, 10, 0, 0, 2})
	copy(ip[20:], ipOpts)
	binary.BigEndian.PutUint16(ip[10:], ^fold(csum16(0, ip)))
	ps := csum16(0, ip[12:20]) + 6 + uint32(len(tcp))
	binary.BigEndian.PutUint16(tcp[16:], ^fold(csum16(ps, tcp)))
	eth := []byte{2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1, 8, 0}
	return append(append(eth, ip...), tcp...)
}

// codecKinds returns how many blocks of each kind the encoder wrote.
func codecKinds(b []byte) map[byte]int {
	var e codecState
	e.encode(b)
	k := map[byte]int{}
	for _, v := range e.s[sKind] {
		k[v]++
	}
	return k
}

// TestCodecFallbacks: what the model does not cover is stored verbatim
// (a frame, a block, or the tail) and still round-trips.
func TestCodecFallbacks(t *testing.T) {
	ts := []byte{1, 1, 8, 10, 0, 0, 0, 1, 0, 0, 0, 2}
	good := tcp4(1000, nil, ts, []byte("hello"))
	badSum := tcp4(1000, nil, nil, nil)
	badSum[24] ^= 0xff // IPv4 checksum
	sy := newSynth(LinkEthernet)
	sy.conn(cli6, srv6, synthOpts{group: 0x11ec})
	v6 := toPcapng(t, sy.buf.Bytes(), nil)
	udp := tcp4(1, nil, nil, nil)
	udp[14+9] = 17
	oddPad := ngFile(1, tcp4(1, nil, nil, []byte("x")))
	oddPad[len(oddPad)-5] = 0xaa // a padding byte
	oddBlock := ngFile(1, good)
	oddBlock = binary.LittleEndian.AppendUint32(oddBlock, 0x0BAD)
	oddBlock = binary.LittleEndian.AppendUint32(oddBlock, 16)
	oddBlock = append(oddBlock, 1, 2, 3, 4)
	oddBlock = binary.LittleEndian.AppendUint32(oddBlock, 16)
	bigEndian := ngFile(1, good)
	for i := 0; i+4 <= len(bigEndian); i += 4 { // every field here is 32 bits but the SHB version and IDB link type
		if i != 12 && i != 36 {
			binary.BigEndian.PutUint32(bigEndian[i:], binary.LittleEndian.Uint32(bigEndian[i:]))
		}
	}
	copy(bigEndian[12:], []byte{0, 1, 0, 0})
	copy(bigEndian[36:], []byte{0, 1, 0, 0})
	copy(bigEndian[48+28:], good)  // the frame's bytes are not integers
	bigEndian[48+28+len(good)] = 0 // nor is its padding
	cases := []struct {
		name string
		in   []byte
		want map[byte]int
	}{
		{"modelled", ngFile(1, good, tcp4(1005, nil, ts, nil)), map[byte]int{blkVerbatim: 2, blkTCP: 2}},
		{"SACK and other TCP options", ngFile(1, tcp4(1, nil, []byte{1, 1, 5, 10, 0, 0, 0, 1, 0, 0, 0, 2}, nil)), map[byte]int{blkVerbatim: 2, blkTCP: 1}},
		{"IPv4 checksum wrong", ngFile(1, badSum), map[byte]int{blkVerbatim: 2, blkTCP: 1}},
		{"IPv4 options", ngFile(1, tcp4(1, []byte{1, 1, 1, 0}, nil, nil)), map[byte]int{blkVerbatim: 2, blkFrame: 1}},
		{"UDP", ngFile(1, udp), map[byte]int{blkVerbatim: 2, blkFrame: 1}},
		{"IPv6", v6, nil},
		{"link type not modelled", ngFile(147, good), map[byte]int{blkVerbatim: 2, blkFrame: 1}},
		{"frame shorter than its headers", ngFile(1, good[:40]), map[byte]int{blkVerbatim: 2, blkFrame: 1}},
		{"non-zero padding", oddPad, map[byte]int{blkVerbatim: 3}},
		{"unknown block type", oddBlock, map[byte]int{blkVerbatim: 3, blkTCP: 1}},
		{"big-endian section", bigEndian, map[byte]int{blkVerbatim: 2, blkTCP: 1}},
		{"truncated", ngFile(1, good)[:70], map[byte]int{blkVerbatim: 2, blkTail: 1}},
		{"classic pcap", threeConns(), map[byte]int{blkTail: 1}},
		{"not a capture", []byte("hello, world"), map[byte]int{blkTail: 1}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			roundTrip(t, c.name, c.in)
			got := codecKinds(c.in)
			if c.want == nil {
				if got[blkTCP] != 0 || got[blkFrame] == 0 {
					t.Errorf("kinds %v, want frames only", got)
				}
				return
			}
			if !maps.Equal(got, c.want) {
				t.Errorf("kinds %v, want %v", got, c.want)
			}
		})
	}
}

// TestCodecCorrupt: a damaged file is refused with ErrCodec, never
// decoded to other bytes.
func TestCodecCorrupt(t *testing.T) {
	in := codecFixtures(t)["trimmed-golden.pcapng"]
	enc := roundTrip(t, "golden", in)
	mut := func(f func(b []byte) []byte) []byte { return f(bytes.Clone(enc)) }
	hdr := len(codecMagic) + 1 + 32
	cases := map[string][]byte{
		"flipped byte in the columns": mut(func(b []byte) []byte { b[len(b)/2] ^= 1; return b }),
		"flipped last byte":           mut(func(b []byte) []byte { b[len(b)-1] ^= 0x80; return b }),
		"truncated":                   enc[:len(enc)-10],
		"truncated header":            enc[:hdr-3],
		"wrong version":               mut(func(b []byte) []byte { b[len(codecMagic)] = 9; return b }),
		"wrong digest":                mut(func(b []byte) []byte { b[len(codecMagic)+5] ^= 1; return b }),
		"wrong length":                mut(func(b []byte) []byte { b[hdr]++; return b }),
		"wrong magic":                 mut(func(b []byte) []byte { b[0] = 'X'; return b }),
		"trailing garbage":            append(bytes.Clone(enc), 0, 0, 0, 0),
	}
	for name, b := range cases {
		out, err := DecodeCapture(b)
		if err == nil || !errors.Is(err, ErrCodec) {
			t.Errorf("%s: got %d bytes, error %v; want ErrCodec", name, len(out), err)
			continue
		}
		if !strings.Contains(err.Error(), "restore") && !strings.Contains(err.Error(), "commit that wrote it") && name != "wrong magic" {
			t.Errorf("%s: %v does not say what to do", name, err)
		}
		t.Logf("%s: %v", name, err)
	}
}

// FuzzCodec: any input round-trips exactly (the encoder never refuses
// one under 4 GiB), and the decoder never panics on any input.
func FuzzCodec(f *testing.F) {
	for _, b := range codecFixtures(f) {
		if len(b) < 16<<10 {
			f.Add(b)
		}
	}
	f.Add(ngFile(1, tcp4(1, nil, []byte{1, 1, 8, 10, 0, 0, 0, 1, 0, 0, 0, 2}, []byte("x"))))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		enc, err := EncodeCapture(data)
		if err != nil {
			t.Fatalf("encode refused %d bytes: %v", len(data), err)
		}
		back, err := DecodeCapture(enc)
		if err != nil || !bytes.Equal(back, data) {
			t.Fatalf("round trip: %v", err)
		}
		if out, err := DecodeCapture(data); err == nil && !IsEncodedCapture(data) {
			t.Fatalf("decoded %d bytes from a file without the magic", len(out))
		}
		if len(enc) > 0 {
			b := bytes.Clone(enc)
			b[len(data)%len(b)] ^= 0x5a
			DecodeCapture(b) // must not panic
		}
		// The columns behind zstd's checksum: any bytes, as streams of
		// the column decoder, must give an error or a capture, no panic.
		var cols []byte
		cols = binary.AppendUvarint(cols, numStreams)
		for i := range numStreams {
			part := data[i*len(data)/numStreams : (i+1)*len(data)/numStreams]
			cols = binary.AppendUvarint(cols, uint64(len(part)))
			cols = append(cols, part...)
		}
		decodeColumns(cols, 1<<20)
	})
}
