package netrun

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"testing"
	"time"

	"pqrepro/datasets/netdata"
	"pqrepro/experiments/instruments/linkemu"
	"pqrepro/internal/provenance"
	"pqrepro/internal/repro"
)

// TestQuickProfile runs a profile of the committed spec into a temporary
// tree (a copy of the spec, its own data dir and store; never the
// repository's) and logs the wall time, the ratios, the schedule and the
// median ths per scenario, round and group. The quick profile takes
// about a minute, so it runs only when asked (the CI suite covers the same
// code with the tiny specs above):
//
//	PQREPRO_NET_QUICK=1 go test -run TestQuickProfile -v ./experiments/net/netrun
//
// Knobs, for measuring the effect of parallel series:
//
//	PQREPRO_NET_PROFILE=full        another profile (full: -timeout 3h)
//	PQREPRO_NET_PARALLEL=1          override the profile's parallel_series
//	PQREPRO_NET_NOEXCLUSIVE=1       drop every exclusive = true
//	PQREPRO_NET_OUT=dir             build the tree in dir and keep it
func TestQuickProfile(t *testing.T) {
	if os.Getenv("PQREPRO_NET_QUICK") != "1" {
		t.Skip("opt-in measurement of a profile: set PQREPRO_NET_QUICK=1")
	}
	needRoot(t)
	b, err := os.ReadFile("../../net.toml")
	if err != nil {
		t.Fatal(err)
	}
	profile := cmp.Or(os.Getenv("PQREPRO_NET_PROFILE"), "quick")
	text := string(b)
	if p := os.Getenv("PQREPRO_NET_PARALLEL"); p != "" {
		text = regexp.MustCompile(`(?m)^parallel_series = \d+$`).ReplaceAllString(text, "parallel_series = "+p)
	}
	if os.Getenv("PQREPRO_NET_NOEXCLUSIVE") == "1" {
		text = regexp.MustCompile(`(?m)^exclusive = true$`).ReplaceAllString(text, "exclusive = false")
	}
	cfg, _ := tree(t, text)
	if out := os.Getenv("PQREPRO_NET_OUT"); out != "" {
		if err := os.MkdirAll(filepath.Join(out, "experiments"), 0o755); err != nil {
			t.Fatal(err)
		}
		cfg.Root = out
		cfg.SpecPath = filepath.Join(out, "experiments", "net.toml")
		cfg.Store = &repro.Store{Dir: filepath.Join(out, "store")}
		if err := os.WriteFile(cfg.SpecPath, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	copyEndpoint(t, cfg.Root)
	cfg.Profile = profile
	cfg.Log = os.Stdout
	cfg.ProgressEvery = 30 * time.Second
	start := time.Now()
	if _, err := Run(context.Background(), cfg); err != nil {
		t.Fatal(err)
	}
	t.Logf("%s profile wall time %v", profile, time.Since(start))
	if l, _ := linkemu.ListNamespaces("", linkemu.DefaultPrefix+itoa(os.Getpid())+"-"); len(l) > 0 {
		t.Errorf("namespaces left behind: %v", l)
	}
	dirs := runDirs(t, cfg)
	dir := filepath.Join(cfg.Root, "data", Study, dirs[len(dirs)-1])
	t.Logf("run folder %s, store %s", dir, cfg.Store.Dir)
	m, err := provenance.Read(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"wall_time_s", "handshake_work_s", "theoretical_min_s", "scheduled_min_s", "expected_s",
		"wall_to_theoretical_ratio", "wall_to_scheduled_min_ratio", "work_to_theoretical_ratio", "handshakes", "failures"} {
		t.Logf("%s = %v", k, m.Measured[k])
	}
	for _, x := range m.Measured["schedule"].(map[string]any)["series"].([]any) {
		s := x.(map[string]any)
		t.Logf("series %-26s %7.1f .. %7.1f s, handshakes %7.1f s (ratio %.3f), max concurrent %v",
			s["id"], s["handshakes_start_s"], s["handshakes_end_s"], s["handshakes_wall_s"], s["wall_to_theoretical_ratio"], s["max_concurrent"])
	}
	// Median ths (ms) per scenario, round and group, and per scenario and
	// group over all rounds.
	rows := readRows(t, filepath.Join(dir, netdata.RecordsFile))
	ths := map[string][]float64{}
	var keys []string
	for _, r := range rows[1:] {
		if r[9] == "" {
			continue
		}
		v, _ := strconv.ParseFloat(r[9], 64)
		tc := r[len(r)-1] // toolchain
		for _, k := range []string{r[0] + " " + r[2] + " " + tc + " all", r[0] + " " + r[2] + " " + tc + " " + r[1]} {
			if _, ok := ths[k]; !ok {
				keys = append(keys, k)
			}
			ths[k] = append(ths[k], v/1e6)
		}
	}
	slices.Sort(keys)
	for _, k := range keys {
		xs := ths[k]
		slices.Sort(xs)
		t.Logf("median ths %-40s n=%5d  %8.3f ms", k, len(xs), linkemu.Quantile7(xs, 0.5))
	}
	fmt.Println()
}
