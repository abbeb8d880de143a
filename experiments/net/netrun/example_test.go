package netrun_test

import (
	"fmt"
	"os"

	"pqrepro/experiments/net/netrun"
)

// ExampleEstimate prints the time budget of the committed spec's profiles:
// the theoretical minimum (3 round trips per connection), serial and as
// scheduled, the model's expected wall time with parallel series, and the
// full profile's schedule (planned start .. end of each series).
func ExampleEstimate() {
	s, err := netrun.LoadSpec("../../net.toml")
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, profile := range []string{"quick", "full"} {
		e, err := netrun.Estimate(s, profile)
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
	// quick: 880 handshakes (932 connections with warm-up) in 3 scenarios, 26 series, up to 6 at once: theoretical minimum 29s serial, 7s as scheduled; expected about 22s (serial work 1m7s, longest series 6s)
	// full: 195000 handshakes (195195 connections with warm-up) in 3 scenarios, 39 series, up to 12 at once: theoretical minimum 6h1m58s serial, 49m39s as scheduled; expected about 1h0m12s (serial work 6h58m4s, longest series 46m38s)
	//   lan-1000-X25519-go1.24.4       1005 connections        0s ..       6s  (expected 6s, minimum 3s, alone)
	//   lan-1000-X25519-go1.27.3       1005 connections        6s ..      12s  (expected 6s, minimum 3s, alone)
	//   lan-1000-X25519MLKEM768-go1.24.4   1005 connections       12s ..      18s  (expected 6s, minimum 3s, alone)
	//   lan-1000-X25519MLKEM768-go1.27.3   1005 connections       18s ..      24s  (expected 6s, minimum 3s, alone)
	//   lan-5000-X25519-go1.24.4       5005 connections       24s ..      50s  (expected 26s, minimum 15s, alone)
	//   lan-5000-X25519-go1.27.3       5005 connections       50s ..    1m16s  (expected 26s, minimum 15s, alone)
	//   lan-5000-X25519MLKEM768-go1.24.4   5005 connections     1m16s ..    1m41s  (expected 26s, minimum 15s, alone)
	//   lan-5000-X25519MLKEM768-go1.27.3   5005 connections     1m41s ..     2m7s  (expected 26s, minimum 15s, alone)
	//   lan-10000-X25519-go1.24.4     10005 connections      2m7s ..    2m58s  (expected 51s, minimum 30s, alone)
	//   lan-10000-X25519-go1.27.3     10005 connections     2m58s ..    3m49s  (expected 51s, minimum 30s, alone)
	//   lan-10000-X25519MLKEM768-go1.24.4  10005 connections     3m49s ..    4m40s  (expected 51s, minimum 30s, alone)
	//   lan-10000-X25519MLKEM768-go1.27.3  10005 connections     4m40s ..    5m31s  (expected 51s, minimum 30s, alone)
	//   far-10000-X25519-go1.24.4     10005 connections     5m31s ..    52m9s  (expected 46m38s, minimum 39m22s)
	//   far-10000-X25519-go1.27.3     10005 connections     5m31s ..    52m9s  (expected 46m38s, minimum 39m22s)
	//   far-10000-X25519MLKEM768-go1.24.4  10005 connections     5m31s ..    52m9s  (expected 46m38s, minimum 39m22s)
	//   far-10000-X25519MLKEM768-go1.27.3  10005 connections     5m31s ..    52m9s  (expected 46m38s, minimum 39m22s)
	//   far-5000-X25519-go1.24.4       5005 connections     5m31s ..   28m51s  (expected 23m20s, minimum 19m42s)
	//   far-5000-X25519-go1.27.3       5005 connections     5m31s ..   28m51s  (expected 23m20s, minimum 19m42s)
	//   far-5000-X25519MLKEM768-go1.24.4   5005 connections     5m31s ..   28m51s  (expected 23m20s, minimum 19m42s)
	//   far-5000-X25519MLKEM768-go1.27.3   5005 connections     5m31s ..   28m51s  (expected 23m20s, minimum 19m42s)
	//   wan-10000-X25519-go1.24.4     10005 connections     5m31s ..    22m2s  (expected 16m31s, minimum 15m33s)
	//   wan-10000-X25519-go1.27.3     10005 connections     5m31s ..    22m2s  (expected 16m31s, minimum 15m33s)
	//   wan-10000-X25519MLKEM768-go1.24.4  10005 connections     5m31s ..    22m2s  (expected 16m31s, minimum 15m33s)
	//   wan-10000-X25519MLKEM768-go1.27.3  10005 connections     5m31s ..    22m2s  (expected 16m31s, minimum 15m33s)
	//   wan-5000-X25519-go1.24.4       5005 connections     22m2s ..   30m19s  (expected 8m16s, minimum 7m47s)
	//   wan-5000-X25519-go1.27.3       5005 connections     22m2s ..   30m19s  (expected 8m16s, minimum 7m47s)
	//   wan-5000-X25519MLKEM768-go1.24.4   5005 connections     22m2s ..   30m19s  (expected 8m16s, minimum 7m47s)
	//   wan-5000-X25519MLKEM768-go1.27.3   5005 connections     22m2s ..   30m19s  (expected 8m16s, minimum 7m47s)
	//   far-1000-X25519-go1.24.4       1005 connections    28m51s ..   33m33s  (expected 4m42s, minimum 3m57s)
	//   far-1000-X25519-go1.27.3       1005 connections    28m51s ..   33m33s  (expected 4m42s, minimum 3m57s)
	//   far-1000-X25519MLKEM768-go1.24.4   1005 connections    28m51s ..   33m33s  (expected 4m42s, minimum 3m57s)
	//   far-1000-X25519MLKEM768-go1.27.3   1005 connections    28m51s ..   33m33s  (expected 4m42s, minimum 3m57s)
	//   wan-1000-X25519-go1.24.4       1005 connections    30m19s ..   31m59s  (expected 1m40s, minimum 1m34s)
	//   wan-1000-X25519-go1.27.3       1005 connections    30m19s ..   31m59s  (expected 1m40s, minimum 1m34s)
	//   wan-1000-X25519MLKEM768-go1.24.4   1005 connections    30m19s ..   31m59s  (expected 1m40s, minimum 1m34s)
	//   wan-1000-X25519MLKEM768-go1.27.3   1005 connections    30m19s ..   31m59s  (expected 1m40s, minimum 1m34s)
	//   wan-1000-X25519-go1.24.4-alone   1005 connections     52m9s ..   53m49s  (expected 1m40s, minimum 1m34s, alone)
	//   wan-1000-X25519MLKEM768-go1.24.4-alone   1005 connections    53m49s ..   55m29s  (expected 1m40s, minimum 1m34s, alone)
	//   far-1000-X25519MLKEM768-go1.24.4-alone   1005 connections    55m29s ..  1h0m12s  (expected 4m42s, minimum 3m57s, alone)
}
