package capture

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"math/bits"
)

// Link types (https://www.tcpdump.org/linktypes.html) the reader decodes.
const (
	LinkNull     = 0   // BSD loopback, host-order 4-byte address family
	LinkEthernet = 1   // IEEE 802.3
	LinkRawAlt12 = 12  // raw IP (DLT_RAW on some BSDs)
	LinkRawAlt14 = 14  // raw IP (DLT_RAW on OpenBSD)
	LinkRaw      = 101 // raw IPv4/IPv6, no link header (Linux TUN)
	LinkLoop     = 108 // OpenBSD loopback, network-order address family
	LinkSLL      = 113 // Linux cooked capture v1 ("any" device)
	LinkIPv4     = 228
	LinkIPv6     = 229
	LinkSLL2     = 276 // Linux cooked capture v2
)

// Packet is one captured frame. Data is only valid until the next call to
// Next.
type Packet struct {
	TsNs     int64  // capture time, Unix nanoseconds
	LinkType uint32 // link type of the interface it was captured on
	OrigLen  int    // length on the wire (frame bytes)
	Data     []byte // captured bytes (may be shorter than OrigLen)
	Offset   int64  // file offset of the packet's record/block
}

// DamageError reports where a capture file stops being readable. Everything
// before Offset has been read; nothing after it is trusted.
type DamageError struct {
	Offset int64
	Reason string
}

func (e *DamageError) Error() string {
	return fmt.Sprintf("capture damaged at byte offset %d: %s; records before that offset are kept", e.Offset, e.Reason)
}

// maxBlock bounds one record or block. Larger values are damage, not data
// (the largest legitimate snap length is 262144; pcapng blocks with a DSB
// can be larger, so allow 64 MiB).
const maxBlock = 64 << 20

// Source reads packets from a pcap or pcapng stream.
//
// It reads pcap (the classic libpcap format, micro- or nanosecond, either
// byte order) or pcapng (draft-ietf-opsawg-pcapng: SHB, IDB, EPB, SPB, the
// obsolete PB; other blocks such as the Decryption Secrets Block, name
// resolution and statistics are skipped) stream.
type Source struct {
	r   *bufio.Reader
	off int64
	ng  bool
	bo  binary.ByteOrder
	buf []byte

	// pcap
	nanos    bool
	linkType uint32
	snapLen  uint32

	// pcapng: interfaces of the current section
	ifaces []ngIface
	// Secrets collects the TLS key log lines of Decryption Secrets Blocks
	// (secrets type TLSK) seen so far.
	Secrets []byte

	// For Trim: with pass set, every block or record that is no packet
	// (and the pcap file header) goes to pass as read, and raw holds the
	// last packet's whole block or record.
	pass func(raw []byte) error
	raw  []byte
	head []byte // the pcap file header
}

type ngIface struct {
	linkType uint32
	snapLen  uint32
	tsShift  int  // if_tsresol exponent
	tsPow2   bool // resolution is 2^-tsShift instead of 10^-tsShift
	tsOffset int64
}

const (
	pcapMagicMicro = 0xa1b2c3d4
	pcapMagicNano  = 0xa1b23c4d
	ngSHB          = 0x0A0D0D0A
	ngIDB          = 0x00000001
	ngPB           = 0x00000002
	ngSPB          = 0x00000003
	ngEPB          = 0x00000006
	ngDSB          = 0x0000000A
	ngBOM          = 0x1A2B3C4D
	dsbTLSKeyLog   = 0x544c534b // "TLSK"
)

