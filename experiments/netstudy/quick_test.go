package netstudy

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"pqrepro/internal/provenance"
)

// TestQuickProfile runs the committed spec's quick profile into a temporary
// tree and logs the wall time and the wall/theoretical ratio. It takes
// about a minute, so it runs only when PQREPRO_NET_QUICK=1 (the CI suite
// covers the same code with the tiny specs above):
//
//	PQREPRO_NET_QUICK=1 go test -run TestQuickProfile -v ./experiments/netstudy
func TestQuickProfile(t *testing.T) {
	if os.Getenv("PQREPRO_NET_QUICK") != "1" {
		t.Skip("opt-in measurement of the quick profile: set PQREPRO_NET_QUICK=1")
	}
	needRoot(t)
	b, err := os.ReadFile("../net.toml")
	if err != nil {
		t.Fatal(err)
	}
	cfg, _ := tree(t, string(b))
	cfg.Profile = "quick"
	cfg.Log = os.Stdout
	cfg.ProgressEvery = 5 * time.Second
	start := time.Now()
	if err := Run(context.Background(), cfg); err != nil {
		t.Fatal(err)
	}
	t.Logf("quick profile wall time %v", time.Since(start))
	dirs := runDirs(t, cfg)
	m, err := provenance.Read(filepath.Join(cfg.Root, "data", Study, dirs[0]))
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"wall_time_s", "theoretical_min_s", "expected_s", "wall_to_theoretical_ratio", "handshakes", "failures", "capture"} {
		t.Logf("%s = %v", k, m.Measured[k])
	}
	if out := os.Getenv("PQREPRO_NET_QUICK_KEEP"); out != "" {
		os.CopyFS(out, os.DirFS(filepath.Join(cfg.Root, "data", Study, dirs[0])))
	}
}
