package openssl

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const systemSources = `Types: deb
# a comment
URIs: http://archive.example/debian
Suites: bookworm bookworm-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb
URIs: http://archive.example/debian-security
Suites: bookworm-security
Components: main

Types: deb
Enabled: no
URIs: http://disabled.example/debian
Suites: bookworm
`

func TestDebSrcStanzas(t *testing.T) {
	got := string(DebSrcStanzas([]byte(systemSources), "trixie"))
	want := "Types: deb-src\n# a comment\nURIs: http://archive.example/debian\nSuites: trixie\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n"
	if got != want {
		t.Fatalf("got\n%s\nwant\n%s", got, want)
	}
	if out := DebSrcStanzas([]byte("Types: deb\nURIs: x\nSuites: bookworm-security\n"), "trixie"); len(out) != 0 {
		t.Fatalf("a security-only file gave %q", out)
	}
}

// fakeSource is a source package served by fakeApt.
type fakeSource struct {
	files map[string][]byte // name -> content, the .dsc included
	pin   pin
}

func newFakeSource() fakeSource {
	orig := []byte(strings.Repeat("upstream source ", 1000))
	deb := []byte("debian patches")
	sum := func(b []byte) string { s := sha256.Sum256(b); return hex.EncodeToString(s[:]) }
	dsc := fmt.Sprintf("Format: 3.0 (quilt)\nSource: openssl\nVersion: 9.9-1\nChecksums-Sha256:\n %s %d openssl_9.9.orig.tar.gz\n %s %d openssl_9.9-1.debian.tar.xz\nFiles:\n 00 1 x\n",
		sum(orig), len(orig), sum(deb), len(deb))
	return fakeSource{
		files: map[string][]byte{"openssl_9.9-1.dsc": []byte(dsc), "openssl_9.9.orig.tar.gz": orig, "openssl_9.9-1.debian.tar.xz": deb},
		pin:   pin{version: "9.9-1", dscFile: "openssl_9.9-1.dsc", dscSHA: sum([]byte(dsc))},
	}
}

// fakeEnv serves src through a fake apt-get; damage may change the files
// written; builds counts the builder's calls.
type fakeEnv struct {
	src       fakeSource
	damage    func(name string, b []byte) []byte
	builds    int
	calls     []string
	failBuild bool
}

func (f *fakeEnv) env(t *testing.T) env {
	sys := filepath.Join(t.TempDir(), "debian.sources")
	os.WriteFile(sys, []byte(systemSources), 0o644)
	return env{
		pin:           f.src.pin,
		systemSources: sys,
		run: func(ctx context.Context, dir, name string, args ...string) ([]byte, error) {
			f.calls = append(f.calls, name+" "+strings.Join(args, " "))
			switch {
			case name == "apt-get" && slices.Contains(args, "update"):
				return nil, nil
			case name == "apt-get" && slices.Contains(args, "source"):
				for n, b := range f.src.files {
					if f.damage != nil {
						b = f.damage(n, b)
					}
					if b != nil {
						os.WriteFile(filepath.Join(dir, n), b, 0o644)
					}
				}
				return nil, nil
			case name == "dpkg-source":
				return nil, os.MkdirAll(filepath.Join(dir, "src/include/openssl"), 0o755)
			}
			return nil, fmt.Errorf("unexpected command %s", name)
		},
		build: func(ctx context.Context, src string, log io.Writer) error {
			f.builds++
			if f.failBuild {
				os.WriteFile(filepath.Join(src, "libssl.a"), []byte("half"), 0o644)
				return errors.New("make: *** [build_programs] Error 2")
			}
			os.WriteFile(filepath.Join(src, "include/openssl/opensslv.h"), []byte("# define OPENSSL_FULL_VERSION_STR \"9.9.0\"\n"), 0o644)
			os.WriteFile(filepath.Join(src, "include/openssl/ssl.h"), nil, 0o644)
			os.WriteFile(filepath.Join(src, "libssl.a"), []byte("ssl"), 0o644)
			os.MkdirAll(filepath.Join(src, "apps"), 0o755)
			os.WriteFile(filepath.Join(src, ProgramPath), []byte("#!/bin/false\n"), 0o755)
			return os.WriteFile(filepath.Join(src, "libcrypto.a"), []byte("crypto"), 0o644)
		},
	}
}

