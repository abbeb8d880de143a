package capture

import (
	"encoding/binary"
	"reflect"
	"slices"
	"testing"

	"golang.org/x/net/bpf"
)

// Hand-built packets for the filter tests. Addresses and checksums do not
// matter to the filter; lengths are right so that decode accepts them too.

func tcpHdr(sport, dport uint16) []byte {
	h := make([]byte, 20)
	binary.BigEndian.PutUint16(h[0:], sport)
	binary.BigEndian.PutUint16(h[2:], dport)
	h[12] = 5 << 4 // data offset 5 words
	h[13] = flagACK
	return h
}

func udpHdr(sport, dport uint16) []byte {
	h := make([]byte, 8)
	binary.BigEndian.PutUint16(h[0:], sport)
	binary.BigEndian.PutUint16(h[2:], dport)
	binary.BigEndian.PutUint16(h[4:], 8)
	return h
}

// ip4 builds an IPv4 header (RFC 791) with the given options (a multiple of
// 4 bytes) and flags/fragment-offset field in front of payload.
func ip4(proto byte, options []byte, fragField uint16, payload []byte) []byte {
	ihl := 20 + len(options)
	h := make([]byte, ihl, ihl+len(payload))
	h[0] = 0x40 | byte(ihl/4)
	binary.BigEndian.PutUint16(h[2:], uint16(ihl+len(payload)))
	binary.BigEndian.PutUint16(h[6:], fragField)
	h[8] = 64
	h[9] = proto
	copy(h[12:], []byte{127, 0, 0, 1, 127, 0, 0, 1})
	copy(h[20:], options)
	return append(h, payload...)
}

// ip6 builds an IPv6 fixed header (RFC 8200) in front of payload.
func ip6(next byte, payload []byte) []byte {
	h := make([]byte, 40, 40+len(payload))
	h[0] = 0x60
	binary.BigEndian.PutUint16(h[4:], uint16(len(payload)))
	h[6] = next
	h[7] = 64
	h[23], h[39] = 1, 1 // ::1 -> ::1
	return append(h, payload...)
}

func eth(ethType uint16, payload []byte) []byte {
	h := make([]byte, 14, 14+len(payload))
	binary.BigEndian.PutUint16(h[12:], ethType)
	return append(h, payload...)
}

// ip4Opts is 12 bytes of IPv4 options (NOPs, then an End of Options list)
// whose first four bytes read as ports 443 -> 443 to a filter that ignores
// IHL and looks for the TCP header right after 20 bytes.
var ip4Opts = []byte{0x01, 0xbb, 0x01, 0xbb, 1, 1, 1, 1, 1, 1, 1, 0}

type filterCase struct {
	name string
	ip   []byte // the IP packet (in filterCases) or the framed packet
	keep bool
}

// filterCases are run with ports {443, 8443}.
var filterCases = []filterCase{
	{"v4 tcp src 443", ip4(6, nil, 0, tcpHdr(443, 50000)), true},
	{"v4 tcp dst 8443", ip4(6, nil, 0x4000 /* DF */, tcpHdr(50000, 8443)), true},
	{"v4 tcp other ports", ip4(6, nil, 0, tcpHdr(80, 50000)), false},
	{"v4 tcp port 444", ip4(6, nil, 0, tcpHdr(444, 442)), false},
	{"v4 options tcp dst 443", ip4(6, ip4Opts, 0, tcpHdr(50000, 443)), true},
	{"v4 options hide 443 (IHL honoured)", ip4(6, ip4Opts, 0, tcpHdr(80, 81)), false},
	{"v4 udp 443", ip4(17, nil, 0, udpHdr(443, 443)), false},
	{"v4 first fragment (MF) tcp 443", ip4(6, nil, 0x2000, tcpHdr(443, 50000)), true},
	{"v4 later fragment looks like 443", ip4(6, nil, 0x2000|185, tcpHdr(443, 443)), false},
	{"v4 last fragment, high offset bit", ip4(6, nil, 0x1000, tcpHdr(443, 443)), false},
	{"v4 cut before ports", ip4(6, nil, 0, nil), false},
	{"v4 cut after source port 80", ip4(6, nil, 0, []byte{0x00, 0x50}), false},
	// A listed source port decides before the destination is loaded: the
	// reader reports such a stub as malformed, the filter keeps it.
	{"v4 cut after source port 443", ip4(6, nil, 0, []byte{0x01, 0xbb}), true},
	{"v6 tcp dst 443", ip6(6, tcpHdr(50000, 443)), true},
	{"v6 tcp src 8443", ip6(6, tcpHdr(8443, 50000)), true},
	{"v6 tcp other ports", ip6(6, tcpHdr(1234, 4321)), false},
	{"v6 udp 443", ip6(17, udpHdr(443, 443)), false},
	{"v6 hop-by-hop then tcp 443 (no extension walk)", ip6(0, append([]byte{6, 0, 1, 4, 0, 0, 0, 0}, tcpHdr(443, 443)...)), false},
	{"v6 cut in fixed header", ip6(6, nil)[:30], false},
	{"empty", nil, false},
}