// NewSource reads the file header and returns a Source, or a DamageError at
// offset 0 when the stream is neither pcap nor pcapng.
func NewSource(r io.Reader) (*Source, error) {
	s := &Source{r: bufio.NewReaderSize(r, 1<<20)}
	magic, err := s.r.Peek(4)
	if err == io.EOF || err == io.ErrUnexpectedEOF || (err == nil && len(magic) < 4) {
		return nil, &DamageError{0, "file shorter than a capture header (4 bytes); is it a pcap or pcapng file?"}
	}
	if err != nil {
		return nil, err // an I/O error (a directory, a device), not damage
	}
	le, be := binary.LittleEndian.Uint32(magic), binary.BigEndian.Uint32(magic)
	switch {
	case le == ngSHB:
		s.ng = true
		return s, nil
	case le == pcapMagicMicro || le == pcapMagicNano:
		s.bo = binary.LittleEndian
		s.nanos = le == pcapMagicNano
	case be == pcapMagicMicro || be == pcapMagicNano:
		s.bo = binary.BigEndian
		s.nanos = be == pcapMagicNano
	default:
		return nil, &DamageError{0, fmt.Sprintf("magic %x is neither pcap nor pcapng", magic)}
	}
	hdr := make([]byte, 24)
	if _, err := io.ReadFull(s.r, hdr); err != nil {
		return nil, &DamageError{0, "pcap file header truncated"}
	}
	s.off = 24
	s.head = hdr
	s.snapLen = s.bo.Uint32(hdr[16:])
	s.linkType = s.bo.Uint32(hdr[20:]) & 0x0FFFFFFF // upper bits: FCS length flags
	return s, nil
}

// Next returns the next packet, io.EOF at a clean end, or a *DamageError.
func (s *Source) Next() (Packet, error) {
	if s.ng {
		return s.nextNg()
	}
	return s.nextPcap()
}

func (s *Source) read(n int) ([]byte, error) {
	if cap(s.buf) < n {
		s.buf = make([]byte, n, n+n/4)
	}
	b := s.buf[:n]
	m, err := io.ReadFull(s.r, b)
	s.off += int64(m)
	return b, err
}

func (s *Source) nextPcap() (Packet, error) {
	start := s.off
	h, err := s.read(16)
	if err == io.EOF {
		return Packet{}, io.EOF
	}
	if err != nil {
		return Packet{}, &DamageError{start, "packet record header truncated"}
	}
	sec, frac := s.bo.Uint32(h[0:]), s.bo.Uint32(h[4:])
	incl, orig := s.bo.Uint32(h[8:]), s.bo.Uint32(h[12:])
	if incl > maxBlock || (incl > s.snapLen && s.snapLen >= 65535 && incl > 262144) {
		return Packet{}, &DamageError{start, fmt.Sprintf("packet record claims %d captured bytes (snap length %d)", incl, s.snapLen)}
	}
	if (!s.nanos && frac >= 1e6) || (s.nanos && frac >= 1e9) {
		return Packet{}, &DamageError{start, fmt.Sprintf("packet record has a fractional timestamp %d out of range", frac)}
	}
	if s.pass != nil {
		s.raw = append(s.raw[:0], h...)
	}
	data, err := s.read(int(incl))
	if err != nil {
		return Packet{}, &DamageError{start, fmt.Sprintf("packet data truncated (want %d bytes)", incl)}
	}
	if s.pass != nil {
		s.raw = append(s.raw, data...)
	}
	ns := int64(frac)
	if !s.nanos {
		ns *= 1000
	}
	return Packet{TsNs: int64(sec)*1e9 + ns, LinkType: s.linkType, OrigLen: int(orig), Data: data, Offset: start}, nil
}

