package provenance

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

func TestCollectAndRoundTrip(t *testing.T) {
	root := t.TempDir()
	gitAvailable := exec.Command("git", "--version").Run() == nil
	if gitAvailable {
		for _, args := range [][]string{{"init", "-q"}, {"-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "--allow-empty", "-m", "x"}} {
			if out, err := exec.Command("git", append([]string{"-C", root}, args...)...).CombinedOutput(); err != nil {
				t.Fatalf("git %v: %v\n%s", args, err, out)
			}
		}
	}
	m := Collect(context.Background(), Options{Root: root, Tools: map[string][]string{
		"go":      {"go", "version"},
		"missing": {"pqrepro-no-such-tool", "--version"},
	}})
	if m.Go.Version != runtime.Version() {
		t.Errorf("Go version %q", m.Go.Version)
	}
	if m.Host.Cores != runtime.NumCPU() || m.Host.Kernel == "unknown" || m.Host.MemoryKB == 0 {
		t.Errorf("host = %+v", m.Host)
	}
	if _, ok := m.Tools["missing"]; ok {
		t.Error("a missing tool was recorded")
	}
	if !strings.HasPrefix(m.Tools["go"], "go version go") {
		t.Errorf("go tool version = %q", m.Tools["go"])
	}
	if gitAvailable {
		if len(m.Git.Commit) != 40 || m.Git.Dirty {
			t.Errorf("git = %+v, want a clean 40-digit commit", m.Git)
		}
		os.WriteFile(filepath.Join(root, "f"), []byte("x"), 0o644)
		exec.Command("git", "-C", root, "add", "f").Run()
		if g := collectGit(context.Background(), root); !g.Dirty {
			t.Error("a staged change is not dirty")
		}
	} else {
		t.Log("git not installed: commit and dirty flag not checked")
	}

	m.Study, m.RunID, m.Profile = "tls", "20261130T120000Z-quick", "quick"
	m.Seeds["order"] = 42
	m.Start = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	m.End = m.Start.Add(time.Minute)
	m.Measured["kernel_drops"] = 0
	dir := t.TempDir()
	if err := Write(dir, m); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(filepath.Join(dir, FileName))
	var generic map[string]any
	if err := json.Unmarshal(b, &generic); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"study", "run_id", "spec", "profile", "seeds", "start", "end", "host", "go", "git", "tools", "board"} {
		if _, ok := generic[k]; !ok {
			t.Errorf("meta.json lacks %q", k)
		}
	}
	got, err := Read(dir)
	if err != nil {
		t.Fatal(err)
	}
	if got.Seeds["order"] != 42 || !got.End.Equal(m.End) {
		t.Errorf("round trip lost data: %+v", got)
	}
	// Writing twice gives identical bytes (sorted keys).
	if err := Write(dir, got); err != nil {
		t.Fatal(err)
	}
	b2, _ := os.ReadFile(filepath.Join(dir, FileName))
	if string(b) != string(b2) {
		t.Error("meta.json is not stable across a round trip")
	}
}

func TestReadErrors(t *testing.T) {
	dir := t.TempDir()
	if _, err := Read(dir); err == nil {
		t.Error("Read of a missing meta.json succeeded")
	}
	os.WriteFile(filepath.Join(dir, FileName), []byte("{"), 0o644)
	if _, err := Read(dir); err == nil || !strings.Contains(err.Error(), "not valid provenance JSON") {
		t.Errorf("Read of corrupt meta.json: %v", err)
	}
}

