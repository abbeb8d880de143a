package claims

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestRuleHistory holds history.txt to git's history of the rules files
// and preregistration.txt's amend lines (rewrite it with -update). Without
// git, or on a shallow clone, it skips and the committed file stays.
func TestRuleHistory(t *testing.T) {
	root := filepath.Join("..", "..")
	git := func(args ...string) ([]byte, error) {
		c := exec.Command("git", args...)
		c.Dir = root
		return c.Output()
	}
	shallow, err := git("rev-parse", "--is-shallow-repository")
	if err != nil {
		t.Skipf("not a git checkout (%v): the history cannot be read; %s keeps its committed content", err, HistoryFile)
	}
	if strings.TrimSpace(string(shallow)) != "false" {
		t.Skipf("a shallow clone: commits before its boundary cannot be read; %s keeps its committed content", HistoryFile)
	}
	tb, err := os.ReadFile("timing.txt")
	if err != nil {
		t.Fatal(err)
	}
	timing, err := ParseTiming(tb)
	if err != nil {
		t.Fatal(err)
	}
	pb, err := os.ReadFile("preregistration.txt")
	if err != nil {
		t.Fatal(err)
	}
	rules, err := ParsePreregistration(pb)
	if err != nil {
		t.Fatal(err)
	}
	h, err := HistoryFromGit(git, SortedClaimIDs(timing), timing, rules)
	if err != nil {
		t.Fatal(err)
	}
	got := FormatHistory(h)
	if back, err := ParseHistory(got); err != nil || !bytes.Equal(FormatHistory(back), got) {
		t.Fatalf("the history does not read back (%v)", err)
	}
	if *update {
		if err := os.WriteFile("history.txt", got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile("history.txt")
	if err != nil {
		t.Fatalf("%v (create it with -update)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s is out of date with git's history: rewrite it with go test ./analysis/claims -run TestRuleHistory -update", HistoryFile)
	}
}

// TestMentionsAndFlips: an amend line names a claim by its ID, a range
// or its study; the verdict change it states is read from the part that
// names the claim.
func TestMentionsAndFlips(t *testing.T) {
	text := "RULES CHANGED, after seeing every study's data: B3 is judged on the interval (lan straddles the floor: reproduced -> not reproduced); C12 asks for the interval (stays not reproduced); A7 restates A1a-A3a"
	for _, tc := range []struct {
		id, flip string
		named    bool
	}{
		{"B3", "reproduced -> not reproduced", true},
		{"C12", "stays not reproduced", true},
		{"A2a", "", true},
		{"A7", "", true},
		{"A2c", "", false},
		{"C1", "", false},
	} {
		if named := len(mentions(text, tc.id)) > 0; named != tc.named {
			t.Errorf("%s named = %v, want %v", tc.id, named, tc.named)
		}
		if f := flipOf(text, tc.id); f != tc.flip {
			t.Errorf("%s flip = %q, want %q", tc.id, f, tc.flip)
		}
	}
	if len(mentions("Study A's claims read the rounds", "A1c")) == 0 || len(mentions("Study A's claims read the rounds", "B1")) > 0 {
		t.Error("a study's claims")
	}
	if m := markOf(text); m != "RULES CHANGED" {
		t.Errorf("mark %q", m)
	}
	if m := markOf("wording only; no rule, tolerance or verdict changed"); m != "no rule changed" {
		t.Errorf("mark %q", m)
	}
}

// TestHistoryUnknown: a claim the history does not hold, or whose first
// rule could not be read, is unknown in the appendix, never pre-registered.
func TestHistoryUnknown(t *testing.T) {
	h, err := ParseHistory([]byte("first\tX1\tunknown\tunknown\tno commit names it\n"))
	if err != nil {
		t.Fatal(err)
	}
	rep := Report{Claims: []Evaluated{{ID: "X1", Study: "x", Verdict: Reproduced}, {ID: "X2", Study: "x", Verdict: Reproduced}}}
	tex := HistoryLatex(rep, h, Timing{Data: map[string]DataSeen{"x": {}}}, nil)
	for _, id := range []string{"X1", "X2"} {
		if !strings.Contains(tex, id+" & unknown, unknown & unknown & unknown; now reproduced & none") {
			t.Errorf("%s is not unknown:\n%s", id, tex)
		}
	}
	if strings.Contains(tex, "yes") {
		t.Errorf("unknown history labelled as before the data:\n%s", tex)
	}
	for _, bad := range []string{"first\tX1\n", "change\tX1\tunknown\tunknown\tm\tf\tr\n", "first\tX1\tabc\tunknown\tr\n"} {
		if _, err := ParseHistory([]byte(bad)); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

// TestHistoryEscapesControlCharacters is issue 44's item 7: a control
// character in a commit subject or amend line (an ESC that colours a
// terminal, a NUL) is written to history.txt escaped (\x1b), never raw,
// and the file reads back as written.
func TestHistoryEscapesControlCharacters(t *testing.T) {
	c := strings.Repeat("a", 40)
	h := History{Claims: []ClaimHistory{{
		ID:    "A1a",
		First: RuleEvent{Commit: c, Reason: "rules: \x1b[31mred\x1b[0m\x00 and\u009b C1, tab\tkept as a space, é kept"},
		Changes: []RuleEvent{{Commit: c, Marked: "RULES CHANGED", Flip: "reproduced -> not reproduced",
			Reason: "RULES CHANGED, \x7f deleted"}},
	}}}
	got := FormatHistory(h)
	for i, r := range string(got) {
		if r != '\t' && r != '\n' && (r < 0x20 || r == 0x7f || r >= 0x80 && r < 0xa0) {
			t.Fatalf("history.txt holds control character %U at byte %d:\n%q", r, i, got)
		}
	}
	for _, want := range []string{`rules: \x1b[31mred\x1b[0m\x00 and\u009b C1, tab kept as a space, é kept`, `RULES CHANGED, \x7f deleted`} {
		if !strings.Contains(string(got), want) {
			t.Errorf("history.txt lacks %q:\n%s", want, got)
		}
	}
	back, err := ParseHistory(got)
	if err != nil || !bytes.Equal(FormatHistory(back), got) {
		t.Errorf("the escaped history does not read back (%v)", err)
	}
}

// TestHistoryLatexArrowOnce is issue 44's item 7: an amend line's
// verdict change "reproduced -> not reproduced" prints an arrow in the
// paper; it was escaped after the arrow was set, and the PDF printed a
// literal "$\to$".
func TestHistoryLatexArrowOnce(t *testing.T) {
	c := strings.Repeat("b", 40)
	h := History{Claims: []ClaimHistory{{ID: "C13", First: RuleEvent{Commit: c},
		Changes: []RuleEvent{{Commit: c, Marked: "RULES CHANGED", Flip: "reproduced -> not reproduced", Reason: "RULES CHANGED, x"}}}}}
	rep := Report{Claims: []Evaluated{{ID: "C13", Study: "x", Verdict: NotReproduced}}}
	tex := HistoryLatex(rep, h, Timing{}, nil)
	if !strings.Contains(tex, `rules changed; reproduced $\to$ not reproduced`) || strings.Contains(tex, `\$`) {
		t.Errorf("the verdict change is not set with one arrow:\n%s", tex)
	}
}
