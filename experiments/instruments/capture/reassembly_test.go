package capture

import (
	"bytes"
	"cmp"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// decisions turns fuzz bytes into choices; exhausted, it answers 0.
type decisions []byte

func (d *decisions) next(n int) int {
	if len(*d) == 0 || n <= 1 {
		return 0
	}
	v := int((*d)[0])
	*d = (*d)[1:]
	return v % n
}

// reassemblyCase builds a segmentation of both handshake streams (segment
// sizes, exact duplicates, arrival order) from d.
func reassemblyCase(d *decisions) (segStream, []synthSeg, int) {
	st, cfOff := handshakeStreams(0x11ec)
	ss := segStream{c: cli4, s: srv4, streams: st}
	var segs []synthSeg
	for dir := range 2 {
		for off := 0; off < len(st[dir]); {
			n := min(1+d.next(600), len(st[dir])-off)
			segs = append(segs, synthSeg{dir, off, n})
			for range d.next(4) / 3 { // a quarter of the segments are sent twice
				segs = append(segs, synthSeg{dir, off, n})
			}
			off += n
		}
	}
	for i := len(segs) - 1; i > 0; i-- { // Fisher-Yates with the fuzz bytes
		j := d.next(i + 1)
		segs[i], segs[j] = segs[j], segs[i]
	}
	return ss, segs, cfOff
}

// reference computes the record times and retransmissions of a connection
// whose segments do not overlap except as exact duplicates, from first
// principles: a byte is delivered when every byte before it has arrived,
// with the time of the first copy of its own segment; the ServerHello is
// parsed when its last byte is delivered; the client Finished is the client
// record whose header is complete after that.
type refRecord struct {
	ch, sh, sfe, cf int64 // -1: none
	retrans         int
}

func reference(ss segStream, segs []synthSeg, ts []int64, cfOff, shLen int) refRecord {
	first := map[synthSeg]int{}
	retrans := 0
	for i, g := range segs {
		if _, ok := first[g]; ok {
			retrans++
			continue
		}
		first[g] = i
	}
	// arrive[dir][b]: index of the first packet holding byte b.
	var arrive [2][]int
	for dir := range 2 {
		arrive[dir] = make([]int, len(ss.streams[dir]))
	}
	for g, i := range first {
		for b := g.off; b < g.off+g.n; b++ {
			arrive[g.dir][b] = i
		}
	}
	delivered := func(dir, b int) int { return slices.Max(arrive[dir][:b+1]) }
	at := func(dir, b int) int64 { return ts[arrive[dir][b]] }
	r := refRecord{ch: at(0, 0), sh: at(1, 0), sfe: -1, cf: -1, retrans: retrans}
	pSH := delivered(1, shLen-1)
	pCF := delivered(0, cfOff+4)
	if pCF > pSH {
		r.cf = at(0, cfOff)
	} else {
		pCF = len(segs)
	}
	for i, g := range segs {
		if g.dir == 1 && i >= pSH && i < pCF {
			r.sfe = ts[i]
		}
	}
	return r
}

// readSegments writes one connection's segments (segments) and reads it
// back: the segments' capture times and the one record.
func readSegments(t *testing.T, ss segStream, segs []synthSeg) ([]int64, Record) {
	t.Helper()
	sy := newSynth(LinkEthernet)
	ts := sy.segments(ss, segs)
	_, r := readOne(t, sy.buf.Bytes(), ReadOptions{})
	return ts, r
}

func checkReassembly(t *testing.T, data []byte) {
	d := decisions(data)
	ss, segs, cfOff := reassemblyCase(&d)
	ts, r := readSegments(t, ss, segs)
	want := reference(ss, segs, ts, cfOff, len(synthServerHello(0x11ec, false, 1120)))
	got := refRecord{val(r.ClientHelloNs), val(r.ServerHelloNs), val(r.ServerFlightEndNs), val(r.ClientFinishedNs), r.Retransmissions}
	if got != want {
		t.Fatalf("record %+v (reason %q), reference %+v; segments %v", got, r.Reason, want, segs)
	}
	if r.Group != "X25519MLKEM768" || r.Complete != (want.cf >= 0) {
		t.Fatalf("group %q complete %v reason %q", r.Group, r.Complete, r.Reason)
	}
	if r.TCPPayloadBytesC2S != int64(len(ss.streams[0])+countDup(segs, 0)) {
		t.Fatalf("payload bytes c2s %d", r.TCPPayloadBytesC2S)
	}
}

func countDup(segs []synthSeg, dir int) int {
	seen := map[synthSeg]bool{}
	n := 0
	for _, g := range segs {
		if g.dir == dir && seen[g] {
			n += g.n
		}
		seen[g] = true
	}
	return n
}

// TestReassemblyOrders checks the reader against the reference on
// in-order, reversed and seeded random segment orders.
func TestReassemblyOrders(t *testing.T) {
	for _, name := range []string{"in order", "one-byte in order"} {
		var data []byte
		if name == "one-byte in order" {
			data = make([]byte, 8000) // every size choice 0: one-byte segments, no duplicates, identity order
		}
		t.Run(name, func(t *testing.T) { checkReassembly(t, data) })
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range 200 {
		data := make([]byte, 64+rng.IntN(4000))
		for j := range data {
			data[j] = byte(rng.Uint32())
		}
		t.Run(fmt.Sprint("random", i), func(t *testing.T) { checkReassembly(t, data) })
	}
}

// FuzzReassembly: any segmentation, duplication and order of one
// connection's segments gives the reference's record.
func FuzzReassembly(f *testing.F) {
	f.Add([]byte{})
	f.Add(bytes.Repeat([]byte{255, 3, 1}, 200))
	f.Add(bytes.Repeat([]byte{7}, 3000))
	f.Fuzz(checkReassembly)
}

// FuzzReassemblyOverlap adds retransmissions that repacketize arbitrary
// byte ranges (overlapping the original segments): the record must still
// be complete with the right group and counts, and its ClientHello time
// must be that of a packet holding the ClientHello's first byte.
func FuzzReassemblyOverlap(f *testing.F) {
	f.Add([]byte{1, 2, 3, 4, 5, 6, 7, 8, 9})
	f.Add(bytes.Repeat([]byte{200, 17, 3}, 300))
	f.Fuzz(func(t *testing.T, data []byte) {
		d := decisions(data)
		ss, segs, _ := reassemblyCase(&d)
		for range d.next(8) {
			dir := d.next(2)
			a := d.next(len(ss.streams[dir]))
			n := 1 + d.next(len(ss.streams[dir])-a)
			segs = slices.Insert(segs, d.next(len(segs)+1), synthSeg{dir, a, n})
		}
		ts, r := readSegments(t, ss, segs)
		if r.ClientHelloNs == nil || r.ServerHelloNs == nil || r.Group != "X25519MLKEM768" {
			t.Fatalf("record %v reason %q", r, r.Reason)
		}
		ok := false
		for i, g := range segs {
			if g.dir == 0 && g.off == 0 && ts[i] == *r.ClientHelloNs {
				ok = true
			}
		}
		if !ok {
			t.Fatalf("ClientHello time %d is no packet holding its first byte", *r.ClientHelloNs)
		}
		var bytesC2S int64
		for _, g := range segs {
			if g.dir == 0 {
				bytesC2S += int64(g.n)
			}
		}
		if r.TCPPayloadBytesC2S != bytesC2S || r.PacketsC2S != 3+countSegs(segs, 0) {
			t.Fatalf("c2s payload %d packets %d", r.TCPPayloadBytesC2S, r.PacketsC2S)
		}
	})
}

func countSegs(segs []synthSeg, dir int) int {
	n := 0
	for _, g := range segs {
		if g.dir == dir {
			n++
		}
	}
	return n
}

// TestPendQueue checks the radix heap against a sorted-slice model on
// random pushes (also below the last key taken, which re-files) and takes.
func TestPendQueue(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for round := range 200 {
		var q pendQueue
		var model []pend
		id := uint32(0)
		base := int64(rng.IntN(1<<20)) - 1<<19
		for range 500 {
			if rng.IntN(3) > 0 {
				id++
				k := base + int64(rng.IntN(1<<(1+rng.IntN(20))))
				if rng.IntN(50) == 0 {
					k = base - int64(rng.IntN(100)) // the stream moved back
				}
				p := pend{abs: k, id: id}
				q.push(p)
				model = append(model, p)
				continue
			}
			limit := base + int64(rng.IntN(1<<20))
			slices.SortFunc(model, func(a, b pend) int {
				if a.abs != b.abs {
					return cmp.Compare(a.abs, b.abs)
				}
				return cmp.Compare(a.id, b.id)
			})
			got, ok := q.popAtMost(limit)
			wantOK := len(model) > 0 && model[0].abs <= limit
			if ok != wantOK || (ok && got != model[0]) {
				t.Fatalf("round %d: popAtMost(%d) = %+v %v, want %v %v", round, limit, got, ok, model, wantOK)
			}
			if ok {
				model = model[1:]
				base = got.abs
			}
			if q.len() != len(model) {
				t.Fatalf("round %d: len %d, want %d", round, q.len(), len(model))
			}
		}
	}
}
