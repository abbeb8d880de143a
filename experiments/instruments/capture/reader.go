package capture

import (
	"bytes"
	"cmp"
	"crypto/sha256"
	"crypto/tls"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/bits"
	"net/netip"
	"slices"
	"strings"
	"time"
)

// Record is one TCP connection that carried a TLS handshake. Times are Unix
// nanoseconds of the first captured segment carrying the item; nil when the
// capture does not show it.
//
//   - SynNs: the client's first SYN.
//   - ClientHelloNs: the first segment carrying the (first) ClientHello.
//   - ClientHello2Ns: the first segment carrying the ClientHello sent after
//     a HelloRetryRequest (RFC 8446 4.1.4); nil without one.
//   - ServerHelloNs: the first segment of the ServerHello that is not a
//     HelloRetryRequest (RFC 8446 4.1.3, 4.1.4).
//   - ServerFlightEndNs: the last server segment with new payload after that
//     ServerHello and before the client Finished (end of the server's
//     ServerHello..Finished flight).
//   - ClientFinishedNs: the first segment of the client's first
//     application_data-typed record (0x17) after that ServerHello. In TLS 1.3
//     every later client handshake message is encrypted, Go sends no early
//     data, and the first encrypted client record is its Finished; with a key
//     log the reader decrypts it to confirm (ClientFinishedVerified).
//   - FinNs: the first FIN from either side.
//   - ThsNs = ClientFinishedNs - ClientHelloNs.
//
// Complete means SYN, ClientHello, ServerHello and client Finished were all
// seen, in both directions without a hole in the byte stream before them.
// A connection is a record when its ClientHello was seen, or when its
// client sent payload the capture could not show in full (a hole never
// filled, bytes cut by the snap length): then it is incomplete and Reason
// says why, instead of vanishing from the output.
//
// Snap-length-cut frames (captured length < original length) still count
// fully: frame bytes are original lengths and TCP payload bytes come from
// the IP length fields; the TLS parser follows record and handshake
// lengths across the cut bytes and reads what the captured prefixes hold,
// so a cut capture usually still shows every time (tcpdump -s 128 does)
// and only lacks what lies beyond the cut, e.g. the negotiated group.
// Retransmissions counts segments (data, SYN or FIN) that repeat sequence
// space already seen. Packet and byte counts include retransmissions; frame
// bytes are the frames' original lengths including the link header.
type Record struct {
	Client             string `json:"client"`
	Server             string `json:"server"`
	SynNs              *int64 `json:"syn_ns"`
	ClientHelloNs      *int64 `json:"client_hello_ns"`
	ClientHello2Ns     *int64 `json:"client_hello2_ns"`
	ServerHelloNs      *int64 `json:"server_hello_ns"`
	ServerFlightEndNs  *int64 `json:"server_flight_end_ns"`
	ClientFinishedNs   *int64 `json:"client_finished_ns"`
	FinNs              *int64 `json:"fin_ns"`
	HRR                bool   `json:"hrr"`
	Group              string `json:"group"`
	Retransmissions    int    `json:"retransmissions"`
	PacketsC2S         int    `json:"packets_c2s"`
	PacketsS2C         int    `json:"packets_s2c"`
	FrameBytesC2S      int64  `json:"frame_bytes_c2s"`
	FrameBytesS2C      int64  `json:"frame_bytes_s2c"`
	TCPPayloadBytesC2S int64  `json:"tcp_payload_bytes_c2s"`
	TCPPayloadBytesS2C int64  `json:"tcp_payload_bytes_s2c"`
	ThsNs              *int64 `json:"ths_ns"`
	Complete           bool   `json:"complete"`
	// ClientFinishedVerified is true when a key log decrypted the record
	// at ClientFinishedNs and it was a Finished message. Not a column of
	// the studies' records (the fields below neither); `pqrepro pcap`
	// prints them.
	ClientFinishedVerified bool `json:"-"`
	// FinishedCheck says what the key log check of the client Finished
	// found: one of the Check* constants; empty when no key log secrets
	// were available at all.
	FinishedCheck string `json:"-"`
	// Reason lists, separated by ";", why the record is incomplete or which
	// of its fields are empty or corrected (the Reason* constants, in their
	// order); empty for a complete record with every field filled.
	Reason string `json:"-"`
	// SynAckNs is the server's first SYN-ACK; with SynNs it gives the
	// connection's SYN round trip, the scale of Flights.
	SynAckNs *int64 `json:"-"`
	// ResponseStartNs is the first server segment with new data after the
	// client's Finished: the response's start (Study B's transfer block);
	// nil when none came.
	ResponseStartNs *int64 `json:"-"`
	// ResponseWindow counts the server's segments with new data that
	// arrived within one SYN round trip of ResponseStartNs, that one
	// included: what the server had in flight at the response's start
	// (its congestion window, or its pacing rate times the round trip,
	// whichever bound it). 0 without a response or a SYN round trip.
	ResponseWindow int `json:"-"`
	// AckedAtResponse is how many of the server's payload bytes the
	// client had acknowledged when the response started: its latest
	// acknowledgment number, relative to the server's initial sequence
	// number (RFC 9293 3.4), minus the SYN's one. -1 when unknown.
	AckedAtResponse int64 `json:"-"`
	// SegmentSize is the largest segment the server may send: the lesser
	// of the two SYNs' MSS options (RFC 9293 3.7.1), or the one given; 0
	// when neither SYN carried one.
	SegmentSize int `json:"-"`

	// The server's stream after its ServerHello, for the time to last
	// byte of Study B's transfer block (ResponseEnd, Flights).
	s2cDel    []delivery // the latest in-order deliveries, at most maxDeliveries
	s2cFinAbs int64      // stream offset of the server's FIN
	s2cFin    bool
	flights   int   // the server's flights after its ServerHello
	lastFl    int64 // when the last of them started
	cfFlights int   // flights before the client Finished; -1 unknown

	firstNs int64
	seq     int
	cr      [32]byte // client random, for key log lookups
	suite   uint16
	cfinRec []byte // the client Finished record, kept for decryption
	cfinCut bool   // the snap length cut that record
	haveCR  bool
}