// TestRepoGit: the commit, the dirty flag and the SHA-256 of the diff of
// a checkout; untracked files do not make it dirty.
func TestRepoGit(t *testing.T) {
	if exec.Command("git", "--version").Run() != nil {
		t.Skip("git is not installed")
	}
	root := t.TempDir()
	git := func(args ...string) string {
		t.Helper()
		out, err := exec.Command("git", append([]string{"-C", root, "-c", "user.name=t", "-c", "user.email=t@t"}, args...)...).Output()
		if err != nil {
			t.Fatalf("git %v: %v", args, err)
		}
		return string(out)
	}
	git("init", "-q")
	os.WriteFile(filepath.Join(root, "a.txt"), []byte("one\n"), 0o644)
	git("add", ".")
	git("commit", "-q", "-m", "x")
	head := strings.TrimSpace(git("rev-parse", "HEAD"))
	ctx := context.Background()
	if g, err := RepoGit(ctx, root); err != nil || g != (Git{Commit: head}) {
		t.Errorf("clean: %+v, %v", g, err)
	}
	os.WriteFile(filepath.Join(root, "new.txt"), []byte("untracked\n"), 0o644)
	if g, _ := RepoGit(ctx, root); g.Dirty {
		t.Errorf("an untracked file made the tree dirty: %+v", g)
	}
	os.WriteFile(filepath.Join(root, "a.txt"), []byte("two\n"), 0o644)
	g, err := RepoGit(ctx, root)
	want := sha256.Sum256([]byte(git("diff", "HEAD", "--binary")))
	if err != nil || g.Commit != head || !g.Dirty || g.DiffSHA256 != hex.EncodeToString(want[:]) {
		t.Errorf("dirty: %+v, %v; want diff %x", g, err, want)
	}
	// A run in another tree records the state it is given.
	other := t.TempDir()
	if m := Collect(ctx, Options{Root: other, Git: &g}); m.Git != g {
		t.Errorf("Collect with Git: %+v", m.Git)
	}
	if m := Collect(ctx, Options{Root: other}); m.Git.Commit != "unknown" || !strings.Contains(m.Git.WhyUnknown, "git") {
		t.Errorf("Collect outside a checkout: %+v", m.Git)
	}
	if _, err := RepoGit(ctx, other); err == nil {
		t.Error("RepoGit outside a checkout succeeded")
	}
}

// TestParseCPUInfo: the first processor's model and flags, the crypto
// flags each present or absent, the hash of the whole line (another flag
// anywhere changes it), and no flags where the text has no flags line.
func TestParseCPUInfo(t *testing.T) {
	line := "fpu sse2 aes pclmulqdq avx avx2 bmi2 adx"
	sum := func(s string) string { h := sha256.Sum256([]byte(s)); return hex.EncodeToString(h[:]) }
	for _, tc := range []struct {
		name, text, model string
		flags             map[string]bool
		sum               string
	}{
		{"x86, two processors", "processor\t: 0\nmodel name\t: Intel(R) Xeon(R) Processor\nflags\t\t: " + line + "\n\nprocessor\t: 1\nmodel name\t: other\nflags\t\t: fpu\n",
			"Intel(R) Xeon(R) Processor", map[string]bool{"aes": true, "pclmulqdq": true, "avx": true, "avx2": true, "avx512f": false, "bmi2": true, "adx": true, "sha_ni": false}, sum(line)},
		{"arm64 Features", "processor\t: 0\nFeatures\t: fp asimd aes sha2\n", "unknown",
			map[string]bool{"aes": true, "pclmulqdq": false, "avx": false, "avx2": false, "avx512f": false, "bmi2": false, "adx": false, "sha_ni": false}, sum("fp asimd aes sha2")},
		{"no flags line", "model name\t: x\n", "x", nil, ""},
		{"empty", "", "unknown", nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			model, flags, s := ParseCPUInfo(tc.text)
			if model != tc.model || s != tc.sum || len(flags) != len(tc.flags) {
				t.Fatalf("got %q %v %s, want %q %v %s", model, flags, s, tc.model, tc.flags, tc.sum)
			}
			for k, v := range tc.flags {
				if flags[k] != v {
					t.Errorf("flag %s = %v, want %v", k, flags[k], v)
				}
			}
		})
	}
	if _, _, a := ParseCPUInfo("flags\t: " + line + " sha_ni\n"); a == sum(line) {
		t.Error("one more flag left the hash unchanged")
	}
}

func FuzzParseCPUInfo(f *testing.F) {
	f.Add("model name\t: x\nflags\t\t: aes avx2\n")
	f.Add("flags:")
	f.Add(":::\n\n")
	f.Fuzz(func(t *testing.T, text string) {
		_, flags, sum := ParseCPUInfo(text)
		if (flags == nil) != (sum == "") {
			t.Errorf("flags %v with hash %q", flags, sum)
		}
		if flags != nil && len(flags) != len(CryptoFlags) {
			t.Errorf("%d flags, want one per crypto flag", len(flags))
		}
	})
}
