package capture

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"sync"

	"github.com/klauspost/compress/zstd"
)

// CodecExt ends the name of a capture file stored with EncodeCapture.
const CodecExt = ".pqcol"

// Codec format constants: the file starts with codecMagic and the version.
const (
	codecMagic   = "PQCAPCOL"
	codecVersion = 1
	// codecMaxOut bounds what Decode allocates from a header's claims.
	codecMaxOut = 1 << 32
)

// ErrCodec is wrapped by every error Decode returns about its input.
var ErrCodec = errors.New("not a readable " + CodecExt + " capture")

// EncodeCapture stores a capture losslessly in columns, much smaller than
// gzip, so that trimmed captures of long transfers fit in a run folder.
//
// Why: the header-only packets capture.Trim leaves (timestamps, IP ids,
// checksums, sequence and acknowledgment numbers) vary packet by packet,
// and gzip finds few repeats in them; taken apart into one column per
// field, predicted from the same flow's previous packet (RFC 791, RFC
// 9293) and delta-coded, they become small, repetitive numbers that zstd
// (RFC 8878) compresses well.
//
// Layout (integers little-endian; varints as encoding/binary's uvarint,
// signed ones zig-zag):
//
//	magic    8 bytes "PQCAPCOL"
//	version  1 byte (1)
//	sha256   32 bytes, of the original capture
//	length   uvarint, of the original capture
//	columns  one zstd frame holding: uvarint count of streams, then each
//	         stream as uvarint length and bytes
//
// The streams describe the capture as pcapng blocks
// (draft-ietf-opsawg-pcapng) in file order: one kind byte per block in
// the "kind" stream says whether it is kept verbatim (every block that is
// no Enhanced Packet Block, and any packet the model does not reproduce
// exactly), an Enhanced Packet Block whose frame is kept verbatim (no
// IPv4/TCP frame: IPv6, ARP, IP options, ...), or one whose link, IPv4 and
// TCP headers are columns: the interface, the time (delta from the
// previous packet), the flow (its 4-tuple, once, then a reference), the
// link header (when it changes within the flow), IP length, id (delta),
// TOS/flags/TTL, sequence number (delta from where the flow's previous
// segment ended), acknowledgment number (from where the other
// direction's data ended), window and TCP timestamps (deltas within the
// flow), data offset and flags, checksums (a bit when
// they are the computed full or partial sums, else the value), TCP
// options other than the timestamp option verbatim, and the captured
// payload verbatim. Bytes after the last whole block (a truncated or
// non-pcapng input) are kept verbatim as a tail.
//
// Every modelled block is rebuilt from its fields and compared with the
// original before it is used, and the whole output is decoded and compared
// before it is returned, so the output always decodes to the input; the
// encoder returns an error only for an input over 4 GiB or when that
// final check fails (a bug).
func EncodeCapture(orig []byte) ([]byte, error) {
	if int64(len(orig)) >= codecMaxOut {
		return nil, fmt.Errorf("capture codec: input of %d bytes exceeds the 4 GiB the format allows; keep it gzip'd instead", len(orig))
	}
	var e codecState
	e.encode(orig)
	var cols []byte
	cols = binary.AppendUvarint(cols, uint64(numStreams))
	for i := range e.s {
		cols = binary.AppendUvarint(cols, uint64(len(e.s[i])))
		cols = append(cols, e.s[i]...)
	}
	zw, err := codecZstd()
	if err != nil {
		return nil, fmt.Errorf("capture codec: %w", err)
	}
	sum := sha256.Sum256(orig)
	out := append([]byte(codecMagic), codecVersion)
	out = append(out, sum[:]...)
	out = binary.AppendUvarint(out, uint64(len(orig)))
	out = zw.EncodeAll(cols, out)
	back, err := DecodeCapture(out)
	if err != nil || !bytes.Equal(back, orig) {
		return nil, fmt.Errorf("capture codec: the encoded capture does not decode to the input (%v); this is a bug in the codec, keep the capture gzip'd and report it", err)
	}
	return out, nil
}

// codecZstd is the one zstd encoder EncodeCapture uses (its EncodeAll may
// be called concurrently): building one costs more than encoding a small
// capture. Its level is "better", not "best": on the Study B quick run's
// trimmed captures best saves 1.2% and takes 20 times as long.
var codecZstd = sync.OnceValues(func() (*zstd.Encoder, error) {
	return zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedBetterCompression), zstd.WithEncoderConcurrency(1),
		zstd.WithWindowSize(8<<20))
})

