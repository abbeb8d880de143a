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
	// quick: 1024 handshakes (1172 connections with warm-up) in 3 scenarios, 74 series, up to 6 at once: theoretical minimum 1m7s serial, 14s as scheduled; expected about 52s (serial work 2m48s, longest series 8s)
	// full: 199800 handshakes (200235 connections with warm-up) in 3 scenarios, 87 series, up to 12 at once: theoretical minimum 6h29m57s serial, 52m20s as scheduled; expected about 1h10m59s (serial work 8h10m46s, longest series 46m38s)
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
	//   lan-10240B-X25519-go1.24.4      105 connections     52m9s ..   52m10s  (expected 2s, minimum 0s, alone)
	//   lan-10240B-X25519-go1.27.3      105 connections    52m10s ..   52m12s  (expected 2s, minimum 0s, alone)
	//   lan-10240B-X25519MLKEM768-go1.24.4    105 connections    52m12s ..   52m13s  (expected 2s, minimum 0s, alone)
	//   lan-10240B-X25519MLKEM768-go1.27.3    105 connections    52m13s ..   52m15s  (expected 2s, minimum 0s, alone)
	//   lan-51200B-X25519-go1.24.4      105 connections    52m15s ..   52m17s  (expected 2s, minimum 1s, alone)
	//   lan-51200B-X25519-go1.27.3      105 connections    52m17s ..   52m18s  (expected 2s, minimum 1s, alone)
	//   lan-51200B-X25519MLKEM768-go1.24.4    105 connections    52m18s ..   52m20s  (expected 2s, minimum 1s, alone)
	//   lan-51200B-X25519MLKEM768-go1.27.3    105 connections    52m20s ..   52m22s  (expected 2s, minimum 1s, alone)
	//   lan-204800B-X25519-go1.24.4     105 connections    52m22s ..   52m24s  (expected 2s, minimum 1s, alone)
	//   lan-204800B-X25519-go1.27.3     105 connections    52m24s ..   52m26s  (expected 2s, minimum 1s, alone)
	//   lan-204800B-X25519MLKEM768-go1.24.4    105 connections    52m26s ..   52m28s  (expected 2s, minimum 1s, alone)
	//   lan-204800B-X25519MLKEM768-go1.27.3    105 connections    52m28s ..   52m30s  (expected 2s, minimum 1s, alone)
	//   lan-1048576B-X25519-go1.24.4    105 connections    52m30s ..   52m33s  (expected 3s, minimum 2s, alone)
	//   lan-1048576B-X25519-go1.27.3    105 connections    52m33s ..   52m36s  (expected 3s, minimum 2s, alone)
	//   lan-1048576B-X25519MLKEM768-go1.24.4    105 connections    52m36s ..   52m39s  (expected 3s, minimum 2s, alone)
	//   lan-1048576B-X25519MLKEM768-go1.27.3    105 connections    52m39s ..   52m42s  (expected 3s, minimum 2s, alone)
	//   far-1048576B-X25519-go1.24.4    105 connections    52m42s ..  1h2m56s  (expected 10m14s, minimum 2m26s)
	//   far-1048576B-X25519-go1.27.3    105 connections    52m42s ..  1h2m56s  (expected 10m14s, minimum 2m26s)
	//   far-1048576B-X25519MLKEM768-go1.24.4    105 connections    52m42s ..  1h2m56s  (expected 10m14s, minimum 2m26s)
	//   far-1048576B-X25519MLKEM768-go1.27.3    105 connections    52m42s ..  1h2m56s  (expected 10m14s, minimum 2m26s)
	//   far-204800B-X25519-go1.24.4     105 connections    52m42s ..   55m33s  (expected 2m51s, minimum 1m15s)
	//   far-204800B-X25519-go1.27.3     105 connections    52m42s ..   55m33s  (expected 2m51s, minimum 1m15s)
	//   far-204800B-X25519MLKEM768-go1.24.4    105 connections    52m42s ..   55m33s  (expected 2m51s, minimum 1m15s)
	//   far-204800B-X25519MLKEM768-go1.27.3    105 connections    52m42s ..   55m33s  (expected 2m51s, minimum 1m15s)
	//   wan-1048576B-X25519-go1.24.4    105 connections    52m42s ..   54m13s  (expected 1m31s, minimum 44s)
	//   wan-1048576B-X25519-go1.27.3    105 connections    52m42s ..   54m13s  (expected 1m31s, minimum 44s)
	//   wan-1048576B-X25519MLKEM768-go1.24.4    105 connections    52m42s ..   54m13s  (expected 1m31s, minimum 44s)
	//   wan-1048576B-X25519MLKEM768-go1.27.3    105 connections    52m42s ..   54m13s  (expected 1m31s, minimum 44s)
	//   far-51200B-X25519-go1.24.4      105 connections    54m13s ..   55m35s  (expected 1m22s, minimum 54s)
	//   far-51200B-X25519-go1.27.3      105 connections    54m13s ..   55m35s  (expected 1m22s, minimum 54s)
	//   far-51200B-X25519MLKEM768-go1.24.4    105 connections    54m13s ..   55m35s  (expected 1m22s, minimum 54s)
	//   far-51200B-X25519MLKEM768-go1.27.3    105 connections    54m13s ..   55m35s  (expected 1m22s, minimum 54s)
	//   far-10240B-X25519-go1.24.4      105 connections    55m33s ..   56m17s  (expected 44s, minimum 34s)
	//   far-10240B-X25519-go1.27.3      105 connections    55m33s ..   56m17s  (expected 44s, minimum 34s)
	//   far-10240B-X25519MLKEM768-go1.24.4    105 connections    55m33s ..   56m17s  (expected 44s, minimum 34s)
	//   far-10240B-X25519MLKEM768-go1.27.3    105 connections    55m33s ..   56m17s  (expected 44s, minimum 34s)
	//   wan-204800B-X25519-go1.24.4     105 connections    55m35s ..   56m15s  (expected 40s, minimum 30s)
	//   wan-204800B-X25519-go1.27.3     105 connections    55m35s ..   56m15s  (expected 40s, minimum 30s)
	//   wan-204800B-X25519MLKEM768-go1.24.4    105 connections    55m35s ..   56m15s  (expected 40s, minimum 30s)
	//   wan-204800B-X25519MLKEM768-go1.27.3    105 connections    55m35s ..   56m15s  (expected 40s, minimum 30s)
	//   wan-51200B-X25519-go1.24.4      105 connections    56m15s ..   56m40s  (expected 24s, minimum 20s)
	//   wan-51200B-X25519-go1.27.3      105 connections    56m15s ..   56m40s  (expected 24s, minimum 20s)
	//   wan-51200B-X25519MLKEM768-go1.24.4    105 connections    56m15s ..   56m40s  (expected 24s, minimum 20s)
	//   wan-51200B-X25519MLKEM768-go1.27.3    105 connections    56m15s ..   56m40s  (expected 24s, minimum 20s)
	//   wan-10240B-X25519-go1.24.4      105 connections    56m17s ..   56m32s  (expected 15s, minimum 13s)
	//   wan-10240B-X25519-go1.27.3      105 connections    56m17s ..   56m32s  (expected 15s, minimum 13s)
	//   wan-10240B-X25519MLKEM768-go1.24.4    105 connections    56m17s ..   56m32s  (expected 15s, minimum 13s)
	//   wan-10240B-X25519MLKEM768-go1.27.3    105 connections    56m17s ..   56m32s  (expected 15s, minimum 13s)
	//   wan-1000-X25519-go1.24.4-alone   1005 connections   1h2m56s ..  1h4m36s  (expected 1m40s, minimum 1m34s, alone)
	//   wan-1000-X25519MLKEM768-go1.24.4-alone   1005 connections   1h4m36s ..  1h6m16s  (expected 1m40s, minimum 1m34s, alone)
	//   far-1000-X25519MLKEM768-go1.24.4-alone   1005 connections   1h6m16s .. 1h10m59s  (expected 4m42s, minimum 3m57s, alone)
}
