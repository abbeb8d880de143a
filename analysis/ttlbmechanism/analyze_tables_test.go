package ttlbmechanism

import (
	"math"
	"strings"
	"testing"

	"pqrepro/internal/jsonnum"
)

// TestTablesNumbers: the macros go apart from the table; per role the
// order's counts, per cell the arms' dW and, only where a share exists,
// the share with its interval; a run without the block has its status
// in the macros and no cell macros.
func TestTablesNumbers(t *testing.T) {
	nan := jsonnum.Num(math.NaN())
	r := newResults(Registration{Model: "intervention", Arm: "X25519-padded", PadBytes: 1080})
	r.Measured = true
	r.Order = Order{Verdict: OrderEffect, Roles: []OrderRole{{Role: "wan", Cells: 6, Negative: 2}, {Role: "far", Cells: 6, Negative: 0}}}
	r.CCs = []CC{{CC: "bbr", Verdict: InterventionMoot}}
	r.Cells = []Cell{
		{Scenario: "wan", SizeBytes: 51200, CC: "bbr", Share: 0.89, ShareLower: 0.67, ShareUpper: 1.14, DWHybrid: 0.85, DWPadded: 0.68},
		{Scenario: "far-quick", SizeBytes: 1 << 20, CC: "cubic", Share: nan, ShareLower: nan, ShareUpper: nan, DWHybrid: -1.5, DWPadded: nan},
	}
	nums, tab, err := tables(r)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		`\newcommand{\NetTtlbMechOrderNegativeFar}{0}`, `\newcommand{\NetTtlbMechOrderCellsWan}{6}`,
		`\newcommand{\NetTtlbMechShareWanFiveZeroKiBBbr}{0.89}`, `\newcommand{\NetTtlbMechShareUpperWanFiveZeroKiBBbr}{1.14}`,
		`\newcommand{\NetTtlbMechDWHybWanFiveZeroKiBBbr}{0.85}`, `\newcommand{\NetTtlbMechDWHybFarOneMiBCubic}{-1.50}`,
	} {
		if !strings.Contains(nums, want) {
			t.Errorf("numbers lack %s", want)
		}
	}
	if strings.Contains(nums, "ShareFarOneMiBCubic") {
		t.Error("a cell without a share has a share macro")
	}
	if strings.Contains(nums, `\begin{table}`) || !strings.Contains(tab, `\label{tab:net-ttlbmechanism}`) || strings.Contains(tab, `\newcommand{\NetTtlbMech`) {
		t.Error("the macros and the table are not apart")
	}
	none := newResults(Registration{})
	none.Note = NotMeasured
	nums, tab, err = tables(none)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(nums, `\newcommand{\NetTtlbMechStatus}{not measured`) || strings.Contains(nums, "Share") || !strings.Contains(tab, "not measured") {
		t.Errorf("a run without the block: numbers %q", nums)
	}
}