// IsEncodedCapture reports whether b starts like EncodeCapture's output.
func IsEncodedCapture(b []byte) bool { return bytes.HasPrefix(b, []byte(codecMagic)) }

// DecodeCapture gives back the capture EncodeCapture stored in enc, byte for
// byte. It fails, wrapping ErrCodec, when enc is no such file, of another
// version, damaged, or decodes to bytes other than the SHA-256 it holds.
func DecodeCapture(enc []byte) ([]byte, error) {
	if !IsEncodedCapture(enc) {
		return nil, fmt.Errorf("%w: it does not start with %q", ErrCodec, codecMagic)
	}
	h := enc[len(codecMagic):]
	if len(h) < 1+sha256.Size {
		return nil, fmt.Errorf("%w: header truncated; restore the file from git or the content store", ErrCodec)
	}
	if h[0] != codecVersion {
		return nil, fmt.Errorf("%w: format version %d, this reader knows %d; use the pqrepro commit that wrote it", ErrCodec, h[0], codecVersion)
	}
	var want [sha256.Size]byte
	copy(want[:], h[1:])
	h = h[1+sha256.Size:]
	n, k := binary.Uvarint(h)
	if k <= 0 || n >= codecMaxOut {
		return nil, fmt.Errorf("%w: bad length in the header; restore the file", ErrCodec)
	}
	h = h[k:]
	zr, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1), zstd.WithDecoderLowmem(true), zstd.WithDecoderMaxMemory(2*n+1<<16))
	if err != nil {
		return nil, fmt.Errorf("capture codec: %w", err)
	}
	defer zr.Close()
	cols, err := zr.DecodeAll(h, nil)
	if err != nil {
		return nil, fmt.Errorf("%w: columns: %v; the file is truncated or damaged, restore it", ErrCodec, err)
	}
	out, err := decodeColumns(cols, int(n))
	if err != nil {
		return nil, err
	}
	if len(out) != int(n) {
		return nil, fmt.Errorf("%w: decodes to %d bytes, the header says %d; the file is damaged, restore it", ErrCodec, len(out), n)
	}
	if sha256.Sum256(out) != want {
		return nil, fmt.Errorf("%w: decodes to %d bytes whose SHA-256 is not the stored sha256:%x; the file is damaged, restore it", ErrCodec, len(out), want)
	}
	return out, nil
}

// decodeColumns rebuilds the capture from the uncompressed columns, at
// most n bytes of it.
func decodeColumns(cols []byte, n int) ([]byte, error) {
	var d codecState
	ns, k := binary.Uvarint(cols)
	if k <= 0 || ns != numStreams {
		return nil, fmt.Errorf("%w: %d streams, want %d; restore the file", ErrCodec, ns, numStreams)
	}
	cols = cols[k:]
	for i := range d.r {
		l, k := binary.Uvarint(cols)
		if k <= 0 || l > uint64(len(cols)-k) {
			return nil, fmt.Errorf("%w: stream %d overruns the columns; restore the file", ErrCodec, i)
		}
		d.r[i] = rstream{b: cols[k : k+int(l)]}
		cols = cols[k+int(l):]
	}
	if len(cols) != 0 {
		return nil, fmt.Errorf("%w: %d bytes after the last stream; restore the file", ErrCodec, len(cols))
	}
	out, err := d.decode(n)
	if err != nil {
		return nil, fmt.Errorf("%w: %v; restore the file", ErrCodec, err)
	}
	return out, nil
}

// Streams (columns) of the format, in file order.
const (
	sKind    = iota // per block: blkVerbatim, blkFrame, blkTCP, blkTail
	sRaw            // verbatim blocks and the tail: uvarint length, bytes
	sIf             // interface id, uvarint
	sTs             // timestamp delta from the previous packet, zig-zag
	sOrig           // original length minus the predicted one, zig-zag
	sFrame          // blkFrame frames: uvarint length, bytes
	sCtl            // blkTCP: control byte (ctl* bits)
	sFlow           // flow reference: MTF rank, or flowKnown + index, or flowNew
	sAddr           // new flows: 12 bytes (source, destination, ports)
	sLink           // link headers that changed within their flow
	sIPLen          // IPv4 total length, 2 bytes
	sIPID           // IPv4 id delta within the flow, zig-zag
	sIPMisc         // IPv4 TOS, flags/fragment offset (2), TTL
	sSum            // checksums not computed: 2 bytes each
	sSeq            // sequence number minus the flow's next, zig-zag
	sAck            // acknowledgment number minus the reverse flow's next, zig-zag
	sTCPFlag        // data offset and flags, 2 bytes
	sWin            // window delta within the flow, zig-zag
	sTSval          // TCP timestamp option: TSval delta within the flow
	sTSecr          // TCP timestamp option: TSecr delta within the flow
	sOpt            // other TCP options: thl-20 bytes
	sPayLen         // captured payload length when neither whole nor none
	sPay            // captured payload bytes
	sExtra          // urgent pointer (2 bytes), EPB options (uvarint length, bytes)
	numStreams
)

