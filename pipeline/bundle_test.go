package pipeline_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"pqrepro/internal/bundle"
	"pqrepro/internal/settings"
	"pqrepro/pipeline"
)

// committedRepo makes a minimal committed repository that passes
// pipeline.Config.Validate and carries what a bundle must.
func committedRepo(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed: the bundle reads the commit from Git (Debian package git)")
	}
	root := t.TempDir()
	for name, content := range map[string]string{
		"go.mod": "module demo\n\ngo 1.27.3\n", "SHA256SUMS": "", "CITATION.cff": "cff-version: 1.2.0\n", "LICENSE": "BSD-3-Clause\n", "LICENSE-DATA": "CC-BY-4.0\n", "README.md": "# demo\n",
	} {
		if err := os.WriteFile(filepath.Join(root, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, args := range [][]string{{"init", "-q"}, {"add", "-A"}, {"commit", "-q", "-m", "x"}} {
		cmd := exec.Command("git", append([]string{"-C", root, "-c", "commit.gpgsign=false"}, args...)...)
		cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1",
			"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	return root
}

// TestPipelineBundle runs the function `mage bundle` calls.
func TestPipelineBundle(t *testing.T) {
	root := committedRepo(t)
	s := settings.Defaults()
	s.Store = t.TempDir()
	var log bytes.Buffer
	cfg := pipeline.Config{Root: root, Profile: settings.Full, Log: &log, Settings: &s}
	if err := pipeline.Bundle(context.Background(), cfg); err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^([0-9a-f]{64})  (pqrepro-[0-9a-f]{12}\.tar\.gz)$`).FindStringSubmatch(log.String())
	if m == nil {
		t.Fatalf("no sha256sum line in the output:\n%s", log.String())
	}
	b, err := os.ReadFile(filepath.Join(root, ".cache", "dist", m[2]))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(log.String(), "size ") {
		t.Errorf("the size is not printed:\n%s", log.String())
	}
	if sum := sha256.Sum256(b); hex.EncodeToString(sum[:]) != m[1] {
		t.Errorf("printed sha256 %s, the file has %x", m[1], sum)
	}

	// A dirty tree is refused, unless PQREPRO_BUNDLE_DIRTY=1.
	if err := os.WriteFile(filepath.Join(root, "README.md"), []byte("# edited\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := pipeline.Bundle(context.Background(), cfg); err == nil || !strings.Contains(err.Error(), "README.md") {
		t.Errorf("dirty tree: err = %v", err)
	}
	s.BundleDirty = true
	if err := pipeline.Bundle(context.Background(), cfg); err != nil {
		t.Errorf("PQREPRO_BUNDLE_DIRTY=1: %v", err)
	}
	if _, err := os.Stat(filepath.Join(root, ".cache", "dist", strings.TrimSuffix(m[2], ".tar.gz")+"-dirty.tar.gz")); err != nil {
		t.Error(err)
	}
}

// TestPipelineMeasure: PQREPRO_BUNDLE_MEASURE=1 times verify, paper and
// build and writes the timings file instead of a bundle.
func TestPipelineMeasure(t *testing.T) {
	root := committedRepo(t)
	s := settings.Defaults()
	s.BundleMeasure = true
	var log bytes.Buffer
	if err := pipeline.Bundle(context.Background(), pipeline.Config{Root: root, Profile: settings.Full, Log: &log, Settings: &s}); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(bundle.DefaultTimingsFile)))
	if err != nil {
		t.Fatal(err)
	}
	var tm bundle.Timings
	if err := json.Unmarshal(b, &tm); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"verify", "paper", "build"} {
		if _, ok := tm.Targets[name]; !ok {
			t.Errorf("no time for %s in %s", name, b)
		}
	}
	// This repository has no paper/main.tex: paper fails, and says so.
	if p := tm.Targets["paper"]; !p.Failed || !strings.Contains(p.Note, "main.tex") {
		t.Errorf("paper timing %+v", p)
	}
	if entries, _ := os.ReadDir(filepath.Join(root, ".cache", "dist")); len(entries) != 0 {
		t.Error("measuring also wrote a bundle")
	}
}
