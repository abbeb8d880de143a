package tlsrun

import (
	"slices"
	"strings"
	"testing"

	"pqrepro/datasets/tlsdata"
)

// TestRepositoryCells checks the design experiments/tls.toml states: the
// 14 cells it lists, the whole matrix in the primary cell only, every
// factor's pair of cells present with the others held.
func TestRepositoryCells(t *testing.T) {
	s, err := LoadSpec("../../tls.toml")
	if err != nil {
		t.Fatal(err)
	}
	for _, prof := range []string{"quick", "full"} {
		units := s.Units(prof)
		primary := s.PrimaryCell(prof)
		if primary.String() != "openssl-cli/docker/direct" {
			t.Fatalf("%s: primary cell %s", prof, primary)
		}
		cells := map[tlsdata.Cell]int{}
		emulated := 0
		for _, u := range units {
			if u.isEmulated() {
				emulated++ // the gap model's cells (emulated.go), outside the design's 14
				continue
			}
			cells[cellOf(u)]++
		}
		// delays x 3 group lists x 2 chains x the paper's 4 in full; none
		// in quick (emulated_n = 0: its captures would not fit the run).
		want := len(s.emulatedDelays(prof)) * 3 * 2 * 4
		if prof == "quick" {
			want = 0
		} else if want == 0 {
			t.Errorf("%s: no emulated delays", prof)
		}
		if emulated != want {
			t.Errorf("%s: %d emulated units, want %d", prof, emulated, want)
		}
		if len(cells) != 14 {
			t.Fatalf("%s: %d cells, want the 14 of [matrix] cells: %v", prof, len(cells), cells)
		}
		for c, n := range cells {
			want := 4
			if c == primary {
				want = 20
			}
			if n != want {
				t.Errorf("%s: cell %s has %d configurations, want %d", prof, c, n, want)
			}
			if err := cellSupported(c.Stack, c.Path); err != nil {
				t.Errorf("%s: cell %s: %v", prof, c, err)
			}
		}
		// Each factor's change with the others held exists somewhere.
		for _, pair := range [][2]string{
			{"go/bridge/direct", "openssl/bridge/direct"},
			{"openssl/bridge/direct", "openssl-cli/bridge/direct"},
			{"openssl-cli/loopback/direct", "openssl-cli/bridge/direct"},
			{"openssl-cli/bridge/direct", "openssl-cli/docker/direct"},
			{"openssl-cli/docker/direct", "openssl-cli/docker/hrr"},
		} {
			for _, c := range pair {
				if cells[mustCell(t, c)] == 0 {
					t.Errorf("%s: cell %s missing", prof, c)
				}
			}
		}
	}
	if fb := s.Paper.Fallback.String(); fb != "openssl-cli/bridge/direct" {
		t.Errorf("[paper.fallback] %s, want openssl-cli/bridge/direct", fb)
	}
}

func mustCell(t *testing.T, s string) tlsdata.Cell {
	parts := strings.Split(s, "/")
	if len(parts) != 3 {
		t.Fatalf("cell %q", s)
	}
	return tlsdata.Cell{Stack: parts[0], Path: parts[1], KeyShare: parts[2]}
}

// TestWithoutDocker: a host without Docker runs every other cell, the
// fallback becomes the primary cell and gets the whole matrix.
func TestWithoutDocker(t *testing.T) {
	s, err := LoadSpec("../../tls.toml")
	if err != nil {
		t.Fatal(err)
	}
	w, err := s.WithoutPath(PathDocker)
	if err != nil {
		t.Fatal(err)
	}
	if got := w.PrimaryCell("full").String(); got != "openssl-cli/bridge/direct" {
		t.Fatalf("primary cell %s, want the fallback", got)
	}
	units := w.Units("full")
	inPrimary := 0
	for _, u := range units {
		if u.Path == PathDocker {
			t.Fatalf("unit %s on the docker path", u.Name)
		}
		if cellOf(u) == w.PrimaryCell("full") {
			inPrimary++
		}
	}
	if inPrimary != 20 {
		t.Fatalf("%d configurations in the fallback primary cell, want the whole matrix (20)", inPrimary)
	}
	if slices.Contains(s.Paths("full"), PathDocker) == false {
		t.Fatal("WithoutPath changed the original spec")
	}
	noFallback := *s
	noFallback.Paper.Fallback = tlsdata.Cell{}
	if _, err := noFallback.WithoutPath(PathDocker); err == nil || !strings.Contains(err.Error(), "[paper.fallback]") {
		t.Fatalf("error %v, want one naming [paper.fallback]", err)
	}
}

func TestCellsValidation(t *testing.T) {
	base := strings.NewReplacer(
		`cert_keys = ["ed25519"]`, "cert_keys = [\"ed25519\"]\nstacks = [\"openssl-cli\", \"go\"]\npaths = [\"loopback\", \"docker\"]\ncells = [\"openssl-cli/docker/direct\", \"go/loopback/direct\"]",
		`baseline = "baseline"`, "baseline = \"baseline\"\n\n[paper.cell]\nstack = \"openssl-cli\"\npath = \"docker\"\nkeyshare = \"direct\"",
		"[runs]", "[cli]\nserver = [\"s_server\", \"-accept\", \"{addr}\", \"-cert\", \"{cert}\", \"-key\", \"{key}\", \"-groups\", \"{groups}\", \"-brief\"]\nclient = [\"s_client\", \"-connect\", \"{addr}\", \"-bind\", \"{bind}\", \"-CAfile\", \"{ca}\", \"-groups\", \"{groups}\", \"-brief\", \"-keylogfile\", \"{keylog}\"]\n\n[runs]",
	).Replace(tinySpec)
	s := loadTiny(t, base)
	if n := len(s.Units("quick")); n != 4 {
		t.Fatalf("%d units, want 2 cells x 2 configurations", n)
	}
	for _, tc := range []struct{ name, from, to, err string }{
		{"go on docker", `"go/loopback/direct"]`, `"go/docker/direct"]`, "the docker path runs the openssl-cli stack only"},
		{"unknown stack", `"go/loopback/direct"]`, `"rustls/loopback/direct"]`, `stack "rustls" is not one of`},
		{"bad form", `"go/loopback/direct"]`, `"go/loopback"]`, "want stack/path/keyshare"},
		{"twice", `"go/loopback/direct"]`, `"go/loopback/direct", "go/loopback/direct"]`, "listed twice"},
		{"primary not listed", `cells = ["openssl-cli/docker/direct", `, `cells = [`, "[paper.cell] openssl-cli/docker/direct is not one of [matrix] cells"},
		{"no -brief", `"{groups}", "-brief"]`, `"{groups}"]`, "[cli] server"},
		{"client without bind", `"-bind", "{bind}", `, ``, "{bind} occurs 0 times"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := LoadSpec(writeSpec(t, t.TempDir(), strings.Replace(base, tc.from, tc.to, 1)))
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Fatalf("error %v, want one containing %q", err, tc.err)
			}
		})
	}
	chained := strings.Replace(base, `baseline = "baseline"`, "baseline = \"baseline\"\nchain_variants = true", 1)
	if _, err := LoadSpec(writeSpec(t, t.TempDir(), chained)); err == nil || !strings.Contains(err.Error(), "chain") {
		t.Fatalf("error %v, want chain variants refused on the openssl-cli stack", err)
	}
}
