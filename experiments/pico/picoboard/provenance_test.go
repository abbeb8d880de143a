package picoboard

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestProvenancePQ(t *testing.T) {
	img := testImage(t, "test-mlkem512")
	p := img.Provenance()
	for k, want := range map[string]string{
		"pqclean.version": "0.8.1",
		"image":           "test-mlkem512",
		"profile":         "quick",
		"seed":            "0x5eed2040",
		"schemes":         "ml-kem-512",
	} {
		if p[k] != want {
			t.Errorf("%s = %q, want %q", k, p[k], want)
		}
	}
	for _, k := range []string{"pqclean.lock_sha256", "uf2_sha256", "elf_sha256", "source.firmware", "source.pqclean/ml-kem-512", "ldflags", "heap_bytes"} {
		if len(p[k]) == 0 {
			t.Errorf("no %s in %v", k, p)
		}
	}
	if _, ok := p["mbedtls.version"]; ok {
		t.Error("a PQ-only image names mbedTLS")
	}
	if !strings.Contains(p["defines"], "WITH_MLKEM512") || !strings.Contains(p["cflags"], "-O3") {
		t.Errorf("defines %q cflags %q", p["defines"], p["cflags"])
	}
	// The recorded UF2 hash is the file's.
	b, err := os.ReadFile(img.UF2)
	if err != nil {
		t.Fatal(err)
	}
	if got := sha256hex(b); got != p["uf2_sha256"] {
		t.Errorf("uf2_sha256 %s, file %s", p["uf2_sha256"], got)
	}
}

func TestPQCleanLockErrors(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "experiments/pico/firmware/deps")
	if _, _, err := pqcleanLock(root); err == nil {
		t.Error("missing lock file passed")
	}
	os.MkdirAll(dir, 0o755)
	for _, bad := range []string{"{", `{"packages":{}}`} {
		os.WriteFile(filepath.Join(dir, "package-lock.json"), []byte(bad), 0o644)
		if _, _, err := pqcleanLock(root); err == nil {
			t.Errorf("lock %q passed", bad)
		}
	}
	os.WriteFile(filepath.Join(dir, "package-lock.json"), []byte(`{"packages":{"node_modules/pqclean":{"version":"9.9.9"}}}`), 0o644)
	if v, sum, err := pqcleanLock(root); err != nil || v != "9.9.9" || len(sum) != 64 {
		t.Errorf("%q %q %v", v, sum, err)
	}
}