func TestEnsureBuildsOnceThenReuses(t *testing.T) {
	root := t.TempDir()
	f := &fakeEnv{src: newFakeSource()}
	e := f.env(t)
	b, err := ensure(context.Background(), root, e, nil)
	if err != nil {
		t.Fatal(err)
	}
	if b.OpenSSLVersion != "9.9.0" || b.Version != "9.9-1" || b.DscSHA256 != f.src.pin.dscSHA || b.Configure != "./Configure linux-x86_64 no-shared no-tests no-docs" {
		t.Fatalf("build %+v", b)
	}
	if _, err := os.Stat(filepath.Join(b.Dir, "libssl.a")); err != nil {
		t.Fatal(err)
	}
	// The private apt configuration, and no system path.
	for _, c := range f.calls {
		if strings.HasPrefix(c, "apt-get") && !strings.Contains(c, "Dir::Etc::SourceParts="+filepath.Join(CacheDir(root), "apt")) {
			t.Errorf("apt-get without the private configuration: %s", c)
		}
	}
	src, err := os.ReadFile(filepath.Join(CacheDir(root), "apt/sources.list.d/debian.sources"))
	if err != nil || !strings.Contains(string(src), "Types: deb-src") || !strings.Contains(string(src), "Suites: trixie") {
		t.Fatalf("private sources %q, %v", src, err)
	}
	b2, err := ensure(context.Background(), root, e, nil)
	if err != nil || f.builds != 1 || b2.Dir != b.Dir {
		t.Fatalf("second ensure: %v, %d builds, dir %s vs %s", err, f.builds, b2.Dir, b.Dir)
	}
	leftovers, _ := filepath.Glob(filepath.Join(CacheDir(root), ".build-*"))
	if len(leftovers) > 0 {
		t.Fatalf("temporary folders left: %v", leftovers)
	}
}

func TestEnsureRefuses(t *testing.T) {
	for _, tc := range []struct {
		name   string
		damage func(string, []byte) []byte
		want   error
	}{
		{"orig hash differs", func(n string, b []byte) []byte {
			if strings.HasSuffix(n, ".orig.tar.gz") {
				b = append([]byte(nil), b...)
				b[0] ^= 1
			}
			return b
		}, ErrHash},
		{"dsc differs from the pin", func(n string, b []byte) []byte {
			if strings.HasSuffix(n, ".dsc") {
				return append(append([]byte(nil), b...), '\n')
			}
			return b
		}, ErrHash},
		{"cut download", func(n string, b []byte) []byte {
			if strings.HasSuffix(n, ".orig.tar.gz") {
				return b[:len(b)/2]
			}
			return b
		}, ErrIncomplete},
		{"missing file", func(n string, b []byte) []byte {
			if strings.HasSuffix(n, ".debian.tar.xz") {
				return nil
			}
			return b
		}, ErrIncomplete},
		{"no dsc", func(n string, b []byte) []byte {
			if strings.HasSuffix(n, ".dsc") {
				return nil
			}
			return b
		}, ErrIncomplete},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			f := &fakeEnv{src: newFakeSource(), damage: tc.damage}
			_, err := ensure(context.Background(), root, f.env(t), nil)
			if !errors.Is(err, tc.want) {
				t.Fatalf("err = %v, want %v", err, tc.want)
			}
			if f.builds != 0 {
				t.Fatal("built from a source that failed verification")
			}
			assertNoBuild(t, root, f.src.pin)
		})
	}
}

