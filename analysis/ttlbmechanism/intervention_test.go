package ttlbmechanism

import (
	"math"
	"testing"
)

// TestInterventionByHand: dP and e on a tiny case computed by hand. In
// the first series X25519's P is 100, the hybrid's 90, the padded arm's
// 92 (dP_hybrid -10, dP_padded -8, e +2); in the second 100, 80, 84
// (-20, -16, e +4). Averaged: dP_hybrid -15, dP_padded -12, e +3; d, the
// first error minus the second, -2.
func TestInterventionByHand(t *testing.T) {
	mk := func(ps ...float64) []conn {
		var cs []conn
		for g, p := range ps {
			cs = append(cs, conn{arm: g, pMs: p})
		}
		return cs
	}
	h, p, e, d := intervention(mk(100, 90, 92), mk(100, 80, 84))
	for _, c := range []struct {
		name      string
		got, want float64
	}{{"dP_hybrid", h, -15}, {"dP_padded", p, -12}, {"e", e, 3}, {"d", d, -2}} {
		if math.Abs(c.got-c.want) > 1e-12 {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
	if h, _, e, _ := intervention(mk(100, 90), mk(100, 80, 84)); !math.IsNaN(e) || math.IsNaN(h) {
		t.Errorf("a series without the padded arm: e %v, dP_hybrid %v; want e undefined", e, h)
	}
}
