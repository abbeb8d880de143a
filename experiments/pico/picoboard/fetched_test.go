package picoboard

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

func TestSourcesFetched(t *testing.T) {
	root := t.TempDir()
	steps := []string{".cache/pico/npm-fw/node_modules", ".cache/pico/npm-emu/node_modules"}
	for _, d := range steps {
		if SourcesFetched(root) {
			t.Fatalf("fetched before %s exists", d)
		}
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if SourcesFetched(root) {
		t.Fatal("fetched without mbedTLS")
	}
	stamp := filepath.Join(root, ".cache/pico", "mbedtls-"+MbedTLSVersion, mbedtlsStampFileName)
	os.MkdirAll(filepath.Dir(stamp), 0o755)
	if err := os.WriteFile(stamp, []byte(`{}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if SourcesFetched(root) {
		t.Fatal("fetched with a stamp that is not the pinned source's")
	}
	b, _ := json.Marshal(pinnedMbedTLS(""))
	if err := os.WriteFile(stamp, b, 0o644); err != nil {
		t.Fatal(err)
	}
	if !SourcesFetched(root) {
		t.Error("not fetched with every cache in place")
	}
}
