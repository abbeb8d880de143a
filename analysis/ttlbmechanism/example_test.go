package ttlbmechanism_test

import (
	"fmt"

	"pqrepro/analysis/ttlbmechanism"
)

// ExampleAnalyze judges a planted controlled block in which the hybrid
// starts its responses with a larger window and P depends on W alone.
func ExampleAnalyze() {
	rows := base().rows(1) // wan and far, 50 KiB, CUBIC and BBR, two toolchains
	r, err := ttlbmechanism.Analyze(rows, ttlbmechanism.Registered)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("order:", r.Order.Verdict)
	for _, cc := range r.CCs {
		fmt.Printf("window under %s: %s over %d cells\n", cc.CC, cc.Verdict, cc.Cells)
	}
	none, _ := ttlbmechanism.Analyze(nil, ttlbmechanism.Registered)
	fmt.Println(none.Note)
	// Output:
	// order: holds
	// window under cubic: passes over 2 cells
	// window under bbr: passes over 2 cells
	// not measured: the run has no controlled transfer block
}
