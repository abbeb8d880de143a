package picostudy_test

import (
	"fmt"
	"time"

	"pqrepro/analysis/picostudy"
)

func ExampleStages() {
	for _, s := range picostudy.Stages("data/pico/20261202T062838Z-quick", picostudy.Params{SourceDateEpoch: time.Unix(1767225600, 0)}) {
		fmt.Println(s.Name, s.Inputs, s.Outputs[0])
	}
	// Output:
	// pico:analyze [data/pico/20261202T062838Z-quick analysis/picostudy/pqm4.csv] results/pico.json
	// pico:figures [results/pico.json] figures/pico-mldsa-sign.pdf
	// pico:tables [results/pico.json] paper/generated/pico-ops.tex
}
