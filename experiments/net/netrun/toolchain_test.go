package netrun

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"pqrepro/datasets/netdata"
	"pqrepro/internal/provenance"
)

// copyEndpoint puts the endpoint's source under root, as in the repository.
func copyEndpoint(t *testing.T, root string) {
	t.Helper()
	dst := filepath.Join(root, EndpointDir)
	if err := os.MkdirAll(dst, 0o755); err != nil {
		t.Fatal(err)
	}
	ents, err := os.ReadDir("../endpoint")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join("../endpoint", e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dst, e.Name()), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// runOnce records a run of cfg, checks that it left no namespace and
// made one run folder, and returns that folder.
func runOnce(t *testing.T, cfg RunConfig, log fmt.Stringer) string {
	t.Helper()
	if _, err := Run(context.Background(), cfg); err != nil {
		t.Fatalf("Run: %v\n%s", err, log)
	}
	if l := leftovers(t); len(l) > 0 {
		t.Errorf("namespaces left behind: %v", l)
	}
	dirs := runDirs(t, cfg)
	if len(dirs) != 1 {
		t.Fatalf("data/net holds %v, want one run", dirs)
	}
	return filepath.Join(cfg.Root, "data", Study, dirs[0])
}

// toolchainSpec is tinySpec with the toolchain factor in its profile.
func toolchainSpec(rounds string) string {
	return strings.Replace(tinySpec(0, "5000", rounds), "[runs]", "toolchains = [\"go1.24.4\", \"go1.27.3\"]\n[runs]", 1)
}

// skipWithoutToolchains builds both endpoints first, so that a machine
// that cannot fetch Go 1.24 skips with the reason instead of failing.
func skipWithoutToolchains(t *testing.T, root string) {
	t.Helper()
	for _, tc := range []string{"go1.24.4", "go1.27.3"} {
		buildOrSkip(t, root, tc)
	}
}

// TestRunToolchains runs Study B's handshakes with the endpoint built by
// Go 1.24 and by Go 1.27 on the same link seeds, and checks the records'
// toolchain column, the negotiated groups and meta.json.
func TestRunToolchains(t *testing.T) {
	needRoot(t)
	cfg, log := tree(t, toolchainSpec("[10]"))
	copyEndpoint(t, cfg.Root)
	skipWithoutToolchains(t, cfg.Root)
	dir := runOnce(t, cfg, log)
	rows := readRows(t, filepath.Join(dir, netdata.RecordsFile))
	col := map[string]int{}
	for i, c := range rows[0] {
		col[c] = i
	}
	count := map[string]int{}
	for _, r := range rows[1:] {
		count[r[col["toolchain"]]+"/"+r[col["group"]]]++
		if r[col["ok"]] != "true" || r[col["ths_ns"]] == "" || r[col["cap_group"]] != r[col["group"]] || r[col["hrr"]] != "false" {
			t.Errorf("row %v: want ok, the configured group in the capture, no HRR", r)
		}
	}
	for _, k := range []string{"go1.24.4/X25519", "go1.24.4/X25519MLKEM768", "go1.27.3/X25519", "go1.27.3/X25519MLKEM768"} {
		if count[k] != 10 {
			t.Errorf("%s: %d rows, want 10 (all: %v)", k, count[k], count)
		}
	}
	m, err := provenance.Read(dir)
	if err != nil {
		t.Fatal(err)
	}
	eps, _ := m.Measured["endpoints"].(map[string]any)
	for _, tc := range []string{"go1.24.4", "go1.27.3"} {
		e, _ := eps[tc].(map[string]any)
		if e["go_version"] != tc {
			t.Errorf("meta endpoints[%s] = %v", tc, e)
		}
	}
	// The host probe ran before and after the series with every build,
	// and its record reads back through the analysis' reader.
	mb, err := os.ReadFile(filepath.Join(dir, "meta.json"))
	if err != nil {
		t.Fatal(err)
	}
	pm, err := netdata.ParseProbeMeta("meta.json", mb)
	if err != nil {
		t.Fatal(err)
	}
	if p := pm.Probe; p == nil || p.N != ProbeN || len(p.Errors) != 0 {
		t.Errorf("meta host_probe = %+v", p)
	} else {
		for _, when := range []map[string]map[string]netdata.ProbeSpan{p.Before, p.After} {
			for _, k := range []string{"go1.24.4", "go1.27.3"} {
				if when[k]["X25519"].MedianMs <= 0 || when[k]["X25519MLKEM768"].MedianMs <= 0 {
					t.Errorf("host_probe %s: %+v", k, when[k])
				}
			}
		}
	}
	if d, _ := m.Measured["design"].(map[string]any); d["toolchains"] == nil {
		t.Errorf("meta design has no toolchains: %v", d)
	}
	if m.Files["captures/tiny-10-X25519MLKEM768-go1.24.4.pcapng"] == "" {
		t.Errorf("no capture for the Go 1.24 hybrid series: %v", m.Files)
	}
	// The endpoint series' rows, toolchain column included, re-derive
	// from their captures through netjoin like in-process ones.
	checkRederive(t, cfg.Root, dir, 4)
}

// TestRunWrongGroupFails: an endpoint client that offers another group
// than its server supports fails the run (a configuration error, not a
// network failure), and no run is registered.
func TestRunWrongGroupFails(t *testing.T) {
	needRoot(t)
	cfg, log := tree(t, toolchainSpec("[3]"))
	copyEndpoint(t, cfg.Root)
	skipWithoutToolchains(t, cfg.Root)
	testHookDialGroup = func(g string) string {
		if g == "X25519" {
			return "X25519MLKEM768"
		}
		return g
	}
	defer func() { testHookDialGroup = nil }()
	_, err := Run(context.Background(), cfg)
	if err == nil || !strings.Contains(err.Error(), "not a network failure") {
		t.Fatalf("err = %v, want the run to fail on the configuration\n%s", err, log)
	}
	if d := runDirs(t, cfg); len(d) != 0 {
		t.Errorf("data/net holds %v after a failed run", d)
	}
	if l := leftovers(t); len(l) > 0 {
		t.Errorf("namespaces left behind: %v", l)
	}
}