// Result is what Read found.
type Result struct {
	Records []Record
	Packets int64 // packets read
	// Skipped counts packets that are no usable TCP segment, by reason.
	Skipped struct {
		NotIP, NotTCP, Fragments, Malformed, UnknownLink int64
	}
	// UnknownLinkTypes counts the packets of each link type the reader
	// cannot decode (they are in Skipped.UnknownLink).
	UnknownLinkTypes map[uint32]int64
	// OrigLenCorrected counts frames whose original (wire) length was less
	// than the captured length or disagreed with the IP length field; their
	// frame bytes are counted from the IP length (or the captured length)
	// and their records carry ReasonOrigLen.
	OrigLenCorrected int64
	// SnapCut counts frames whose TCP payload the snap length cut.
	SnapCut int64
	// DroppedNoHello counts flows whose state was dropped before the end
	// of the capture because they carried no ClientHello (nor anything
	// that would make a record) and were idle for ReadOptions.NoHelloIdle,
	// or more than ReadOptions.NoHelloMax such flows were open at once: a
	// SYN scan or flood must not hold the reader's memory. A dropped flow
	// that goes on later is tracked afresh (and, if it then sends a
	// ClientHello, is a record without its SYN: reason no_syn).
	DroppedNoHello int64
	// DroppedUnfinished counts flows whose state was dropped because
	// more than ReadOptions.UnfinishedMax flows that sent a ClientHello
	// but no client Finished were held at once (open or closed, they
	// wait for the end of the capture): the oldest such flow goes first.
	// A ClientHello flood must not hold the reader's memory; a dropped
	// flow makes no record.
	DroppedUnfinished int64
	noHelloIdle       time.Duration // the bounds in force, for Warnings
	noHelloMax        int
	unfinishedMax     int
	KeyLog            KeyLogStats
	Secrets           []byte       // key log lines from the file's Decryption Secrets Blocks
	Damage            *DamageError // nil when the file was read to its end
}

// ReadOptions control Read.
type ReadOptions struct {
	// KeyLog holds NSS key log lines (as written by Go's
	// tls.Config.KeyLogWriter); secrets in the capture file are added to it.
	// When a client's handshake traffic secret is known, its first encrypted
	// record is decrypted to confirm it is the Finished message.
	KeyLog []byte
	// NoHelloIdle and NoHelloMax bound the state of flows without a
	// ClientHello (Result.DroppedNoHello): such a flow is dropped after
	// NoHelloIdle of capture time without a packet, or, the oldest first,
	// when more than NoHelloMax are open. 0 means DefaultNoHelloIdle and
	// DefaultNoHelloMax.
	NoHelloIdle time.Duration
	NoHelloMax  int
	// UnfinishedMax bounds the flows held that sent a ClientHello but no
	// client Finished (Result.DroppedUnfinished); 0 means
	// DefaultUnfinishedMax.
	UnfinishedMax int
}

// Defaults of ReadOptions.NoHelloIdle and NoHelloMax: a minute of capture
// time, and 16,384 flows at once. A client sends its ClientHello one round
// trip after its SYN. The studies open a handful of connections at a time;
// at under 1.6 kB of state each (docs/security.md), the cap holds under
// 26 MB.
const (
	DefaultNoHelloIdle = time.Minute
	DefaultNoHelloMax  = 1 << 14
)

// DefaultUnfinishedMax is the default of ReadOptions.UnfinishedMax: 16,384
// flows with a ClientHello and no client Finished at once. The studies
// open a handful of connections at a time and finish them within
// milliseconds; at about 800 bytes of state each
// (BenchmarkReadHelloFlood), the cap holds under 16 MB.
const DefaultUnfinishedMax = 1 << 14

// Read turns a capture into per-connection records. A damaged file still
// yields every record built from the packets before the damage; the damage
// is in Result.Damage and also returned as the error. Other errors are I/O
// errors of r.
func Read(r io.Reader, opt ReadOptions) (*Result, error) {
	src, err := NewSource(r)
	if err != nil {
		var d *DamageError
		if errors.As(err, &d) {
			return &Result{Damage: d}, d
		}
		return nil, err
	}
	if err := checkKeyLogLines("the key log", opt.KeyLog); err != nil {
		return nil, err
	}
	t := newTrackerFor(opt)
	res := &Result{}
	var seg segment
	for {
		p, err := src.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			var d *DamageError
			if errors.As(err, &d) {
				res.Damage = d
				break
			}
			return nil, err
		}
		res.Packets++
		switch decode(p.LinkType, p.Data, &seg) {
		case decOK:
			checkWireLen(&seg, p.OrigLen, len(p.Data))
			if seg.origLenBad {
				res.OrigLenCorrected++
			}
			if seg.payloadTruncated {
				res.SnapCut++
			}
			t.packet(&seg, p.TsNs)
		case decNotIP:
			res.Skipped.NotIP++
		case decNotTCP:
			res.Skipped.NotTCP++
		case decFragment:
			res.Skipped.Fragments++
		case decMalformed:
			res.Skipped.Malformed++
		case decUnknownLink:
			res.Skipped.UnknownLink++
			if res.UnknownLinkTypes == nil {
				res.UnknownLinkTypes = map[uint32]int64{}
			}
			res.UnknownLinkTypes[p.LinkType]++
		}
	}
	res.Secrets = src.Secrets
	if err := checkKeyLogLines("the capture's Decryption Secrets Blocks", src.Secrets); err != nil {
		return nil, err
	}
	res.DroppedNoHello, res.DroppedUnfinished = t.dropped, t.droppedUnfinished
	res.noHelloIdle, res.noHelloMax = time.Duration(t.idleNs), t.maxNoHello
	res.unfinishedMax = t.maxUnfinished
	res.Records = t.finish()
	res.KeyLog = checkFinished(res.Records, opt.KeyLog, src.Secrets)
	if res.Damage != nil {
		return res, res.Damage
	}
	return res, nil
}

// checkWireLen validates a frame's original length against what the
// capture holds. It can be no less than the captured length, and when the
// capture is cut it must match the end of the IP packet (up to Ethernet
// padding to 60 bytes and a 4-byte FCS). A length that fails is replaced by
// the IP packet's end (or the captured length) and flagged, so one flipped
// byte in a record header cannot add gigabytes to a connection. A frame
// captured whole whose IP length claims more than it holds is flagged too,
// and its payload counts what the frame holds.
func checkWireLen(seg *segment, orig, captured int) {
	seg.wireLen = orig
	switch {
	case orig < captured:
		seg.origLenBad = true
	case orig > captured && seg.ipEnd > 0:
		seg.origLenBad = orig < seg.ipEnd || orig > max(seg.ipEnd, 60)+4
	case orig > captured:
		seg.origLenBad = orig > maxFrame
	}
	if orig == captured && seg.payloadTruncated {
		// The whole frame was captured but its IP length claims more: the
		// IP header lies, so count the bytes the frame has.
		seg.origLenBad, seg.payloadTruncated = true, false
		seg.payloadLen = len(seg.payload)
		return
	}
	if seg.origLenBad {
		seg.wireLen = max(captured, seg.ipEnd)
	}
}

// maxFrame bounds a frame's original length when no IP length field can
// check it. It allows 64 KiB IP packets plus any link header, or a jumbogram's
// worth of GSO (Linux BIG TCP reaches 512 KiB).
const maxFrame = 1 << 20

type flowKey struct {
	a, b netip.AddrPort
}

type tracker struct {
	conns map[flowKey]*conn
	done  []Record
	seq   int
	// noHello holds the flows that had no ClientHello when last looked
	// at, oldest look first; entries of flows closed since, or that have
	// one now, are skipped when they reach the front (see sweep).
	noHello    []*conn
	head       int   // noHello[:head] are spent
	nowNs      int64 // the latest packet time
	idleNs     int64 // 0: never drop by time
	maxNoHello int   // 0: no cap
	dropped    int64
	// unfinished holds the flows that sent a ClientHello and no client
	// Finished, in the order they sent it; entries of flows finished or
	// gone since are skipped (conn.unfinished says which are live).
	unfinished        []*conn
	uhead             int // unfinished[:uhead] are spent
	nUnfinished       int // live entries
	maxUnfinished     int // 0: no cap
	droppedUnfinished int64
}

