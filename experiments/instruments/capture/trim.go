package capture

import (
	"bufio"
	"encoding/binary"
	"io"
)

// TrimStats counts what Trim did.
type TrimStats struct {
	Packets int64 // packets read
	Cut     int64 // packets whose TCP payload was cut away
	In, Out int64 // bytes read and written
}

// Trim copies a capture, cutting away the TCP payload of every packet the
// reader no longer parses. That is, each connection's packets stay whole
// until its TLS handshake has been read (SYN to the client's Finished
// record, the server's stream up to its ServerHello), and later packets
// keep their link, IP and TCP headers only, with their original length,
// as tcpdump -s does.
//
// The reader gives a trimmed capture the same records as the original:
// the times, the byte and packet counts (from the IP length fields and
// the original lengths), the server stream's in-order advances (Record.
// ResponseEnd) and its flights. The decision is the reader's own state
// (the tracker Read runs), so it keeps exactly what the reader's TLS
// parsers still read; a packet is cut only when the cut frame decodes to
// the same addresses, sequence numbers, flags, payload and wire lengths.
// One bound differs: out-of-order bytes held behind a hole count towards
// the reader's 4 MiB limit only as captured, so a stream that exceeded it
// whole may not when trimmed; the runner checks the derived records
// against the untrimmed ones.
//
// The output is a function of the input alone: pcapng blocks that are no
// packet (section and interface headers, Decryption Secrets Blocks) are
// copied as they are, in place, and so are Simple and obsolete Packet
// Blocks; a classic pcap keeps its file header. A damaged capture is an
// error (*DamageError), with whatever was written before it incomplete.
func Trim(w io.Writer, r io.Reader) (TrimStats, error) {
	var st TrimStats
	src, err := NewSource(r)
	if err != nil {
		return st, err
	}
	bw := bufio.NewWriterSize(w, 1<<20)
	write := func(b []byte) error {
		n, err := bw.Write(b)
		st.Out += int64(n)
		return err
	}
	src.pass = write
	if !src.ng {
		if err := write(src.head); err != nil {
			return st, err
		}
	}
	t := newTrackerFor(ReadOptions{})
	var seg, cutSeg segment
	var out []byte
	for {
		p, err := src.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return st, err
		}
		st.Packets++
		block := src.raw
		if decode(p.LinkType, p.Data, &seg) == decOK {
			checkWireLen(&seg, p.OrigLen, len(p.Data))
			fed := &seg
			if hl, ok := headerEnd(&seg, p.Data); ok && t.pastHandshake(&seg) {
				if decode(p.LinkType, p.Data[:hl], &cutSeg) == decOK {
					checkWireLen(&cutSeg, p.OrigLen, hl)
					if sameSegment(&seg, &cutSeg) {
						if b, ok := src.cutBlock(block, hl, &out); ok {
							block, fed = b, &cutSeg
							st.Cut++
						}
					}
				}
			}
			t.packet(fed, p.TsNs)
		}
		if err := write(block); err != nil {
			return st, err
		}
	}
	st.In = src.off
	return st, bw.Flush()
}

// pastHandshake reports whether the reader has read all it parses of the
// connection s belongs to. That is, its client Finished was seen and neither
// direction's TLS parser reads on (it stopped, found no TLS, or its
// stream was given up on). A SYN may start a new connection: never.
func (t *tracker) pastHandshake(s *segment) bool {
	if s.flags&flagSYN != 0 {
		return false
	}
	c := t.conns[flowKey{s.src, s.dst}]
	if c == nil {
		c = t.conns[flowKey{s.dst, s.src}]
	}
	if c == nil || !c.cf.ok {
		return false
	}
	for i := range c.d {
		d := &c.d[i]
		if !d.gap && !d.p.bad && !d.p.stop {
			return false
		}
	}
	return true
}

// headerEnd returns where the TCP payload of a decoded frame starts, when
// it has captured payload to cut.
func headerEnd(s *segment, frame []byte) (int, bool) {
	if len(s.payload) == 0 {
		return 0, false
	}
	// The payload aliases the frame: the difference of their capacities
	// is its offset.
	hl := cap(frame) - cap(s.payload)
	if hl <= 0 || hl > len(frame) {
		return 0, false
	}
	return hl, true
}

// sameSegment reports whether a cut frame tells the reader what the whole
// one did, its captured payload apart.
func sameSegment(a, b *segment) bool {
	return a.src == b.src && a.dst == b.dst && a.seq == b.seq && a.ack == b.ack && a.flags == b.flags &&
		a.payloadLen == b.payloadLen && a.ipEnd == b.ipEnd && a.wireLen == b.wireLen && a.origLenBad == b.origLenBad
}

// cutBlock rewrites a packet's raw record or block (s.raw) to hold only
// the first hl captured bytes, the original length unchanged. ok is false
// for block types it leaves whole (Simple and obsolete Packet Blocks).
func (s *Source) cutBlock(raw []byte, hl int, buf *[]byte) ([]byte, bool) {
	if !s.ng {
		if len(raw) < 16+hl {
			return nil, false
		}
		b := append((*buf)[:0], raw[:16+hl]...)
		s.bo.PutUint32(b[8:], uint32(hl))
		*buf = b
		return b, true
	}
	if len(raw) < 32 || s.bo.Uint32(raw) != ngEPB {
		return nil, false
	}
	incl := int(s.bo.Uint32(raw[20:]))
	opts := 28 + pad4(incl)
	if opts > len(raw)-4 || hl > incl {
		return nil, false
	}
	b := append((*buf)[:0], raw[:28+hl]...)
	b = append(b, make([]byte, pad4(hl)-hl)...)
	b = append(b, raw[opts:len(raw)-4]...)
	b = binary.LittleEndian.AppendUint32(b, 0)
	s.bo.PutUint32(b[4:], uint32(len(b)))
	s.bo.PutUint32(b[20:], uint32(hl))
	s.bo.PutUint32(b[len(b)-4:], uint32(len(b)))
	*buf = b
	return b, true
}

func pad4(n int) int { return (n + 3) &^ 3 }
