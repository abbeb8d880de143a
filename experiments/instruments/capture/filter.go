package capture

import (
	"fmt"
	"slices"

	"golang.org/x/net/bpf"
)

// MaxPorts is the largest number of distinct ports Options.Ports may list.
// Each port costs two compare instructions, and a classic BPF conditional
// jump reaches at most 255 instructions ahead: the jump from the EtherType
// dispatch over the IPv4 block (2n+11 instructions for n ports) must fit.
const MaxPorts = 100

// packetOutgoing is PACKET_OUTGOING of linux/if_packet.h (skb->pkt_type of a
// frame this host sends). It is spelled out so that the filter builds on every
// platform and its unit test runs anywhere.
const packetOutgoing = 4

// Offsets and values of the headers the filter reads (network byte order,
// which is what classic BPF's ldh/ldb loads return).
const (
	ethHdrLen      = 14     // IEEE 802.3: dst MAC, src MAC, EtherType
	ethTypeOff     = 12     // EtherType in the Ethernet header
	ethTypeIPv4    = 0x0800 // RFC 894
	ethTypeIPv6    = 0x86dd // RFC 2464
	ipProtoTCP     = 6      // IANA protocol number of TCP
	ip4ProtoOff    = 9      // RFC 791: protocol
	ip4FragOff     = 6      // RFC 791: flags (3 bits) + fragment offset (13 bits)
	ip4FragMask    = 0x1fff // the fragment offset bits
	ip6NextHdrOff  = 6      // RFC 8200: next header
	ip6HdrLen      = 40     // RFC 8200: fixed header length
	tcpDstPortOff  = 2      // RFC 9293: destination port follows the source port
	ipVersionShift = 4      // the version is the high nibble of the first IP byte
)

// filterProgram returns the classic BPF program (Linux
// Documentation/networking/filter.rst) the capture attaches to its socket,
// or nil when it keeps every packet. It keeps every packet when
// dropOutgoing is false and no ports are given. The program returns 0
// (drop) or snapLen (keep, up to snapLen bytes).
//
// dropOutgoing drops frames whose skb->pkt_type is PACKET_OUTGOING: on a
// loopback device the kernel hands every frame to packet sockets twice, once
// as it leaves and once as it arrives, so keeping only the incoming copy
// removes the duplicates.
//
// ports, when not empty, keeps only TCP segments whose source or
// destination port is listed, over IPv4 or IPv6, the same choice as
// tcpdump's "tcp port P1 or tcp port P2 ...":
//
//   - linkType Ethernet (lo, veth): the IP header starts after the 14-byte
//     Ethernet header and the EtherType (0x0800, 0x86dd) says which IP. The
//     kernel removes VLAN tags before packet sockets see a frame (they are
//     in skb metadata), so no 802.1Q walk is needed.
//   - linkType raw IP (TUN): the IP header starts at byte 0 and its version
//     nibble says which IP.
//   - IPv4: protocol must be TCP; a fragment other than the first (nonzero
//     fragment offset) carries no TCP header and is dropped; the TCP header
//     starts after IHL*4 bytes, so IPv4 options are handled.
//   - IPv6: the fixed header's next header must be TCP. Extension headers
//     are not walked (a segment behind a hop-by-hop, routing, fragment or
//     destination-options header is dropped): the TLS connections this
//     package captures never carry any, and a classic BPF program cannot
//     loop over a chain of unknown length.
//   - A packet too short for a load is dropped: classic BPF ends the program
//     with return value 0 on an out-of-bounds load.
func filterProgram(linkType uint32, dropOutgoing bool, ports []uint16, snapLen int) ([]bpf.Instruction, error) {
	if snapLen <= 0 {
		return nil, fmt.Errorf("filter: snap length %d must be positive", snapLen)
	}
	ports = slices.Clone(ports)
	slices.Sort(ports)
	ports = slices.Compact(ports)
	if len(ports) > MaxPorts {
		return nil, fmt.Errorf("filter: %d ports, at most %d fit in one classic BPF program; capture without Ports and filter when reading instead", len(ports), MaxPorts)
	}
	if len(ports) > 0 && ports[0] == 0 {
		return nil, fmt.Errorf("filter: port 0 is not a TCP port a connection can use; list the servers' listening ports")
	}
	var a assembler
	keep := bpf.RetConstant{Val: uint32(snapLen)}
	drop := bpf.RetConstant{Val: 0}
	if dropOutgoing {
		// A = skb->pkt_type (ancillary load SKF_AD_OFF+SKF_AD_PKTTYPE).
		a.add("", bpf.LoadExtension{Num: bpf.ExtType}, "", "")
		// The outgoing copy of a loopback frame: fall through to drop;
		// any other packet type: skip the drop.
		a.add("", bpf.JumpIf{Cond: bpf.JumpEqual, Val: packetOutgoing}, "", "notOutgoing")
		a.add("", drop, "", "")
		a.label("notOutgoing")
	}
	if len(ports) == 0 {
		if !dropOutgoing {
			return nil, nil
		}
		a.add("", keep, "", "")
		return a.program()
	}

	var ipOff uint32 // where the IP header starts
	switch linkType {
	case LinkEthernet:
		ipOff = ethHdrLen
		// A = EtherType.
		a.add("", bpf.LoadAbsolute{Off: ethTypeOff, Size: 2}, "", "")
		// IPv6: to its block.
		a.add("", bpf.JumpIf{Cond: bpf.JumpEqual, Val: ethTypeIPv6}, "ip6", "")
		// IPv4: to its block (right after the drop); else fall into the drop.
		a.add("", bpf.JumpIf{Cond: bpf.JumpEqual, Val: ethTypeIPv4}, "ip4", "")
		// Neither (ARP, ...): drop.
		a.add("", drop, "", "")
	case LinkRaw:
		ipOff = 0
		// A = the first byte of the IP header.
		a.add("", bpf.LoadAbsolute{Off: 0, Size: 1}, "", "")
		// A >>= 4: the IP version.
		a.add("", bpf.ALUOpConstant{Op: bpf.ALUOpShiftRight, Val: ipVersionShift}, "", "")
		// Version 6: to the IPv6 block.
		a.add("", bpf.JumpIf{Cond: bpf.JumpEqual, Val: 6}, "ip6", "")
		// Version 4: to the IPv4 block; else fall into the drop.
		a.add("", bpf.JumpIf{Cond: bpf.JumpEqual, Val: 4}, "ip4", "")
		// Not IP: drop.
		a.add("", drop, "", "")
	default:
		return nil, fmt.Errorf("filter: link type %d is not supported (Ethernet %d, raw IP %d are)", linkType, LinkEthernet, LinkRaw)
	}

	// IPv4 (RFC 791).
	// A = protocol.
	a.add("ip4", bpf.LoadAbsolute{Off: ipOff + ip4ProtoOff, Size: 1}, "", "")
	// Not TCP: drop.
	a.add("", bpf.JumpIf{Cond: bpf.JumpEqual, Val: ipProtoTCP}, "", "drop4")
	// A = flags and fragment offset.
	a.add("", bpf.LoadAbsolute{Off: ipOff + ip4FragOff, Size: 2}, "", "")
	// A later fragment (offset != 0) has no TCP header: drop.
	a.add("", bpf.JumpIf{Cond: bpf.JumpBitsSet, Val: ip4FragMask}, "drop4", "")
	// X = 4*(IHL) = the IPv4 header length including options.
	a.add("", bpf.LoadMemShift{Off: ipOff}, "", "")
	a.ports(ipOff, "keep4", "drop4", ports)
	a.add("drop4", drop, "", "")
	a.add("keep4", keep, "", "")

	// IPv6 (RFC 8200), fixed header only.
	// A = next header.
	a.add("ip6", bpf.LoadAbsolute{Off: ipOff + ip6NextHdrOff, Size: 1}, "", "")
	// Not TCP right after the fixed header: drop.
	a.add("", bpf.JumpIf{Cond: bpf.JumpEqual, Val: ipProtoTCP}, "", "drop6")
	// X = 40, the fixed header's length.
	a.add("", bpf.LoadConstant{Dst: bpf.RegX, Val: ip6HdrLen}, "", "")
	a.ports(ipOff, "keep6", "drop6", ports)
	a.add("drop6", drop, "", "")
	a.add("keep6", keep, "", "")
	return a.program()
}