func newTracker() *tracker { return &tracker{conns: make(map[flowKey]*conn)} }

// newTrackerFor makes a tracker with the bounds of opt (defaults for 0).
func newTrackerFor(opt ReadOptions) *tracker {
	t := newTracker()
	t.idleNs, t.maxNoHello = int64(DefaultNoHelloIdle), DefaultNoHelloMax
	if opt.NoHelloIdle > 0 {
		t.idleNs = int64(opt.NoHelloIdle)
	}
	if opt.NoHelloMax > 0 {
		t.maxNoHello = opt.NoHelloMax
	}
	t.maxUnfinished = cmp.Or(opt.UnfinishedMax, DefaultUnfinishedMax)
	return t
}

type tm struct {
	ns int64
	ok bool
}

func (t *tm) setOnce(ns int64) {
	if !t.ok {
		t.ns, t.ok = ns, true
	}
}

func (t tm) ptr() *int64 {
	if !t.ok {
		return nil
	}
	v := t.ns
	return &v
}

// delivery is one in-order advance of the server's stream. It holds the stream
// offset it reached and when (the latest arrival time among the bytes
// delivered so far: a segment held behind a hole is complete only when the
// hole is filled).
type delivery struct{ abs, ns int64 }

// maxDeliveries bounds the server-stream state kept for ResponseEnd. The state
// is the latest in-order advances (the response's last byte lies within 24
// bytes of the FIN, in the last advance or two), 256 bytes a flow whatever it
// carries.
const maxDeliveries = 16

type conn struct {
	synack          tm
	s2cDel          []delivery // ring of the latest in-order server advances after the ServerHello
	s2cDelHead      int        // next slot of the ring once full
	s2cMaxNs        int64      // latest arrival among the server bytes delivered in order
	s2cFinAbs       int64
	s2cFin          bool
	lastS2CNs       int64
	flights         int       // server flights after the ServerHello
	lastFl          int64     // when the last one started
	cfFlights       int       // cwFlights when the client Finished arrived (-1 before)
	mss             [2]uint16 // each direction's SYN MSS option (0: none)
	srvISN          uint32    // the server's initial sequence number
	haveSrvISN      bool
	c2sAck          uint32 // the client's latest acknowledgment number
	haveC2SAck      bool
	resp            tm    // the response's first segment (Record.ResponseStartNs)
	respAcked       int64 // Record.AckedAtResponse
	respWin         int   // Record.ResponseWindow
	cwFlights       int   // server flights split by a full congestion window (flight)
	cwSegs, cwWin   int   // segments since the last such split; the window then
	lastNs, lookNs  int64 // the flow's latest packet; when sweep last queued it
	gone            bool  // closed or dropped: no longer in tracker.conns
	unfinished      bool  // counted in tracker.nUnfinished (see boundUnfinished)
	client, server  netip.AddrPort
	firstNs         int64
	seq             int
	syn             tm
	isn             uint32
	haveISN         bool
	fin             tm
	closed          bool
	d               [2]dirState // 0: client to server, 1: server to client
	ch, sh, sfe, cf tm
	ch2             tm // the second ClientHello (after a HelloRetryRequest)
	hrr             bool
	group           uint16
	haveGroup       bool
	tls13           bool
	suite           uint16
	finalSH         bool
	ccsC2S          bool
	cr              [32]byte
	haveCR          bool
	cfinRec         []byte
	cfinCut         bool // the snap length cut the client Finished record
	verKnown        bool // the ServerHello's version was captured
	shCut           bool // the snap length cut the ServerHello
	origLenBad      int  // frames whose original length was corrected
	retrans         int
	packets         [2]int
	frameBytes      [2]int64
	payloadBytes    [2]int64
}

// pend is a segment that arrived ahead of the next expected byte. abs is
// its 64-bit stream offset (see dirState.abs), so ordering needs no
// wraparound logic; id grows with arrival and breaks ties; its captured
// bytes are arena[off:off+n] of its direction. Kept small and inline (no
// pointers): the queue below copies these between its buckets.
type pend struct {
	abs     int64
	ns      int64
	id      uint32
	off, n  uint32
	unknown uint32 // bytes after the captured ones that the snap length cut
}

func (e *pend) before(f *pend) bool {
	return e.abs < f.abs || (e.abs == f.abs && e.id < f.id)
}

// pendQueue holds the pending segments of a direction by stream offset. It
// is a radix heap (Ahuja, Mehlhorn, Orlin and Tarjan, "Faster algorithms for
// the shortest path problem", J. ACM 37(2), 1990). It fits because the
// queue is monotone: a segment is held only when it starts beyond the next
// expected byte, and segments leave only once the stream reaches them, so
// no key is ever below the last one taken. A push costs O(1), a segment
// moves down at most 64 buckets in its life, and buckets are scanned
// sequentially: O(n log C) for any arrival order, with few cache misses.
type pendQueue struct {
	last int64      // keys held are >= last; last only grows (see push)
	b    [65][]pend // b[i] holds keys whose highest bit differing from last is bit i-1; b[0] keys == last, by id
	lo   [65]int64  // smallest key in each non-empty bucket
	used uint64     // bit i set: b[i] is not empty (i < 64); b[64] is tracked by n
	n    int
}

func (q *pendQueue) len() int {
	if q == nil {
		return 0
	}
	return q.n
}

func bucketOf(k, last int64) int { return bits.Len64(uint64(k ^ last)) }

func (q *pendQueue) file(p pend) {
	i := bucketOf(p.abs, q.last)
	if len(q.b[i]) == 0 || p.abs < q.lo[i] {
		q.lo[i] = p.abs
	}
	q.b[i] = append(q.b[i], p)
	if i < 64 {
		q.used |= 1 << i
	}
}

func (q *pendQueue) push(p pend) {
	if p.abs < q.last {
		// The stream's next byte moved back (a new SYN): re-file all.
		all := q.all()
		slices.SortFunc(all, func(a, b pend) int { return cmp.Compare(a.id, b.id) })
		*q = pendQueue{last: p.abs, n: len(all)}
		for _, e := range all {
			q.file(e)
		}
	}
	q.file(p)
	q.n++
}

// popAtMost removes and returns the segment with the smallest key (the
// earliest of equal keys) if that key is at most limit.
func (q *pendQueue) popAtMost(limit int64) (pend, bool) {
	if q == nil || q.n == 0 {
		return pend{}, false
	}
	if len(q.b[0]) == 0 {
		i := 64
		if q.used != 0 {
			i = bits.TrailingZeros64(q.used)
		}
		m := q.lo[i]
		if m > limit {
			return pend{}, false
		}
		old := q.b[i]
		q.b[i] = old[:0]
		q.used &^= 1 << i
		q.last = m
		for _, p := range old {
			q.file(p) // into buckets below i
		}
		slices.SortFunc(q.b[0], func(a, b pend) int { return cmp.Compare(a.id, b.id) })
	} else if q.last > limit {
		return pend{}, false
	}
	p := q.b[0][0]
	q.b[0] = q.b[0][1:]
	if len(q.b[0]) == 0 {
		q.b[0] = q.b[0][:0:0]
		q.used &^= 1
	}
	q.n--
	return p, true
}