// Block kinds (sKind).
const (
	blkVerbatim = iota
	blkFrame
	blkTCP
	blkTail
)

// Control byte bits of a blkTCP packet.
const (
	ctlLinkSame  = 1 << 0 // link header as the flow's last
	ctlIPSumOK   = 1 << 1 // IPv4 checksum as computed
	ctlTCPSum    = 3 << 2 // TCP checksum: 0 stored, 1 full, 2 partial (pseudo-header), 3 its complement
	ctlPayShift  = 4      // payload: 0 whole, 1 none, 2 explicit length
	ctlPay       = 3 << ctlPayShift
	ctlTSOpt     = 1 << 6 // TCP options are exactly NOP NOP TS(10)
	ctlExtra     = 1 << 7 // urgent pointer and EPB options in sExtra
	flowMTF      = 16     // references below this are ranks in the recent list
	flowKnown    = 16
	flowNew      = 17
	pcapngEPBMin = 32
)

type flowState struct {
	link       []byte
	ipID       uint16
	seqNext    uint32
	ack        uint32
	win        uint16
	tsval      uint32
	tsecr      uint32
	haveLink   bool
	tcpSumMode uint8
	rev        int // 1 + index of the reverse flow, 0 while unseen
}

// reverse links a new flow to the flow of the other direction, if seen.
func (c *codecState) reverse(addr [12]byte, idx int) {
	var r [12]byte
	copy(r[:4], addr[4:8])
	copy(r[4:8], addr[:4])
	copy(r[8:10], addr[10:12])
	copy(r[10:12], addr[8:10])
	if j, ok := c.flows[r]; ok && j != idx {
		c.states[idx].rev, c.states[j].rev = j+1, idx+1
	}
}

// ackBase is what an acknowledgment number is coded against: where the
// reverse flow's data ended, or else the flow's previous one.
func (c *codecState) ackBase(st *flowState) uint32 {
	if st.rev > 0 {
		return c.states[st.rev-1].seqNext
	}
	return st.ack
}

// codecState is the model both directions share: the section's byte
// order, its interfaces' link types, the flows and the previous packet.
type codecState struct {
	s      [numStreams][]byte  // encoding
	r      [numStreams]rstream // decoding
	bo     binary.ByteOrder
	links  []uint32
	prevTs uint64
	flows  map[[12]byte]int
	states []flowState
	recent []int
	fr     epbFields // scratch
	blk    []byte
}

// epbFields are an Enhanced Packet Block's fields as the model sees them.
type epbFields struct {
	ifid, orig uint32
	ts         uint64
	opts       []byte // EPB options, verbatim
	frame      []byte // blkFrame
	// blkTCP
	link                  []byte
	tos, ttl              uint8
	ipLen, ipID, frag     uint16
	ipSum                 uint16
	addr                  [12]byte
	seq, ack              uint32
	offFlags, win, tcpSum uint16
	urg                   uint16
	topts                 []byte
	payload               []byte
}

// observe updates the section and interface state from a block kept
// verbatim; it reads any bytes without failing.
func (c *codecState) observe(b []byte) {
	if len(b) < 12 {
		return
	}
	if binary.LittleEndian.Uint32(b) == ngSHB {
		switch {
		case binary.LittleEndian.Uint32(b[8:]) == ngBOM:
			c.bo = binary.LittleEndian
		case binary.BigEndian.Uint32(b[8:]) == ngBOM:
			c.bo = binary.BigEndian
		}
		c.links = c.links[:0]
		return
	}
	if c.bo != nil && c.bo.Uint32(b) == ngIDB && len(b) >= 20 {
		c.links = append(c.links, uint32(c.bo.Uint16(b[8:])))
	}
}

