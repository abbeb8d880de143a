package capture

import (
	"bytes"
	"encoding/binary"
	"net/netip"
)

// synth writes synthetic captures (classic pcap, nanosecond) of TCP
// connections carrying TLS 1.3 handshakes, with any supported link type.
type synth struct {
	link uint32
	buf  bytes.Buffer
	ts   int64
	snap int // when > 0, frames are cut to this many bytes (tcpdump -s)
}

func newSynth(link uint32) *synth {
	s := &synth{link: link, ts: 1_700_000_000_000_000_000}
	h := make([]byte, 24)
	binary.LittleEndian.PutUint32(h[0:], pcapMagicNano)
	binary.LittleEndian.PutUint16(h[4:], 2)
	binary.LittleEndian.PutUint16(h[6:], 4)
	binary.LittleEndian.PutUint32(h[16:], 262144)
	binary.LittleEndian.PutUint32(h[20:], link)
	s.buf.Write(h)
	return s
}

func (s *synth) frame(src, dst netip.AddrPort, seq, ack uint32, flags uint8, payload []byte) {
	s.frameOpts(src, dst, seq, ack, flags, nil, payload)
}

// frameOpts is frame with TCP options (a multiple of 4 bytes).
func (s *synth) frameOpts(src, dst netip.AddrPort, seq, ack uint32, flags uint8, opts, payload []byte) {
	s.ts += 10_000
	tcp := make([]byte, 20, 20+len(opts)+len(payload))
	binary.BigEndian.PutUint16(tcp[0:], src.Port())
	binary.BigEndian.PutUint16(tcp[2:], dst.Port())
	binary.BigEndian.PutUint32(tcp[4:], seq)
	binary.BigEndian.PutUint32(tcp[8:], ack)
	tcp[12] = byte(5+len(opts)/4) << 4
	tcp[13] = flags
	tcp = append(tcp, opts...)
	tcp = append(tcp, payload...)
	var ip []byte
	v6 := src.Addr().Is6()
	if v6 {
		ip = make([]byte, 40)
		ip[0] = 0x60
		binary.BigEndian.PutUint16(ip[4:], uint16(len(tcp)))
		ip[6], ip[7] = 6, 64
		a, b := src.Addr().As16(), dst.Addr().As16()
		copy(ip[8:], a[:])
		copy(ip[24:], b[:])
	} else {
		ip = make([]byte, 20)
		ip[0] = 0x45
		binary.BigEndian.PutUint16(ip[2:], uint16(20+len(tcp)))
		ip[8], ip[9] = 64, 6
		a, b := src.Addr().As4(), dst.Addr().As4()
		copy(ip[12:], a[:])
		copy(ip[16:], b[:])
	}
	ip = append(ip, tcp...)
	et := uint16(0x0800)
	if v6 {
		et = 0x86dd
	}
	var l []byte
	switch s.link {
	case LinkEthernet:
		l = make([]byte, 14)
		binary.BigEndian.PutUint16(l[12:], et)
	case LinkSLL:
		l = make([]byte, 16)
		binary.BigEndian.PutUint16(l[14:], et)
	case LinkSLL2:
		l = make([]byte, 20)
		binary.BigEndian.PutUint16(l[0:], et)
	case LinkNull, LinkLoop:
		l = make([]byte, 4)
		af := uint32(2)
		if v6 {
			af = 30
		}
		if s.link == LinkNull {
			binary.LittleEndian.PutUint32(l, af)
		} else {
			binary.BigEndian.PutUint32(l, af)
		}
	}
	data := append(l, ip...)
	orig := len(data)
	if s.snap > 0 && len(data) > s.snap {
		data = data[:s.snap]
	}
	rec := make([]byte, 16)
	binary.LittleEndian.PutUint32(rec[0:], uint32(s.ts/1e9))
	binary.LittleEndian.PutUint32(rec[4:], uint32(s.ts%1e9))
	binary.LittleEndian.PutUint32(rec[8:], uint32(len(data)))
	binary.LittleEndian.PutUint32(rec[12:], uint32(orig))
	s.buf.Write(rec)
	s.buf.Write(data)
}

