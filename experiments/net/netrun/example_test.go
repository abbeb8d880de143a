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
	// quick: 952 handshakes (1052 connections with warm-up) in 3 scenarios, 50 series, up to 6 at once: theoretical minimum 39s serial, 9s as scheduled; expected about 35s (serial work 1m44s, longest series 6s)
	// full: 197880 handshakes (198315 connections with warm-up) in 3 scenarios, 87 series, up to 12 at once: theoretical minimum 6h19m17s serial, 58m23s as scheduled; expected about 1h23m4s (serial work 7h43m23s, longest series 46m38s)
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
	//   lan-10240B-X25519-go1.24.4       65 connections     52m9s ..   52m10s  (expected 1s, minimum 0s, alone)
	//   lan-10240B-X25519-go1.27.3       65 connections    52m10s ..   52m11s  (expected 1s, minimum 0s, alone)
	//   lan-10240B-X25519MLKEM768-go1.24.4     65 connections    52m11s ..   52m13s  (expected 1s, minimum 0s, alone)
	//   lan-10240B-X25519MLKEM768-go1.27.3     65 connections    52m13s ..   52m14s  (expected 1s, minimum 0s, alone)
	//   lan-51200B-X25519-go1.24.4       65 connections    52m14s ..   52m15s  (expected 1s, minimum 0s, alone)
	//   lan-51200B-X25519-go1.27.3       65 connections    52m15s ..   52m17s  (expected 1s, minimum 0s, alone)
	//   lan-51200B-X25519MLKEM768-go1.24.4     65 connections    52m17s ..   52m18s  (expected 1s, minimum 0s, alone)
	//   lan-51200B-X25519MLKEM768-go1.27.3     65 connections    52m18s ..   52m20s  (expected 1s, minimum 0s, alone)
	//   lan-204800B-X25519-go1.24.4      65 connections    52m20s ..   52m21s  (expected 2s, minimum 1s, alone)
	//   lan-204800B-X25519-go1.27.3      65 connections    52m21s ..   52m23s  (expected 2s, minimum 1s, alone)
	//   lan-204800B-X25519MLKEM768-go1.24.4     65 connections    52m23s ..   52m25s  (expected 2s, minimum 1s, alone)
	//   lan-204800B-X25519MLKEM768-go1.27.3     65 connections    52m25s ..   52m26s  (expected 2s, minimum 1s, alone)
	//   lan-1048576B-X25519-go1.24.4     65 connections    52m26s ..   52m28s  (expected 2s, minimum 1s, alone)
	//   lan-1048576B-X25519-go1.27.3     65 connections    52m28s ..   52m30s  (expected 2s, minimum 1s, alone)
	//   lan-1048576B-X25519MLKEM768-go1.24.4     65 connections    52m30s ..   52m33s  (expected 2s, minimum 1s, alone)
	//   lan-1048576B-X25519MLKEM768-go1.27.3     65 connections    52m33s ..   52m35s  (expected 2s, minimum 1s, alone)
	//   far-1048576B-X25519-go1.24.4     65 connections    52m35s ..   58m55s  (expected 6m20s, minimum 1m30s)
	//   far-1048576B-X25519-go1.27.3     65 connections    52m35s ..   58m55s  (expected 6m20s, minimum 1m30s)
	//   far-1048576B-X25519MLKEM768-go1.24.4     65 connections    58m55s ..  1h5m16s  (expected 6m20s, minimum 1m30s)
	//   far-1048576B-X25519MLKEM768-go1.27.3     65 connections    58m55s ..  1h5m16s  (expected 6m20s, minimum 1m30s)
	//   far-204800B-X25519-go1.24.4      65 connections   1h5m16s ..   1h7m2s  (expected 1m46s, minimum 46s)
	//   far-204800B-X25519-go1.27.3      65 connections   1h5m16s ..   1h7m2s  (expected 1m46s, minimum 46s)
	//   far-204800B-X25519MLKEM768-go1.24.4     65 connections    1h7m2s ..  1h8m48s  (expected 1m46s, minimum 46s)
	//   far-204800B-X25519MLKEM768-go1.27.3     65 connections    1h7m2s ..  1h8m48s  (expected 1m46s, minimum 46s)
	//   wan-1048576B-X25519-go1.24.4     65 connections   1h8m48s ..  1h9m45s  (expected 57s, minimum 27s)
	//   wan-1048576B-X25519-go1.27.3     65 connections   1h8m48s ..  1h9m45s  (expected 57s, minimum 27s)
	//   wan-1048576B-X25519MLKEM768-go1.24.4     65 connections   1h9m45s .. 1h10m42s  (expected 57s, minimum 27s)
	//   wan-1048576B-X25519MLKEM768-go1.27.3     65 connections   1h9m45s .. 1h10m42s  (expected 57s, minimum 27s)
	//   far-51200B-X25519-go1.24.4       65 connections  1h10m42s .. 1h11m33s  (expected 51s, minimum 33s)
	//   far-51200B-X25519-go1.27.3       65 connections  1h10m42s .. 1h11m33s  (expected 51s, minimum 33s)
	//   far-51200B-X25519MLKEM768-go1.24.4     65 connections  1h11m33s .. 1h12m25s  (expected 51s, minimum 33s)
	//   far-51200B-X25519MLKEM768-go1.27.3     65 connections  1h11m33s .. 1h12m25s  (expected 51s, minimum 33s)
	//   far-10240B-X25519-go1.24.4       65 connections  1h12m25s .. 1h12m53s  (expected 28s, minimum 21s)
	//   far-10240B-X25519-go1.27.3       65 connections  1h12m25s .. 1h12m53s  (expected 28s, minimum 21s)
	//   far-10240B-X25519MLKEM768-go1.24.4     65 connections  1h12m53s .. 1h13m20s  (expected 28s, minimum 21s)
	//   far-10240B-X25519MLKEM768-go1.27.3     65 connections  1h12m53s .. 1h13m20s  (expected 28s, minimum 21s)
	//   wan-204800B-X25519-go1.24.4      65 connections  1h13m20s .. 1h13m46s  (expected 25s, minimum 18s)
	//   wan-204800B-X25519-go1.27.3      65 connections  1h13m20s .. 1h13m46s  (expected 25s, minimum 18s)
	//   wan-204800B-X25519MLKEM768-go1.24.4     65 connections  1h13m46s .. 1h14m11s  (expected 25s, minimum 18s)
	//   wan-204800B-X25519MLKEM768-go1.27.3     65 connections  1h13m46s .. 1h14m11s  (expected 25s, minimum 18s)
	//   wan-51200B-X25519-go1.24.4       65 connections  1h14m11s .. 1h14m26s  (expected 15s, minimum 13s)
	//   wan-51200B-X25519-go1.27.3       65 connections  1h14m11s .. 1h14m26s  (expected 15s, minimum 13s)
	//   wan-51200B-X25519MLKEM768-go1.24.4     65 connections  1h14m26s .. 1h14m41s  (expected 15s, minimum 13s)
	//   wan-51200B-X25519MLKEM768-go1.27.3     65 connections  1h14m26s .. 1h14m41s  (expected 15s, minimum 13s)
	//   wan-10240B-X25519-go1.24.4       65 connections  1h14m41s .. 1h14m51s  (expected 10s, minimum 8s)
	//   wan-10240B-X25519-go1.27.3       65 connections  1h14m41s .. 1h14m51s  (expected 10s, minimum 8s)
	//   wan-10240B-X25519MLKEM768-go1.24.4     65 connections  1h14m51s ..  1h15m1s  (expected 10s, minimum 8s)
	//   wan-10240B-X25519MLKEM768-go1.27.3     65 connections  1h14m51s ..  1h15m1s  (expected 10s, minimum 8s)
	//   wan-1000-X25519-go1.24.4-alone   1005 connections   1h15m1s .. 1h16m41s  (expected 1m40s, minimum 1m34s, alone)
	//   wan-1000-X25519MLKEM768-go1.24.4-alone   1005 connections  1h16m41s .. 1h18m22s  (expected 1m40s, minimum 1m34s, alone)
	//   far-1000-X25519MLKEM768-go1.24.4-alone   1005 connections  1h18m22s ..  1h23m4s  (expected 4m42s, minimum 3m57s, alone)
}