func TestEnsureFailedBuildKeepsNothing(t *testing.T) {
	root := t.TempDir()
	f := &fakeEnv{src: newFakeSource(), failBuild: true}
	if _, err := ensure(context.Background(), root, f.env(t), nil); err == nil || !strings.Contains(err.Error(), "Error 2") {
		t.Fatalf("err = %v", err)
	}
	assertNoBuild(t, root, f.src.pin)
	f.failBuild = false
	if _, err := ensure(context.Background(), root, f.env(t), nil); err != nil || f.builds != 2 {
		t.Fatalf("retry: %v after %d builds", err, f.builds)
	}
}

func TestCachedRefusesAnotherBuild(t *testing.T) {
	root := t.TempDir()
	f := &fakeEnv{src: newFakeSource()}
	if _, err := ensure(context.Background(), root, f.env(t), nil); err != nil {
		t.Fatal(err)
	}
	stamp := filepath.Join(buildDir(root, f.src.pin), stampName)
	b, _ := os.ReadFile(stamp)
	os.WriteFile(stamp, []byte(strings.Replace(string(b), "no-docs", "no-asm", 1)), 0o644)
	if _, err := cached(root, f.src.pin); err == nil || !strings.Contains(err.Error(), "not the pinned build") {
		t.Fatalf("err = %v", err)
	}
}

// TestCachedNeedsTheProgram: a build whose openssl program is missing
// (a build of the libraries only) is not the pinned build.
func TestCachedNeedsTheProgram(t *testing.T) {
	root := t.TempDir()
	f := &fakeEnv{src: newFakeSource()}
	if _, err := ensure(context.Background(), root, f.env(t), nil); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(buildDir(root, f.src.pin), "src", ProgramPath)); err != nil {
		t.Fatal(err)
	}
	if _, err := cached(root, f.src.pin); err == nil || !strings.Contains(err.Error(), "has no apps/openssl") {
		t.Fatalf("err = %v", err)
	}
}

func assertNoBuild(t *testing.T, root string, p pin) {
	t.Helper()
	if _, err := os.Stat(buildDir(root, p)); !os.IsNotExist(err) {
		t.Fatalf("a build folder exists after a failure: %v", err)
	}
	if left, _ := filepath.Glob(filepath.Join(CacheDir(root), ".build-*")); len(left) > 0 {
		t.Fatalf("temporary folders left: %v", left)
	}
}

func TestParseDscSums(t *testing.T) {
	for _, tc := range []struct{ name, dsc, err string }{
		{"none", "Format: 3.0\n", "no Checksums-Sha256"},
		{"short line", "Checksums-Sha256:\n abc 1 x\n", "want <sha256>"},
		{"path in name", "Checksums-Sha256:\n " + strings.Repeat("a", 64) + " 1 ../x\n", "bad size or file name"},
		{"bad size", "Checksums-Sha256:\n " + strings.Repeat("a", 64) + " -1 x\n", "bad size"},
	} {
		if _, err := ParseDscSums([]byte(tc.dsc)); err == nil || !strings.Contains(err.Error(), tc.err) {
			t.Errorf("%s: err = %v, want %q", tc.name, err, tc.err)
		}
	}
	s, err := ParseDscSums([]byte(newFakeSource().files["openssl_9.9-1.dsc"]))
	if err != nil || len(s) != 2 || s[0].Name != "openssl_9.9.orig.tar.gz" {
		t.Fatalf("%+v, %v", s, err)
	}
}

func FuzzParseDscSums(f *testing.F) {
	f.Add(newFakeSource().files["openssl_9.9-1.dsc"])
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := ParseDscSums(b)
		if err == nil {
			for _, x := range s {
				if x.Size < 0 || len(x.SHA256) != 64 || strings.ContainsAny(x.Name, "/\\") {
					t.Fatalf("accepted %+v", x)
				}
			}
		}
	})
}
