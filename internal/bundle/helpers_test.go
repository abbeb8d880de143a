package bundle

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"pqrepro/internal/repro"
)

// testEpoch is the SOURCE_DATE_EPOCH of the tests (2026-01-01).
var testEpoch = repro.EpochOr(time.Time{})

// fixture is a temporary Git repository shaped like pqrepro: committed
// code, an executable script, one run with a meta.json that refers to a
// capture in a separate content store.
type fixture struct {
	Root, StoreDir, Out string
	Store               *repro.Store
	Capture             string // SHA-256 of the stored capture
	RunDir              string // data/tls/<run>
}

func needGit(t testing.TB) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed: the bundle reads the commit and the tracked files from Git (Debian package git)")
	}
}

// runGit runs git in dir with a configuration independent of the user's.
func runGit(t testing.TB, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-C", dir, "-c", "commit.gpgsign=false", "-c", "core.fileMode=true"}, args...)...)
	cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1",
		"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com",
		"GIT_AUTHOR_DATE=2026-01-01T00:00:00Z", "GIT_COMMITTER_DATE=2026-01-01T00:00:00Z")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

func writeFile(t testing.TB, root, rel, content string, perm os.FileMode) {
	t.Helper()
	p := filepath.Join(root, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), perm); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(p, perm); err != nil { // WriteFile keeps the mode of an existing file
		t.Fatal(err)
	}
}

const testReadme = `# demo

## Requirements

- Go 1.27.3 and root for captures.

## Targets

not copied

## Hardware notes

Not here: in docs/hardware.md.
`

const testHardware = `# Hardware

## Hardware notes

No board was attached.

## Elsewhere

not copied
`

// newFixture makes the repository and commits it.
func newFixture(t testing.TB) *fixture {
	t.Helper()
	needGit(t)
	f := &fixture{Root: t.TempDir(), StoreDir: t.TempDir(), Out: t.TempDir()}
	f.Store = &repro.Store{Dir: f.StoreDir}
	runGit(t, f.Root, "init", "-q", "-b", "main")

	capture := filepath.Join(t.TempDir(), "capture.pcapng")
	if err := os.WriteFile(capture, bytes.Repeat([]byte("pcapng-bytes "), 1000), 0o644); err != nil {
		t.Fatal(err)
	}
	sum, err := f.Store.Put(capture)
	if err != nil {
		t.Fatal(err)
	}
	f.Capture = sum
	f.RunDir = "data/tls/20260101T000000Z-quick"

	writeFile(t, f.Root, "README.md", testReadme, 0o644)
	writeFile(t, f.Root, HardwareDoc, testHardware, 0o644)
	writeFile(t, f.Root, "go.mod", "module demo\n\ngo 1.27.3\n", 0o644)
	writeFile(t, f.Root, "main.go", "package main\n\nfunc main() {}\n", 0o600) // odd file-system mode: must come out 0644
	writeFile(t, f.Root, ".ci/run", "#!/bin/sh\necho ok\n", 0o755)
	writeFile(t, f.Root, "CITATION.cff", "cff-version: 1.2.0\n", 0o644)
	writeFile(t, f.Root, LicenseFile, "BSD-3-Clause\n", 0o644)
	writeFile(t, f.Root, DataLicenseFile, "CC-BY-4.0\n", 0o644)
	records := "id,ths_ms\n1,3.9\n"
	writeFile(t, f.Root, f.RunDir+"/records.csv", records, 0o644)
	meta := map[string]any{
		"study": "tls", "run_id": "20260101T000000Z-quick", "profile": "quick",
		"start": "2026-01-01T00:00:00Z", "end": "2026-01-01T00:02:05Z",
		"host":     map[string]any{"cpu_model": "Test CPU", "cores": 2},
		"board":    "host",
		"files":    map[string]string{"records.csv": repro.HashBytes([]byte(records)), "capture.pcapng": sum},
		"measured": map[string]any{"capture_sha256": sum, "kernel_drops": 0},
	}
	b, _ := json.MarshalIndent(meta, "", "  ")
	writeFile(t, f.Root, f.RunDir+"/meta.json", string(b)+"\n", 0o644)
	writeFile(t, f.Root, "SHA256SUMS", repro.HashBytes([]byte(records))+"  "+f.RunDir+"/records.csv\n", 0o644)
	// A path longer than ustar's 100-byte name field without a usable
	// split, and a non-ASCII one: both need pax headers.
	writeFile(t, f.Root, "docs/"+strings.Repeat("x", 120)+".md", "long\n", 0o644)
	writeFile(t, f.Root, "docs/análise.md", "não ASCII\n", 0o644)
	if err := os.Symlink("análise.md", filepath.Join(f.Root, "docs", "latest.md")); err != nil {
		t.Fatal(err)
	}
	runGit(t, f.Root, "add", "-A")
	runGit(t, f.Root, "commit", "-q", "-m", "fixture")
	return f
}

func (f *fixture) opts() Options {
	return Options{Root: f.Root, OutDir: f.Out, Epoch: testEpoch, Store: f.Store, Targets: testTargets()}
}

// testTargets are a study's run target, as the pipeline describes it from
// its registration, and the common targets.
func testTargets() []Target {
	return append([]Target{{Name: "tls:run", Study: "tls", StudyTitle: `Study A: "A Test Paper" (Authors)`,
		Doc: "capture handshakes", Root: true, Claims: ClaimLines([]Claim{{ID: "A1a", Study: "tls", Statement: "ML-DSA-87 + X25519 has a higher median Ths", Published: "higher, significant"}}, "tls")}}, CommonTargets()...)
}

func (f *fixture) commit(t testing.TB, msg string) {
	t.Helper()
	runGit(t, f.Root, "add", "-A")
	runGit(t, f.Root, "commit", "-q", "-m", msg)
}

// member is one entry read back from an archive.
type member struct {
	Hdr  *tar.Header
	Data []byte
}

// readArchive reads a bundle back with archive/tar and returns the gzip
// header too.
func readArchive(t *testing.T, path string) (gzip.Header, []member) {
	t.Helper()
	fh, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	zr, err := gzip.NewReader(fh)
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(zr)
	var ms []member
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		ms = append(ms, member{h, b})
	}
	return zr.Header, ms
}

// assertNoArchive fails if dir holds any file (a partial or temporary
// archive left behind).
func assertNoArchive(t *testing.T, dir string) {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	for _, e := range ents {
		t.Errorf("left behind in the output folder: %s", e.Name())
	}
}

func mustWrite(t *testing.T, opt Options) *Report {
	t.Helper()
	rep, err := Write(context.Background(), opt)
	if err != nil {
		t.Fatal(err)
	}
	return rep
}
