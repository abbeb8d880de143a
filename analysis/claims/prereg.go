package claims

import (
	"bufio"
	"bytes"
	"fmt"
	"regexp"
	"strings"
	"time"
)

// PreregistrationFile records which commit fixed the claim rules.
//
// With it the paper can say which judged runs were recorded after the
// rules (a pre-registered test) and which before (rules written with the
// data in view).
const PreregistrationFile = "analysis/claims/preregistration.txt"

// RulesFiles are the files that state the claim rules, slash-separated and
// relative to the repository root. That is, the engine's judging rules, and
// each study's claims with the published values they judge. A commit that
// touches one after the rules commit is either recorded as an amendment or
// is the new rules commit (TestPreregistrationMatchesHistory). The first
// three are where the rules were registered (the catalogue was one file per
// study group in analysis/claims until the rules moved into the study
// packages); git's history of a removed file still counts. The last two
// are our extension claims K1-K4 on Study B's transfer block: registered in
// analysis/netstudy/ttlbclaims.go, now analysis/ttlb/claims.go.
var RulesFiles = []string{
	"analysis/claims/claims.go",
	"analysis/claims/catalogue.go",
	"analysis/claims/catalogue_c.go",
	"analysis/tlsstudy/claims.go",
	"analysis/tlsstudy/published.go",
	"analysis/netstudy/claims.go",
	"analysis/netstudy/published.go",
	"analysis/picostudy/claims.go",
	"analysis/picostudy/published.go",
	"analysis/netstudy/ttlbclaims.go",
	"analysis/ttlb/claims.go",
}

// Rules is the commit and date of the rules' first registration as a set,
// and the later commits that touched the rules' files.
//
// Each later commit is an amendment, as a pre-registration records one:
// the commit, what changed and why; one that changed a rule says so and
// that it was made after seeing the data. Whether a claim's rule predates
// its data is per claim (TimingFile).
type Rules struct {
	Commit     string      `json:"commit"`
	Date       time.Time   `json:"date"`
	Amendments []Amendment `json:"amendments,omitempty"`
}

// An Amendment is a later commit to the rules' files, with what it changed.
type Amendment struct {
	Commit string `json:"commit"`
	Reason string `json:"reason"`
}

var hexCommit = regexp.MustCompile(`^[0-9a-f]{40}$`)

// ParsePreregistration reads PreregistrationFile: comment lines (#), one
// line "<40-hex commit> <RFC 3339 date>", and any number of lines
// "amend <40-hex commit> <what changed and why>".
func ParsePreregistration(b []byte) (Rules, error) {
	var r Rules
	sc := bufio.NewScanner(bytes.NewReader(b))
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if rest, ok := strings.CutPrefix(line, "amend "); ok {
			commit, reason, _ := strings.Cut(strings.TrimSpace(rest), " ")
			if !hexCommit.MatchString(commit) || strings.TrimSpace(reason) == "" {
				return Rules{}, fmt.Errorf("%s:%d: want \"amend <40 hex digits> <what changed and why>\", got %q", PreregistrationFile, n, line)
			}
			r.Amendments = append(r.Amendments, Amendment{Commit: commit, Reason: strings.TrimSpace(reason)})
			continue
		}
		if r.Commit != "" {
			return Rules{}, fmt.Errorf("%s:%d: a second rules commit %q: record later changes that keep the rules as \"amend\" lines, or replace the commit when a rule changed", PreregistrationFile, n, line)
		}
		commit, date, ok := strings.Cut(line, " ")
		if !ok || !hexCommit.MatchString(commit) {
			return Rules{}, fmt.Errorf("%s:%d: want \"<40 hex digits> <RFC 3339 date>\", got %q", PreregistrationFile, n, line)
		}
		t, err := time.Parse(time.RFC3339, strings.TrimSpace(date))
		if err != nil {
			return Rules{}, fmt.Errorf("%s:%d: %w", PreregistrationFile, n, err)
		}
		r.Commit, r.Date = commit, t.UTC()
	}
	if r.Commit == "" {
		return Rules{}, fmt.Errorf("%s: no commit line", PreregistrationFile)
	}
	return r, nil
}

// A JudgedRun is the run a study's verdicts come from, and whether it was
// recorded after the rules.
type JudgedRun struct {
	Study string    `json:"study"`
	Run   string    `json:"run"`
	Start time.Time `json:"start"`
	// AfterRules is true when the run started after the rules' commit.
	AfterRules bool `json:"after_rules"`
}

// runIDRe is the run folder name repro.NewRun gives: UTC start time and
// profile.
var runIDRe = regexp.MustCompile(`\b(\d{8}T\d{6}Z)-[a-z0-9-]+`)

// judgedRun finds the run a study's results were computed from (the
// first run folder name the results mention).
func judgedRun(study string, results []byte, rules Rules) (JudgedRun, error) {
	m := runIDRe.FindSubmatch(results)
	if m == nil {
		return JudgedRun{}, fmt.Errorf("results of study %s name no run folder", study)
	}
	start, err := time.Parse("20060102T150405Z", string(m[1]))
	if err != nil {
		return JudgedRun{}, err
	}
	return JudgedRun{Study: study, Run: string(m[0]), Start: start, AfterRules: start.After(rules.Date)}, nil
}
