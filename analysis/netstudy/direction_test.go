package netstudy

import "testing"

func TestDirectionPhrase(t *testing.T) {
	up := func(s string, r int) Comparison {
		return Comparison{Scenario: s, Round: r, DiffMs: 0.3, HigherLatency: true, HigherBytes: true}
	}
	down := up("lan", 1000)
	down.HigherLatency, down.DiffMs = false, -0.019
	noBytes := up("far", 5000)
	noBytes.HigherBytes = false
	for _, tc := range []struct {
		name string
		cs   []Comparison
		want string
	}{
		{"none", nil, "not compared (the run holds no comparison)"},
		{"all", []Comparison{up("lan", 1000), up("wan", 1000)}, "slower and larger in every one of the 2 comparisons"},
		{"one slower exception", []Comparison{down, up("wan", 1000), up("far", 10000)},
			"slower in 2 of the 3 comparisons (not in lan, round 1{,}000: $-$0.019~ms) and larger in all 3 comparisons"},
		{"both", []Comparison{down, noBytes},
			"slower in 1 of the 2 comparisons (not in lan, round 1{,}000: $-$0.019~ms) and larger in 1 of the 2 comparisons (not in far, round 5{,}000)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := directionPhrase(tc.cs); got != tc.want {
				t.Errorf("got  %q\nwant %q", got, tc.want)
			}
		})
	}
}