func tlsRecord(typ byte, body []byte) []byte {
	r := []byte{typ, 3, 3, byte(len(body) >> 8), byte(len(body))}
	return append(r, body...)
}

func hsMsg(typ byte, body []byte) []byte {
	return append([]byte{typ, byte(len(body) >> 16), byte(len(body) >> 8), byte(len(body))}, body...)
}

func clientHello(n int) []byte {
	b := make([]byte, n) // legacy_version, random, ... (content is not parsed beyond the random)
	b[0], b[1] = 3, 3
	return tlsRecord(22, hsMsg(1, b))
}

func synthServerHello(group uint16, hrr bool, kexLen int) []byte {
	b := []byte{3, 3}
	if hrr {
		b = append(b, hrrRandom[:]...)
	} else {
		b = append(b, bytes.Repeat([]byte{7}, 32)...)
	}
	b = append(b, 0, 0x13, 0x01, 0)
	var ext []byte
	ext = append(ext, 0, 43, 0, 2, 3, 4)
	if hrr {
		ext = append(ext, 0, 51, 0, 2, byte(group>>8), byte(group))
	} else {
		ks := append([]byte{byte(group >> 8), byte(group), byte(kexLen >> 8), byte(kexLen)}, make([]byte, kexLen)...)
		ext = append(ext, 0, 51, byte(len(ks)>>8), byte(len(ks)))
		ext = append(ext, ks...)
	}
	b = append(b, byte(len(ext)>>8), byte(len(ext)))
	b = append(b, ext...)
	return tlsRecord(22, hsMsg(2, b))
}

// synthOpts shape one synthetic connection.
type synthOpts struct {
	group        uint16
	hrr          bool
	retransmitCH bool // send the ClientHello segment twice
	reorder      bool // server flight in two segments, second one first
	noFinish     bool // the client never sends Finished
	notTLS       bool // HTTP instead of TLS
	ch2Split     bool // with hrr: the CCS before the second ClientHello in a segment of its own
	ch2NoHRR     bool // a second ClientHello with no HelloRetryRequest before it
}

// synthWant are the times the reader must report for a synthetic connection.
type synthWant struct {
	syn, ch, sh, sfe, cf, fin int64
	ch2                       int64 // 0: none
}

