package main

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const golden = "../../experiments/capture/testdata/golden.pcapng"

func TestPcapCommand(t *testing.T) {
	var out, errb bytes.Buffer
	if code := runPcap([]string{"--csv", golden}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 4 || lines[0] != strings.Join(pcapColumns, ",") {
		t.Fatalf("csv:\n%s", out.String())
	}
	out.Reset()
	if code := runPcap([]string{"--json", golden}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	var recs []map[string]any
	if err := json.Unmarshal(out.Bytes(), &recs); err != nil || len(recs) != 3 {
		t.Fatalf("json: %v, %d records", err, len(recs))
	}
	for _, c := range pcapColumns {
		if _, ok := recs[0][c]; !ok {
			t.Errorf("json lacks %s", c)
		}
	}
}

func TestPcapCommandBadInput(t *testing.T) {
	full, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	trunc := filepath.Join(dir, "trunc.pcapng")
	os.WriteFile(trunc, full[:len(full)-100], 0o600)
	var out, errb bytes.Buffer
	if code := runPcap([]string{"--json", trunc}, &out, &errb); code != 1 || !strings.Contains(errb.String(), "byte offset") {
		t.Fatalf("truncated: exit %d, stderr %q", code, errb.String())
	}
	var recs []map[string]any
	if err := json.Unmarshal(out.Bytes(), &recs); err != nil || len(recs) == 0 {
		t.Fatalf("truncated file kept no records: %v %s", err, out.String())
	}
	for _, args := range [][]string{{}, {"--csv", "--json", golden}, {filepath.Join(dir, "missing")}} {
		if code := runPcap(args, &out, &errb); code != 2 {
			t.Errorf("%v: exit %d, want 2", args, code)
		}
	}
}

// A capture committed gzip'd in a run folder reads like the plain one.
func TestPcapCommandGzip(t *testing.T) {
	raw, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	var zb bytes.Buffer
	zw := gzip.NewWriter(&zb)
	zw.Write(raw)
	zw.Close()
	gz := filepath.Join(t.TempDir(), "capture.pcapng.gz")
	os.WriteFile(gz, zb.Bytes(), 0o644)
	var plain, out, errb bytes.Buffer
	runPcap([]string{golden}, &plain, &errb)
	if code := runPcap([]string{gz}, &out, &errb); code != 0 || out.String() != plain.String() {
		t.Fatalf("exit %d, same output %v: %s", code, out.String() == plain.String(), errb.String())
	}
	os.WriteFile(gz, []byte("not gzip"), 0o644)
	if code := runPcap([]string{gz}, &out, &errb); code != 1 {
		t.Errorf("not gzip: exit %d", code)
	}
}
