package ttlbmechanism_test

import (
	"fmt"

	"pqrepro/analysis/ttlbmechanism"
)

// ExampleAnalyze judges a planted controlled block in which the padded
// arm starts its responses with the hybrid's window and P depends on W
// alone: the padding carries the whole effect.
func ExampleAnalyze() {
	rows := base().rows(1) // wan and far, 0 and 50 KiB, CUBIC and BBR, two toolchains
	r, err := ttlbmechanism.Analyze(rows, ttlbmechanism.Registered)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("pad check:", r.PadCheck.Verdict)
	fmt.Println("order:", r.Order.Verdict)
	for _, cc := range r.CCs {
		fmt.Printf("intervention under %s: %s over %d cells\n", cc.CC, cc.Verdict, cc.Cells)
	}
	none, _ := ttlbmechanism.Analyze(nil, ttlbmechanism.Registered)
	fmt.Println(none.Note)
	// Output:
	// pad check: worked
	// order: holds
	// intervention under cubic: passes over 2 cells
	// intervention under bbr: passes over 2 cells
	// not measured: the run has no controlled transfer block
}
