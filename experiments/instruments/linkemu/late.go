package linkemu

import (
	"cmp"
	"encoding/binary"
	"slices"
	"time"
)

// MaxLateEvents bounds the late events one direction of a link keeps
// (about 64 bytes each); later ones are counted in DirStats.LateDropped,
// never silently lost.
const MaxLateEvents = 1 << 20

// A LateEvent is one packet the forwarder wrote more than Options.LateBound
// after its due time. That is, the emulator delayed it beyond the
// scenario's model (the machine did not run the writer in time). Times are
// wall-clock Unix nanoseconds, computed from the link's epoch and the
// monotonic clock, so that they compare with the handshakes' start times;
// Late = Written - Due.
//
// The ports and protocol come from the packet's IPv4 and TCP/UDP headers
// (0 when the packet is not IPv4 or too short): with the direction they
// name the flow the packet belonged to. On a Study B link the client is on
// side A, so its port is SrcPort for A->B packets and DstPort for B->A.
type LateEvent struct {
	Dir     Side  // A: a->b, B: b->a
	Proto   uint8 // IP protocol number (6 TCP, 17 UDP)
	SrcPort uint16
	DstPort uint16
	Due     int64 // Unix ns
	Written int64 // Unix ns
	Bytes   int   // IP datagram length
}

// Late is how long after its due time the packet was written.
func (e LateEvent) Late() time.Duration { return time.Duration(e.Written - e.Due) }

// flowOf reads the protocol and ports of an IPv4 packet.
func flowOf(p []byte) (proto uint8, src, dst uint16) {
	if len(p) < 20 || p[0]>>4 != 4 {
		return 0, 0, 0
	}
	ihl := int(p[0]&0x0f) * 4
	proto = p[9]
	// Ports only in the first fragment (fragment offset 0).
	if binary.BigEndian.Uint16(p[6:8])&0x1fff != 0 || ihl < 20 || len(p) < ihl+4 {
		return proto, 0, 0
	}
	if proto == 6 || proto == 17 {
		src = binary.BigEndian.Uint16(p[ihl : ihl+2])
		dst = binary.BigEndian.Uint16(p[ihl+2 : ihl+4])
	}
	return proto, src, dst
}

// recordLate keeps a late write of p (called by the writer goroutine only).
func (f *forwarder) recordLate(p []byte, due, late time.Duration) {
	if len(f.lateEvents) >= MaxLateEvents {
		f.c.lateDropped.Add(1)
		return
	}
	proto, src, dst := flowOf(p)
	base := f.epoch.UnixNano()
	f.lateEvents = append(f.lateEvents, LateEvent{Dir: Side(f.dir), Proto: proto, SrcPort: src, DstPort: dst,
		Due: base + int64(due), Written: base + int64(due+late), Bytes: len(p)})
	f.c.lateEvents.Add(1)
}

// LateEvents returns the late writes of both directions (see
// Options.LateBound), ordered by write time then direction. It may only be
// called after Close: the writers append to the lists while they run.
func (l *Link) LateEvents() []LateEvent {
	select {
	case <-l.done:
	default:
		panic("linkemu: LateEvents before Close")
	}
	var out []LateEvent
	for _, f := range l.fwd {
		if f != nil {
			out = append(out, f.lateEvents...)
		}
	}
	slices.SortStableFunc(out, func(a, b LateEvent) int {
		if a.Written != b.Written {
			return cmp.Compare(a.Written, b.Written)
		}
		return int(a.Dir) - int(b.Dir)
	})
	return out
}

// testHookBeforeWrite, when set, runs in the writer just before a packet
// is written (tests: hold a packet past its due time).
var testHookBeforeWrite func(dir int, p []byte)
