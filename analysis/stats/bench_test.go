package stats

import (
	"fmt"
	"math/rand/v2"
	"syscall"
	"testing"
	"time"
)

// Benchmarks of the rank-based two-sample statistics on two samples of n
// values each; time should grow as n log n. Hodges-Lehmann also reports
// cpu-ms/op, the process's CPU time per operation.
//
//	go test -run '^$' -bench . ./analysis/stats
func benchSamples(n int) ([]float64, []float64) {
	r := rand.New(rand.NewPCG(11, 12))
	return randSample(r, n, 3.9, false), randSample(r, n, 4.2, false)
}

var sizes = []int{1_000, 10_000, 100_000}

func BenchmarkMannWhitney(b *testing.B) {
	for _, n := range sizes {
		x, y := benchSamples(n)
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			for b.Loop() {
				if _, err := MannWhitneyU(x, y); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkCliffsDelta(b *testing.B) {
	for _, n := range sizes {
		x, y := benchSamples(n)
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			for b.Loop() {
				if _, err := CliffsDelta(x, y, 0.95); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkA12(b *testing.B) {
	for _, n := range sizes {
		x, y := benchSamples(n)
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			for b.Loop() {
				if _, err := VarghaDelaneyA12(x, y); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkHodgesLehmann covers the sizes of BenchmarkCompare in
// cmd/pqrepro, whose Hodges-Lehmann step it is; the growth exponent
// log(t2/t1)/log(n2/n1) between sizes should stay near 1 (n log n).
func BenchmarkHodgesLehmann(b *testing.B) {
	for _, n := range []int{10_000, 100_000, 1_000_000} {
		x, y := benchSamples(n)
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			c0 := cpuTime()
			for b.Loop() {
				if _, err := HodgesLehmann(x, y, 0.95); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(cpuTime()-c0)/1e6/float64(b.N), "cpu-ms/op")
		})
	}
}

// BenchmarkBootstrap compares the two resampling methods at 2,000
// resamples; ResampleValues is O(B n), ResampleOrderStats O(n log n + B).
func BenchmarkBootstrap(b *testing.B) {
	for _, n := range sizes {
		x, y := benchSamples(n)
		for _, m := range []BootstrapMethod{ResampleValues, ResampleOrderStats} {
			b.Run(fmt.Sprintf("%s/%d", m, n), func(b *testing.B) {
				for b.Loop() {
					if _, err := BootstrapMedianDiff(x, y, BootstrapConfig{Seed: 1, Resamples: 2000, Level: 0.95, Method: m}); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// cpuTime is the CPU time (user + system) of the process so far: on a
// shared machine it varies far less than the wall time ns/op.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
