package main

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"pqrepro/experiments/instruments/capture"
)

const golden = "../../experiments/instruments/capture/testdata/golden.pcapng"

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
	if code := runPcap([]string{gz}, &out, &errb); code != 2 {
		t.Errorf("not gzip: exit %d, want 2 (unreadable input)", code)
	}
}

// TestPcapExitCodes: 0 good, 1 damaged with the good records printed, 2
// usage or unreadable input with nothing on stdout.
func TestPcapExitCodes(t *testing.T) {
	full, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	cases := []struct {
		name   string
		args   []string
		code   int
		stdout bool   // something on stdout
		stderr string // substring of stderr
	}{
		{"good", []string{golden}, 0, true, ""},
		{"truncated", []string{write("trunc.pcapng", full[:len(full)-100])}, 1, true, "records read before it"},
		{"directory", []string{dir}, 2, false, "is a directory"},
		{"missing", []string{filepath.Join(dir, "missing")}, 2, false, "no such file"},
		{"empty", []string{write("empty", nil)}, 2, false, "shorter than a capture header"},
		{"text", []string{write("text", []byte("not a capture, just text\n"))}, 2, false, "neither pcap nor pcapng"},
		{"damaged before the first packet", []string{write("hdr.pcapng", full[:40])}, 2, false, "nothing could be read"},
		{"missing key log", []string{"--keylog", filepath.Join(dir, "nokeys"), golden}, 2, false, "read key log"},
		{"endless key log", []string{"--keylog", "/dev/zero", golden}, 2, false, "key log larger than 64 MiB"},
		{"no file", nil, 2, false, "usage"},
		{"two formats", []string{"--csv", "--json", golden}, 2, false, "usage"},
		{"help", []string{"-h"}, 0, false, "Exit codes:"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			code := runPcap(c.args, &out, &errb)
			if code != c.code || (out.Len() > 0) != c.stdout || !strings.Contains(errb.String(), c.stderr) {
				t.Errorf("exit %d (want %d), stdout %d bytes (want some: %v), stderr %q (want %q)", code, c.code, out.Len(), c.stdout, errb.String(), c.stderr)
			}
		})
	}
}

// stripSecrets rewrites the golden capture as a classic pcap without its
// Decryption Secrets Block and returns the secrets.
func stripSecrets(t *testing.T) (string, []byte) {
	t.Helper()
	f, err := os.Open(golden)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	src, err := capture.NewSource(f)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	for n := 0; ; n++ {
		p, err := src.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			binary.Write(&out, binary.LittleEndian, struct {
				Magic        uint32
				Major, Minor uint16
				Zone, Sig    uint32
				Snap, Link   uint32
			}{0xa1b23c4d, 2, 4, 0, 0, 262144, p.LinkType})
		}
		binary.Write(&out, binary.LittleEndian, [4]uint32{uint32(p.TsNs / 1e9), uint32(p.TsNs % 1e9), uint32(len(p.Data)), uint32(p.OrigLen)})
		out.Write(p.Data)
	}
	path := filepath.Join(t.TempDir(), "nosecrets.pcap")
	if err := os.WriteFile(path, out.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	return path, src.Secrets
}

// TestPcapKeyLog: no, correct, garbage, mismatched and wrong-secret key logs
// each give different output or warnings.
func TestPcapKeyLog(t *testing.T) {
	pcap, secrets := stripSecrets(t)
	var mismatched, wrong strings.Builder
	for line := range strings.Lines(string(secrets)) {
		f := strings.Fields(line)
		if len(f) != 3 {
			continue
		}
		mismatched.WriteString(f[0] + " " + strings.Repeat("ab", 32) + " " + f[2] + "\n")
		wrong.WriteString(f[0] + " " + f[1] + " " + strings.Repeat("00", len(f[2])/2) + "\n")
	}
	dir := t.TempDir()
	logs := map[string]string{
		"correct": string(secrets), "garbage": "garbage\n\x01\x02\n", "mismatched": mismatched.String(), "wrong": wrong.String(),
	}
	want := map[string]struct{ col, warn string }{
		"none":       {",,", ""},
		"correct":    {",true,verified", ""},
		"garbage":    {",,", "is a key log line"},
		"mismatched": {",,no_secret", "another run"},
		"wrong":      {",false,decrypt_failed", "did not decrypt"},
	}
	seen := map[string]string{}
	for name, w := range want {
		args := []string{pcap}
		if kl, ok := logs[name]; ok {
			p := filepath.Join(dir, name)
			os.WriteFile(p, []byte(kl), 0o600)
			args = []string{"--keylog", p, pcap}
		}
		var out, errb bytes.Buffer
		if code := runPcap(args, &out, &errb); code != 0 {
			t.Fatalf("%s: exit %d: %s", name, code, errb.String())
		}
		lines := strings.Split(strings.TrimSpace(out.String()), "\n")
		for _, l := range lines[1:] {
			if !strings.HasSuffix(l, w.col) {
				t.Errorf("%s: row %q does not end in %q", name, l, w.col)
			}
		}
		if !strings.Contains(errb.String(), w.warn) || (w.warn == "" && strings.Contains(errb.String(), "key log")) {
			t.Errorf("%s: stderr %q, want %q", name, errb.String(), w.warn)
		}
		key := out.String() + errb.String()
		if other, dup := seen[key]; dup {
			t.Errorf("%s and %s give the same output", name, other)
		}
		seen[key] = name
	}
}
