package spec

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestLoadStrict(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "s.toml")
	type S struct {
		Seed     uint64 `toml:"seed"`
		Profiles map[string]struct {
			N int `toml:"n"`
		} `toml:"profiles"`
	}
	os.WriteFile(p, []byte("seed = 7\n[profiles.quick]\nn = 10\n"), 0o644)
	var s S
	if err := Load(p, &s); err != nil || s.Seed != 7 || s.Profiles["quick"].N != 10 {
		t.Fatalf("Load = %+v, %v", s, err)
	}
	os.WriteFile(p, []byte("seed = 7\n[profiles.quick]\nnn = 10\n"), 0o644)
	if err := Load(p, &s); err == nil || !strings.Contains(err.Error(), "profiles.quick.nn") {
		t.Errorf("misspelt key: %v", err)
	}
	os.WriteFile(p, []byte("seed = \n"), 0o644)
	if err := Load(p, &s); err == nil || !strings.Contains(err.Error(), "s.toml") {
		t.Errorf("syntax error: %v", err)
	}
	if err := Load(filepath.Join(dir, "none.toml"), &s); err == nil {
		t.Error("missing file accepted")
	}
}

func TestPin(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"no runs table", "# spec\nseed = 1\n", "# spec\nseed = 1\n\n[runs]\nquick = \"20261130T120000Z-quick\"\n"},
		{"no final newline", "seed = 1", "seed = 1\n\n[runs]\nquick = \"20261130T120000Z-quick\"\n"},
		{"replace", "[runs]\nquick = \"20250101T000000Z-quick\" # old\nfull = \"20250101T000000Z-full\"\n",
			"[runs]\nquick = \"20261130T120000Z-quick\"\nfull = \"20250101T000000Z-full\"\n"},
		{"add to runs before next table", "[runs]\nfull = \"20250101T000000Z-full\"\n\n[profiles.quick]\nn = 1\n",
			"[runs]\nfull = \"20250101T000000Z-full\"\nquick = \"20261130T120000Z-quick\"\n\n[profiles.quick]\nn = 1\n"},
		{"add to runs at end", "seed = 1\n[runs]\nfull = \"20250101T000000Z-full\"",
			"seed = 1\n[runs]\nfull = \"20250101T000000Z-full\"\nquick = \"20261130T120000Z-quick\"\n"},
		{"key in another table untouched", "[other]\nquick = 3\n", "[other]\nquick = 3\n\n[runs]\nquick = \"20261130T120000Z-quick\"\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "s.toml")
			os.WriteFile(p, []byte(tc.in), 0o644)
			if err := Pin(p, "quick", "20261130T120000Z-quick"); err != nil {
				t.Fatal(err)
			}
			got, _ := os.ReadFile(p)
			if string(got) != tc.want {
				t.Errorf("got\n%s\nwant\n%s", got, tc.want)
			}
		})
	}
	p := filepath.Join(t.TempDir(), "s.toml")
	os.WriteFile(p, []byte("x = 1\n"), 0o644)
	for _, bad := range [][2]string{{"quick", "yesterday"}, {"Quick Profile", "20261130T120000Z-quick"}} {
		if err := Pin(p, bad[0], bad[1]); err == nil {
			t.Errorf("Pin(%q, %q) accepted", bad[0], bad[1])
		}
	}
	os.WriteFile(p, []byte("[runs]\nquick = [\n"), 0o644)
	if err := Pin(p, "full", "20261130T120000Z-full"); err == nil {
		t.Error("pinned into a file that does not parse")
	}
	if b, _ := os.ReadFile(p); string(b) != "[runs]\nquick = [\n" {
		t.Error("a failed pin changed the file")
	}
}