// nextBlock returns the length of the whole pcapng block at the start of
// b, or 0 when none is there.
func (c *codecState) nextBlock(b []byte) int {
	if len(b) < 12 {
		return 0
	}
	bo := c.bo
	if binary.LittleEndian.Uint32(b) == ngSHB {
		switch {
		case binary.LittleEndian.Uint32(b[8:]) == ngBOM:
			bo = binary.LittleEndian
		case binary.BigEndian.Uint32(b[8:]) == ngBOM:
			bo = binary.BigEndian
		default:
			return 0
		}
	}
	if bo == nil {
		return 0
	}
	l := bo.Uint32(b[4:])
	if l < 12 || l%4 != 0 || uint64(l) > uint64(len(b)) || bo.Uint32(b[l-4:]) != l {
		return 0
	}
	return int(l)
}

func (c *codecState) encode(in []byte) {
	c.flows = map[[12]byte]int{}
	for len(in) > 0 {
		n := c.nextBlock(in)
		if n == 0 {
			c.s[sKind] = append(c.s[sKind], blkTail)
			c.putBytes(sRaw, in)
			return
		}
		b := in[:n]
		in = in[n:]
		if c.bo != nil && c.bo.Uint32(b) == ngEPB && binary.LittleEndian.Uint32(b) != ngSHB && c.encodeEPB(b) {
			continue
		}
		c.s[sKind] = append(c.s[sKind], blkVerbatim)
		c.putBytes(sRaw, b)
		c.observe(b)
	}
}

func (c *codecState) putBytes(s int, b []byte) {
	c.s[s] = binary.AppendUvarint(c.s[s], uint64(len(b)))
	c.s[s] = append(c.s[s], b...)
}

func (c *codecState) putZig(s int, v int64) {
	c.s[s] = binary.AppendUvarint(c.s[s], uint64(v<<1)^uint64(v>>63))
}

// linkLen is the link header length before an IPv4 packet for the
// interface's link type, or -1 when the frame is not modelled.
func linkLen(link uint32, frame []byte) int {
	switch link {
	case LinkEthernet:
		if len(frame) >= 14 && frame[12] == 0x08 && frame[13] == 0 {
			return 14
		}
	case LinkSLL:
		if len(frame) >= 16 && frame[14] == 0x08 && frame[15] == 0 {
			return 16
		}
	case LinkSLL2:
		if len(frame) >= 20 && frame[0] == 0x08 && frame[1] == 0 {
			return 20
		}
	case LinkRaw, LinkRawAlt12, LinkRawAlt14, LinkIPv4:
		return 0
	}
	return -1
}

// parseEPB splits an EPB into fields; tcp is false when the frame is not
// an IPv4/TCP one the model covers.
func (c *codecState) parseEPB(b []byte, f *epbFields) (ok, tcp bool) {
	bo := c.bo
	if len(b) < pcapngEPBMin {
		return false, false
	}
	*f = epbFields{ifid: bo.Uint32(b[8:]), ts: uint64(bo.Uint32(b[12:]))<<32 | uint64(bo.Uint32(b[16:])),
		orig: bo.Uint32(b[24:])}
	incl := uint64(bo.Uint32(b[20:]))
	end := 28 + uint64(pad4(int(min(incl, 1<<31))))
	if incl >= 1<<31 || end > uint64(len(b)-4) {
		return false, false
	}
	f.frame = b[28 : 28+incl]
	f.opts = b[end : len(b)-4]
	if int(f.ifid) >= len(c.links) || f.ifid >= 1<<31 {
		return true, false
	}
	fr := f.frame
	lh := linkLen(c.links[f.ifid], fr)
	if lh < 0 || len(fr) < lh+40 || fr[lh] != 0x45 || fr[lh+9] != 6 {
		return true, false
	}
	ip := fr[lh:]
	f.link = fr[:lh]
	f.tos, f.ipLen, f.ipID, f.frag, f.ttl, f.ipSum = ip[1], be16(ip[2:]), be16(ip[4:]), be16(ip[6:]), ip[8], be16(ip[10:])
	copy(f.addr[:8], ip[12:20])
	t := ip[20:]
	copy(f.addr[8:], t[:4])
	f.seq, f.ack, f.offFlags, f.win, f.tcpSum, f.urg = be32(t[4:]), be32(t[8:]), be16(t[12:]), be16(t[14:]), be16(t[16:]), be16(t[18:])
	thl := int(f.offFlags>>12) * 4
	if thl < 20 || len(t) < thl {
		return true, false
	}
	f.topts = t[20:thl]
	f.payload = t[thl:]
	return true, true
}

func be16(b []byte) uint16 { return binary.BigEndian.Uint16(b) }
func be32(b []byte) uint32 { return binary.BigEndian.Uint32(b) }