func (s *Source) nextNg() (Packet, error) {
	for {
		start := s.off
		h, err := s.read(8)
		if err == io.EOF {
			return Packet{}, io.EOF
		}
		if err != nil {
			return Packet{}, &DamageError{start, "pcapng block header truncated"}
		}
		var hdr [8]byte // h aliases s.buf, which the next read reuses
		copy(hdr[:], h)
		h = hdr[:]
		typ := binary.LittleEndian.Uint32(h[0:])
		if typ == ngSHB {
			// The byte-order magic decides the section's byte order.
			bom, err := s.read(4)
			if err != nil {
				return Packet{}, &DamageError{start, "section header block truncated"}
			}
			var bom4 [4]byte
			copy(bom4[:], bom)
			switch {
			case binary.LittleEndian.Uint32(bom) == ngBOM:
				s.bo = binary.LittleEndian
			case binary.BigEndian.Uint32(bom) == ngBOM:
				s.bo = binary.BigEndian
			default:
				return Packet{}, &DamageError{start, "section header block with a bad byte-order magic"}
			}
			length := s.bo.Uint32(h[4:8])
			if length < 28 || length%4 != 0 || length > maxBlock {
				return Packet{}, &DamageError{start, fmt.Sprintf("section header block length %d invalid", length)}
			}
			body, err := s.read(int(length) - 12)
			if err != nil {
				return Packet{}, &DamageError{start, "section header block truncated"}
			}
			if s.bo.Uint32(body[len(body)-4:]) != length {
				return Packet{}, &DamageError{start, "section header block trailer length mismatch"}
			}
			if err := s.passBlock(hdr[:], bom4[:], body); err != nil {
				return Packet{}, err
			}
			s.ifaces = s.ifaces[:0]
			continue
		}
		if s.bo == nil {
			return Packet{}, &DamageError{start, "pcapng block before any section header"}
		}
		typ = s.bo.Uint32(h[0:])
		length := s.bo.Uint32(h[4:])
		if length < 12 || length%4 != 0 || length > maxBlock {
			return Packet{}, &DamageError{start, fmt.Sprintf("block type 0x%x has invalid length %d", typ, length)}
		}
		body, err := s.read(int(length) - 8)
		if err != nil {
			return Packet{}, &DamageError{start, fmt.Sprintf("block type 0x%x truncated (want %d bytes)", typ, length)}
		}
		if s.bo.Uint32(body[len(body)-4:]) != length {
			return Packet{}, &DamageError{start, fmt.Sprintf("block type 0x%x trailer length mismatch (garbage?)", typ)}
		}
		if s.pass != nil && (typ == ngEPB || typ == ngPB || typ == ngSPB) {
			s.raw = append(append(s.raw[:0], h...), body...)
		} else if err := s.passBlock(h, body); err != nil {
			return Packet{}, err
		}
		body = body[:len(body)-4]
		switch typ {
		case ngIDB:
			ifc, err := s.parseIDB(body)
			if err != nil {
				return Packet{}, &DamageError{start, err.Error()}
			}
			s.ifaces = append(s.ifaces, ifc)
		case ngEPB, ngPB:
			if len(body) < 20 {
				return Packet{}, &DamageError{start, "packet block too short"}
			}
			var id uint32
			if typ == ngEPB {
				id = s.bo.Uint32(body[0:])
			} else {
				id = uint32(s.bo.Uint16(body[0:]))
			}
			if int(id) >= len(s.ifaces) {
				return Packet{}, &DamageError{start, fmt.Sprintf("packet on undeclared interface %d", id)}
			}
			ifc := s.ifaces[id]
			ts := uint64(s.bo.Uint32(body[4:]))<<32 | uint64(s.bo.Uint32(body[8:]))
			incl, orig := s.bo.Uint32(body[12:]), s.bo.Uint32(body[16:])
			if uint64(incl) > uint64(len(body)-20) {
				return Packet{}, &DamageError{start, fmt.Sprintf("packet block claims %d bytes, holds %d", incl, len(body)-20)}
			}
			tsNs, ok := ifc.ns(ts)
			if !ok {
				return Packet{}, &DamageError{start, fmt.Sprintf("packet timestamp %d (interface resolution %s, offset %d s) is beyond the int64 nanosecond range (years 1678-2262)", ts, ifc.resolution(), ifc.tsOffset)}
			}
			return Packet{TsNs: tsNs, LinkType: ifc.linkType, OrigLen: int(orig), Data: body[20 : 20+incl], Offset: start}, nil
		case ngSPB:
			if len(body) < 4 || len(s.ifaces) == 0 {
				return Packet{}, &DamageError{start, "simple packet block without interface or length"}
			}
			orig := s.bo.Uint32(body)
			n := uint32(len(body) - 4)
			if orig < n {
				n = orig
			}
			if sl := s.ifaces[0].snapLen; sl > 0 && n > sl {
				n = sl
			}
			// SPBs carry no timestamp: report 0, the reader treats it as unknown.
			return Packet{TsNs: 0, LinkType: s.ifaces[0].linkType, OrigLen: int(orig), Data: body[4 : 4+n], Offset: start}, nil
		case ngDSB:
			if len(body) >= 8 && s.bo.Uint32(body[0:]) == dsbTLSKeyLog {
				n := s.bo.Uint32(body[4:])
				if uint64(n) <= uint64(len(body)-8) {
					s.Secrets = append(s.Secrets, body[8:8+n]...)
					if len(s.Secrets) > 0 && s.Secrets[len(s.Secrets)-1] != '\n' {
						s.Secrets = append(s.Secrets, '\n')
					}
				}
			}
		}
	}
}