// all returns every held segment (in no order).
func (q *pendQueue) all() []pend {
	if q == nil {
		return nil
	}
	out := make([]pend, 0, q.n)
	for i := range q.b {
		out = append(out, q.b[i]...)
	}
	return out
}

// update calls fn on every held segment; fn must not change keys.
func (q *pendQueue) update(fn func(*pend)) {
	if q == nil {
		return
	}
	for i := range q.b {
		for j := range q.b[i] {
			fn(&q.b[i][j])
		}
	}
}

type dirState struct {
	started bool
	next    uint32 // next expected sequence number
	// abs is next as a 64-bit stream offset: it moves with next (by the
	// signed RFC 1982 serial-number distance), so a pending segment's place
	// is abs + int32(seq-next) when it arrives and stays valid afterwards.
	abs       int64
	gap       bool // a hole was given up on: the stream cannot be parsed further
	reorderOv bool // the hole was given up on because too much data waited behind it
	finSeq    uint32
	finSeen   bool
	pending   *pendQueue // nil until a segment waits (2 KB: most connections never need one)
	ids       uint32     // pending segments held since the queue was last empty
	arena     []byte     // their captured bytes
	pendN     int        // captured bytes of the live pending segments
	p         tlsParser
}

// hold keeps a segment that arrived ahead of the stream.
func (d *dirState) hold(abs int64, data []byte, unknown int, ns int64) {
	if len(d.arena) > 2*d.pendN+64<<10 {
		d.compact()
	}
	d.ids++
	if d.pending == nil {
		d.pending = new(pendQueue)
	}
	d.pending.push(pend{abs: abs, ns: ns, id: d.ids, off: uint32(len(d.arena)), n: uint32(len(data)), unknown: uint32(unknown)})
	d.arena = append(d.arena, data...)
	d.pendN += len(data)
}

// compact drops the bytes of segments already delivered, so a stream that
// never drains completely keeps O(live bytes) memory.
func (d *dirState) compact() {
	arena := make([]byte, 0, d.pendN)
	d.pending.update(func(p *pend) {
		off := uint32(len(arena))
		arena = append(arena, d.arena[p.off:p.off+p.n]...)
		p.off = off
	})
	d.arena = arena
}

// setNext moves the next expected sequence number, keeping abs in step.
func (d *dirState) setNext(seq uint32) {
	d.abs += int64(int32(seq - d.next))
	d.next = seq
}

// maxPending bounds out-of-order bytes held per direction; maxPendingSegs
// bounds the segments (each costs a queue entry even when it is one byte).
const (
	maxPending     = 4 << 20
	maxPendingSegs = 1 << 20
)

func (t *tracker) packet(s *segment, ns int64) {
	c := t.conns[flowKey{s.src, s.dst}]
	if c == nil {
		c = t.conns[flowKey{s.dst, s.src}]
	}
	syn := s.flags&flagSYN != 0 && s.flags&flagACK == 0
	if syn && c != nil && c.client == s.src && (c.closed || (c.haveISN && c.isn != s.seq)) {
		// 4-tuple reuse: a new SYN after FIN/RST (or with a new ISN) starts
		// a new connection.
		t.close(c)
		c = nil
	}
	if c == nil {
		c = &conn{client: s.src, server: s.dst, firstNs: ns, seq: t.seq, cfFlights: -1, respAcked: -1}
		t.seq++
		if s.flags&(flagSYN|flagACK) == flagSYN|flagACK {
			c.client, c.server = s.dst, s.src
		}
		t.conns[flowKey{c.client, c.server}] = c
		c.lookNs = ns
		t.noHello = append(t.noHello, c)
	}
	c.lastNs = ns
	t.nowNs = max(t.nowNs, ns)
	defer t.sweep()
	defer t.boundUnfinished(c)
	dir := 0
	if s.src != c.client {
		dir = 1
	}
	d := &c.d[dir]
	c.packets[dir]++
	c.frameBytes[dir] += int64(s.wireLen)
	c.payloadBytes[dir] += int64(s.payloadLen)
	if s.origLenBad {
		c.origLenBad++
	}
	if s.flags&flagSYN != 0 {
		if d.started && d.next == s.seq+1 && !c.closed {
			c.retrans++ // SYN or SYN+ACK sent again
		} else if !d.started || s.payloadLen == 0 {
			d.started = true
			d.setNext(s.seq + 1)
		}
		if dir == 0 && syn {
			c.syn.setOnce(ns)
			c.isn, c.haveISN = s.seq, true
		}
		if dir == 1 && s.flags&flagACK != 0 {
			c.synack.setOnce(ns)
			if !c.haveSrvISN {
				c.srvISN, c.haveSrvISN = s.seq, true
			}
		}
		if c.mss[dir] == 0 {
			c.mss[dir] = s.mss
		}
	}
	if dir == 0 && s.flags&flagACK != 0 && (!c.haveC2SAck || int32(s.ack-c.c2sAck) > 0) {
		c.c2sAck, c.haveC2SAck = s.ack, true
	}
	if dir == 1 && s.payloadLen > 0 && c.cf.ok && d.started && int32(s.seq-d.next) >= 0 {
		c.responseSegment(ns)
	}
	if s.flags&flagRST != 0 {
		c.closed = true
	}
	if s.payloadLen > 0 {
		seq := s.seq
		if s.flags&flagSYN != 0 {
			seq++
		}
		t.data(c, dir, seq, s.payload, s.payloadLen-len(s.payload), ns)
		if dir == 1 && c.finalSH && !c.cf.ok && !d.gap {
			c.sfe.ns, c.sfe.ok = ns, true
		}
		if dir == 1 && c.finalSH {
			c.flight(ns)
		} else if dir == 1 {
			c.cwSegs++ // before the ServerHello is whole: in the window too
		}
		if dir == 0 && c.cf.ok && c.cfFlights < 0 {
			c.cfFlights = c.cwFlights
		}
	}
	if s.flags&flagFIN != 0 {
		fs := s.seq + uint32(s.payloadLen)
		if d.finSeen && d.finSeq == fs {
			if s.payloadLen == 0 {
				c.retrans++
			}
		} else {
			d.finSeen, d.finSeq = true, fs
			if dir == 1 && d.started && !c.s2cFin {
				c.s2cFinAbs, c.s2cFin = d.abs+int64(int32(fs-d.next)), true
			}
			if d.started && d.next == fs {
				d.setNext(d.next + 1)
			}
		}
		c.fin.setOnce(ns)
		c.closed = true
	}
}

