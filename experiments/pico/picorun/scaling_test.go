package picorun

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"pqrepro/experiments/instruments/runlife"
	"pqrepro/experiments/pico/picoboard"
	"pqrepro/internal/provenance"
)

// BenchmarkRunInstances runs a whole profile (PQREPRO_PICO_BENCH_PROFILE,
// default quick) on 1, 2 and 4 rp2040js instances, the images spread over
// them, and reports the wall time of the emulation (builds are done and
// cached before the timer starts; host timings are off, as they do not
// depend on the instances). Minutes per iteration, so it runs only when
// asked:
//
//	PQREPRO_PICO_BENCH=1 go test ./experiments/pico/picorun -run '^$' -bench RunInstances -benchtime 1x
//
// The full profile at one instance takes over 20 minutes: do not run it
// on a shared machine; README.md (Study C, several boards) extrapolates it
// from the quick profile with the cost model of estimate.go.
func BenchmarkRunInstances(b *testing.B) {
	if os.Getenv("PQREPRO_PICO_BENCH") == "" {
		b.Skip("set PQREPRO_PICO_BENCH=1: each iteration emulates a whole profile for minutes")
	}
	needTools(b)
	profile := os.Getenv("PQREPRO_PICO_BENCH_PROFILE")
	if profile == "" {
		profile = "quick"
	}
	body := strings.Replace(committedSpec(b), "host_timings = true", "host_timings = false", 1)
	specFile := func(b *testing.B) string {
		p := b.TempDir() + "/pico.toml"
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			b.Fatal(err)
		}
		return p
	}
	s, err := LoadSpec(specFile(b))
	if err != nil {
		b.Fatal(err)
	}
	prof, err := s.Profile(profile)
	if err != nil {
		b.Fatal(err)
	}
	root, err := picoboard.FindRoot("")
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	if _, err := buildImages(ctx, root, s, profile, prof, selectImages(picoboard.StandardImages(), prof.Images), io.Discard); err != nil {
		b.Fatal(err)
	}
	if _, err := picoboard.EnsureEmulator(ctx, root, io.Discard); err != nil {
		b.Fatal(err)
	}
	for _, n := range []int{1, 2, 4} {
		b.Run(fmt.Sprintf("instances=%d", n), func(b *testing.B) {
			var emu, simMHz float64
			var images int
			for i := 0; i < b.N; i++ {
				data := b.TempDir()
				t0 := time.Now()
				if _, err := Run(ctx, RunConfig{Config: runlife.Config{Profile: profile, SpecPath: specFile(b), DataDir: data}, Workers: n}); err != nil {
					b.Fatal(err)
				}
				emu += time.Since(t0).Seconds()
				runs, err := os.ReadDir(data + "/" + Study)
				if err != nil || len(runs) != 1 {
					b.Fatalf("runs %v (%v)", runs, err)
				}
				meta, err := provenance.Read(data + "/" + Study + "/" + runs[0].Name())
				if err != nil {
					b.Fatal(err)
				}
				imgs, _ := meta.Measured["images"].(map[string]any)
				for _, v := range imgs {
					m, _ := v.(map[string]any)
					if f, ok := m["simulated_mhz"].(float64); ok {
						simMHz += f
						images++
					}
				}
			}
			b.ReportMetric(emu/float64(b.N), "wall-s/run")
			if images > 0 {
				b.ReportMetric(simMHz/float64(images), "sim-MHz/image")
			}
		})
	}
}
