package reproduce

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"pqrepro/internal/repro"
	"pqrepro/internal/settings"
	"pqrepro/internal/spec"
)

func TestFillDocBlock(t *testing.T) {
	doc := filepath.Join(t.TempDir(), "a.md")
	os.WriteFile(doc, []byte("x\n<!-- calibration:quick -->\nold\n<!-- end calibration:quick -->\ny\n"), 0o644)
	if err := fillDocBlock(doc, "quick", "new\n"); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(doc); string(b) != "x\n<!-- calibration:quick -->\n```\nnew\n```\n<!-- end calibration:quick -->\ny\n" {
		t.Errorf("%q", b)
	}
	if err := fillDocBlock(doc, "full", "new\n"); err == nil || !strings.Contains(err.Error(), "calibration:full") {
		t.Errorf("no block: %v", err)
	}
}

// TestCalibrationInputs checks that the digest moves with each input.
func TestCalibrationInputs(t *testing.T) {
	root := t.TempDir()
	write := func(rel, text string) {
		p := filepath.Join(root, rel)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// The studies' pins are read from their specs, as the registry does.
	studies := []Study{{Name: "tls", Stages: func(string, string) ([]*repro.Stage, error) { return nil, nil },
		Pinned: func(profile string) (string, error) { return spec.PinnedRun(root, "tls", profile) }}}
	write("analysis/agreement/rule.go", "package agreement\n")
	write("reproduce/calibrate.go", "package reproduce\n")
	digest := func() string {
		d, err := CalibrationInputs(root, settings.Quick, studies, 200, 1)
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	base := digest()
	if d, _ := CalibrationInputs(root, settings.Quick, studies, 200, 1); d != base {
		t.Fatal("the same tree gave two digests")
	}
	for _, tc := range []struct {
		name   string
		change func()
		moves  bool
	}{
		{"a test file", func() { write("analysis/agreement/rule_test.go", "package agreement\n") }, false},
		{"another reproduce file", func() { write("reproduce/all.go", "package reproduce\n") }, false},
		{"analysis code", func() { write("analysis/agreement/rule.go", "package agreement // changed\n") }, true},
		{"calibration code", func() { write("reproduce/calibrate.go", "package reproduce // changed\n") }, true},
		{"a new run", func() { write("data/tls/20261204T000000Z-quick/meta.json", "{}") }, true},
	} {
		before := digest()
		tc.change()
		if moved := digest() != before; moved != tc.moves {
			t.Errorf("%s: digest moved %v, want %v", tc.name, moved, tc.moves)
		}
	}
	if d, _ := CalibrationInputs(root, settings.Quick, studies, 20, 1); d == digest() {
		t.Error("K does not move the digest")
	}
	text := "calibration of `all` at the quick profile: K = 20 pseudo-replicate pairs, seed 7 (x)\n" + inputsLine("0123456789abcdef") + "\n"
	if d, k, s := CalibrationDigest(text); d != "0123456789abcdef" || k != 20 || s != 7 {
		t.Errorf("calibrationDigest = %q, %d, %d", d, k, s)
	}
}