// data handles one segment's payload (the captured bytes, then unknown
// bytes the snap length cut) with a small reassembler. In-order bytes go to
// the TLS parser, old bytes are retransmissions, bytes beyond a hole wait
// in a radix heap by stream offset until the hole is filled, and the drain
// continues from the filled point only, so any arrival order costs O(log C)
// per segment (C: the range of stream offsets). A full reassembly library
// is not needed for a one-way record parser, and this one gives the
// per-byte arrival time the record times need.
func (t *tracker) data(c *conn, dir int, seq uint32, payload []byte, unknown int, ns int64) {
	d := &c.d[dir]
	if !d.started {
		d.started, d.next = true, seq // capture began mid-stream
	}
	diff := int32(seq - d.next) // RFC 1982 serial-number comparison
	n := len(payload) + unknown
	switch {
	case diff == 0:
		t.deliver(c, dir, payload, unknown, ns)
	case diff < 0:
		c.retrans++
		over := -int(diff) // in int: -int32(-1<<31) would overflow
		if over >= n {
			return
		}
		payload, unknown = cut(payload, unknown, over)
		t.deliver(c, dir, payload, unknown, ns)
	default:
		if d.gap {
			return // given up on this stream: sequence tracking only
		}
		if d.pendN+len(payload) > maxPending || d.pending.len() >= maxPendingSegs {
			d.gap, d.reorderOv = true, true
			return
		}
		d.hold(d.abs+int64(diff), payload, unknown, ns)
		return
	}
	t.drain(c, dir)
}

// cut drops the first k bytes of a segment of known then unknown bytes.
func cut(known []byte, unknown, k int) ([]byte, int) {
	if k <= len(known) {
		return known[k:], unknown
	}
	return nil, unknown - (k - len(known))
}

// drain delivers the waiting segments that the last delivery made
// contiguous, smallest stream offset first.
func (t *tracker) drain(c *conn, dir int) {
	d := &c.d[dir]
	for {
		p, ok := d.pending.popAtMost(d.abs)
		if !ok {
			break
		}
		d.pendN -= int(p.n)
		over := int(d.abs - p.abs) // bytes already delivered
		if over >= int(p.n+p.unknown) {
			c.retrans++
			continue
		}
		known, unknown := cut(d.arena[p.off:p.off+p.n], int(p.unknown), over)
		t.deliver(c, dir, known, unknown, p.ns)
	}
	if d.pending != nil && d.pending.len() == 0 {
		// Nothing waits: drop the queue (2 KB, kept by open connections).
		d.pending, d.ids = nil, 0
		d.arena = d.arena[:0]
		if cap(d.arena) > 1<<20 {
			d.arena = nil // let a large buffer go
		}
	}
}

func (t *tracker) deliver(c *conn, dir int, known []byte, unknown int, ns int64) {
	d := &c.d[dir]
	d.setNext(d.next + uint32(len(known)+unknown))
	if !d.gap && !d.p.bad && !d.p.stop {
		d.p.feed(c, dir, known, ns)
		if unknown > 0 {
			d.p.feedUnknown(c, dir, unknown)
		}
	}
	if dir == 1 && c.finalSH {
		c.advance(d.abs, ns) // the ServerHello's own segment included
	}
}

// advance notes that the server's stream is complete in order up to abs,
// its last byte having arrived at ns, in a ring of maxDeliveries.
func (c *conn) advance(abs, ns int64) {
	c.s2cMaxNs = max(c.s2cMaxNs, ns)
	dl := delivery{abs: abs, ns: c.s2cMaxNs}
	if len(c.s2cDel) < maxDeliveries {
		c.s2cDel = append(c.s2cDel, dl)
		return
	}
	c.s2cDel[c.s2cDelHead] = dl
	c.s2cDelHead = (c.s2cDelHead + 1) % maxDeliveries
}

// flight counts a server segment with payload after the ServerHello. It
// starts a new flight when it comes more than half the SYN round trip
// after the previous one (the server waited for the client). Without a
// SYN round trip no flights are counted.
func (c *conn) flight(ns int64) {
	if !c.syn.ok || !c.synack.ok {
		return
	}
	half := (c.synack.ns - c.syn.ns) / 2
	gap := c.flights > 0 && ns-c.lastS2CNs > half
	if c.flights == 0 || gap {
		c.flights++
		c.lastFl = ns
	}
	// The congestion-window flights: a gap splits a flight only once the
	// server has sent its whole window since the last split (RFC 6928's
	// initial window of 10 segments, then doubled as in slow start), so
	// the wait was for the client's ACK; a shorter run before a gap is the
	// server's own time (signing between its Certificate and its
	// CertificateVerify, say), not a round trip.
	switch {
	case c.cwFlights == 0:
		c.cwFlights, c.cwWin = 1, InitialWindow
	case gap && c.cwSegs >= c.cwWin:
		c.cwFlights++
		c.cwSegs, c.cwWin = 0, 2*c.cwWin
	}
	c.cwSegs++
	c.lastS2CNs = ns
}

// responseSegment counts a server segment with new data after the
// client's Finished. The first starts the response (Record
// ResponseStartNs, AckedAtResponse), and ResponseWindow counts those that
// arrive within one SYN round trip of it.
func (c *conn) responseSegment(ns int64) {
	if !c.resp.ok {
		c.resp.setOnce(ns)
		if c.haveSrvISN && c.haveC2SAck {
			c.respAcked = max(int64(int32(c.c2sAck-c.srvISN))-1, 0)
		}
	}
	if c.syn.ok && c.synack.ok && ns-c.resp.ns < c.synack.ns-c.syn.ns {
		c.respWin++
	}
}

// InitialWindow is TCP's initial congestion window in segments (RFC 6928;
// Linux's default), the most a server sends before it waits for an ACK.
const InitialWindow = 10

// ResponseEnd returns when the client's side of the capture had the
// server's stream complete, in order, up to trailer bytes before the
// server's FIN. That is the last byte of a response the server closed with
// a trailer-byte record (a TLS 1.3 close_notify is 24 bytes: RFC 8446 5.2,
// 5 header bytes, 2 alert bytes, the content type and a 16-byte AEAD
// tag). ok is false without a FIN, or when that byte is not among the
// latest in-order advances kept.
func (r *Record) ResponseEnd(trailer int64) (ns int64, ok bool) {
	if !r.s2cFin {
		return 0, false
	}
	// Advances only move forward, so the first to reach target is the
	// one with the least offset at or beyond it; one below target must be
	// kept too, or the ring lost the advance that reached it.
	target := r.s2cFinAbs - trailer
	found, below := false, false
	var at int64
	for _, d := range r.s2cDel {
		switch {
		case d.abs < target:
			below = true
		case !found || d.abs < at:
			at, ns, found = d.abs, d.ns, true
		}
	}
	if !found || !below {
		return 0, false
	}
	return ns, true
}

// Flights returns how many flights the server sent after its ServerHello
// (that flight included) up to the time until. A flight is a run of
// segments with payload none of which came more than half the SYN round
// trip after the one before. Only the last flight can start after a
// response's last byte (the close_notify sent after it), so only it is
// checked against until. 0 when the capture has no SYN round trip.
func (r *Record) Flights(until int64) int {
	if r.flights > 0 && r.lastFl > until {
		return r.flights - 1
	}
	return r.flights
}

