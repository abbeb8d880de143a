package picostudy_test

import (
	"bytes"
	"context"
	"fmt"
	"os"

	"pqrepro/experiments/pico"
	"pqrepro/experiments/picostudy"
)

// Run the quick profile of the committed spec into data/pico/ and pin it
// (what `mage pico:run` does); this needs arm-none-eabi-gcc and node.
func ExampleRun() {
	err := picostudy.Run(context.Background(), picostudy.RunConfig{Profile: "quick", Log: os.Stdout})
	if err != nil {
		fmt.Println(err)
	}
}

func ExampleEstimate() {
	fmt.Println(picostudy.Estimate("quick") < picostudy.Estimate("full"), picostudy.Estimate("nosuch"))
	// Output: true 0s
}

func ExampleEncodeMeasurements() {
	ms := []pico.Measurement{{Scheme: "ml-kem-512", Op: "keygen", Micros: 8968, Cycles: 1192716, Stack: 6200, Heap: 208, OK: true}}
	a, _ := picostudy.EncodeMeasurements(ms)
	b, _ := picostudy.EncodeMeasurements(ms)
	back, _ := picostudy.DecodeMeasurements(bytes.NewReader(a))
	fmt.Println(bytes.Equal(a, b), back[0].Scheme, back[0].Op, back[0].Micros)
	// Output: true ml-kem-512 keygen 8968
}
