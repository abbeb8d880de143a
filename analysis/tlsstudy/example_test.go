package tlsstudy_test

import (
	"fmt"
	"strings"

	"pqrepro/analysis/tlsgapmodel"
	"pqrepro/analysis/tlsstudy"
)

// The pipeline passes the pinned run folder, the parameters and the
// parts (the gap model's); the stages declare what they read and write.
func ExampleStages() {
	params := tlsstudy.DefaultParams("quick")
	if err := params.Validate(); err != nil {
		fmt.Println(err)
		return
	}
	for _, s := range tlsstudy.Stages("data/tls/20261130T120000Z-quick", params, tlsgapmodel.Part()) {
		fmt.Printf("%s\n  in:  %s\n  out: %s\n", s.Name, strings.Join(s.Inputs, " "), strings.Join(s.Outputs, " "))
	}
	fmt.Println(tlsstudy.Stages("data/tls/x", params)[0].Params["paper"])
	// Output:
	// tls:analyze
	//   in:  data/tls/20261130T120000Z-quick/records.csv.gz data/tls/20261130T120000Z-quick/meta.json
	//   out: results/tls.json
	// tls:figures
	//   in:  results/tls.json
	//   out: figures/tls-ths.pdf figures/tls-ths.svg figures/tls-bytes.pdf figures/tls-bytes.svg figures/tls-gap.pdf figures/tls-gap.svg figures/tls-drift.pdf figures/tls-drift.svg figures/tls-gapmodel.pdf figures/tls-gapmodel.svg
	// tls:tables
	//   in:  results/tls.json
	//   out: paper/generated/tls-paper.tex paper/generated/tls-matrix.tex paper/generated/tls-bytes.tex paper/generated/tls-gap.tex paper/generated/tls-factors.tex paper/generated/tls-drift.tex paper/generated/tls-serial.tex paper/generated/tls-gapjoint-all.tex paper/generated/tls-gapjoint.tex paper/generated/tls-gapmodel.tex paper/generated/tls-numbers.tex
	// ed25519/X25519,mldsa87/X25519,ed25519/MLKEM1024,ed25519/SecP384r1MLKEM1024
}
