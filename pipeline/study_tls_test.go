package pipeline

import (
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