func frame(linkType uint32, ip []byte) []byte {
	if linkType != LinkEthernet {
		return ip
	}
	t := uint16(0)
	if len(ip) > 0 {
		switch ip[0] >> 4 {
		case 4:
			t = ethTypeIPv4
		case 6:
			t = ethTypeIPv6
		}
	}
	return eth(t, ip)
}

func mustVM(t testing.TB, prog []bpf.Instruction) *bpf.VM {
	t.Helper()
	vm, err := bpf.NewVM(prog)
	if err != nil {
		t.Fatalf("the VM refuses the program: %v\n%v", err, prog)
	}
	return vm
}

func TestFilterProgramVM(t *testing.T) {
	const snap = 262144
	ports := []uint16{8443, 443, 443} // unsorted, duplicated: normalised
	for _, lt := range []uint32{LinkEthernet, LinkRaw} {
		prog, err := filterProgram(lt, false, ports, snap)
		if err != nil {
			t.Fatal(err)
		}
		vm := mustVM(t, prog)
		// Each case framed for the link type, plus link-specific ones.
		var cases []filterCase
		for _, c := range filterCases {
			cases = append(cases, filterCase{c.name, frame(lt, c.ip), c.keep})
		}
		if lt == LinkEthernet {
			cases = append(cases,
				filterCase{"arp", eth(0x0806, make([]byte, 28)), false},
				filterCase{"vlan tag", eth(0x8100, append([]byte{0, 1, 0x08, 0}, ip4(6, nil, 0, tcpHdr(443, 443))...)), false},
				filterCase{"ethertype 0x0800 over v6 bytes", eth(ethTypeIPv4, ip6(6, tcpHdr(80, 80))), false})
		} else {
			cases = append(cases,
				filterCase{"ip version 5", append([]byte{0x50}, ip4(6, nil, 0, tcpHdr(443, 443))[1:]...), false})
		}
		for _, c := range cases {
			pkt := c.ip
			got, err := vm.Run(pkt)
			if err != nil {
				t.Fatalf("link %d %s: %v", lt, c.name, err)
			}
			want := 0
			if c.keep {
				want = snap
			}
			if got != want {
				t.Errorf("link %d %s: filter returned %d, want %d", lt, c.name, got, want)
			}
		}
	}
}

