package claims

import (
	"bufio"
	"bytes"
	"fmt"
	"strings"
	"time"
)

// TimingFile records, per claim, the commit that introduced its current
// rule and, per study, when its data were first seen.
//
// With it each verdict says whether its rule predates the data that
// judge it (a pre-registered test) or was written with the data in view
// (post hoc). The table is committed, so the build is deterministic
// without git; TestTimingMatchesHistory checks it against git's history
// when the history is present and skips, saying so, on a shallow clone.
const TimingFile = "analysis/claims/timing.txt"

// Timing is the parsed TimingFile.
type Timing struct {
	// Data is, per study, the earliest evidence of its data: the first
	// commit that added data/<study>/ or the start of the earliest run
	// committed there (its folder name), whichever is earlier; a run
	// started before a rule was committed may have been seen.
	Data map[string]DataSeen
	// Rules is, per claim ID, the commit that introduced its current rule
	// (the comparison and tolerance that decide "reproduced").
	Rules map[string]RuleCommit
}

// DataSeen is when a study's data were first seen.
type DataSeen struct {
	Evidence string    `json:"evidence"` // a commit or a run folder name
	Date     time.Time `json:"date"`
}

// RuleCommit is the commit of a claim's current rule.
type RuleCommit struct {
	Commit string    `json:"commit"`
	Date   time.Time `json:"date"`
}

// ClaimTiming is one claim's record in results/claims.json.
type ClaimTiming struct {
	Rule RuleCommit `json:"rule"`
	Data DataSeen   `json:"data"`
	// Preregistered is true when the rule's commit is older than the
	// study's first data.
	Preregistered bool `json:"preregistered"`
}

// ParseTiming reads TimingFile: comment lines (#), lines
// "data <study> <commit or run folder> <RFC 3339 date>" and
// "rule <claim ID> <40-hex commit> <RFC 3339 date>".
func ParseTiming(b []byte) (Timing, error) {
	t := Timing{Data: map[string]DataSeen{}, Rules: map[string]RuleCommit{}}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Fields(line)
		if len(f) != 4 || (f[0] != "data" && f[0] != "rule") {
			return Timing{}, fmt.Errorf("%s:%d: want \"data <study> <evidence> <date>\" or \"rule <claim> <commit> <date>\", got %q", TimingFile, n, line)
		}
		d, err := time.Parse(time.RFC3339, f[3])
		if err != nil {
			return Timing{}, fmt.Errorf("%s:%d: %w", TimingFile, n, err)
		}
		d = d.UTC()
		switch f[0] {
		case "data":
			if _, dup := t.Data[f[1]]; dup {
				return Timing{}, fmt.Errorf("%s:%d: study %s recorded twice", TimingFile, n, f[1])
			}
			t.Data[f[1]] = DataSeen{Evidence: f[2], Date: d}
		case "rule":
			if !hexCommit.MatchString(f[2]) {
				return Timing{}, fmt.Errorf("%s:%d: %q is not a 40-hex commit", TimingFile, n, f[2])
			}
			if _, dup := t.Rules[f[1]]; dup {
				return Timing{}, fmt.Errorf("%s:%d: claim %s recorded twice", TimingFile, n, f[1])
			}
			t.Rules[f[1]] = RuleCommit{Commit: f[2], Date: d}
		}
	}
	return t, nil
}

// Of is the timing of a claim of a study. An error when the table has
// no rule for the claim or no data for the study, so that a new claim
// cannot go unrecorded.
func (t Timing) Of(id, study string) (ClaimTiming, error) {
	r, ok := t.Rules[id]
	if !ok {
		return ClaimTiming{}, fmt.Errorf("%s has no rule line for claim %s: add the commit that introduced its rule", TimingFile, id)
	}
	d, ok := t.Data[study]
	if !ok {
		return ClaimTiming{}, fmt.Errorf("%s has no data line for study %s", TimingFile, study)
	}
	return ClaimTiming{Rule: r, Data: d, Preregistered: r.Date.Before(d.Date)}, nil
}