// conn writes one connection: handshake, one application record each way, FIN/ACK.
func (s *synth) conn(c, sv netip.AddrPort, o synthOpts) synthWant {
	var w synthWant
	cs, ss := uint32(1000), uint32(5000)
	A := uint8(flagACK)
	s.frame(c, sv, cs, 0, flagSYN, nil)
	w.syn = s.ts
	cs++
	s.frame(sv, c, ss, cs, flagSYN|flagACK, nil)
	ss++
	s.frame(c, sv, cs, ss, A, nil)
	if o.notTLS {
		req := []byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n")
		s.frame(c, sv, cs, ss, A, req)
		cs += uint32(len(req))
		resp := []byte("HTTP/1.1 200 OK\r\n\r\n")
		s.frame(sv, c, ss, cs, A, resp)
		ss += uint32(len(resp))
	} else {
		ch := clientHello(300)
		s.frame(c, sv, cs, ss, A, ch)
		w.ch = s.ts
		if o.retransmitCH {
			s.frame(c, sv, cs, ss, A, ch)
		}
		cs += uint32(len(ch))
		if o.hrr {
			hrr := synthServerHello(o.group, true, 0)
			s.frame(sv, c, ss, cs, A, hrr)
			ss += uint32(len(hrr))
			ccs := tlsRecord(20, []byte{1})
			if o.ch2Split {
				s.frame(c, sv, cs, ss, A, ccs)
				cs += uint32(len(ccs))
				ccs = nil
			}
			ch2 := append(ccs, clientHello(900)...)
			s.frame(c, sv, cs, ss, A, ch2)
			w.ch2 = s.ts
			cs += uint32(len(ch2))
		}
		if o.ch2NoHRR {
			ch2 := clientHello(400)
			s.frame(c, sv, cs, ss, A, ch2)
			cs += uint32(len(ch2))
		}
		flight := append(synthServerHello(o.group, false, 1120), tlsRecord(20, []byte{1})...)
		flight = append(flight, tlsRecord(23, make([]byte, 3000))...)
		if o.reorder {
			half := len(flight) / 2
			s.frame(sv, c, ss+uint32(half), cs, A, flight[half:])
			s.frame(sv, c, ss, cs, A, flight[:half])
			w.sh = s.ts
			w.sfe = s.ts // the in-order completion is the later packet
		} else {
			s.frame(sv, c, ss, cs, A, flight)
			w.sh, w.sfe = s.ts, s.ts
		}
		ss += uint32(len(flight))
		if !o.noFinish {
			fin := append(tlsRecord(20, []byte{1}), tlsRecord(23, make([]byte, 53))...)
			s.frame(c, sv, cs, ss, A, fin)
			w.cf = s.ts
			cs += uint32(len(fin))
		}
	}
	s.frame(c, sv, cs, ss, flagFIN|A, nil)
	w.fin = s.ts
	cs++
	s.frame(sv, c, ss, cs, flagFIN|A, nil)
	ss++
	s.frame(c, sv, cs, ss, A, nil)
	return w
}

// segStream is one connection's two byte streams (client to server, server
// to client) after the handshake's SYNs.
type segStream struct {
	c, s    netip.AddrPort
	streams [2][]byte
}

// synthSeg is one data segment: bytes [off, off+n) of direction dir.
type synthSeg struct{ dir, off, n int }

// handshakeStreams are the byte streams of conn's TLS 1.3 handshake
// (ClientHello; ServerHello, CCS, encrypted flight; CCS, client Finished)
// and the stream offsets the record times refer to.
func handshakeStreams(group uint16) (st [2][]byte, cfOff int) {
	ch := clientHello(300)
	fin := append(tlsRecord(20, []byte{1}), tlsRecord(23, make([]byte, 53))...)
	st[0] = append(append([]byte{}, ch...), fin...)
	flight := append(synthServerHello(group, false, 1120), tlsRecord(20, []byte{1})...)
	st[1] = append(flight, tlsRecord(23, make([]byte, 3000))...)
	return st, len(ch) + 6
}

// segments writes a connection: SYN, SYN+ACK, ACK, then segs in the given
// order, then FINs. It returns each data segment's capture time.
func (s *synth) segments(ss segStream, segs []synthSeg) []int64 {
	cs, sv := uint32(1000), uint32(5000)
	s.frame(ss.c, ss.s, cs, 0, flagSYN, nil)
	s.frame(ss.s, ss.c, sv, cs+1, flagSYN|flagACK, nil)
	s.frame(ss.c, ss.s, cs+1, sv+1, flagACK, nil)
	isn := [2]uint32{cs + 1, sv + 1}
	ends := [2]netip.AddrPort{ss.c, ss.s}
	ts := make([]int64, len(segs))
	for i, g := range segs {
		s.frame(ends[g.dir], ends[1-g.dir], isn[g.dir]+uint32(g.off), isn[1-g.dir], flagACK, ss.streams[g.dir][g.off:g.off+g.n])
		ts[i] = s.ts
	}
	s.frame(ss.c, ss.s, isn[0]+uint32(len(ss.streams[0])), isn[1], flagFIN|flagACK, nil)
	s.frame(ss.s, ss.c, isn[1]+uint32(len(ss.streams[1])), isn[0]+uint32(len(ss.streams[0]))+1, flagFIN|flagACK, nil)
	return ts
}
