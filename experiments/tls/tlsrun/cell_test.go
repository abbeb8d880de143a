package tlsrun

import (
	"strings"
	"testing"
)

// cellSpec is tinySpec with two stacks, two key-share modes, a primary
// cell and a full-like profile: n = 6 in blocks of 2 (3 rounds) in the
// primary cell, 3 elsewhere (one per round), the paper's configurations
// only outside it.
var cellSpec = strings.NewReplacer(
	`cert_keys = ["ed25519"]`, "cert_keys = [\"ed25519\", \"mldsa44\"]\nstacks = [\"openssl\", \"go\"]\nkeyshares = [\"direct\", \"hrr\"]",
	`baseline = "baseline"`, "baseline = \"baseline\"\n\n[paper.cell]\nstack = \"openssl\"\npath = \"loopback\"\nkeyshare = \"direct\"",
	"n = 5\nblock = 2\nwarmup = 1", "n = 6\nblock = 2\nwarmup = 1\nother_cells_n = 3\nother_cells = \"paper\"",
).Replace(tinySpec)

func TestPlanOtherCells(t *testing.T) {
	s := loadTiny(t, cellSpec)
	units := s.Units("quick")
	primary := s.PrimaryCell("quick")
	if got := primary.String(); got != "openssl/loopback/direct" {
		t.Fatalf("primary cell %s", got)
	}
	inPrimary := 0
	for _, u := range units {
		if cellOf(u) == primary {
			inPrimary++
		} else if !s.isPaperConfig(u) {
			t.Errorf("unit %s (%s) outside the primary cell is not a paper configuration", u.Name, cellOf(u))
		}
	}
	// Primary: 2 keys x 2 groups; others: 3 cells x the 2 paper configs.
	if inPrimary != 4 || len(units) != 4+3*2 {
		t.Fatalf("%d units, %d in the primary cell; want 10 and 4", len(units), inPrimary)
	}
	steps, err := Plan(s, "quick")
	if err != nil {
		t.Fatal(err)
	}
	measured, warm := map[int]int{}, map[int]int{}
	rounds := map[int]map[int]bool{}
	for _, st := range steps {
		if st.Warmup {
			warm[st.Config]++
			continue
		}
		if st.Index != measured[st.Config] {
			t.Fatalf("unit %d: index %d, want %d", st.Config, st.Index, measured[st.Config])
		}
		measured[st.Config]++
		if rounds[st.Config] == nil {
			rounds[st.Config] = map[int]bool{}
		}
		rounds[st.Config][st.Round] = true
	}
	for i, u := range units {
		want := 3
		if cellOf(u) == primary {
			want = 6
		}
		if measured[i] != want || warm[i] != 3 || len(rounds[i]) != 3 {
			t.Errorf("unit %s in %s: %d measured, %d warm-ups, %d rounds; want %d, 3, 3", u.Name, cellOf(u), measured[i], warm[i], len(rounds[i]), want)
		}
	}
}

func TestCellBad(t *testing.T) {
	for _, tc := range []struct{ from, to, want string }{
		{`stack = "openssl"`, `stack = "boring"`, "[paper.cell] stack"},
		{`keyshare = "direct"`, `keyshare = "psk"`, "[paper.cell] keyshare"},
		{`path = "loopback"`, `path = "wan"`, "[paper.cell] path"},
		{`other_cells = "paper"`, `other_cells = "some"`, "other_cells"},
		{"other_cells_n = 3", "other_cells_n = -1", "other_cells_n"},
	} {
		_, err := LoadSpec(writeSpec(t, t.TempDir(), strings.Replace(cellSpec, tc.from, tc.to, 1)))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one naming %s", tc.to, err, tc.want)
		}
	}
	// A profile without the primary cell's path cannot size the others.
	s := loadTiny(t, strings.Replace(cellSpec, "other_cells = \"paper\"", "other_cells = \"paper\"\npaths = [\"bridge\"]", 1))
	if _, err := Plan(s, "quick"); err == nil || !strings.Contains(err.Error(), "primary cell") {
		t.Errorf("plan without the primary cell: %v", err)
	}
}