// buildEPB appends the block f describes (its frame from the fields when
// tcp) to dst.
func (c *codecState) buildEPB(dst []byte, f *epbFields, tcp bool) []byte {
	bo := c.bo
	start := len(dst)
	dst = app32(bo, dst, ngEPB)
	dst = app32(bo, dst, 0)
	dst = app32(bo, dst, f.ifid)
	dst = app32(bo, dst, uint32(f.ts>>32))
	dst = app32(bo, dst, uint32(f.ts))
	dst = app32(bo, dst, 0) // incl, below
	dst = app32(bo, dst, f.orig)
	fs := len(dst)
	if tcp {
		dst = append(dst, f.link...)
		dst = append(dst, 0x45, f.tos)
		dst = binary.BigEndian.AppendUint16(dst, f.ipLen)
		dst = binary.BigEndian.AppendUint16(dst, f.ipID)
		dst = binary.BigEndian.AppendUint16(dst, f.frag)
		dst = append(dst, f.ttl, 6)
		dst = binary.BigEndian.AppendUint16(dst, f.ipSum)
		dst = append(dst, f.addr[:8]...)
		dst = append(dst, f.addr[8:]...)
		dst = binary.BigEndian.AppendUint32(dst, f.seq)
		dst = binary.BigEndian.AppendUint32(dst, f.ack)
		dst = binary.BigEndian.AppendUint16(dst, f.offFlags)
		dst = binary.BigEndian.AppendUint16(dst, f.win)
		dst = binary.BigEndian.AppendUint16(dst, f.tcpSum)
		dst = binary.BigEndian.AppendUint16(dst, f.urg)
		dst = append(dst, f.topts...)
		dst = append(dst, f.payload...)
	} else {
		dst = append(dst, f.frame...)
	}
	incl := len(dst) - fs
	dst = append(dst, make([]byte, pad4(incl)-incl)...)
	dst = append(dst, f.opts...)
	dst = app32(bo, dst, 0)
	n := uint32(len(dst) - start)
	bo.PutUint32(dst[start+4:], n)
	bo.PutUint32(dst[start+20:], uint32(incl))
	bo.PutUint32(dst[len(dst)-4:], n)
	return dst
}

// csum16 adds b as big-endian 16-bit words to s (RFC 1071).
func csum16(s uint32, b []byte) uint32 {
	for len(b) >= 2 {
		s += uint32(b[0])<<8 | uint32(b[1])
		b = b[2:]
	}
	if len(b) == 1 {
		s += uint32(b[0]) << 8
	}
	return s
}

func fold(s uint32) uint16 {
	for s>>16 != 0 {
		s = s&0xffff + s>>16
	}
	return uint16(s)
}

// ipSumOf is the IPv4 header checksum of f's header (RFC 791).
func ipSumOf(f *epbFields) uint16 {
	s := uint32(0x4500|uint16(f.tos)) + uint32(f.ipLen) + uint32(f.ipID) + uint32(f.frag) + uint32(uint16(f.ttl)<<8|6)
	s = csum16(s, f.addr[:8])
	return ^fold(s)
}

// tcpSumOf is the TCP checksum f would carry in mode m (RFC 9293 3.1).
// Mode 1 is the full sum over the captured segment, 2 the pseudo-header's
// sum as a sender that offloads the checksum leaves it, 3 its complement.
func tcpSumOf(f *epbFields, m uint8) uint16 {
	s := csum16(0, f.addr[:8])
	s += 6 + uint32(f.ipLen-20)
	switch m {
	case 2:
		return fold(s)
	case 3:
		return ^fold(s)
	}
	s = csum16(s, f.addr[8:])
	s += f.seq>>16 + f.seq&0xffff + f.ack>>16 + f.ack&0xffff + uint32(f.offFlags) + uint32(f.win) + uint32(f.urg)
	s = csum16(s, f.topts)
	s = csum16(s, f.payload)
	return ^fold(s)
}

