package picorun_test

import (
	"context"
	"fmt"
	"os"

	"pqrepro/experiments/instruments/runlife"
	"pqrepro/experiments/pico/picorun"
)

// Run the quick profile of the committed spec into data/pico/ and pin it
// (what `mage pico:run` does); this needs arm-none-eabi-gcc and node.
func ExampleRun() {
	_, err := picorun.Run(context.Background(), picorun.RunConfig{Config: runlife.Config{Profile: "quick", Log: os.Stdout}})
	if err != nil {
		fmt.Println(err)
	}
}

func ExampleEstimate() {
	fmt.Println(picorun.Estimate("quick") < picorun.Estimate("full"), picorun.Estimate("nosuch"))
	// Output: true 0s
}
