package capture

import (
	"bytes"
	"errors"
	"fmt"
	"net/netip"
	"strings"
	"testing"
)

var (
	cli4 = netip.MustParseAddrPort("10.0.0.1:40000")
	srv4 = netip.MustParseAddrPort("10.0.0.2:443")
	cli6 = netip.MustParseAddrPort("[fd00::1]:40000")
	srv6 = netip.MustParseAddrPort("[fd00::2]:443")
)

func val(p *int64) int64 {
	if p == nil {
		return -1
	}
	return *p
}

func checkTimes(t *testing.T, r Record, w synthWant) {
	t.Helper()
	got := [7]int64{val(r.SynNs), val(r.ClientHelloNs), val(r.ServerHelloNs), val(r.ServerFlightEndNs), val(r.ClientFinishedNs), val(r.FinNs), val(r.ClientHello2Ns)}
	want := [7]int64{w.syn, w.ch, w.sh, w.sfe, w.cf, w.fin, w.ch2}
	if w.cf == 0 {
		want[4] = -1
	}
	if w.ch2 == 0 {
		want[6] = -1
	}
	if got != want {
		t.Errorf("times syn,ch,sh,sfe,cf,fin,ch2 = %v, want %v", got, want)
	}
}

func TestLinkTypesAndIPVersions(t *testing.T) {
	for _, link := range []uint32{LinkEthernet, LinkRaw, LinkRawAlt12, LinkRawAlt14, LinkSLL, LinkSLL2, LinkNull, LinkLoop} {
		for _, v6 := range []bool{false, true} {
			t.Run(fmt.Sprintf("link%d/v6=%v", link, v6), func(t *testing.T) {
				c, s := cli4, srv4
				if v6 {
					c, s = cli6, srv6
				}
				sy := newSynth(link)
				w := sy.conn(c, s, synthOpts{group: 0x11ec})
				res, err := Read(bytes.NewReader(sy.buf.Bytes()), ReadOptions{})
				if err != nil {
					t.Fatal(err)
				}
				if len(res.Records) != 1 {
					t.Fatalf("%d records, want 1", len(res.Records))
				}
				r := res.Records[0]
				if r.Client != c.String() || r.Server != s.String() || r.Group != "X25519MLKEM768" || r.HRR || !r.Complete || r.Retransmissions != 0 {
					t.Errorf("record %v", r)
				}
				if r.PacketsC2S != 6 || r.PacketsS2C != 3 || r.TCPPayloadBytesC2S != 309+6+58 || *r.ThsNs != w.cf-w.ch {
					t.Errorf("counts c2s %d s2c %d payload %d ths %v", r.PacketsC2S, r.PacketsS2C, r.TCPPayloadBytesC2S, val(r.ThsNs))
				}
				checkTimes(t, r, w)
			})
		}
	}
}

func TestReassemblyCases(t *testing.T) {
	cases := []struct {
		name    string
		o       synthOpts
		retrans int
		hrr     bool
	}{
		{"retransmitted ClientHello", synthOpts{group: 0x0202, retransmitCH: true}, 1, false},
		{"reordered server flight", synthOpts{group: 0x0202, reorder: true}, 0, false},
		{"HelloRetryRequest", synthOpts{group: 0x11ed, hrr: true}, 0, true},
		// ClientHello2Ns (checkTimes): the first segment of the ClientHello
		// after a HelloRetryRequest, nil without one.
		{"HelloRetryRequest, CCS in a segment of its own", synthOpts{group: 0x11ed, hrr: true, ch2Split: true}, 0, true},
		{"HelloRetryRequest, retransmitted first ClientHello", synthOpts{group: 0x11ed, hrr: true, retransmitCH: true}, 1, true},
		{"second ClientHello without a HelloRetryRequest", synthOpts{group: 0x11ec, ch2NoHRR: true}, 0, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			sy := newSynth(LinkEthernet)
			w := sy.conn(cli4, srv4, c.o)
			res, err := Read(bytes.NewReader(sy.buf.Bytes()), ReadOptions{})
			if err != nil || len(res.Records) != 1 {
				t.Fatalf("err %v, %d records", err, len(res.Records))
			}
			r := res.Records[0]
			if r.Retransmissions != c.retrans || r.HRR != c.hrr || !r.Complete {
				t.Errorf("record %v retrans %d", r, r.Retransmissions)
			}
			checkTimes(t, r, w)
		})
	}
}

