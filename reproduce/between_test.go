package reproduce

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestBetweenCandidates: of a study's runs only those of the reference's
// profile, spec and host whose quiet check passed are used (the
// reference itself among them); every other run is named with why.
func TestBetweenCandidates(t *testing.T) {
	root := t.TempDir()
	write := func(id, profile, spec, cpu, verdict string) {
		dir := filepath.Join(root, "data", "x", id)
		os.MkdirAll(dir, 0o755)
		os.WriteFile(filepath.Join(dir, "meta.json"), []byte(`{"profile":"`+profile+`","spec_sha256":"`+spec+`","host":{"cpu_model":"`+cpu+`","cores":2,"kernel":"Linux 6.18","arch":"amd64","memory_kb":1000},"go":{"version":"go1.27.3"},"measured":{"machine":{"verdict":"`+verdict+`"}}}`), 0o644)
	}
	write("r1", "quick", "s", "Xeon", "quiet")
	write("r2", "quick", "s", "Xeon", "quiet")
	write("r3", "quick", "s", "Xeon", "quiet")
	write("busy", "quick", "s", "Xeon", "busy")
	write("full", "full", "s", "Xeon", "quiet")
	write("spec", "quick", "t", "Xeon", "quiet")
	write("amd", "quick", "s", "AMD EPYC", "quiet")
	write("old", "quick", "s", "Xeon", "")
	// r3 is refused by the check of its seal: left out, with the reason.
	sound := func(run string) error {
		if run == "data/x/r3" {
			return errors.New("data/x/r3/records.csv.gz: content differs from the sealed run")
		}
		return nil
	}
	ids, left, err := betweenCandidates(root, "x", "data/x/r2", sound)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(ids, []string{"r1", "r2"}) {
		t.Errorf("runs %v, want r1 r2", ids)
	}
	all := strings.Join(left, "\n")
	for _, want := range []string{`busy: quiet check not passed (verdict "busy")`, "full: profile full", "spec: another spec", `amd: another host (CPU "Xeon" vs "AMD EPYC")`, `old: quiet check not passed (verdict "")`, "r3: not sound evidence: data/x/r3/records.csv.gz: content differs from the sealed run"} {
		if !strings.Contains(all, want) {
			t.Errorf("left out:\n%s\nlacks %q", all, want)
		}
	}
	if _, _, err := betweenCandidates(root, "x", "data/x/none", sound); err == nil || !strings.Contains(err.Error(), "the reference run's meta.json: data/x/none/meta.json: no such file") || strings.Contains(err.Error(), root) {
		t.Errorf("no reference meta.json: %v", err)
	}

	// Runs of one design match across the pins that changed their spec
	// files (spec_design_sha256); where one run lacks the design hash,
	// the file's hash decides.
	root = t.TempDir()
	writeMeta(t, root, "data/x/a", "quick", "s1", "d", "Xeon", "quiet")
	writeMeta(t, root, "data/x/b", "quick", "s2", "d", "Xeon", "quiet")
	writeMeta(t, root, "data/x/c", "quick", "s3", "e", "Xeon", "quiet")
	writeMeta(t, root, "data/x/old", "quick", "s1", "", "Xeon", "quiet")
	writeMeta(t, root, "data/x/old2", "quick", "s9", "", "Xeon", "quiet")
	if ids, _, err := betweenCandidates(root, "x", "data/x/a", func(string) error { return nil }); err != nil || !slices.Equal(ids, []string{"a", "b", "old"}) {
		t.Errorf("by design: runs %v (%v), want a b old", ids, err)
	}
}
