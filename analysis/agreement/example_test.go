package agreement_test

import (
	"fmt"

	"pqrepro/analysis/agreement"
)

// A new run's median difference of 0.52 ms (se 0.02) against the
// reference's 0.55 ms (se 0.02): inside 0.55 ± 1.96 · sqrt(0.02² + 0.02²).
// The payload bytes agree exactly; the time is not judged on another host.
func Example() {
	items := []agreement.Item{
		{Name: "lan difference", Unit: "ms", Class: agreement.HostDependent, Kind: agreement.Estimate,
			Ref: agreement.V(0.55, 0.02), New: agreement.V(0.52, 0.02)},
		{Name: "lan hybrid payload bytes", Unit: "bytes", Class: agreement.HostIndependent, Kind: agreement.Exact,
			Ref: agreement.V(3415, 0), New: agreement.V(3415, 0)},
	}
	same := agreement.Judge(agreement.DefaultRule, agreement.Study{Name: "net", Items: items, HostsMatch: true})
	for _, j := range same.Items {
		fmt.Printf("%s: [%.3f, %.3f] %v\n", j.Name, j.Lo, j.Hi, j.Status)
	}
	other := agreement.Judge(agreement.DefaultRule, agreement.Study{Name: "net", Items: items, HostNote: "CPU differs"})
	fmt.Println(other.Counts())
	// Output:
	// lan difference: [0.495, 0.605] consistent
	// lan hybrid payload bytes: [3415.000, 3415.000] consistent
	// 2 items: 1 judged, 1 consistent, 0 inconsistent; 1 not judged (1 host differs)
}
