package linkemu

import (
	"slices"
	"sync"
	"testing"
	"time"
)

// BenchmarkDelayAccuracy measures the emulator's one-way delay error at
// 10,000 packets/s in each direction at once, on a 25 ms + 25 ms (50 ms
// RTT) link without jitter or loss: b.N packets of 64-byte UDP payload per
// direction, paced at 100 µs on average. The error of a packet is its
// one-way delay (kernel receive timestamp minus the sender's clock just
// before send) minus 25 ms; it includes the sender's and the kernel's share,
// so it is an upper bound of the forwarder's own error. Reported:
// err-p50-ms, err-p99-ms (aim: 0.25 and 1 ms) and lost packets.
//
//	go test -run '^$' -bench DelayAccuracy -benchtime 20000x ./experiments/instruments/linkemu
func BenchmarkDelayAccuracy(b *testing.B) {
	requireLink(b)
	const delay = 25 * time.Millisecond
	l := startLink(b, Symmetric("bench", Direction{Delay: delay, Rate: Unlimited}, 1))
	n := b.N
	var (
		mu   sync.Mutex
		errs []float64
		lost int
		wg   sync.WaitGroup
	)
	b.ResetTimer()
	for i, from := range []Side{A, B} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := oneWay(b, l, from, 7100+i, n, 64, 100*time.Microsecond)
			mu.Lock()
			defer mu.Unlock()
			for _, d := range r.delay {
				if d < 0 {
					lost++
					continue
				}
				errs = append(errs, float64(d-delay)/1e6)
			}
		}()
	}
	wg.Wait()
	b.StopTimer()
	if len(errs) == 0 {
		b.Fatal("no packet arrived")
	}
	slices.Sort(errs)
	b.ReportMetric(Quantile7(errs, 0.5), "err-p50-ms")
	b.ReportMetric(Quantile7(errs, 0.99), "err-p99-ms")
	b.ReportMetric(float64(lost), "lost")
	st := l.Stats()
	b.ReportMetric(float64(max(st.AtoB.LateP99, st.BtoA.LateP99))/1e6, "fwd-late-p99-ms")
}