func TestFourTupleReuse(t *testing.T) {
	sy := newSynth(LinkEthernet)
	w1 := sy.conn(cli4, srv4, synthOpts{group: 29})
	w2 := sy.conn(cli4, srv4, synthOpts{group: 0x0202}) // same ports, same ISN, after FIN
	res, err := Read(bytes.NewReader(sy.buf.Bytes()), ReadOptions{})
	if err != nil || len(res.Records) != 2 {
		t.Fatalf("err %v, %d records, want 2", err, len(res.Records))
	}
	if res.Records[0].Group != "X25519" || res.Records[1].Group != "MLKEM1024" {
		t.Errorf("groups %s, %s", res.Records[0].Group, res.Records[1].Group)
	}
	checkTimes(t, res.Records[0], w1)
	checkTimes(t, res.Records[1], w2)
}

func TestNonTLSAndUnfinished(t *testing.T) {
	sy := newSynth(LinkEthernet)
	sy.conn(cli4, srv4, synthOpts{notTLS: true})
	w := sy.conn(netip.MustParseAddrPort("10.0.0.1:40001"), srv4, synthOpts{group: 29, noFinish: true})
	res, err := Read(bytes.NewReader(sy.buf.Bytes()), ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Records) != 1 {
		t.Fatalf("%d records, want only the TLS connection", len(res.Records))
	}
	r := res.Records[0]
	if r.Complete || r.ThsNs != nil || r.ClientFinishedNs != nil || r.Group != "X25519" {
		t.Errorf("unfinished handshake reported as %+v", r)
	}
	checkTimes(t, r, w)
}

// threeConns is a capture of three connections and the offsets at which
// each packet record starts.
func threeConns() []byte {
	sy := newSynth(LinkEthernet)
	for i := range 3 {
		sy.conn(netip.AddrPortFrom(cli4.Addr(), uint16(40000+i)), srv4, synthOpts{group: 29})
	}
	return sy.buf.Bytes()
}

func TestDamage(t *testing.T) {
	full := threeConns()
	all, err := Read(bytes.NewReader(full), ReadOptions{})
	if err != nil || len(all.Records) != 3 {
		t.Fatalf("clean file: %v, %d records", err, len(all.Records))
	}
	perConn := (len(full) - 24) / 3 // all three connections have the same size
	cases := []struct {
		name       string
		data       []byte
		complete   int // complete records expected
		wantOffset int64
	}{
		{"truncated in third conn", full[:24+2*perConn+perConn/2], 2, -1},
		{"truncated mid header", full[:24+perConn+7], 1, int64(24 + perConn)},
		{"garbage after first conn", append(append(append([]byte{}, full[:24+perConn]...), bytes.Repeat([]byte{0xff}, 64)...), full[24+perConn:]...), 1, int64(24 + perConn)},
		{"empty", nil, 0, 0},
		{"not a capture", []byte("hello, this is text and no capture at all"), 0, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res, err := Read(bytes.NewReader(c.data), ReadOptions{})
			var d *DamageError
			if !errors.As(err, &d) || res == nil || res.Damage != d {
				t.Fatalf("err = %v, want a DamageError in the result", err)
			}
			if c.wantOffset >= 0 && d.Offset != c.wantOffset {
				t.Errorf("damage at %d, want %d (%v)", d.Offset, c.wantOffset, d)
			}
			if d.Offset > int64(len(c.data)) || !strings.Contains(d.Error(), "byte offset") {
				t.Errorf("bad damage report %v", d)
			}
			n := 0
			for _, r := range res.Records {
				if r.Complete {
					n++
				}
			}
			if n != c.complete {
				t.Errorf("%d complete records kept, want %d", n, c.complete)
			}
		})
	}
}

func TestPcapngReaderRoundTrip(t *testing.T) {
	// pcapng with a DSB, big-endian pcap, microsecond pcap: all read alike.
	full := threeConns()
	want, _ := Read(bytes.NewReader(full), ReadOptions{})
	ng := toPcapng(t, full, []byte("CLIENT_RANDOM 00 11\n"))
	got, err := Read(bytes.NewReader(ng), ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(got.Records) != fmt.Sprint(want.Records) || string(got.Secrets) != "CLIENT_RANDOM 00 11\n" {
		t.Errorf("pcapng read differs:\n%v\n%v\nsecrets %q", got.Records, want.Records, got.Secrets)
	}
	for _, r := range got.Records {
		if val(r.ClientHelloNs) != val(want.Records[0].ClientHelloNs) && r.Client == want.Records[0].Client {
			t.Errorf("timestamps differ")
		}
	}
}
