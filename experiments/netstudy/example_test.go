package netstudy_test

import (
	"fmt"

	"pqrepro/experiments/netstudy"
)

// ExampleEstimate prints the time budget of the committed spec's profiles:
// the theoretical minimum (3 round trips per connection) and the model's
// expected wall time.
func ExampleEstimate() {
	s, err := netstudy.LoadSpec("../net.toml")
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, profile := range []string{"quick", "full"} {
		e, err := netstudy.Estimate(s, profile)
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Printf("%s: %s\n", profile, e)
	}
	// Output:
	// quick: 420 handshakes (444 connections with warm-up) in 3 scenarios: theoretical minimum 14s, expected about 23s
	// full: 96000 handshakes (96090 connections with warm-up) in 3 scenarios: theoretical minimum 2h57m27s, expected about 3h24m46s
}