func TestPinnedRun(t *testing.T) {
	root := t.TempDir()
	os.MkdirAll(filepath.Join(root, "experiments"), 0o755)
	if rel, err := PinnedRun(root, "tls", "quick"); rel != "" || err != nil {
		t.Errorf("no spec: %q, %v", rel, err)
	}
	os.WriteFile(filepath.Join(root, Path("tls")), []byte("[runs]\nquick = \"20261130T120000Z-quick\"\nfull = \"bogus\"\n"), 0o644)
	if _, err := PinnedRun(root, "tls", "quick"); err == nil || !strings.Contains(err.Error(), "does not exist") {
		t.Errorf("pinned but missing: %v", err)
	}
	os.MkdirAll(filepath.Join(root, "data/tls/20261130T120000Z-quick"), 0o755)
	if rel, err := PinnedRun(root, "tls", "quick"); rel != "data/tls/20261130T120000Z-quick" || err != nil {
		t.Errorf("pinned: %q, %v", rel, err)
	}
	if _, err := PinnedRun(root, "tls", "full"); err == nil || !strings.Contains(err.Error(), "not a run ID") {
		t.Errorf("bad run ID: %v", err)
	}
	if rel, err := PinnedRun(root, "tls", "other"); rel != "" || err != nil {
		t.Errorf("unpinned profile: %q, %v", rel, err)
	}
}

func FuzzPin(f *testing.F) {
	f.Add("[runs]\nquick = \"20250101T000000Z-quick\"\n")
	f.Add("seed = 1\n[a]\nb = 2\n")
	f.Fuzz(func(t *testing.T, in string) {
		p := filepath.Join(t.TempDir(), "s.toml")
		os.WriteFile(p, []byte(in), 0o644)
		if err := Pin(p, "quick", "20261130T120000Z-quick"); err != nil {
			if b, _ := os.ReadFile(p); string(b) != in {
				t.Fatal("a failed pin changed the file")
			}
		}
	})
}

func TestParsePin(t *testing.T) {
	sum := strings.Repeat("ab", 32)
	for _, tc := range []struct {
		pin, id, manifest string
		ok                bool
	}{
		{"20261130T120000Z-quick", "20261130T120000Z-quick", "", true},
		{"20261130T120000Z-quick@sha256:" + sum, "20261130T120000Z-quick", sum, true},
		{"20261130T120000Z-quick@sha256:" + sum[:63], "", "", false},
		{"20261130T120000Z-quick@sha256:" + strings.ToUpper(sum), "", "", false},
		{"20261130T120000Z-quick@sha256:", "", "", false},
		{"20261130T120000Z-quick@md5:" + sum, "", "", false},
		{"../x@sha256:" + sum, "", "", false},
	} {
		id, m, err := ParsePin(tc.pin)
		if (err == nil) != tc.ok || id != tc.id || m != tc.manifest {
			t.Errorf("ParsePin(%q) = %q, %q, %v", tc.pin, id, m, err)
		}
	}
	if got := Sealed("20261130T120000Z-quick", sum); got != "20261130T120000Z-quick@sha256:"+sum {
		t.Errorf("Sealed = %q", got)
	}
}

func TestPinSealed(t *testing.T) {
	root := t.TempDir()
	os.MkdirAll(filepath.Join(root, "experiments"), 0o755)
	os.MkdirAll(filepath.Join(root, "data/tls/20261130T120000Z-quick"), 0o755)
	p := filepath.Join(root, Path("tls"))
	os.WriteFile(p, []byte("[runs]\n"), 0o644)
	sum := strings.Repeat("0", 64)
	if err := Pin(p, "quick", Sealed("20261130T120000Z-quick", sum)); err != nil {
		t.Fatal(err)
	}
	dir, m, err := PinnedSeal(root, "tls", "quick")
	if dir != "data/tls/20261130T120000Z-quick" || m != sum || err != nil {
		t.Errorf("PinnedSeal = %q, %q, %v", dir, m, err)
	}
	if id, err := PinnedIn(p, "quick"); id != "20261130T120000Z-quick" || err != nil {
		t.Errorf("PinnedIn = %q, %v (want the run ID without the hash)", id, err)
	}
	if err := Pin(p, "quick", "20261130T120000Z-quick@sha256:xyz"); err == nil {
		t.Error("pinned a malformed manifest hash")
	}
	os.WriteFile(p, []byte("[runs]\nquick = \"20261130T120000Z-quick@sha256:nothex\"\n"), 0o644)
	if _, _, err := PinnedSeal(root, "tls", "quick"); err == nil || !strings.Contains(err.Error(), "git checkout") {
		t.Errorf("malformed pin: %v", err)
	}
}

