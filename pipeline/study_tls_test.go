package pipeline

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"pqrepro/internal/settings"
)

// TestTLSStagesCell: the analysis stage gets the spec's [paper.cell] and
// [paper.fallback] as parameters (the analysis judges on the first the
// run has), and a spec without a fallback gives none.
func TestTLSStagesCell(t *testing.T) {
	root := repoRoot(t)
	params := func(root string) map[string]string {
		t.Helper()
		stages, err := tlsStagesFor(root, "full", "data/tls/x", settings.Defaults())
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range stages {
			if s.Name == "tls:analyze" {
				return s.Params
			}
		}
		t.Fatal("no tls:analyze stage")
		return nil
	}
	p := params(root)
	if p["primary_cell"] != "openssl-cli/docker/direct" || p["fallback_cell"] != "openssl-cli/bridge/direct" {
		t.Errorf("primary_cell %q, fallback_cell %q; want experiments/tls.toml's [paper.cell] and [paper.fallback]", p["primary_cell"], p["fallback_cell"])
	}

	// The same spec without [paper.fallback].
	b, err := os.ReadFile(filepath.Join(root, "experiments", "tls.toml"))
	if err != nil {
		t.Fatal(err)
	}
	spec := string(b)
	i := strings.Index(spec, "[paper.fallback]")
	j := strings.Index(spec[i:], "[[paper.configs]]")
	if i < 0 || j < 0 {
		t.Fatal("experiments/tls.toml has no [paper.fallback] before [[paper.configs]]: update this test")
	}
	tmp := t.TempDir()
	if err := os.MkdirAll(filepath.Join(tmp, "experiments"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(tmp, "experiments", "tls.toml"), []byte(spec[:i]+spec[i+j:]), 0o644); err != nil {
		t.Fatal(err)
	}
	if p := params(tmp); p["fallback_cell"] != "" {
		t.Errorf("fallback_cell %q without [paper.fallback], want empty", p["fallback_cell"])
	}
}

// leftoverItems are the items of the leftovers whose heading starts what.
func leftoverItems(l Leftovers, what string) []string {
	var out []string
	for _, k := range l.Studies {
		if strings.HasPrefix(k.What, what) {
			out = append(out, k.Items...)
		}
	}
	return out
}

// What a killed run's docker path left (here the temp dir of a run killed
// before it wrote its state; dockernet's tests cover a live daemon) is
// reported by status with clean, and clean removes it; a live run's is
// neither reported nor removed (Study A's Leftovers and Clean, over a
// docker prefix of the test's own).
func TestLeftoverDocker(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	dead := filepath.Join(tmp, fmt.Sprintf("pqrdp%d-1-abc", deadPID(t)))
	live := filepath.Join(tmp, fmt.Sprintf("pqrdp%d-2-def", os.Getpid()))
	for _, d := range []string{dead, live} {
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	cfg, log, _ := fakeStudy(t)
	studies[0].Leftovers, studies[0].Clean = tlsLeftovers("pqrdp"), tlsClean("pqrdp")
	l := FindLeftovers(cfg)
	out := strings.Join(l.Lines(), "\n")
	docker := leftoverItems(l, "left by a killed run's docker path")
	if len(docker) != 1 || !strings.Contains(out, "temp dir "+dead) || !strings.Contains(out, "docker path (`go run mage.go clean` removes them)") {
		t.Fatalf("docker leftovers %v:\n%s", docker, out)
	}
	if err := Clean(cfg); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dead); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("clean left %s (%v); log:\n%s", dead, err, log)
	}
	if _, err := os.Stat(live); err != nil {
		t.Errorf("clean removed a live run's %s", live)
	}
	if !strings.Contains(log.String(), "docker: "+dead) {
		t.Errorf("clean did not say it removed %s:\n%s", dead, log)
	}
	if l := FindLeftovers(cfg); len(leftoverItems(l, "left by a killed run's docker path")) > 0 {
		t.Errorf("after clean: %v", l.Studies)
	}
}

// A Study A run killed by SIGKILL leaves its PEM folder in the temporary
// directory: status names it, clean removes it, and a live run's is not
// touched (Study A's registered Leftovers and Clean).
func TestLeftoverCertDir(t *testing.T) {
	tls := registered("tls")
	cfg, _, _ := fakeStudy(t)
	studies[0].Leftovers, studies[0].Clean = tls.Leftovers, tls.Clean
	t.Setenv("TMPDIR", t.TempDir())
	dead := filepath.Join(os.TempDir(), fmt.Sprintf("pqrepro-tls-openssl-%d-1", deadPID(t)))
	live := filepath.Join(os.TempDir(), fmt.Sprintf("pqrepro-tls-openssl-%d-2", os.Getpid()))
	for _, d := range []string{dead, live} {
		os.MkdirAll(filepath.Join(d, "pem"), 0o755)
	}
	out := strings.Join(FindLeftovers(cfg).Lines(), "\n")
	if !strings.Contains(out, dead) || strings.Contains(out, live) || !strings.Contains(out, "temporary folders of killed runs (`go run mage.go clean` removes them)") {
		t.Errorf("leftovers:\n%s", out)
	}
	cfg.Log = io.Discard
	if err := Clean(cfg); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dead); err == nil {
		t.Error("clean left the dead run's PEM folder")
	}
	if _, err := os.Stat(live); err != nil {
		t.Errorf("clean removed a live run's PEM folder: %v", err)
	}
}