func (c *codecState) encodeEPB(b []byte) bool {
	f := &c.fr
	ok, tcp := c.parseEPB(b, f)
	if !ok {
		return false
	}
	if tcp && len(f.topts)%4 == 0 { // odd lengths cannot come from thl
		c.blk = c.buildEPB(c.blk[:0], f, true)
		tcp = bytes.Equal(c.blk, b)
	}
	if !tcp {
		c.blk = c.buildEPB(c.blk[:0], f, false)
		if !bytes.Equal(c.blk, b) {
			return false
		}
	}
	c.s[sIf] = binary.AppendUvarint(c.s[sIf], uint64(f.ifid))
	c.putZig(sTs, int64(f.ts-c.prevTs))
	c.prevTs = f.ts
	if !tcp {
		c.s[sKind] = append(c.s[sKind], blkFrame)
		c.putZig(sOrig, int64(f.orig)-int64(len(f.frame)))
		c.putBytes(sFrame, f.frame)
		c.putBytes(sExtra, f.opts)
		return true
	}
	c.s[sKind] = append(c.s[sKind], blkTCP)
	st := c.flow(f.addr)
	var ctl byte
	if st.haveLink && bytes.Equal(st.link, f.link) {
		ctl |= ctlLinkSame
	} else {
		c.s[sLink] = append(c.s[sLink], f.link...)
		st.link, st.haveLink = append(st.link[:0], f.link...), true
	}
	if ipSumOf(f) == f.ipSum {
		ctl |= ctlIPSumOK
	} else {
		c.s[sSum] = binary.BigEndian.AppendUint16(c.s[sSum], f.ipSum)
	}
	whole := uint32(f.ipLen) - 20 - uint32(len(f.topts)) - 20
	var mode uint8
	for _, m := range []uint8{st.tcpSumMode, 1, 2, 3} {
		if m != 0 && tcpSumOf(f, m) == f.tcpSum {
			mode = m
			break
		}
	}
	if mode != 0 {
		st.tcpSumMode = mode
	}
	ctl |= mode << 2
	if mode == 0 {
		c.s[sSum] = binary.BigEndian.AppendUint16(c.s[sSum], f.tcpSum)
	}
	switch {
	case uint32(len(f.payload)) == whole:
	case len(f.payload) == 0:
		ctl |= 1 << ctlPayShift
	default:
		ctl |= 2 << ctlPayShift
		c.s[sPayLen] = binary.AppendUvarint(c.s[sPayLen], uint64(len(f.payload)))
	}
	if len(f.topts) == 12 && bytes.Equal(f.topts[:4], []byte{1, 1, 8, 10}) {
		ctl |= ctlTSOpt
		tv, te := be32(f.topts[4:]), be32(f.topts[8:])
		c.putZig(sTSval, int64(int32(tv-st.tsval)))
		c.putZig(sTSecr, int64(int32(te-st.tsecr)))
		st.tsval, st.tsecr = tv, te
	} else {
		c.s[sOpt] = append(c.s[sOpt], f.topts...)
	}
	if f.urg != 0 || len(f.opts) != 0 {
		ctl |= ctlExtra
		c.s[sExtra] = binary.BigEndian.AppendUint16(c.s[sExtra], f.urg)
		c.putBytes(sExtra, f.opts)
	}
	c.s[sCtl] = append(c.s[sCtl], ctl)
	c.putZig(sOrig, int64(f.orig)-int64(len(f.link))-int64(f.ipLen))
	c.s[sIPLen] = binary.BigEndian.AppendUint16(c.s[sIPLen], f.ipLen)
	c.putZig(sIPID, int64(int16(f.ipID-st.ipID)))
	st.ipID = f.ipID
	c.s[sIPMisc] = append(c.s[sIPMisc], f.tos, byte(f.frag>>8), byte(f.frag), f.ttl)
	c.putZig(sSeq, int64(int32(f.seq-st.seqNext)))
	st.seqNext = f.seq + whole + uint32(f.offFlags&1) + uint32(f.offFlags>>1&1) // FIN, SYN
	c.putZig(sAck, int64(int32(f.ack-c.ackBase(st))))
	st.ack = f.ack
	c.s[sTCPFlag] = binary.BigEndian.AppendUint16(c.s[sTCPFlag], f.offFlags)
	c.putZig(sWin, int64(int16(f.win-st.win)))
	st.win = f.win
	c.s[sPay] = append(c.s[sPay], f.payload...)
	return true
}

// flow finds the state of the flow addr while encoding, writes its
// reference, and moves it to the front of the recent list.
func (c *codecState) flow(addr [12]byte) *flowState {
	idx, ok := c.flows[addr]
	rank := -1
	if ok {
		for i, v := range c.recent {
			if v == idx {
				rank = i
				break
			}
		}
	}
	switch {
	case rank >= 0:
		c.s[sFlow] = append(c.s[sFlow], byte(rank))
	case ok:
		c.s[sFlow] = append(c.s[sFlow], flowKnown)
		c.s[sFlow] = binary.AppendUvarint(c.s[sFlow], uint64(idx))
	default:
		c.s[sFlow] = append(c.s[sFlow], flowNew)
		c.s[sAddr] = append(c.s[sAddr], addr[:]...)
		idx = len(c.states)
		c.flows[addr] = idx
		c.states = append(c.states, flowState{})
		c.reverse(addr, idx)
	}
	c.touch(idx, rank)
	return &c.states[idx]
}

