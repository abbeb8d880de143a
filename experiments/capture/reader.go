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
	"net/netip"
	"slices"
)

// Record is one TCP connection that carried a TLS handshake. Times are Unix
// nanoseconds of the first captured segment carrying the item; nil when the
// capture does not show it.
//
//   - SynNs: the client's first SYN.
//   - ClientHelloNs: the first segment carrying the (first) ClientHello.
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
// Retransmissions counts segments (data, SYN or FIN) that repeat sequence
// space already seen. Packet and byte counts include retransmissions; frame
// bytes are the frames' original lengths including the link header.
type Record struct {
	Client             string `json:"client"`
	Server             string `json:"server"`
	SynNs              *int64 `json:"syn_ns"`
	ClientHelloNs      *int64 `json:"client_hello_ns"`
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
	// at ClientFinishedNs and it was a Finished message. Not a CSV column.
	ClientFinishedVerified bool `json:"-"`

	firstNs int64
	seq     int
	cr      [32]byte // client random, for key log lookups
	suite   uint16
	cfinRec []byte // the client Finished record, kept for decryption
	haveCR  bool
}

// Result is what Read found.
type Result struct {
	Records []Record
	Packets int64 // packets read
	Skipped struct {
		NotIP, NotTCP, Fragments, Malformed, UnknownLink int64
	}
	Secrets []byte       // key log lines from the file's Decryption Secrets Blocks
	Damage  *DamageError // nil when the file was read to its end
}

// ReadOptions control Read.
type ReadOptions struct {
	// KeyLog holds NSS key log lines (as written by Go's
	// tls.Config.KeyLogWriter); secrets in the capture file are added to it.
	// When a client's handshake traffic secret is known, its first encrypted
	// record is decrypted to confirm it is the Finished message.
	KeyLog []byte
}

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
	t := newTracker()
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
			seg.wireLen = p.OrigLen
			if p.OrigLen > len(p.Data) {
				seg.payloadTruncated = true
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
		}
	}
	res.Secrets = src.Secrets
	res.Records = t.finish()
	keys := parseKeyLog(append(slices.Clone(opt.KeyLog), src.Secrets...))
	for i := range res.Records {
		verifyFinished(&res.Records[i], keys)
		res.Records[i].cfinRec = nil
	}
	if res.Damage != nil {
		return res, res.Damage
	}
	return res, nil
}

type flowKey struct {
	a, b netip.AddrPort
}

type tracker struct {
	conns map[flowKey]*conn
	done  []Record
	seq   int
}

func newTracker() *tracker { return &tracker{conns: make(map[flowKey]*conn)} }

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

type conn struct {
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
	retrans         int
	packets         [2]int
	frameBytes      [2]int64
	payloadBytes    [2]int64
}

type pend struct {
	seq  uint32
	data []byte
	ns   int64
}

type dirState struct {
	started bool
	next    uint32
	gap     bool // a hole or a truncated segment: the stream cannot be parsed further
	finSeq  uint32
	finSeen bool
	pending []pend
	pendN   int
	p       tlsParser
}

// maxPending bounds out-of-order bytes held per direction.
const maxPending = 4 << 20

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
		c = &conn{client: s.src, server: s.dst, firstNs: ns, seq: t.seq}
		t.seq++
		if s.flags&(flagSYN|flagACK) == flagSYN|flagACK {
			c.client, c.server = s.dst, s.src
		}
		t.conns[flowKey{c.client, c.server}] = c
	}
	dir := 0
	if s.src != c.client {
		dir = 1
	}
	d := &c.d[dir]
	c.packets[dir]++
	c.frameBytes[dir] += int64(s.wireLen)
	c.payloadBytes[dir] += int64(len(s.payload))
	if s.flags&flagSYN != 0 {
		if dir == 0 && !syn {
			// SYN+ACK from the "client" side: we guessed the roles wrong; ignore.
		}
		if d.started && d.next == s.seq+1 && !c.closed {
			c.retrans++ // SYN or SYN+ACK sent again
		} else if !d.started || len(s.payload) == 0 {
			d.started, d.next = true, s.seq+1
		}
		if dir == 0 && syn {
			c.syn.setOnce(ns)
			c.isn, c.haveISN = s.seq, true
		}
	}
	if s.flags&flagRST != 0 {
		c.closed = true
	}
	if len(s.payload) > 0 {
		seq := s.seq
		if s.flags&flagSYN != 0 {
			seq++
		}
		t.data(c, dir, seq, s.payload, ns, s.payloadTruncated)
		if dir == 1 && c.finalSH && !c.cf.ok && !d.gap {
			c.sfe.ns, c.sfe.ok = ns, true
		}
	}
	if s.flags&flagFIN != 0 {
		fs := s.seq + uint32(len(s.payload))
		if d.finSeen && d.finSeq == fs {
			if len(s.payload) == 0 {
				c.retrans++
			}
		} else {
			d.finSeen, d.finSeq = true, fs
			if d.started && d.next == fs {
				d.next++
			}
		}
		c.fin.setOnce(ns)
		c.closed = true
	}
}