// RoundTrips returns the round trips the client waited for before its
// Finished, measured from the capture. They are one for the ClientHello,
// one more after a HelloRetryRequest (RFC 8446 4.1.4), and one more for
// every server flight before the client's Finished that was split by a
// wait for the client's ACK: a gap of more than half the SYN round trip
// after the server had sent its whole congestion window (InitialWindow
// segments, RFC 6928, doubling after each wait). A gap after fewer
// segments is the server's own time, not a round trip. ok is false for an
// incomplete connection or one without its SYN round trip.
func (r *Record) RoundTrips() (n int, ok bool) {
	if !r.Complete || r.SynAckNs == nil || r.cfFlights < 1 {
		return 0, false
	}
	n = r.cfFlights
	if r.HRR {
		n++
	}
	return n, true
}

// lost reports whether direction dir's stream may hold bytes the parser never
// saw. The causes are a hole left unfilled, a hole given up on, or payload the
// snap length cut where the parser needed it.
func (c *conn) lost(dir int) bool {
	d := &c.d[dir]
	return d.pending.len() > 0 || d.gap || d.p.lost
}

// record reports whether closing c now would make a record. It would when its
// ClientHello was seen, or the client sent payload that may have been one but
// could not be read (a hole never filled, bytes cut by the snap length): such
// a connection is reported incomplete with the reason rather than dropped.
func (c *conn) record() bool {
	return c.ch.ok || c.payloadBytes[0] > 0 && !c.d[0].p.bad && c.lost(0)
}

// sweep bounds the flows without a ClientHello (Result.DroppedNoHello):
// it drops those idle for t.idleNs, and the oldest while more than
// t.maxNoHello wait. Each flow is looked at once per idle period (an
// active one is queued again), so the cost is amortised O(1) a packet.
func (t *tracker) sweep() {
	for budget := len(t.noHello) - t.head; budget > 0; budget-- {
		c := t.noHello[t.head]
		over := t.maxNoHello > 0 && len(t.noHello)-t.head > t.maxNoHello
		if !over && (t.idleNs <= 0 || t.nowNs-c.lookNs < t.idleNs) {
			break // everything behind was queued later
		}
		t.noHello[t.head] = nil
		t.head++
		switch {
		case c.gone || c.ch.ok:
			// closed, or a record now: no longer ours to bound
		case c.record():
			// a record in the making (client payload behind a hole): keep
			c.lookNs = t.nowNs
			t.noHello = append(t.noHello, c)
		case over || t.nowNs-c.lastNs >= t.idleNs:
			delete(t.conns, flowKey{c.client, c.server})
			c.gone = true
			t.dropped++
		default: // active lately: look again an idle period from now
			c.lookNs = t.nowNs
			t.noHello = append(t.noHello, c)
		}
	}
	if t.head > 1024 && t.head > len(t.noHello)/2 { // reuse the spent front
		n := copy(t.noHello, t.noHello[t.head:])
		clear(t.noHello[n:])
		t.noHello, t.head = t.noHello[:n], 0
	}
}

// boundUnfinished counts c among the flows with a ClientHello and no
// client Finished when it has just become one. It drops the oldest such
// flows while more than t.maxUnfinished are held (Result.DroppedUnfinished).
// A flow enters the queue once (a ClientHello and a Finished, once seen,
// stay seen), and the queue is compacted when stale entries outnumber the
// live ones, so it costs amortised O(1) a packet and O(held flows) memory.
func (t *tracker) boundUnfinished(c *conn) {
	if !c.gone && !c.unfinished && c.ch.ok && !c.cf.ok {
		c.unfinished = true
		t.nUnfinished++
		t.unfinished = append(t.unfinished, c)
	} else if c.unfinished && c.cf.ok {
		t.unmarkUnfinished(c)
	}
	for t.maxUnfinished > 0 && t.nUnfinished > t.maxUnfinished {
		old := t.unfinished[t.uhead]
		t.unfinished[t.uhead] = nil
		t.uhead++
		if !old.unfinished {
			continue // finished or closed since
		}
		t.unmarkUnfinished(old)
		delete(t.conns, flowKey{old.client, old.server})
		old.gone = true
		t.droppedUnfinished++
	}
	if len(t.unfinished) > 1024 && len(t.unfinished) > 2*t.nUnfinished { // spent or stale entries dominate
		live := t.unfinished[:0]
		for _, u := range t.unfinished[t.uhead:] {
			if u.unfinished {
				live = append(live, u)
			}
		}
		clear(t.unfinished[len(live):])
		t.unfinished, t.uhead = live, 0
	}
}

func (t *tracker) unmarkUnfinished(c *conn) {
	c.unfinished = false
	t.nUnfinished--
}

func (t *tracker) close(c *conn) {
	delete(t.conns, flowKey{c.client, c.server})
	c.gone = true
	if c.unfinished {
		t.unmarkUnfinished(c)
	}
	if !c.record() {
		return
	}
	for i := range c.d {
		c.retrans += c.d[i].pendingDuplicates()
	}
	r := Record{
		Client: c.client.String(), Server: c.server.String(),
		SynNs: c.syn.ptr(), ClientHelloNs: c.ch.ptr(), ServerHelloNs: c.sh.ptr(),
		ServerFlightEndNs: c.sfe.ptr(), ClientFinishedNs: c.cf.ptr(), FinNs: c.fin.ptr(),
		HRR: c.hrr, Retransmissions: c.retrans,
		PacketsC2S: c.packets[0], PacketsS2C: c.packets[1],
		FrameBytesC2S: c.frameBytes[0], FrameBytesS2C: c.frameBytes[1],
		TCPPayloadBytesC2S: c.payloadBytes[0], TCPPayloadBytesS2C: c.payloadBytes[1],
		firstNs: c.firstNs, seq: c.seq, cr: c.cr, haveCR: c.haveCR, suite: c.suite, cfinRec: c.cfinRec,
		cfinCut: c.cfinCut, SynAckNs: c.synack.ptr(),
		s2cDel: c.s2cDel, s2cFinAbs: c.s2cFinAbs, s2cFin: c.s2cFin, flights: c.flights, lastFl: c.lastFl,
		cfFlights:       c.cfFlights,
		ResponseStartNs: c.resp.ptr(), ResponseWindow: c.respWin, AckedAtResponse: c.respAcked, SegmentSize: segmentSize(c.mss),
	}
	if c.haveGroup {
		r.Group = tls.CurveID(c.group).String()
	}
	if c.hrr {
		r.ClientHello2Ns = c.ch2.ptr()
	}
	if c.ch.ok && c.cf.ok {
		v := c.cf.ns - c.ch.ns
		r.ThsNs = &v
	}
	r.Complete = c.syn.ok && c.ch.ok && c.sh.ok && c.cf.ok
	r.Reason = c.reason()
	t.done = append(t.done, r)
}