// passBlock hands a block that is no packet, as read, to s.pass (Trim).
func (s *Source) passBlock(parts ...[]byte) error {
	if s.pass == nil {
		return nil
	}
	s.raw = s.raw[:0]
	for _, p := range parts {
		s.raw = append(s.raw, p...)
	}
	return s.pass(s.raw)
}

func (s *Source) parseIDB(b []byte) (ngIface, error) {
	if len(b) < 8 {
		return ngIface{}, errors.New("interface description block too short")
	}
	ifc := ngIface{linkType: uint32(s.bo.Uint16(b[0:])), snapLen: s.bo.Uint32(b[4:]), tsShift: 6}
	opts := b[8:]
	for len(opts) >= 4 {
		code, n := s.bo.Uint16(opts[0:]), int(s.bo.Uint16(opts[2:]))
		if code == 0 {
			break
		}
		if 4+n > len(opts) {
			return ngIface{}, errors.New("interface description block option overruns the block")
		}
		v := opts[4 : 4+n]
		switch code {
		case 9: // if_tsresol
			if n >= 1 {
				ifc.tsPow2 = v[0]&0x80 != 0
				ifc.tsShift = int(v[0] & 0x7f)
				if (!ifc.tsPow2 && ifc.tsShift > 18) || (ifc.tsPow2 && ifc.tsShift > 63) {
					return ngIface{}, fmt.Errorf("interface timestamp resolution %#x unsupported", v[0])
				}
			}
		case 14: // if_tsoffset, seconds
			if n >= 8 {
				ifc.tsOffset = int64(s.bo.Uint64(v))
				if ifc.tsOffset > maxTsOffset || ifc.tsOffset < -maxTsOffset {
					return ngIface{}, fmt.Errorf("interface timestamp offset %d s is beyond the int64 nanosecond range", ifc.tsOffset)
				}
			}
		}
		opts = opts[min(4+(n+3)&^3, len(opts)):]
	}
	return ifc, nil
}

// maxTsOffset is the largest if_tsoffset whose nanoseconds fit an int64.
const maxTsOffset = math.MaxInt64 / int64(1e9)

// ns converts a pcapng timestamp in the interface's units to Unix ns:
// 10^-k units are scaled by 10^(9-k); 2^-k units by 1e9/2^k (128-bit
// product). ok is false when the result does not fit an int64 (a damaged
// timestamp, offset or resolution), never a wrapped number.
func (ifc ngIface) ns(ts uint64) (v int64, ok bool) {
	if ifc.tsPow2 {
		hi, lo := bits.Mul64(ts, 1e9)
		if ifc.tsShift > 0 {
			lo = hi<<(64-ifc.tsShift) | lo>>ifc.tsShift
			hi >>= ifc.tsShift
		}
		if hi != 0 || lo > math.MaxInt64 {
			return 0, false
		}
		v = int64(lo)
	} else {
		k := ifc.tsShift
		switch {
		case k == 9:
			if ts > math.MaxInt64 {
				return 0, false
			}
			v = int64(ts)
		case k < 9:
			m := uint64(pow10[9-k])
			hi, lo := bits.Mul64(ts, m)
			if hi != 0 || lo > math.MaxInt64 {
				return 0, false
			}
			v = int64(lo)
		default:
			v = int64(ts / uint64(pow10[k-9]))
		}
	}
	off := ifc.tsOffset * 1e9 // |tsOffset| <= maxTsOffset: no overflow
	if (off > 0 && v > math.MaxInt64-off) || (off < 0 && v < math.MinInt64-off) {
		return 0, false
	}
	return v + off, true
}

// resolution formats if_tsresol for messages.
func (ifc ngIface) resolution() string {
	if ifc.tsPow2 {
		return fmt.Sprintf("2^-%d s", ifc.tsShift)
	}
	return fmt.Sprintf("10^-%d s", ifc.tsShift)
}

var pow10 = [...]int64{1, 10, 100, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18}
