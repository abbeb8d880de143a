package capture

import (
	"encoding/binary"
	"net/netip"
)

// TCP flags (RFC 9293 3.1).
const (
	flagFIN = 0x01
	flagSYN = 0x02
	flagRST = 0x04
	flagACK = 0x10
)

// segment is one decoded TCP segment. Payload aliases the packet data.
type segment struct {
	src, dst         netip.AddrPort
	seq, ack         uint32
	flags            uint8
	payload          []byte // captured payload bytes
	payloadLen       int    // payload length from the IP header (>= len(payload))
	ipEnd            int    // frame offset where the IP packet ends by its length field; 0 if unknown
	wireLen          int    // the frame's length on the wire
	payloadTruncated bool   // the capture holds fewer payload bytes than the IP header says
	origLenBad       bool   // the frame's original length was corrected (checkWireLen)
	mss              uint16 // a SYN's MSS option (RFC 9293 3.7.1); 0 when absent
}

// decodeResult says why a packet was not a usable TCP segment.
type decodeResult int

const (
	decOK decodeResult = iota
	decNotIP
	decNotTCP
	decFragment
	decMalformed
	decUnknownLink
)

// decode parses link, IP (v4: RFC 791, v6: RFC 8200 with extension headers)
// and TCP headers by hand, without allocation. The reader must be much faster
// than tshark, and gopacket's layer decoding allocates per packet.
func decode(linkType uint32, b []byte, seg *segment) decodeResult {
	*seg = segment{}
	frame := len(b)
	var ethType uint16
	switch linkType {
	case LinkEthernet:
		if len(b) < 14 {
			return decMalformed
		}
		ethType = binary.BigEndian.Uint16(b[12:])
		b = b[14:]
		for ethType == 0x8100 || ethType == 0x88a8 { // 802.1Q / 802.1ad tags
			if len(b) < 4 {
				return decMalformed
			}
			ethType = binary.BigEndian.Uint16(b[2:])
			b = b[4:]
		}
	case LinkRaw, LinkRawAlt12, LinkRawAlt14, LinkIPv4, LinkIPv6:
		ethType = 0 // by IP version nibble
	case LinkSLL:
		if len(b) < 16 {
			return decMalformed
		}
		ethType = binary.BigEndian.Uint16(b[14:])
		b = b[16:]
	case LinkSLL2:
		if len(b) < 20 {
			return decMalformed
		}
		ethType = binary.BigEndian.Uint16(b[0:])
		b = b[20:]
	case LinkNull, LinkLoop:
		if len(b) < 4 {
			return decMalformed
		}
		af := binary.LittleEndian.Uint32(b)
		if linkType == LinkLoop || af > 0xffff {
			af = binary.BigEndian.Uint32(b)
		}
		switch af {
		case 2:
			ethType = 0x0800
		case 24, 28, 30:
			ethType = 0x86dd
		default:
			return decNotIP
		}
		b = b[4:]
	default:
		return decUnknownLink
	}
	if ethType == 0 && len(b) > 0 {
		switch b[0] >> 4 {
		case 4:
			ethType = 0x0800
		case 6:
			ethType = 0x86dd
		}
	}
	var tcp []byte
	switch ethType {
	case 0x0800:
		if len(b) < 20 || b[0]>>4 != 4 {
			return decMalformed
		}
		ihl := int(b[0]&0x0f) * 4
		total := int(binary.BigEndian.Uint16(b[2:]))
		if ihl < 20 || total < ihl {
			return decMalformed
		}
		if b[9] != 6 {
			return decNotTCP
		}
		if fo := binary.BigEndian.Uint16(b[6:]); fo&0x3fff != 0 { // MF or offset
			return decFragment
		}
		seg.ipEnd = frame - len(b) + total
		if total > len(b) {
			seg.payloadTruncated = true
			seg.payloadLen = total // minus the headers below
			total = len(b)
		}
		if ihl > total {
			return decMalformed
		}
		seg.payloadLen -= ihl
		src, _ := netip.AddrFromSlice(b[12:16])
		dst, _ := netip.AddrFromSlice(b[16:20])
		seg.src, seg.dst = netip.AddrPortFrom(src, 0), netip.AddrPortFrom(dst, 0)
		tcp = b[ihl:total] // drops Ethernet padding
	case 0x86dd:
		if len(b) < 40 || b[0]>>4 != 6 {
			return decMalformed
		}
		plen := int(binary.BigEndian.Uint16(b[4:]))
		next := b[6]
		var a16 [16]byte
		copy(a16[:], b[8:24])
		src := netip.AddrFrom16(a16)
		copy(a16[:], b[24:40])
		dst := netip.AddrFrom16(a16)
		seg.src, seg.dst = netip.AddrPortFrom(src, 0), netip.AddrPortFrom(dst, 0)
		b = b[40:]
		if plen > 0 { // 0: a jumbogram (RFC 2675), its length is in an option
			seg.ipEnd = frame - len(b) + plen
		}
		if plen > len(b) {
			seg.payloadTruncated = true
			seg.payloadLen = plen // minus the headers below
			plen = len(b)
		}
		b = b[:plen]
		tail := len(b) // bytes of the IPv6 payload captured
		for next != 6 {
			switch next {
			case 0, 43, 60: // hop-by-hop, routing, destination options
				if len(b) < 8 {
					return decMalformed
				}
				n := 8 + int(b[1])*8
				if n > len(b) {
					return decMalformed
				}
				next, b = b[0], b[n:]
			case 44: // fragment
				if len(b) < 8 {
					return decMalformed
				}
				if binary.BigEndian.Uint16(b[2:])&0xfff9 != 0 {
					return decFragment
				}
				next, b = b[0], b[8:]
			default:
				return decNotTCP
			}
		}
		seg.payloadLen -= tail - len(b) // extension headers
		tcp = b
	default:
		return decNotIP
	}
	if len(tcp) < 20 {
		return decMalformed
	}
	off := int(tcp[12]>>4) * 4
	if off < 20 || off > len(tcp) {
		return decMalformed
	}
	seg.src = netip.AddrPortFrom(seg.src.Addr(), binary.BigEndian.Uint16(tcp[0:]))
	seg.dst = netip.AddrPortFrom(seg.dst.Addr(), binary.BigEndian.Uint16(tcp[2:]))
	seg.seq = binary.BigEndian.Uint32(tcp[4:])
	seg.ack = binary.BigEndian.Uint32(tcp[8:])
	seg.flags = tcp[13]
	if seg.flags&flagSYN != 0 {
		seg.mss = mssOption(tcp[20:off])
	}
	seg.payload = tcp[off:]
	if seg.payloadTruncated {
		seg.payloadLen -= off
		if seg.payloadLen < len(seg.payload) {
			return decMalformed
		}
	} else {
		seg.payloadLen = len(seg.payload)
	}
	return decOK
}

// mssOption returns the Maximum Segment Size option of a SYN's TCP
// options, or 0 when they hold none or are malformed. The option is kind
// 2, length 4, a 16-bit value (RFC 9293 3.2 and 3.7.1). Kind 0 ends the list and
// kind 1 is one byte of padding; every other option carries its length.
func mssOption(opts []byte) uint16 {
	for len(opts) > 0 {
		switch kind := opts[0]; kind {
		case 0:
			return 0
		case 1:
			opts = opts[1:]
			continue
		}
		if len(opts) < 2 || opts[1] < 2 || int(opts[1]) > len(opts) {
			return 0
		}
		if opts[0] == 2 && opts[1] == 4 {
			return binary.BigEndian.Uint16(opts[2:])
		}
		opts = opts[opts[1]:]
	}
	return 0
}
