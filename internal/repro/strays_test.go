package repro

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestStrayEntries(t *testing.T) {
	root := t.TempDir()
	mk := func(rel string, files ...string) {
		os.MkdirAll(filepath.Join(root, rel), 0o755)
		for _, f := range files {
			os.WriteFile(filepath.Join(root, rel, f), []byte("x\n"), 0o644)
		}
	}
	mk("data/tls/20261130T120000Z-quick", ManifestFile, "meta.json") // a sealed run
	mk("data/tls/.incomplete-20261130T120001Z-quick-1", "meta.json") // a leftover, reported elsewhere
	mk("data/tls/zzattack", "meta.json")
	mk("data/tls/20261130T120002Z-full", "meta.json")  // valid ID, unsealed
	mk("data/tls/20261130T1200Z-full", ManifestFile)   // malformed ID
	mk("data/tls/20261130T120003Z-Full", ManifestFile) // upper case
	mk("data/tls/20261130T120004Z-q", "x")
	os.MkdirAll(filepath.Join(root, "data/tls/20261130T120004Z-q", ManifestFile), 0o755) // a folder named like the manifest
	mk("data/net", "loose.csv")
	got, err := StrayEntries(root, []string{"data"})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"data/net/loose.csv":             "not a run",
		"data/tls/20261130T120002Z-full": "not a sealed run",
		"data/tls/20261130T1200Z-full":   "not a run ID",
		"data/tls/20261130T120003Z-Full": "not a run ID",
		"data/tls/20261130T120004Z-q":    "not a sealed run",
		"data/tls/zzattack":              "not a run ID",
	}
	if len(got) != len(want) {
		t.Errorf("got %d stray entries, want %d: %v", len(got), len(want), got)
	}
	for _, p := range got {
		if w, ok := want[p.Path]; !ok || !strings.Contains(p.What, w) || !strings.Contains(p.What, SumsFile) {
			t.Errorf("%s: %q, want it to say %q and that %s does not list it", p.Path, p.What, w, SumsFile)
		}
	}
}
