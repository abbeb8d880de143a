package pipeline

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
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