// pendingDuplicates counts the segments left waiting that start where another
// waiting segment starts. They are retransmissions of data behind a hole that
// never filled (when the hole fills, the drain counts them).
func (d *dirState) pendingDuplicates() int {
	if d.pending.len() < 2 {
		return 0
	}
	var offs []int64
	for _, p := range d.pending.all() {
		offs = append(offs, p.abs)
	}
	slices.Sort(offs)
	n := 0
	for i := 1; i < len(offs); i++ {
		if offs[i] == offs[i-1] {
			n++
		}
	}
	return n
}

// Reasons, in the order they appear in Record.Reason.
const (
	ReasonNoSYN            = "no_syn"             // the client's SYN is not in the capture
	ReasonNoClientHello    = "no_client_hello"    // the ClientHello was not seen
	ReasonNoServerHello    = "no_server_hello"    // no ServerHello (other than a HelloRetryRequest) was seen
	ReasonNoClientFinished = "no_client_finished" // the client's Finished was not seen
	ReasonGapC2S           = "gap_c2s"            // a hole in the client's byte stream was never filled
	ReasonGapS2C           = "gap_s2c"            // a hole in the server's byte stream was never filled
	ReasonReorderC2S       = "reorder_limit_c2s"  // too much client data waited behind a hole; given up
	ReasonReorderS2C       = "reorder_limit_s2c"  // the same for the server
	ReasonSnapC2S          = "snaplen_c2s"        // the snap length cut client bytes the parser needed
	ReasonSnapS2C          = "snaplen_s2c"        // the snap length cut server bytes the parser needed
	ReasonGroupNotCaptured = "group_not_captured" // the ServerHello's key_share lies beyond the captured bytes
	ReasonServerNotTLS     = "server_not_tls"     // the server's stream did not parse as TLS records
	ReasonOrigLen          = "orig_len_corrected" // some frames' original length disagreed with the captured data; frame bytes use the IP length
)

func (c *conn) reason() string {
	var rs []string
	add := func(cond bool, r string) {
		if cond {
			rs = append(rs, r)
		}
	}
	add(!c.syn.ok, ReasonNoSYN)
	add(!c.ch.ok, ReasonNoClientHello)
	add(!c.sh.ok, ReasonNoServerHello)
	add(!c.cf.ok, ReasonNoClientFinished)
	gap := func(dir int) bool { d := &c.d[dir]; return d.pending.len() > 0 && !d.gap && !d.p.done() }
	add(gap(0), ReasonGapC2S)
	add(gap(1), ReasonGapS2C)
	add(c.d[0].reorderOv, ReasonReorderC2S)
	add(c.d[1].reorderOv, ReasonReorderS2C)
	add(c.d[0].p.lost, ReasonSnapC2S)
	add(c.d[1].p.lost, ReasonSnapS2C)
	add(c.sh.ok && !c.haveGroup && c.shCut, ReasonGroupNotCaptured)
	add(c.d[1].p.bad && !c.sh.ok, ReasonServerNotTLS)
	add(c.origLenBad > 0, ReasonOrigLen)
	return strings.Join(rs, ";")
}

// finish closes every open connection and sorts the records by the time of
// their first packet, then client and server address, then discovery order.
func (t *tracker) finish() []Record {
	open := make([]*conn, 0, len(t.conns))
	for _, c := range t.conns {
		open = append(open, c)
	}
	slices.SortFunc(open, func(a, b *conn) int { return cmp.Compare(a.seq, b.seq) })
	for _, c := range open {
		t.close(c)
	}
	slices.SortStableFunc(t.done, func(a, b Record) int {
		return cmp.Or(cmp.Compare(a.firstNs, b.firstNs), cmp.Compare(a.Client, b.Client), cmp.Compare(a.Server, b.Server), cmp.Compare(a.seq, b.seq))
	})
	return t.done
}

// TLS record layer (RFC 8446 5.1): type(1) legacy_version(2) length(2).
const (
	recCCS       = 20
	recAlert     = 21
	recHandshake = 22
	recAppData   = 23
	maxRecordLen = 1<<14 + 256 // TLSCiphertext limit
	maxHSBuffer  = 1 << 18
)

// hrrRandom is SHA-256("HelloRetryRequest"), the Random of a
// HelloRetryRequest (RFC 8446 4.1.3).
var hrrRandom = sha256.Sum256([]byte("HelloRetryRequest"))

type tlsParser struct {
	hdr     [5]byte
	hdrN    int
	recType byte
	recLeft int
	recNs   int64
	hs      []byte // plaintext handshake bytes not yet parsed
	hsNs    int64  // time of the first byte in hs
	hsSkip  int    // bytes of a cut handshake message still to pass
	keepRec bool   // collecting the current record (client Finished)
	bad     bool   // not TLS
	stop    bool   // nothing more of interest in this direction
	lost    bool   // the snap length cut bytes the parser needed: it stopped
}

// done reports whether the parser needs no more bytes.
func (p *tlsParser) done() bool { return p.bad || p.stop || p.lost }

// feedUnknown passes n stream bytes the capture does not hold (cut by the
// snap length). Inside a record the record layer still knows where the next
// header is, and inside a handshake message the message's length says where
// the next one starts; the message itself is handled with its captured
// prefix. Unknown bytes where a record header is due lose the framing: the
// parser stops and says so (lost).
func (p *tlsParser) feedUnknown(c *conn, dir int, n int) {
	for n > 0 && !p.done() {
		if p.recLeft == 0 {
			p.lost = true
			return
		}
		m := min(p.recLeft, n)
		p.recLeft -= m
		n -= m
		if p.keepRec {
			c.cfinCut = true
		}
		if p.recType == recHandshake && c.wantPlainHandshake(dir) {
			p.skipHandshake(c, dir, m)
		}
		p.recordEnd(c, dir)
	}
}

// skipHandshake passes m unknown handshake bytes: the message they fall in
// is handled with its captured prefix and the rest of it is skipped.
func (p *tlsParser) skipHandshake(c *conn, dir int, m int) {
	for m > 0 && !p.done() {
		if p.hsSkip > 0 {
			k := min(m, p.hsSkip)
			p.hsSkip -= k
			m -= k
			continue
		}
		if len(p.hs) < 4 {
			p.lost = true // the message header itself was cut
			return
		}
		typ := p.hs[0]
		n := int(p.hs[1])<<16 | int(p.hs[2])<<8 | int(p.hs[3])
		body, ns := p.hs[4:], p.hsNs
		p.hs = nil
		p.hsSkip = 4 + n - 4 - len(body)
		c.handshake(dir, typ, body, ns, true)
	}
}

// recordEnd stops the client's parser after its Finished record: nothing
// later is of interest.
func (p *tlsParser) recordEnd(c *conn, dir int) {
	if p.recLeft == 0 && dir == 0 && c.cf.ok {
		p.stop = true
	}
}

