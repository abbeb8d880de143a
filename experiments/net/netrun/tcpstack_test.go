package netrun

import (
	"maps"
	"slices"
	"testing"

	"pqrepro/internal/tcpstack"
)

// TestMergeTCPStack: one entry per side while every series has the same
// stack; a series whose stack differs adds its own, under its ID.
func TestMergeTCPStack(t *testing.T) {
	bbr := tcpstack.Stack{CongestionControl: "bbr", ECN: 2}
	cubic := tcpstack.Stack{CongestionControl: "cubic", ECN: 2}
	var all map[string]tcpstack.Stack
	all = mergeTCPStack(all, "lan-1-X25519", map[string]tcpstack.Stack{"a": bbr, "b": bbr})
	all = mergeTCPStack(all, "lan-1-X25519MLKEM768", map[string]tcpstack.Stack{"a": bbr, "b": bbr})
	if got := slices.Sorted(maps.Keys(all)); !slices.Equal(got, []string{"a", "b"}) {
		t.Fatalf("same stacks: keys %v, want a, b", got)
	}
	all = mergeTCPStack(all, "wan-1-X25519", map[string]tcpstack.Stack{"a": cubic, "b": bbr})
	if got := slices.Sorted(maps.Keys(all)); !slices.Equal(got, []string{"a", "b", "wan-1-X25519/a"}) || all["wan-1-X25519/a"].CongestionControl != "cubic" || all["a"].CongestionControl != "bbr" {
		t.Fatalf("a differing series: %v", all)
	}
	if got := mergeTCPStack(nil, "x", nil); got == nil || len(got) != 0 {
		t.Fatalf("no stacks: %v, want an empty map (meta.json writes {})", got)
	}
}
