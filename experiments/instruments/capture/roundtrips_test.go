package capture

import (
	"bytes"
	"net/netip"
	"testing"
)

// roundTripCapture writes one TLS 1.3 connection on a 2 ms SYN round
// trip: optionally through a HelloRetryRequest, with the server's flight
// optionally split by a wait for the client's ACK (as the congestion
// window splits a flight beyond TCP's initial window, RFC 6928) or paused
// by the server itself, and session tickets after the client's Finished,
// or no Finished at all.
func roundTripCapture(hrr, split, cpuGap, noFinish bool) []byte {
	const rttNs = 2_000_000
	sy := newSynth(LinkEthernet)
	c, sv := netip.MustParseAddrPort("10.77.0.1:40000"), netip.MustParseAddrPort("10.77.0.2:4433")
	cs, ss := uint32(1000), uint32(5000)
	A := uint8(flagACK)
	sy.frame(c, sv, cs, 0, flagSYN, nil)
	cs++
	sy.ts += rttNs
	sy.frame(sv, c, ss, cs, flagSYN|flagACK, nil)
	ss++
	sy.frame(c, sv, cs, ss, A, nil)
	ch := clientHello(300)
	sy.frame(c, sv, cs, ss, A, ch)
	cs += uint32(len(ch))
	if hrr {
		sy.ts += rttNs
		h := synthServerHello(0x0202, true, 0)
		sy.frame(sv, c, ss, cs, A, h)
		ss += uint32(len(h))
		ch2 := append(tlsRecord(20, []byte{1}), clientHello(900)...)
		sy.frame(c, sv, cs, ss, A, ch2)
		cs += uint32(len(ch2))
	}
	flight := append(synthServerHello(0x0202, false, 1568), tlsRecord(20, []byte{1})...)
	flight = append(flight, tlsRecord(23, make([]byte, 3000))...)
	sy.ts += rttNs
	// The flight in segments of 1,400 bytes (12 of them, 16.8 KB); a split
	// after the initial window's 10 is a wait for the client's ACK, a
	// pause after 2 (cpuGap) the server's own time.
	const mss = 1400
	if len(flight) < 12*mss {
		flight = append(flight, tlsRecord(23, make([]byte, 12*mss-len(flight)-5))...)
	}
	for off, seg := 0, 0; off < len(flight); off, seg = off+mss, seg+1 {
		if split && seg == InitialWindow {
			sy.frame(c, sv, cs, ss+uint32(off), A, nil) // the client's ACK
			sy.ts += rttNs                              // the server waits for it
		}
		if cpuGap && seg == 2 {
			sy.ts += 3 * rttNs // signing its CertificateVerify
		}
		sy.frame(sv, c, ss+uint32(off), cs, A, flight[off:min(off+mss, len(flight))])
	}
	ss += uint32(len(flight))
	if !noFinish {
		fin := append(tlsRecord(20, []byte{1}), tlsRecord(23, make([]byte, 53))...)
		sy.frame(c, sv, cs, ss, A, fin)
		cs += uint32(len(fin))
		for range 2 { // two session tickets, a flight each, after the Finished
			sy.ts += rttNs
			tk := tlsRecord(23, make([]byte, 200))
			sy.frame(sv, c, ss, cs, A, tk)
			ss += uint32(len(tk))
		}
	}
	sy.frame(c, sv, cs, ss, flagFIN|A, nil)
	sy.frame(sv, c, ss, cs+1, flagFIN|A, nil)
	return sy.buf.Bytes()
}

func TestRoundTrips(t *testing.T) {
	for _, tc := range []struct {
		name                         string
		hrr, split, cpuGap, noFinish bool
		want                         int
		ok                           bool
	}{
		{"direct", false, false, false, false, 1, true},
		{"hrr", true, false, false, false, 2, true},
		{"split flight", false, true, false, false, 2, true},
		{"hrr and split flight", true, true, false, false, 3, true},
		{"server's own pause", false, false, true, false, 1, true},
		{"pause and split flight", false, true, true, false, 2, true},
		{"no Finished", false, false, false, true, 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := Read(bytes.NewReader(roundTripCapture(tc.hrr, tc.split, tc.cpuGap, tc.noFinish)), ReadOptions{})
			if err != nil || len(res.Records) != 1 {
				t.Fatalf("read: %v, %d records", err, len(res.Records))
			}
			r := &res.Records[0]
			if r.HRR != tc.hrr {
				t.Fatalf("HRR %v, want %v", r.HRR, tc.hrr)
			}
			n, ok := r.RoundTrips()
			if n != tc.want || ok != tc.ok {
				t.Errorf("RoundTrips() = %d, %v; want %d, %v", n, ok, tc.want, tc.ok)
			}
		})
	}
}
