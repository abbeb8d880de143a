package picoboard

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestDebSrcFromDeb822(t *testing.T) {
	in := `Types: deb
# a comment: with a colon
URIs: http://archive.example/debian
Suites: bookworm bookworm-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb deb-src
URIs: http://security.example/debian-security
Suites: bookworm-security
Components: main

Types: deb
Enabled: no
URIs: http://disabled.example/
Suites: bookworm
Components: main

Types: deb-src
URIs: http://only-src.example/
Suites: bookworm
Components: main
`
	want := `Types: deb-src
# a comment: with a colon
URIs: http://archive.example/debian
Suites: bookworm bookworm-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb-src
URIs: http://security.example/debian-security
Suites: bookworm-security
Components: main
`
	if got := string(DebSrcFromDeb822([]byte(in))); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	if got := DebSrcFromDeb822([]byte("Types: deb-src\nURIs: x\n")); len(got) != 0 {
		t.Errorf("a deb-src-only file gave %q", got)
	}
	if got := DebSrcFromDeb822(nil); len(got) != 0 {
		t.Errorf("empty file gave %q", got)
	}
}

func TestDebSrcFromOneLine(t *testing.T) {
	in := "# deb http://commented.example/ bookworm main\ndeb [signed-by=/k.gpg] http://a.example/debian bookworm main\n deb http://b.example/ bookworm-updates main contrib\ndeb-src http://c.example/ bookworm main\n"
	want := "deb-src [signed-by=/k.gpg] http://a.example/debian bookworm main\ndeb-src http://b.example/ bookworm-updates main contrib\n"
	if got := string(DebSrcFromOneLine([]byte(in))); got != want {
		t.Errorf("got %q want %q", got, want)
	}
}

// TestPrivateDebSrc: the deb-src entries are derived from the system's
// sources and written below the private folder only.
func TestPrivateDebSrc(t *testing.T) {
	deb822 := "Types: deb\nURIs: http://archive.example/debian\nSuites: bookworm\nComponents: main\n"
	tests := []struct {
		name     string
		files    map[string]string // in sources.list.d
		list     string            // sources.list
		wantFile string
		wantErr  bool
	}{
		{name: "deb822", files: map[string]string{"debian.sources": deb822}, wantFile: mbedtlsSourcesName},
		{name: "deb822 beside a deb-src", files: map[string]string{"debian.sources": deb822, "src.sources": "Types: deb-src\nURIs: http://archive.example/debian\nSuites: bookworm\n"}, wantFile: mbedtlsSourcesName},
		{name: "one-line", list: "deb http://a.example/ bookworm main\n", wantFile: "pqrepro-debian-src.list"},
		{name: "nothing", wantErr: true},
		{name: "no deb", files: map[string]string{"debian.sources": "Types: deb\nEnabled: no\nURIs: x\n"}, wantErr: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			d := filepath.Join(dir, "sources.list.d")
			os.MkdirAll(d, 0o755)
			for n, c := range tc.files {
				os.WriteFile(filepath.Join(d, n), []byte(c), 0o644)
			}
			list := filepath.Join(dir, "sources.list")
			if tc.list != "" {
				os.WriteFile(list, []byte(tc.list), 0o644)
			}
			os.Chmod(d, 0o555) // the system's folder: never written
			defer os.Chmod(d, 0o755)
			priv := filepath.Join(t.TempDir(), "apt")
			got, err := PrivateDebSrc(d, list, priv)
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v", err)
			}
			if tc.wantErr {
				return
			}
			if got != filepath.Join(priv, "sources.list.d", tc.wantFile) {
				t.Fatalf("wrote %q, want %s under the private folder", got, tc.wantFile)
			}
			b, _ := os.ReadFile(got)
			if !hasDebSrc(b) {
				t.Errorf("written file has no deb-src: %q", b)
			}
			ents, _ := os.ReadDir(d)
			if len(ents) != len(tc.files) {
				t.Errorf("the system's sources folder changed: %v", ents)
			}
		})
	}
}

func TestCheckPinnedFiles(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "a"), []byte("abc"), 0o644)
	const abc = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
	if err := checkPinnedFiles(dir, map[string]string{"a": abc}); err != nil {
		t.Fatal(err)
	}
	if err := checkPinnedFiles(dir, map[string]string{"a": strings.Replace(abc, "b", "c", 1)}); err == nil || !strings.Contains(err.Error(), "refusing") {
		t.Fatalf("a changed file passed: %v", err)
	}
	if err := checkPinnedFiles(dir, map[string]string{"missing": abc}); err == nil {
		t.Fatal("a missing file passed")
	}
}