func (p *tlsParser) feed(c *conn, dir int, b []byte, ns int64) {
	for len(b) > 0 && !p.bad && !p.stop {
		if p.recLeft == 0 {
			if p.hdrN == 0 {
				p.recNs = ns
			}
			n := copy(p.hdr[p.hdrN:], b)
			p.hdrN += n
			b = b[n:]
			if p.hdrN < 5 {
				return
			}
			p.hdrN = 0
			typ, length := p.hdr[0], int(binary.BigEndian.Uint16(p.hdr[3:]))
			if typ < recCCS || typ > 24 || p.hdr[1] != 3 || length > maxRecordLen {
				p.bad = true
				return
			}
			p.recType, p.recLeft = typ, length
			p.keepRec = false
			c.recordStart(dir, typ, p.recNs, p)
			if p.keepRec {
				c.cfinRec = append(c.cfinRec[:0], p.hdr[:]...)
			}
			continue
		}
		n := min(p.recLeft, len(b))
		chunk := b[:n]
		b = b[n:]
		p.recLeft -= n
		if p.keepRec {
			c.cfinRec = append(c.cfinRec, chunk...)
		}
		if p.recType == recHandshake && c.wantPlainHandshake(dir) {
			if p.hsSkip > 0 {
				k := min(p.hsSkip, len(chunk))
				p.hsSkip -= k
				chunk = chunk[k:]
			}
			if len(p.hs) == 0 {
				p.hsNs = p.recNs
			}
			if len(p.hs)+len(chunk) > maxHSBuffer {
				p.bad = true
				return
			}
			p.hs = append(p.hs, chunk...)
			p.parseHandshake(c, dir)
		}
		p.recordEnd(c, dir)
	}
}

func (p *tlsParser) parseHandshake(c *conn, dir int) {
	for len(p.hs) >= 4 {
		typ := p.hs[0]
		n := int(p.hs[1])<<16 | int(p.hs[2])<<8 | int(p.hs[3])
		if n > maxHSBuffer {
			p.bad = true
			return
		}
		if len(p.hs) < 4+n {
			return
		}
		body, ns := p.hs[4:4+n], p.hsNs
		p.hs = p.hs[4+n:]
		if len(p.hs) == 0 {
			p.hs = nil
		} else {
			p.hsNs = p.recNs // later messages of the same record
		}
		c.handshake(dir, typ, body, ns, false)
		if p.bad || p.stop {
			return
		}
	}
}

// wantPlainHandshake reports whether direction dir's handshake records are
// still plaintext of interest. Those are everything before the ServerHello, the
// client's TLS 1.2 messages up to its Finished, and a ClientHello that the
// capture delivers only after the ServerHello (reordered in the capture).
func (c *conn) wantPlainHandshake(dir int) bool {
	return !c.finalSH || (dir == 0 && ((!c.tls13 && !c.cf.ok) || !c.ch.ok))
}

func (c *conn) recordStart(dir int, typ byte, ns int64, p *tlsParser) {
	if dir != 0 || !c.finalSH || c.cf.ok {
		return
	}
	switch {
	case typ == recCCS:
		c.ccsC2S = true
	case (c.tls13 || !c.verKnown) && typ == recAppData:
		c.cf.setOnce(ns)
		p.keepRec = true
	case (!c.tls13 || !c.verKnown) && typ == recHandshake && c.ccsC2S:
		c.cf.setOnce(ns) // TLS 1.2: the encrypted Finished follows ChangeCipherSpec
	}
}

// handshake handles one handshake message; cut means body is only the
// captured prefix of the message (the snap length cut the rest).
func (c *conn) handshake(dir int, typ byte, body []byte, ns int64, cut bool) {
	switch {
	case dir == 0 && typ == 1: // ClientHello
		if c.ch.ok {
			c.ch2.setOnce(ns)
			return
		}
		if len(body) >= 34 {
			copy(c.cr[:], body[2:34])
			c.haveCR = true
		}
		c.ch.setOnce(ns)
	case dir == 1 && typ == 2: // ServerHello or HelloRetryRequest
		sh, ok := parseServerHello(body, cut)
		if cut && len(body) < 34 { // cannot tell a HelloRetryRequest from a ServerHello
			c.d[1].p.lost = true
			return
		}
		c.shCut = c.shCut || cut
		if !ok {
			c.d[1].p.bad = true
			return
		}
		if sh.hrr {
			c.hrr = true
			return
		}
		c.finalSH = true
		c.sh.setOnce(ns)
		c.tls13 = sh.version == 0x0304
		c.verKnown = sh.versionKnown
		c.suite = sh.suite
		if sh.haveGroup {
			c.group, c.haveGroup = sh.group, true
		}
		c.d[1].p.stop = true // the rest of the server's stream is encrypted
		c.d[1].p.hs = nil
	}
}

type serverHello struct {
	hrr          bool
	versionKnown bool // the extensions were complete, so version is final
	version      uint16
	suite        uint16
	group        uint16
	haveGroup    bool
}

// parseServerHello reads the fields of RFC 8446 4.1.3 the reader needs:
// random (HRR marker), cipher_suite, supported_versions and key_share
// (ServerHello: KeyShareEntry; HRR: selected_group only). With cut, b is
// only a captured prefix: it reads what the prefix holds and reports
// success once the random is there.
func parseServerHello(b []byte, cut bool) (serverHello, bool) {
	var sh serverHello
	if len(b) < 34 {
		return sh, false
	}
	sh.version = binary.BigEndian.Uint16(b)
	sh.hrr = bytes.Equal(b[2:34], hrrRandom[:])
	if len(b) < 38 {
		return sh, cut
	}
	sid := int(b[34])
	b = b[35:]
	if len(b) < sid+3 {
		return sh, cut
	}
	b = b[sid:]
	sh.suite = binary.BigEndian.Uint16(b)
	b = b[3:]
	if len(b) < 2 {
		sh.versionKnown = !cut
		return sh, true // no extensions: TLS 1.2 without any
	}
	n := int(binary.BigEndian.Uint16(b))
	b = b[2:]
	if n > len(b) {
		if !cut {
			return sh, false
		}
		n = len(b)
	}
	b = b[:n]
	for len(b) >= 4 {
		typ, l := binary.BigEndian.Uint16(b), int(binary.BigEndian.Uint16(b[2:]))
		v := b[4:]
		if 4+l > len(b) {
			if !cut {
				return sh, false
			}
			l = len(v) // the captured prefix of the last extension
		}
		v = v[:l]
		switch typ {
		case 43: // supported_versions
			if l >= 2 {
				sh.version, sh.versionKnown = binary.BigEndian.Uint16(v), true
			}
		case 51: // key_share
			if l >= 2 {
				sh.group, sh.haveGroup = binary.BigEndian.Uint16(v), true
			}
		}
		b = b[4+l:]
	}
	sh.versionKnown = sh.versionKnown || !cut
	return sh, true
}

// String formats a record for error messages.
func (r Record) String() string {
	return fmt.Sprintf("%s->%s group=%s hrr=%v complete=%v", r.Client, r.Server, r.Group, r.HRR, r.Complete)
}

// segmentSize is the lesser of two SYNs' MSS options, ignoring an absent
// one. A host sends no segment larger than its peer's MSS (RFC 9293 3.7.1).
func segmentSize(m [2]uint16) int {
	switch {
	case m[0] == 0:
		return int(m[1])
	case m[1] == 0:
		return int(m[0])
	}
	return int(min(m[0], m[1]))
}
