package quiet_test

import (
	"context"
	"fmt"

	"pqrepro/internal/quiet"
)

// A runner samples the machine for a few seconds before its work and
// then in the background; Stop returns what meta.json records.
func Example() {
	w := quiet.NewFixed(quiet.Busy) // quiet.New(quiet.Options{}) samples this machine
	pre, err := w.Start(context.Background())
	if err != nil {
		return
	}
	fmt.Println(pre.Verdict)
	fmt.Println(w.Latest().Line())
	rec := w.Stop()
	fmt.Println(rec.Reasons[0])
	// Output:
	// busy
	// machine: load 6.00, other processes 1.20 core, steal 0.0 %
	// other processes above 0.10 core in 4 of 4 samples (max 1.20 core)
}