// TestFilterProgramShape checks the parts the VM cannot run (the ancillary
// pkttype load) and the program's edges: options off, duplicates, the port
// limit, bad input.
func TestFilterProgramShape(t *testing.T) {
	const snap = 65536
	if p, err := filterProgram(LinkEthernet, false, nil, snap); p != nil || err != nil {
		t.Fatalf("no filter wanted: %v, %v", p, err)
	}
	prefix := []bpf.Instruction{
		bpf.LoadExtension{Num: bpf.ExtType},
		bpf.JumpIf{Cond: bpf.JumpEqual, Val: packetOutgoing, SkipFalse: 1},
		bpf.RetConstant{Val: 0},
	}
	onlyDrop, err := filterProgram(LinkEthernet, true, nil, snap)
	if err != nil {
		t.Fatal(err)
	}
	if want := append(slices.Clone(prefix), bpf.RetConstant{Val: snap}); !reflect.DeepEqual(onlyDrop, want) {
		t.Fatalf("outgoing-only program\n%v\nwant\n%v", onlyDrop, want)
	}
	for _, lt := range []uint32{LinkEthernet, LinkRaw} {
		both, err := filterProgram(lt, true, []uint16{443}, snap)
		if err != nil {
			t.Fatal(err)
		}
		portsOnly, _ := filterProgram(lt, false, []uint16{443}, snap)
		if !reflect.DeepEqual(both[:3], prefix) || !reflect.DeepEqual(both[3:], portsOnly) {
			t.Errorf("link %d: outgoing drop + ports is not the prefix followed by the port program:\n%v", lt, both)
		}
		dup, _ := filterProgram(lt, false, []uint16{443, 443}, snap)
		if !reflect.DeepEqual(dup, portsOnly) {
			t.Errorf("link %d: duplicate ports change the program", lt)
		}
	}

	// MaxPorts ports: the longest jumps still fit, and the last port of
	// the list (the farthest compare) still matches both ways.
	many := make([]uint16, MaxPorts)
	for i := range many {
		many[i] = uint16(20000 + i)
	}
	for _, lt := range []uint32{LinkEthernet, LinkRaw} {
		prog, err := filterProgram(lt, true, many, snap)
		if err != nil {
			t.Fatalf("link %d, %d ports: %v", lt, MaxPorts, err)
		}
		vm := mustVM(t, prog[3:])
		last := many[len(many)-1]
		for _, ip := range [][]byte{ip4(6, ip4Opts, 0, tcpHdr(1, last)), ip6(6, tcpHdr(last, 1)), ip4(6, nil, 0, tcpHdr(many[0], 1))} {
			if got, err := vm.Run(frame(lt, ip)); err != nil || got != snap {
				t.Errorf("link %d: port %d not kept with %d ports: %d, %v", lt, last, MaxPorts, got, err)
			}
		}
		if got, _ := vm.Run(frame(lt, ip6(6, tcpHdr(last+1, 1)))); got != 0 {
			t.Errorf("link %d: unlisted port kept", lt)
		}
	}

	bad := []struct {
		name  string
		lt    uint32
		ports []uint16
		snap  int
	}{
		{"too many ports", LinkEthernet, append(many, 1), snap},
		{"port 0", LinkEthernet, []uint16{0, 443}, snap},
		{"cooked link type", LinkSLL, []uint16{443}, snap},
		{"zero snap length", LinkRaw, []uint16{443}, 0},
	}
	for _, b := range bad {
		if p, err := filterProgram(b.lt, true, b.ports, b.snap); err == nil {
			t.Errorf("%s: accepted: %v", b.name, p)
		}
	}
}

// FuzzFilter checks the BPF program against the capture reader's own
// decoder: for any frame the decoder reads as a TCP segment with no VLAN
// tag and no IPv6 extension header, the filter keeps it exactly when a
// listed port is its source or destination; and the filter never keeps a
// frame the decoder finds to be non-IP or non-TCP.
func FuzzFilter(f *testing.F) {
	for _, c := range filterCases {
		f.Add(false, c.ip)
		f.Add(true, frame(LinkEthernet, c.ip))
	}
	ports := []uint16{443, 8443}
	progs := map[bool]*bpf.VM{}
	for _, ether := range []bool{false, true} {
		lt := uint32(LinkRaw)
		if ether {
			lt = LinkEthernet
		}
		prog, err := filterProgram(lt, false, ports, 1000)
		if err != nil {
			f.Fatal(err)
		}
		progs[ether] = mustVM(f, prog)
	}
	f.Fuzz(func(t *testing.T, ether bool, b []byte) {
		lt, ipOff := uint32(LinkRaw), 0
		if ether {
			lt, ipOff = LinkEthernet, ethHdrLen
		}
		got, err := progs[ether].Run(b)
		if err != nil {
			t.Fatal(err)
		}
		if got != 0 && got != 1000 {
			t.Fatalf("filter returned %d, want 0 or the snap length", got)
		}
		var seg segment
		res := decode(lt, b, &seg)
		if got != 0 && (res == decNotIP || res == decNotTCP) {
			t.Fatalf("filter kept a frame the decoder calls %d", res)
		}
		if res != decOK {
			return
		}
		if ether && binary.BigEndian.Uint16(b[ethTypeOff:]) != ethTypeIPv4 && binary.BigEndian.Uint16(b[ethTypeOff:]) != ethTypeIPv6 {
			return // VLAN-tagged: the filter does not walk tags (the kernel strips them)
		}
		if b[ipOff]>>4 == 6 && b[ipOff+ip6NextHdrOff] != ipProtoTCP {
			return // IPv6 extension headers: not walked, documented
		}
		want := 0
		if slices.Contains(ports, seg.src.Port()) || slices.Contains(ports, seg.dst.Port()) {
			want = 1000
		}
		if got != want {
			t.Fatalf("filter returned %d for ports %d -> %d, want %d", got, seg.src.Port(), seg.dst.Port(), want)
		}
	})
}