// touch moves flow idx (at rank, -1 when absent) to the front of the
// recent list.
func (c *codecState) touch(idx, rank int) {
	if rank < 0 {
		if len(c.recent) < flowMTF {
			c.recent = append(c.recent, 0)
		}
		rank = len(c.recent) - 1
	}
	copy(c.recent[1:rank+1], c.recent[:rank])
	c.recent[0] = idx
}

// rstream reads one stream while decoding; the first overrun sets bad.
type rstream struct {
	b   []byte
	bad bool
}

func (r *rstream) byte() byte {
	if len(r.b) < 1 {
		r.bad = true
		return 0
	}
	v := r.b[0]
	r.b = r.b[1:]
	return v
}

func (r *rstream) bytes(n uint64) []byte {
	if n > uint64(len(r.b)) {
		r.bad = true
		return nil
	}
	v := r.b[:n]
	r.b = r.b[n:]
	return v
}

func (r *rstream) uvarint() uint64 {
	v, k := binary.Uvarint(r.b)
	if k <= 0 {
		r.bad = true
		return 0
	}
	r.b = r.b[k:]
	return v
}

func (r *rstream) zig() int64 {
	u := r.uvarint()
	return int64(u>>1) ^ -int64(u&1)
}

func (r *rstream) u16() uint16 {
	b := r.bytes(2)
	if b == nil {
		return 0
	}
	return be16(b)
}

func (c *codecState) decode(n int) ([]byte, error) {
	c.flows = map[[12]byte]int{}
	out := make([]byte, 0, min(n, 64*len(c.r[sKind].b)+1<<16))
	var addrs [][12]byte
	for len(c.r[sKind].b) > 0 {
		if len(out) > n {
			return nil, fmt.Errorf("decodes to more than the %d bytes stored", n)
		}
		kind := c.r[sKind].byte()
		switch kind {
		case blkVerbatim, blkTail:
			b := c.r[sRaw].bytes(c.r[sRaw].uvarint())
			if kind == blkTail && len(c.r[sKind].b) != 0 {
				return nil, errors.New("a tail before the last block")
			}
			out = append(out, b...)
			if kind == blkVerbatim {
				if c.nextBlock(b) != len(b) {
					return nil, errors.New("a verbatim block that is not one block")
				}
				c.observe(b)
			}
		case blkFrame, blkTCP:
			if c.bo == nil {
				return nil, errors.New("a packet block before any section header")
			}
			f := &c.fr
			*f = epbFields{ifid: uint32(c.r[sIf].uvarint())}
			f.ts = c.prevTs + uint64(c.r[sTs].zig())
			c.prevTs = f.ts
			if kind == blkFrame {
				f.frame = c.r[sFrame].bytes(c.r[sFrame].uvarint())
				f.orig = uint32(int64(len(f.frame)) + c.r[sOrig].zig())
				f.opts = c.r[sExtra].bytes(c.r[sExtra].uvarint())
				out = c.buildEPB(out, f, false)
				break
			}
			if err := c.decodeTCP(f, &addrs); err != nil {
				return nil, err
			}
			out = c.buildEPB(out, f, true)
		default:
			return nil, fmt.Errorf("unknown block kind %d", kind)
		}
		for i := range c.r {
			if c.r[i].bad {
				return nil, fmt.Errorf("stream %d ends early", i)
			}
		}
	}
	for i := range c.r {
		if len(c.r[i].b) != 0 {
			return nil, fmt.Errorf("%d bytes left over in stream %d", len(c.r[i].b), i)
		}
	}
	return out, nil
}

