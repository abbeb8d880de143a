package netstudy_test

import (
	"fmt"
	"os"

	"pqrepro/experiments/netstudy"
)

// ExampleEstimate prints the time budget of the committed spec's profiles:
// the theoretical minimum (3 round trips per connection), serial and as
// scheduled, the model's expected wall time with parallel series, and the
// full profile's schedule (planned start .. end of each series).
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
		if profile == "full" {
			e.WritePlan(os.Stdout)
		}
	}
	// Output:
	// quick: 420 handshakes (444 connections with warm-up) in 3 scenarios, 12 series, up to 6 at once: theoretical minimum 14s serial, 4s as scheduled; expected about 10s (serial work 32s, longest series 6s)
	// full: 96000 handshakes (96090 connections with warm-up) in 3 scenarios, 18 series, up to 6 at once: theoretical minimum 2h57m27s serial, 40m58s as scheduled; expected about 49m23s (serial work 3h25m1s, longest series 46m38s)
	//   lan-1000-X25519                1005 connections        0s ..       6s  (expected 6s, minimum 3s, alone)
	//   lan-1000-X25519MLKEM768        1005 connections        6s ..      12s  (expected 6s, minimum 3s, alone)
	//   lan-5000-X25519                5005 connections       12s ..      38s  (expected 26s, minimum 15s, alone)
	//   lan-5000-X25519MLKEM768        5005 connections       38s ..     1m4s  (expected 26s, minimum 15s, alone)
	//   lan-10000-X25519              10005 connections      1m4s ..    1m55s  (expected 51s, minimum 30s, alone)
	//   lan-10000-X25519MLKEM768      10005 connections     1m55s ..    2m46s  (expected 51s, minimum 30s, alone)
	//   far-10000-X25519              10005 connections     2m46s ..   49m23s  (expected 46m38s, minimum 39m22s)
	//   far-10000-X25519MLKEM768      10005 connections     2m46s ..   49m23s  (expected 46m38s, minimum 39m22s)
	//   far-5000-X25519                5005 connections     2m46s ..    26m6s  (expected 23m20s, minimum 19m42s)
	//   far-5000-X25519MLKEM768        5005 connections     2m46s ..    26m6s  (expected 23m20s, minimum 19m42s)
	//   wan-10000-X25519              10005 connections     2m46s ..   19m17s  (expected 16m31s, minimum 15m33s)
	//   wan-10000-X25519MLKEM768      10005 connections     2m46s ..   19m17s  (expected 16m31s, minimum 15m33s)
	//   wan-5000-X25519                5005 connections    19m17s ..   27m33s  (expected 8m16s, minimum 7m47s)
	//   wan-5000-X25519MLKEM768        5005 connections    19m17s ..   27m33s  (expected 8m16s, minimum 7m47s)
	//   far-1000-X25519                1005 connections     26m6s ..   30m48s  (expected 4m42s, minimum 3m57s)
	//   far-1000-X25519MLKEM768        1005 connections     26m6s ..   30m48s  (expected 4m42s, minimum 3m57s)
	//   wan-1000-X25519                1005 connections    27m33s ..   29m13s  (expected 1m40s, minimum 1m34s)
	//   wan-1000-X25519MLKEM768        1005 connections    27m33s ..   29m13s  (expected 1m40s, minimum 1m34s)
}
