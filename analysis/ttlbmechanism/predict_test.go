package ttlbmechanism

import (
	"math"
	"slices"
	"strings"
	"testing"

	"pqrepro/internal/jsonnum"
)

// TestNearest: an exact w is itself; a missing one takes the nearest
// present, ties to the smaller; beyond the ends, the end.
func TestNearest(t *testing.T) {
	ws := []int{8, 10, 14}
	for _, tc := range []struct{ w, want int }{
		{10, 10}, {9, 8}, {11, 10}, {12, 10}, {13, 14}, {2, 8}, {30, 14},
	} {
		if got := nearest(ws, tc.w); got != tc.want {
			t.Errorf("nearest(%v, %d) = %d, want %d", ws, tc.w, got, tc.want)
		}
	}
}

// TestPredictByHand: dP_pred on a tiny case computed by hand. X25519 starts
// with W 10 twice, the hybrid with 10 and 12, so p_hyb - p_x is -1/2 at
// w = 10 and +1/2 at 12. With the other series' Pbar(10) = 100 and
// Pbar(12) = 80 ms, dP_pred = -50 + 40 = -10 ms. Without a 12 there
// (10 and 14 instead, Pbar 100 and 60), 12 is equally near both and takes
// the smaller, 10: dP_pred = -50 + 50 = 0, and 12 is listed.
func TestPredictByHand(t *testing.T) {
	cs := []conn{{group: 0, w: 10}, {group: 0, w: 10}, {group: 1, w: 10}, {group: 1, w: 12}}
	for _, tc := range []struct {
		name    string
		other   []conn
		want    float64
		nearest []int
	}{
		{"every w present", []conn{{group: 0, w: 10, pMs: 90}, {group: 1, w: 10, pMs: 110}, {group: 1, w: 12, pMs: 80}}, -10, nil},
		{"12 missing: nearest, ties to the smaller", []conn{{group: 0, w: 10, pMs: 100}, {group: 1, w: 14, pMs: 60}}, 0, []int{12}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, near := predict(cs, tc.other)
			if math.Abs(got-tc.want) > 1e-12 || !slices.Equal(near, tc.nearest) {
				t.Errorf("predict = %v (nearest %v), want %v (%v)", got, near, tc.want, tc.nearest)
			}
		})
	}
	if got, _ := predict(cs[:2], cs); !math.IsNaN(got) {
		t.Errorf("a series without hybrid connections predicted %v, want NaN", got)
	}
}

// TestTables: a run without the block gets the "not measured" table and
// verdict macros that say so; a measured one a row per cell and a verdict
// macro per congestion control.
func TestTables(t *testing.T) {
	none, err := Analyze(nil, Registered)
	if err != nil {
		t.Fatal(err)
	}
	tex, err := tables(none)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`\newcommand{\NetTtlbMechStatus}{not measured: the run has no controlled transfer block}`,
		`\newcommand{\NetTtlbMechOrderVerdict}{not measured`, `\label{tab:net-ttlbmechanism}`, "status \\\\\n"} {
		if !strings.Contains(tex, want) {
			t.Errorf("the not-measured table lacks %q:\n%s", want, tex)
		}
	}
	nan := jsonnum.Num(math.NaN())
	r := newResults(Registered)
	r.Measured, r.Order.Verdict = true, OrderHolds
	r.CCs = []CC{{CC: "bbr", Cells: 1, Z: 2.24, TauMs: 0.1, Pass: true, Verdict: WindowPasses}}
	r.Cells = []Cell{
		{Scenario: "wan", SizeBytes: 51200, CC: "bbr", Predictable: true, Pass: true, ObservedMs: -10, PredictedMs: -9.5, ErrorMs: 0.5, BoundMs: 0.7, Share: 0.95, DW: 1.5, DA: 1},
		{Scenario: "far", SizeBytes: 51200, CC: "bbr", Reason: "one toolchain", ObservedMs: nan, PredictedMs: nan, ErrorMs: nan, BoundMs: nan, Share: nan, DW: 1, DA: 1},
	}
	tex, err = tables(r)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`\newcommand{\NetTtlbMechWindowVerdictBbr}{passes}`, `\newcommand{\NetTtlbMechWindowMissesBbr}{0}`,
		"bbr & wan & 51200 & -10.000 & -9.500 & 0.500 & 0.700 & yes & 0.95 & 1.50 & 1.00", "bbr & far & 51200 & --- & --- & --- & --- & --- & ---"} {
		if !strings.Contains(tex, want) {
			t.Errorf("the table lacks %q:\n%s", want, tex)
		}
	}
	again, _ := tables(r)
	if again != tex {
		t.Error("two renderings differ")
	}
}