// data handles one segment's payload with a simple in-order reassembler:
// in-order bytes go to the TLS parser, old bytes are retransmissions, bytes
// beyond a hole wait (bounded) until the hole is filled. A full reassembly
// library is not needed for a one-way record parser, and this one gives the
// per-byte arrival time the record times need.
func (t *tracker) data(c *conn, dir int, seq uint32, payload []byte, ns int64, truncated bool) {
	d := &c.d[dir]
	if !d.started {
		d.started, d.next = true, seq // capture began mid-stream
	}
	if truncated {
		// Snap length cut the segment: its bytes are unknown.
		if int32(seq-d.next) <= 0 && int32(seq+uint32(len(payload))-d.next) > 0 {
			d.gap = true
		}
		return
	}
	diff := int32(seq - d.next)
	end := seq + uint32(len(payload))
	switch {
	case diff == 0:
		t.deliver(c, dir, payload, ns)
	case diff < 0:
		c.retrans++
		if int32(end-d.next) > 0 {
			t.deliver(c, dir, payload[-diff:], ns)
		} else {
			return
		}
	default:
		for _, p := range d.pending {
			if p.seq == seq {
				c.retrans++
				return
			}
		}
		if d.pendN+len(payload) > maxPending {
			d.gap = true
			return
		}
		d.pending = append(d.pending, pend{seq, bytes.Clone(payload), ns})
		d.pendN += len(payload)
		return
	}
	// Drain waiting segments that are now in order.
	for progress := true; progress && len(d.pending) > 0; {
		progress = false
		for i := 0; i < len(d.pending); i++ {
			p := d.pending[i]
			pd := int32(p.seq - d.next)
			if pd > 0 {
				continue
			}
			pend := p.seq + uint32(len(p.data))
			if int32(pend-d.next) > 0 {
				t.deliver(c, dir, p.data[-pd:], p.ns)
			} else {
				c.retrans++
			}
			d.pendN -= len(p.data)
			d.pending = slices.Delete(d.pending, i, i+1)
			progress = true
			break
		}
	}
}

func (t *tracker) deliver(c *conn, dir int, b []byte, ns int64) {
	d := &c.d[dir]
	d.next += uint32(len(b))
	if d.gap || d.p.bad || d.p.stop {
		return
	}
	d.p.feed(c, dir, b, ns)
}

func (t *tracker) close(c *conn) {
	delete(t.conns, flowKey{c.client, c.server})
	if !c.ch.ok {
		return
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
	}
	if c.haveGroup {
		r.Group = tls.CurveID(c.group).String()
	}
	if c.ch.ok && c.cf.ok {
		v := c.cf.ns - c.ch.ns
		r.ThsNs = &v
	}
	r.Complete = c.syn.ok && c.ch.ok && c.sh.ok && c.cf.ok
	t.done = append(t.done, r)
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
	keepRec bool   // collecting the current record (client Finished)
	bad     bool   // not TLS
	stop    bool   // nothing more of interest in this direction
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
		c.handshake(dir, typ, body, ns)
		if p.bad || p.stop {
			return
		}
	}
}

func (c *conn) wantPlainHandshake(dir int) bool {
	return !c.finalSH || (dir == 0 && !c.tls13 && !c.cf.ok)
}

func (c *conn) recordStart(dir int, typ byte, ns int64, p *tlsParser) {
	if dir != 0 || !c.finalSH || c.cf.ok {
		return
	}
	switch {
	case typ == recCCS:
		c.ccsC2S = true
	case c.tls13 && typ == recAppData:
		c.cf.setOnce(ns)
		p.keepRec = true
	case !c.tls13 && typ == recHandshake && c.ccsC2S:
		c.cf.setOnce(ns) // TLS 1.2: the encrypted Finished follows ChangeCipherSpec
	}
}

func (c *conn) handshake(dir int, typ byte, body []byte, ns int64) {
	switch {
	case dir == 0 && typ == 1: // ClientHello
		if !c.ch.ok && len(body) >= 34 {
			copy(c.cr[:], body[2:34])
			c.haveCR = true
		}
		c.ch.setOnce(ns)
	case dir == 1 && typ == 2: // ServerHello or HelloRetryRequest
		sh, ok := parseServerHello(body)
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
		c.suite = sh.suite
		if sh.haveGroup {
			c.group, c.haveGroup = sh.group, true
		}
		c.d[1].p.stop = true // the rest of the server's stream is encrypted
		c.d[1].p.hs = nil
	}
}

type serverHello struct {
	hrr       bool
	version   uint16
	suite     uint16
	group     uint16
	haveGroup bool
}

// parseServerHello reads the fields of RFC 8446 4.1.3 the reader needs:
// random (HRR marker), cipher_suite, supported_versions and key_share
// (ServerHello: KeyShareEntry; HRR: selected_group only).
func parseServerHello(b []byte) (serverHello, bool) {
	var sh serverHello
	if len(b) < 38 {
		return sh, false
	}
	sh.version = binary.BigEndian.Uint16(b)
	sh.hrr = bytes.Equal(b[2:34], hrrRandom[:])
	sid := int(b[34])
	b = b[35:]
	if len(b) < sid+3 {
		return sh, false
	}
	b = b[sid:]
	sh.suite = binary.BigEndian.Uint16(b)
	b = b[3:]
	if len(b) < 2 {
		return sh, true // no extensions: TLS 1.2 without any
	}
	n := int(binary.BigEndian.Uint16(b))
	b = b[2:]
	if n > len(b) {
		return sh, false
	}
	b = b[:n]
	for len(b) >= 4 {
		typ, l := binary.BigEndian.Uint16(b), int(binary.BigEndian.Uint16(b[2:]))
		if 4+l > len(b) {
			return sh, false
		}
		v := b[4 : 4+l]
		switch typ {
		case 43: // supported_versions
			if l >= 2 {
				sh.version = binary.BigEndian.Uint16(v)
			}
		case 51: // key_share
			if l >= 2 {
				sh.group, sh.haveGroup = binary.BigEndian.Uint16(v), true
			}
		}
		b = b[4+l:]
	}
	return sh, true
}

// String formats a record for error messages.
func (r Record) String() string {
	return fmt.Sprintf("%s->%s group=%s hrr=%v complete=%v", r.Client, r.Server, r.Group, r.HRR, r.Complete)
}
