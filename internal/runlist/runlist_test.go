package runlist

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var (
	sumA = strings.Repeat("a", 64)
	sumB = strings.Repeat("b", 64)
)

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		name, text string
		want       []Entry
		err        string // a substring of the error; "" for none
	}{
		{"empty", "", nil, ""},
		{"comments and blank lines", "# a list\n\n  # indented\n", nil, ""},
		{"two runs", "20261201T000000Z-quick@sha256:" + sumA + " pinned\n20261202T000000Z-full@sha256:" + sumB + " evidence,dirty-no-diff\n",
			[]Entry{{ID: "20261201T000000Z-quick", Manifest: sumA, Role: Pinned, Line: 1}, {ID: "20261202T000000Z-full", Manifest: sumB, Role: Evidence, DirtyNoDiff: true, Line: 2}}, ""},
		{"no role", "20261201T000000Z-quick@sha256:" + sumA + "\n", nil, "l:1: 1 fields, want 2"},
		{"a trailing comment", "20261201T000000Z-quick@sha256:" + sumA + " pinned # mine\n", nil, "l:1: 4 fields"},
		{"not a run ID", "run1@sha256:" + sumA + " pinned\n", nil, `l:1: "run1" is not a run ID`},
		{"no manifest", "20261201T000000Z-quick evidence\n", nil, `does not end in @sha256:`},
		{"upper-case hex", "20261201T000000Z-quick@sha256:" + strings.ToUpper(sumA) + " evidence\n", nil, `does not end in @sha256:`},
		{"unknown role", "20261201T000000Z-quick@sha256:" + sumA + " reference\n", nil, `role "reference" is neither pinned nor evidence`},
		{"flag as role", "20261201T000000Z-quick@sha256:" + sumA + " dirty-no-diff\n", nil, `role "dirty-no-diff"`},
		{"unknown flag", "20261201T000000Z-quick@sha256:" + sumA + " evidence,busy\n", nil, `flag "busy" is unknown or repeated`},
		{"repeated flag", "20261201T000000Z-quick@sha256:" + sumA + " evidence,dirty-no-diff,dirty-no-diff\n", nil, `flag "dirty-no-diff" is unknown or repeated`},
		{"listed twice", "20261201T000000Z-quick@sha256:" + sumA + " evidence\n#\n20261201T000000Z-quick@sha256:" + sumB + " pinned\n", nil, "l:3: run 20261201T000000Z-quick is listed twice (also line 1)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Parse("l", []byte(tc.text))
			switch {
			case tc.err != "":
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Errorf("err = %v, want %q", err, tc.err)
				}
			case err != nil:
				t.Errorf("err = %v", err)
			case len(got) != len(tc.want):
				t.Errorf("got %+v, want %+v", got, tc.want)
			default:
				for i := range got {
					if got[i] != tc.want[i] {
						t.Errorf("entry %d = %+v, want %+v", i, got[i], tc.want[i])
					}
				}
			}
		})
	}
}

// TestAdd: a new list gets the header; runs are kept sorted; a pinned
// run demotes the pinned run of its profile only; a run keeps its line
// and cannot change its manifest; comments are kept.
func TestAdd(t *testing.T) {
	path := filepath.Join(t.TempDir(), "experiments", "x.runs")
	add := func(e Entry) {
		t.Helper()
		if err := Add(path, "x", e); err != nil {
			t.Fatal(err)
		}
	}
	add(Entry{ID: "20261202T000000Z-quick", Manifest: sumA, Role: Pinned})
	add(Entry{ID: "20261201T000000Z-full", Manifest: sumB, Role: Pinned})
	add(Entry{ID: "20261201T000000Z-quick", Manifest: sumB, Role: Evidence, DirtyNoDiff: true})
	add(Entry{ID: "20261203T000000Z-quick", Manifest: sumB, Role: Pinned})
	b, _ := os.ReadFile(path)
	want := "20261201T000000Z-full@sha256:" + sumB + " pinned\n" +
		"20261201T000000Z-quick@sha256:" + sumB + " evidence,dirty-no-diff\n" +
		"20261202T000000Z-quick@sha256:" + sumA + " evidence\n" +
		"20261203T000000Z-quick@sha256:" + sumB + " pinned\n"
	if !strings.HasPrefix(string(b), "# The runs of study x that count as evidence") || !strings.HasSuffix(string(b), "\n#   its commit (meta.json git.dirty), and the diff was not kept.\n"+want) {
		t.Errorf("list:\n%s\nwant the header, then\n%s", b, want)
	}
	if _, err := Read(path); err != nil {
		t.Errorf("the written list does not parse: %v", err)
	}
	// Pinning a listed run again changes its role only.
	add(Entry{ID: "20261202T000000Z-quick", Manifest: sumA, Role: Pinned})
	if b, _ := os.ReadFile(path); !strings.Contains(string(b), "20261202T000000Z-quick@sha256:"+sumA+" pinned\n") || !strings.Contains(string(b), "20261203T000000Z-quick@sha256:"+sumB+" evidence\n") {
		t.Errorf("after pinning again:\n%s", b)
	}
	if err := Add(path, "x", Entry{ID: "20261202T000000Z-quick", Manifest: sumB, Role: Evidence}); !errors.Is(err, ErrOtherManifest) || !strings.Contains(err.Error(), "line ") {
		t.Errorf("another manifest: %v", err)
	}
	if err := Add(path, "x", Entry{ID: "x", Manifest: sumB, Role: Evidence}); err == nil {
		t.Error("a bad run ID was added")
	}
	// A list that does not parse is not rewritten.
	os.WriteFile(path, []byte("garbage\n"), 0o644)
	if err := Add(path, "x", Entry{ID: "20261204T000000Z-quick", Manifest: sumA, Role: Evidence}); err == nil {
		t.Error("a broken list was rewritten")
	}
	if b, _ := os.ReadFile(path); string(b) != "garbage\n" {
		t.Errorf("the broken list changed: %q", b)
	}
}

func TestPaths(t *testing.T) {
	for _, tc := range []struct{ got, want string }{
		{Beside("experiments/tls.toml"), "experiments/tls.runs"},
		{Beside("tree/.pins/net.toml"), "tree/.pins/net.runs"},
		{Path("pico"), "experiments/pico.runs"},
	} {
		if tc.got != tc.want {
			t.Errorf("got %q, want %q", tc.got, tc.want)
		}
	}
}