// TestWithoutPins: what a spec pins does not change its design; every
// other line does.
func TestWithoutPins(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"no runs table", "# spec\nseed = 1\n", "# spec\nseed = 1\n"},
		{"runs at the end", "seed = 1\n\n[runs]\nquick = \"20261130T120000Z-quick\"\n", "seed = 1\n"},
		{"runs in the middle", "seed = 1\n[runs] # pins\nfull = \"x\"\n# kept\n\n[profiles.quick]\nn = 1\n", "seed = 1\n# kept\n\n[profiles.quick]\nn = 1\n"},
		{"a key named like a profile elsewhere", "[other]\nquick = 3\n[runs]\nquick = \"x\"\n", "[other]\nquick = 3\n"},
		{"a table whose name starts with runs", "[runs_extra]\nquick = 3\n", "[runs_extra]\nquick = 3\n"},
		{"only runs", "[runs]\nquick = \"x\"\n", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := string(WithoutPins([]byte(tc.in))); got != tc.want {
				t.Errorf("WithoutPins(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
	// Every pin Pin can write leaves the design as it was.
	for _, in := range []string{"seed = 1\n", "seed = 1", "[runs]\nfull = \"20250101T000000Z-full\"\n\n[profiles.quick]\nn = 1\n", "[other]\nquick = 3\n"} {
		p := filepath.Join(t.TempDir(), "s.toml")
		os.WriteFile(p, []byte(in), 0o644)
		before := WithoutPins([]byte(in))
		for _, pin := range [][2]string{{"quick", "20261130T120000Z-quick"}, {"full", "20261130T120000Z-full@sha256:" + strings.Repeat("a", 64)}, {"quick", "20261201T120000Z-quick"}} {
			if err := Pin(p, pin[0], pin[1]); err != nil {
				t.Fatal(err)
			}
			b, _ := os.ReadFile(p)
			if got := WithoutPins(b); string(got) != string(before) {
				t.Errorf("after pinning %s = %s in %q: design %q, before %q", pin[0], pin[1], in, got, before)
			}
		}
	}
	if string(WithoutPins([]byte("seed = 1\n"))) == string(WithoutPins([]byte("seed = 2\n"))) {
		t.Error("two different designs hash alike")
	}
}

// FuzzWithoutPins: on any spec that parses, pinning a run does not
// change WithoutPins, and WithoutPins is idempotent.
func FuzzWithoutPins(f *testing.F) {
	for _, s := range []string{"seed = 1\n", "[runs]\nfull = \"20250101T000000Z-full\"\n\n[profiles.quick]\nn = 1\n", "[a]\n[runs]\n# c\n", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		w := WithoutPins([]byte(in))
		if string(WithoutPins(w)) != string(w) {
			t.Fatalf("not idempotent on %q: %q then %q", in, w, WithoutPins(w))
		}
		p := filepath.Join(t.TempDir(), "s.toml")
		os.WriteFile(p, []byte(in), 0o644)
		if Pin(p, "quick", "20261130T120000Z-quick") != nil {
			return // a file Pin refuses (it does not parse)
		}
		b, _ := os.ReadFile(p)
		if got := WithoutPins(b); string(got) != string(w) {
			t.Fatalf("pinning changed the design of %q: %q, before %q", in, got, w)
		}
	})
}
