package picostudy_test

import (
	"context"
	"fmt"
	"os"

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