func (c *codecState) decodeTCP(f *epbFields, addrs *[][12]byte) error {
	r := &c.r
	ctl := r[sCtl].byte()
	ref := r[sFlow].byte()
	var idx, rank int
	switch {
	case ref < flowMTF:
		rank = int(ref)
		if rank >= len(c.recent) {
			return fmt.Errorf("flow reference %d beyond the %d recent flows", rank, len(c.recent))
		}
		idx = c.recent[rank]
	case ref == flowKnown:
		v := r[sFlow].uvarint()
		if v >= uint64(len(c.states)) {
			return fmt.Errorf("flow %d of %d", v, len(c.states))
		}
		idx, rank = int(v), -1
		for i, x := range c.recent {
			if x == idx {
				rank = i
			}
		}
	case ref == flowNew:
		a := r[sAddr].bytes(12)
		if a == nil {
			return errors.New("flow addresses end early")
		}
		idx, rank = len(c.states), -1
		c.states = append(c.states, flowState{})
		*addrs = append(*addrs, [12]byte(a))
		if _, dup := c.flows[[12]byte(a)]; dup {
			return errors.New("a new flow that is not new")
		}
		c.flows[[12]byte(a)] = idx
		c.reverse([12]byte(a), idx)
	default:
		return fmt.Errorf("flow reference %d", ref)
	}
	c.touch(idx, rank)
	st := &c.states[idx]
	f.addr = (*addrs)[idx]
	if int(f.ifid) >= len(c.links) {
		return fmt.Errorf("packet on undeclared interface %d", f.ifid)
	}
	if ctl&ctlLinkSame != 0 {
		if !st.haveLink {
			return errors.New("link header of a flow without one")
		}
		f.link = st.link
	} else {
		var l int
		switch c.links[f.ifid] {
		case LinkEthernet:
			l = 14
		case LinkSLL:
			l = 16
		case LinkSLL2:
			l = 20
		case LinkRaw, LinkRawAlt12, LinkRawAlt14, LinkIPv4:
		default:
			return fmt.Errorf("link type %d not modelled", c.links[f.ifid])
		}
		f.link = r[sLink].bytes(uint64(l))
		st.link, st.haveLink = append(st.link[:0], f.link...), true
	}
	f.ipLen = r[sIPLen].u16()
	f.ipID = st.ipID + uint16(r[sIPID].zig())
	st.ipID = f.ipID
	m := r[sIPMisc].bytes(4)
	if m == nil {
		return errors.New("IPv4 fields end early")
	}
	f.tos, f.frag, f.ttl = m[0], uint16(m[1])<<8|uint16(m[2]), m[3]
	f.seq = st.seqNext + uint32(r[sSeq].zig())
	f.ack = c.ackBase(st) + uint32(r[sAck].zig())
	st.ack = f.ack
	f.offFlags = r[sTCPFlag].u16()
	f.win = st.win + uint16(r[sWin].zig())
	st.win = f.win
	thl := int(f.offFlags>>12) * 4
	if thl < 20 {
		return fmt.Errorf("TCP header length %d", thl)
	}
	if ctl&ctlTSOpt != 0 {
		if thl != 32 {
			return errors.New("timestamp option in a header of another length")
		}
		st.tsval += uint32(r[sTSval].zig())
		st.tsecr += uint32(r[sTSecr].zig())
		f.topts = binary.BigEndian.AppendUint32(binary.BigEndian.AppendUint32([]byte{1, 1, 8, 10}, st.tsval), st.tsecr)
	} else {
		f.topts = r[sOpt].bytes(uint64(thl - 20))
	}
	whole := uint32(f.ipLen) - 20 - uint32(thl-20) - 20
	st.seqNext = f.seq + whole + uint32(f.offFlags&1) + uint32(f.offFlags>>1&1)
	var pl uint64
	switch (ctl & ctlPay) >> ctlPayShift {
	case 0:
		pl = uint64(whole)
	case 1:
	case 2:
		pl = r[sPayLen].uvarint()
	default:
		return errors.New("payload mode 3")
	}
	f.payload = r[sPay].bytes(pl)
	if ctl&ctlExtra != 0 {
		f.urg = r[sExtra].u16()
		f.opts = r[sExtra].bytes(r[sExtra].uvarint())
	}
	f.orig = uint32(int64(len(f.link)) + int64(f.ipLen) + r[sOrig].zig())
	if ctl&ctlIPSumOK != 0 {
		f.ipSum = ipSumOf(f)
	} else {
		f.ipSum = r[sSum].u16()
	}
	if mode := ctl & ctlTCPSum >> 2; mode != 0 {
		st.tcpSumMode = mode
		f.tcpSum = tcpSumOf(f, mode)
	} else {
		f.tcpSum = r[sSum].u16()
	}
	return nil
}

func app32(bo binary.ByteOrder, dst []byte, v uint32) []byte {
	dst = append(dst, 0, 0, 0, 0)
	bo.PutUint32(dst[len(dst)-4:], v)
	return dst
}
