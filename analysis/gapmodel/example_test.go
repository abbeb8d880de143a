package gapmodel_test

import (
	"fmt"

	"pqrepro/analysis/gapmodel"
	"pqrepro/analysis/tlsstudy"
)

// A fit on made-up cells (c0 2.5 ms, s 1, an HRR round trip for the two
// ML-KEM configurations under one client list), then the published
// medians of tlsstudy.Published under that one combination.
func Example() {
	cpu := map[string]float64{"baseline": 0.3, "pq-sig": 1.6, "pq-kem": 0.35, "hybrid": 3.6}
	var rows []gapmodel.Row
	for _, d := range []float64{0, 0.5, 1, 2} {
		for _, role := range gapmodel.Roles {
			k := 1.0
			if role == "pq-kem" || role == "hybrid" {
				k = 2
			}
			r := gapmodel.Row{OneWayDelayMs: d, RTTMs: 2 * d, Groups: "x25519-first", Chain: "leaf", Role: role, RoundTrips: k, CPUMs: cpu[role]}
			for i := range 5 {
				r.RoundThsMs = append(r.RoundThsMs, 2.5+k*2*d+cpu[role]+0.01*float64(i-2))
			}
			rows = append(rows, r)
		}
	}
	fit, err := gapmodel.FitModel(rows, gapmodel.Registered)
	if err != nil {
		fmt.Println(err)
		return
	}
	pub := gapmodel.Published{Source: tlsstudy.Published.Source, BaselineMs: tlsstudy.Published.BaselineMedianMs, IncreaseMs: map[string]float64{}}
	for role, inc := range tlsstudy.Published.Increases {
		pub.IncreaseMs[role] = inc.IncreaseMs
	}
	ex, err := gapmodel.Explain(fit, rows, pub)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Print(gapmodel.Text(fit, ex))
	// Output:
	// model: Ths = c0 + k x RTT + s x CPU; fit on one-way delays [0 2] ms, held out [0.5 1] ms, 5 rounds
	// c0 = 2.500 ms [2.480, 2.520]; s = 1.000 [1.000, 1.000] (95 % bootstrap over rounds)
	// held out x25519-first/leaf/baseline at 0.5 ms one way: observed 3.800, predicted 3.800, error +0.000 ms
	// held out x25519-first/leaf/pq-sig at 0.5 ms one way: observed 5.100, predicted 5.100, error +0.000 ms
	// held out x25519-first/leaf/pq-kem at 0.5 ms one way: observed 4.850, predicted 4.850, error +0.000 ms
	// held out x25519-first/leaf/hybrid at 0.5 ms one way: observed 8.100, predicted 8.100, error +0.000 ms
	// held out x25519-first/leaf/baseline at 1 ms one way: observed 4.800, predicted 4.800, error +0.000 ms
	// held out x25519-first/leaf/pq-sig at 1 ms one way: observed 6.100, predicted 6.100, error +0.000 ms
	// held out x25519-first/leaf/pq-kem at 1 ms one way: observed 6.850, predicted 6.850, error +0.000 ms
	// held out x25519-first/leaf/hybrid at 1 ms one way: observed 10.100, predicted 10.100, error +0.000 ms
	// prediction passes: max |error| 0.000 ms, bound 0.750 ms (registered)
	// x25519-first, leaf: RTT 2.608 ms, CPU factor 1.552, 2 free parameter(s), RMS 1.044 ms
	//   baseline published 3.900, predicted 5.573, residual +1.673 ms
	//   pq-sig   published 8.551, predicted 7.592, residual -0.959 ms
	//   pq-kem   published 8.972, predicted 8.259, residual -0.713 ms
	//   hybrid   published 12.948, predicted 13.304, residual +0.356 ms
	//   does not fit within 1.000 ms
	// no combination fits the published medians within the registered bound: the model does not explain the gap
}
