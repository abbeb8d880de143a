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
	mk("data/.x/tls/20261130T120005Z-quick", ManifestFile) // a hidden folder beside the studies
	mk("data", "notes.txt")
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
		"data/.x":                        "not a study folder",
		"data/notes.txt":                 "not a study folder",
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

func TestRunFolders(t *testing.T) {
	root := t.TempDir()
	mk := func(rel string, files ...string) {
		os.MkdirAll(filepath.Join(root, rel), 0o755)
		for _, f := range files {
			os.WriteFile(filepath.Join(root, rel, f), []byte("x\n"), 0o644)
		}
	}
	mk("data/tls/20261130T120000Z-quick", ManifestFile)
	mk("data/net/20261130T120001Z-full", ManifestFile, "meta.json")
	mk("data/tls/20261130T120002Z-full", "meta.json")                 // unsealed: a stray
	mk("data/tls/.incomplete-20261130T120003Z-quick-1", ManifestFile) // in progress
	mk("data/tls/zz", ManifestFile)                                   // not a run ID
	mk("data/.x/20261130T120004Z-quick", ManifestFile)                // hidden study
	got, err := RunFolders(root, []string{"data"})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"data/net/20261130T120001Z-full", "data/tls/20261130T120000Z-quick"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("RunFolders = %v, want %v", got, want)
	}
}