// ports emits the port test on a TCP header at X+ipOff. It compares the
// source port with each port (a match jumps to keep), then the destination
// port likewise, the last mismatch jumping to drop.
func (a *assembler) ports(ipOff uint32, keep, drop string, ports []uint16) {
	for i, dir := range []uint32{0, tcpDstPortOff} {
		// A = the TCP source (i=0) or destination (i=1) port, at X+ipOff(+2).
		a.add("", bpf.LoadIndirect{Off: ipOff + dir, Size: 2}, "", "")
		for j, p := range ports {
			miss := ""
			if i == 1 && j == len(ports)-1 {
				miss = drop
			}
			// Port p: keep; else the next compare.
			a.add("", bpf.JumpIf{Cond: bpf.JumpEqual, Val: uint32(p)}, keep, miss)
		}
	}
}

// assembler lays out a classic BPF program with named jump targets. The
// program then reads top to bottom and the skip counts (relative to
// the next instruction, at most 255) are computed, not hand-counted.
type assembler struct {
	ins    []bpf.Instruction
	jt, jf []string // jump targets of each instruction; "" is the next one
	labels map[string]int
}

// add appends ins, labelled name (if not ""); jt and jf name the targets of
// a conditional jump.
func (a *assembler) add(name string, ins bpf.Instruction, jt, jf string) {
	if name != "" {
		a.label(name)
	}
	a.ins = append(a.ins, ins)
	a.jt = append(a.jt, jt)
	a.jf = append(a.jf, jf)
}

// label names the next instruction.
func (a *assembler) label(name string) {
	if a.labels == nil {
		a.labels = make(map[string]int)
	}
	a.labels[name] = len(a.ins)
}

func (a *assembler) skip(from int, to string) (uint8, error) {
	if to == "" {
		return 0, nil
	}
	t, ok := a.labels[to]
	if !ok {
		return 0, fmt.Errorf("filter: jump to undefined label %q", to)
	}
	d := t - from - 1
	if d < 0 || d > 255 {
		return 0, fmt.Errorf("filter: jump from %d to %s (%d) does not fit a classic BPF skip (0..255)", from, to, t)
	}
	return uint8(d), nil
}

func (a *assembler) program() ([]bpf.Instruction, error) {
	out := slices.Clone(a.ins)
	for i, ins := range out {
		j, ok := ins.(bpf.JumpIf)
		if !ok {
			continue
		}
		var err error
		if j.SkipTrue, err = a.skip(i, a.jt[i]); err != nil {
			return nil, err
		}
		if j.SkipFalse, err = a.skip(i, a.jf[i]); err != nil {
			return nil, err
		}
		out[i] = j
	}
	// Assemble once to catch an instruction the kernel would refuse.
	if _, err := bpf.Assemble(out); err != nil {
		return nil, fmt.Errorf("filter: %w", err)
	}
	return out, nil
}
