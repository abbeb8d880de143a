package pipeline

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"pqrepro/analysis/netstudy"
)

// A pqr-* namespace whose creator is dead is reported with net:clean,
// and net:clean removes it (Study B's Leftovers and Clean). The test
// creates its own, named after no live PID; it never touches namespaces
// it did not create.
func TestLeftoverNamespace(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to create a network namespace")
	}
	if _, err := exec.LookPath("ip"); err != nil {
		t.Skipf("ip(8) creates the namespace: %v", err)
	}
	name := fmt.Sprintf("pqr-locktest%d-%d-a", deadPID(t), os.Getpid())
	if out, err := exec.Command("ip", "netns", "add", name).CombinedOutput(); err != nil {
		t.Skipf("ip netns add: %v %s", err, out)
	}
	t.Cleanup(func() { exec.Command("ip", "netns", "del", name).Run() })
	net := registered("net")
	cfg, log, _ := fakeStudy(t)
	studies[0].Leftovers, studies[0].Clean = net.Leftovers, net.Clean
	l := FindLeftovers(cfg)
	found := false
	for _, k := range l.Studies {
		found = found || slices.Contains(k.Items, name)
	}
	out := strings.Join(l.Lines(), "\n")
	if !found || !strings.Contains(out, "network namespaces of a killed net:run (`go run mage.go net:clean` removes them)") {
		t.Fatalf("namespace %s not reported:\n%s", name, out)
	}
	if err := Clean(cfg); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat("/run/netns/" + name); err != nil {
		t.Errorf("clean removed the namespace, which needs net:clean: %v", err)
	}
	log.Reset()
	if err := NetClean(context.Background(), cfg); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(log.String(), "net:clean: removed ") || !strings.Contains(log.String(), name) {
		t.Errorf("net:clean did not say it removed %s:\n%s", name, log)
	}
	if _, err := os.Stat("/run/netns/" + name); err == nil {
		t.Errorf("net:clean left %s", name)
	}
}

// TestNetCleanNothingLeft: net:clean with no namespace left says so for
// Study B's prefix, and clean leaves Study B's namespaces to net:clean.
func TestNetCleanNothingLeft(t *testing.T) {
	net := registered("net")
	var log bytes.Buffer
	cfg := Config{Root: t.TempDir(), Log: &log}
	// Only the removal of namespaces that net:clean makes, and nothing
	// on clean: a hook that removed namespaces for clean would need root.
	if gone, err := net.Clean(context.Background(), cfg, "clean"); err != nil || len(gone) > 0 || log.Len() > 0 {
		t.Errorf("Study B's Clean for clean: %v, %v, %q", gone, err, log.String())
	}
	if m, _ := filepath.Glob("/run/netns/pqr-*"); len(m) > 0 {
		t.Skipf("this host has namespaces named pqr-* (%v): whether they are left over is not the test's to decide", m)
	}
	if _, err := net.Clean(context.Background(), cfg, "net:clean"); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(log.String(), "net:clean: no namespace named pqr-* left behind") {
		t.Errorf("net:clean with nothing left:\n%s", log.String())
	}
}

// Study B's normalised items are its results' normalised differences,
// one per comparison, named by scenario and round, reasons kept.
func TestNetNormalised(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "results", "net.json"))
	if err != nil {
		t.Fatal(err)
	}
	r, err := netstudy.DecodeResults("net.json", b)
	if err != nil {
		t.Fatal(err)
	}
	r.Normalised = []netstudy.NormalisedDifference{
		{Scenario: "far", Round: 1000, ObservedMs: 2.4, PredictedMs: 2.2, Ratio: netstudy.Num(2.4 / 2.2)},
		{Scenario: "lan", Round: 1000, ObservedMs: 0.3, PredictedMs: netstudy.Num(math.NaN()), Ratio: netstudy.Num(math.NaN()), NotJudged: "no host probe in this run"},
	}
	if b, err = json.Marshal(r); err != nil {
		t.Fatal(err)
	}
	got, err := netNormalised("net.json", b)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].Name != "far round 1000 difference / host prediction" || math.Abs(got[0].Ratio-2.4/2.2) > 1e-9 ||
		got[1].NotJudged != "no host probe in this run" || !math.IsNaN(got[1].Ratio) {
		t.Errorf("netNormalised = %+v", got)
	}
	if _, err := netNormalised("net.json", []byte(`{}`)); err == nil {
		t.Error("empty results were read")
	}
}
