package netstudy

import (
	"math/rand/v2"
	"testing"
)

// TestResampler: one value per item, a comparison's difference and
// direction drawn once and shared, bytes and attempts exact, failed
// handshakes drawn, the reference untouched, the same seed the same run.
func TestResampler(t *testing.T) {
	ref := &Results{Profile: "quick",
		Comparisons: []Comparison{{Scenario: "lan", Round: 20, DiffMs: 0.5, DiffLowerMs: 0.3, DiffUpperMs: 0.7, BasePayload: 1500, TargetPayload: 2600}},
		Series:      []Series{{Scenario: "lan", Round: 20, Group: "X25519", Attempts: 20, Failed: 4}},
	}
	items := CompareItems(ref, ref)
	r := Resampler(ref)
	v := r(rand.New(rand.NewPCG(1, 1)))
	if len(v) != len(items) {
		t.Fatalf("%d values for %d items", len(v), len(items))
	}
	for i, it := range items {
		switch it.Name {
		case "lan round 20 difference":
			if v[i].Est == 0.5 || v[i] != v[i+1] {
				t.Errorf("difference %+v, direction %+v: want one draw, shared", v[i], v[i+1])
			}
		case "lan round 20 X25519 payload bytes", "lan round 20 hybrid payload bytes", "series lan round 20 X25519 attempts":
			if v[i] != it.Ref {
				t.Errorf("%s moved: %+v", it.Name, v[i])
			}
		case "series lan round 20 X25519 failed handshakes":
			if v[i].Est == 4 {
				t.Errorf("failed handshakes not drawn: %+v", v[i])
			}
		}
	}
	if ref.Comparisons[0].DiffMs != 0.5 {
		t.Error("the reference was modified")
	}
	w := r(rand.New(rand.NewPCG(1, 1)))
	for i := range v {
		if v[i] != w[i] {
			t.Errorf("the same seed gave %+v and %+v", v[i], w[i])
		}
	}
}
