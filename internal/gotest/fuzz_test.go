package gotest

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestBounded(t *testing.T) {
	root := t.TempDir()
	os.MkdirAll(filepath.Join(root, "pkg"), 0o755)
	os.MkdirAll(filepath.Join(root, ".cache", "x"), 0o755)
	os.WriteFile(filepath.Join(root, "pkg", ListFile), []byte("# a comment\necho ran >> fuzzed\n\n"), 0o644)
	// A list under a hidden folder is not the project's.
	os.WriteFile(filepath.Join(root, ".cache", "x", ListFile), []byte("false\n"), 0o644)
	var log bytes.Buffer

	if err := Bounded(context.Background(), root, false, &log); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(log.String(), "not run: set PQREPRO_FUZZ=1") {
		t.Errorf("no word about the skipped fuzz runs:\n%s", log.String())
	}
	if _, err := os.Stat(filepath.Join(root, "fuzzed")); err == nil {
		t.Error("fuzz runs ran although neither CI nor PQREPRO_FUZZ is set")
	}

	log.Reset()
	if err := Bounded(context.Background(), root, true, &log); err != nil {
		t.Fatalf("%v\n%s", err, log.String())
	}
	if b, _ := os.ReadFile(filepath.Join(root, "fuzzed")); string(b) != "ran\n" || !strings.Contains(log.String(), "fuzz 1/1") {
		t.Errorf("fuzzed = %q, log:\n%s", b, log.String())
	}

	os.WriteFile(filepath.Join(root, "pkg", ListFile), []byte("exit 3\n"), 0o644)
	if err := Bounded(context.Background(), root, true, &log); err == nil || !strings.Contains(err.Error(), "regression case") {
		t.Errorf("a failing fuzz run: %v", err)
	}
}