// fakeApt answers apt-cache and apt-get like a system without the pinned
// source package, recording calls.
func TestEnsureMbedTLSNoSource(t *testing.T) {
	for _, tool := range []string{"apt-get", "apt-cache", "dpkg-source"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not installed (apt-get install -y dpkg-dev)", tool)
		}
	}
	root := t.TempDir()
	dir := filepath.Join(root, "etc")
	os.MkdirAll(dir, 0o755)
	os.WriteFile(filepath.Join(dir, "debian.sources"), []byte("Types: deb\nURIs: http://archive.example/\nSuites: bookworm\nComponents: main\n"), 0o644)
	var calls []string
	apt := aptEnv{sourcesDir: dir, sourcesList: filepath.Join(root, "none"),
		run: func(ctx context.Context, wd, name string, args ...string) ([]byte, error) {
			calls = append(calls, name+" "+strings.Join(args, " "))
			if name == "apt-cache" {
				return []byte("Package: mbedtls\nVersion: 2.28.0-0\n"), nil
			}
			return nil, nil
		}}
	_, err := ensureMbedTLS(context.Background(), root, apt, nil)
	if err == nil || !strings.Contains(err.Error(), "left the archive") {
		t.Fatalf("err = %v", err)
	}
	priv := filepath.Join(root, ".cache/pico/apt")
	// No private lists yet: update first (no apt-cache of the system's lists), then look.
	if len(calls) != 2 || !strings.HasPrefix(calls[0], "apt-get -o Dir::Etc::SourceList="+filepath.Join(priv, "sources.list")) || !strings.HasSuffix(calls[0], " update -qq") {
		t.Errorf("calls %q: want apt-get update through the private configuration", calls)
	}
	for _, c := range calls {
		if !strings.Contains(c, "Dir::Etc::SourceParts="+filepath.Join(priv, "sources.list.d")) {
			t.Errorf("%q runs apt with the system's sources", c)
		}
	}
	if _, err := os.Stat(filepath.Join(priv, "sources.list.d", mbedtlsSourcesName)); err != nil {
		t.Errorf("no private deb-src file written: %v", err)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Errorf("the system's sources folder was written: %v", ents)
	}
	// apt-get update failing is reported with the hint.
	apt.run = func(ctx context.Context, wd, name string, args ...string) ([]byte, error) {
		if name == "apt-get" {
			return []byte("E: network down\n"), errors.New("exit status 100")
		}
		return nil, nil
	}
	if _, err := ensureMbedTLS(context.Background(), root, apt, nil); err == nil || !strings.Contains(err.Error(), "network down") {
		t.Fatalf("err = %v", err)
	}
	if _, err := MbedTLSProvenance(root); err == nil {
		t.Fatal("provenance of a failed fetch")
	}
}

// TestEnsureMbedTLS fetches the real pinned package (or finds it cached).
func TestEnsureMbedTLS(t *testing.T) {
	needMbedTLS(t)
	root, err := FindRoot("")
	if err != nil {
		t.Fatal(err)
	}
	dir, err := EnsureMbedTLS(context.Background(), root, testLog{t})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range append(mbedtlsFiles, "../include/mbedtls/rsa.h") {
		if _, err := os.Stat(filepath.Join(dir, "library", f)); err != nil {
			t.Error(err)
		}
	}
	p, err := MbedTLSProvenance(root)
	if err != nil || p.Version != MbedTLSVersion || p.OrigSHA256 != mbedtlsOrigSHA256 || p.Dir != dir {
		t.Fatalf("provenance %+v %v", p, err)
	}
}

type testLog struct{ t testing.TB }

func (l testLog) Write(b []byte) (int, error) {
	l.t.Log(strings.TrimSpace(string(b)))
	return len(b), nil
}

// needMbedTLS skips when the mbedTLS source cannot be fetched here: not
// cached, and either no apt tools or (not root and no deb-src).
func needMbedTLS(t testing.TB) {
	t.Helper()
	root, err := FindRoot("")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := MbedTLSProvenance(root); err == nil {
		return
	}
	for _, tool := range []string{"apt-get", "apt-cache", "dpkg-source"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("mbedTLS source not cached and %s not installed (apt-get install -y dpkg-dev)", tool)
		}
	}
	if _, err := os.Stat(filepath.Join(systemApt.sourcesDir, "debian.sources")); err != nil {
		if _, err := os.Stat(systemApt.sourcesList); err != nil {
			t.Skip("mbedTLS source not cached and the system names no Debian sources to derive a deb-src entry from")
		}
	}
}

// FuzzDebSrc feeds arbitrary sources files to the deb-src derivation: it
// must not panic, every derived stanza must be a deb-src one, and the
// derived text must itself derive to nothing (it has no "deb" left).
func FuzzDebSrc(f *testing.F) {
	f.Add("Types: deb\nURIs: http://a.example/\nSuites: bookworm\nComponents: main\n")
	f.Add("deb [signed-by=/k] http://a.example/ bookworm main\n# deb x\n")
	f.Add("Types: deb deb-src\nEnabled: no\n\n\nTypes:deb\n")
	f.Fuzz(func(t *testing.T, in string) {
		out := DebSrcFromDeb822([]byte(in))
		for _, st := range splitStanzas(string(out)) {
			if !hasDebSrc([]byte(strings.Join(st, "\n"))) {
				t.Fatalf("stanza without deb-src: %q", st)
			}
		}
		if again := DebSrcFromDeb822(out); len(again) != 0 {
			t.Fatalf("derived text still has deb: %q", again)
		}
		for _, l := range strings.Split(string(DebSrcFromOneLine([]byte(in))), "\n") {
			if l != "" && !strings.HasPrefix(l, "deb-src") {
				t.Fatalf("line %q", l)
			}
		}
	})
}
