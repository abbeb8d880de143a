package capture

import (
	"net/netip"
	"os"
	"strconv"
	"testing"
)

// synFlood writes a capture of n flows that never carry a ClientHello:
// one SYN each, from distinct client ports and addresses (the reader's
// worst case for connection state).
func synFlood(n int) []byte {
	sy := newSynth(LinkEthernet)
	for i := range n {
		c := netip.AddrPortFrom(netip.AddrFrom4([4]byte{10, byte(i >> 16), byte(i >> 8), byte(i)}), uint16(1024+i%60000))
		sy.frame(c, srv4, uint32(i), 0, flagSYN, nil)
	}
	return sy.buf.Bytes()
}

// TestWriteSYNFlood writes synFlood(PQREPRO_SYNFLOOD_N) to the file
// PQREPRO_SYNFLOOD_OUT, for measuring the reader's memory with
// /usr/bin/time -v (docs/security.md says how); skipped otherwise.
func TestWriteSYNFlood(t *testing.T) {
	out := os.Getenv("PQREPRO_SYNFLOOD_OUT")
	if out == "" {
		t.Skip("set PQREPRO_SYNFLOOD_OUT (and PQREPRO_SYNFLOOD_N, default 1000000) to write the capture")
	}
	n := 1_000_000
	if s := os.Getenv("PQREPRO_SYNFLOOD_N"); s != "" {
		var err error
		if n, err = strconv.Atoi(s); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(out, synFlood(n), 0o600); err != nil {
		t.Fatal(err)
	}
}
