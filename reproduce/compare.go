package reproduce

import (
	"encoding/json"
	"fmt"
	"strings"

	"pqrepro/analysis/agreement"
)

// Results are one run's results/<name>.json decoded once by its study's
// analysis package (its DecodeResults), with what `mage all` and `mage
// calibrate` derive from them. Study.Results returns them; the
// registry's resultsOf (pipeline) binds them to the analysis package's
// functions over its results type.
type Results interface {
	// Items lists the compared items of these results, the reference,
	// and now's (decoded by the same study's Results) for
	// agreement.Judge.
	Items(now Results) ([]agreement.Item, error)
	// Changes are the known changes `mage calibrate` injects into
	// pseudo-replicates of these results to measure the rule's power;
	// none when the study has none.
	Changes() []agreement.Change
	// Resampler draws pseudo-runs from these results' own rounds,
	// series or repetitions, every item re-derived from them, and says
	// how it draws; nil when the study has none (calibrate then draws
	// parametrically in both modes).
	Resampler() (agreement.Resampler, string)
}

// compareStudy is one study's items for agreement.Judge: its results
// decoded (Study.Results; nil: no items, the claims are still compared),
// the two results' profiles and whether the two runs' hosts match.
func compareStudy(s Study, ref, now []byte, profile string, hosts hostPair) (agreement.Study, error) {
	as, r, err := decodeRef(s, ref, profile, hosts)
	as.NewProfile = resultsProfile(now, profile)
	if err != nil || r == nil {
		return as, err
	}
	n, err := s.Results("the new run's results/"+s.Name+".json", now)
	if err != nil {
		return as, fmt.Errorf("compare %s: %w", s.Name, err)
	}
	return withItems(as, s, r, n)
}

// selfCompare is one run's results compared with themselves on a
// matching host (the start of calibrate's pseudo-replicates and of the
// between-run variance), decoded once; it returns them too (nil when
// the study has no Results).
func selfCompare(s Study, b []byte, profile string) (agreement.Study, Results, error) {
	as, r, err := decodeRef(s, b, profile, hostPair{match: true})
	if err != nil || r == nil {
		return as, r, err
	}
	as, err = withItems(as, s, r, r)
	return as, r, err
}

// decodeRef is the agreement.Study of s with the reference results ref
// decoded (nil when the study has no Results); NewProfile is ref's.
func decodeRef(s Study, ref []byte, profile string, hosts hostPair) (agreement.Study, Results, error) {
	as := agreement.Study{Name: s.Name, RefProfile: resultsProfile(ref, profile), NewProfile: resultsProfile(ref, profile),
		HostsMatch: hosts.match, HostNote: hosts.note}
	if s.Results == nil {
		return as, nil, nil
	}
	r, err := s.Results("the reference run's results/"+s.Name+".json", ref)
	if err != nil {
		return as, nil, fmt.Errorf("compare %s: %w", s.Name, err)
	}
	return as, r, nil
}

// withItems sets as.Items to the items of ref against now; none is an
// error.
func withItems(as agreement.Study, s Study, ref, now Results) (agreement.Study, error) {
	items, err := ref.Items(now)
	if err != nil {
		return as, fmt.Errorf("compare %s: %w", s.Name, err)
	}
	if len(items) == 0 {
		return as, fmt.Errorf("compare %s: nothing to compare in the results", s.Name)
	}
	as.Items = items
	return as, nil
}

// resultsProfile is the "profile" a results file states, or def when it
// states none.
func resultsProfile(b []byte, def string) string {
	var r struct {
		Profile string `json:"profile"`
	}
	if json.Unmarshal(b, &r) == nil && r.Profile != "" {
		return r.Profile
	}
	return def
}

// hostPair says whether two runs were measured on matching hosts.
type hostPair struct {
	match bool
	// unknown reports that a run has no readable fingerprint: not known
	// to match, nor known to differ.
	unknown bool
	note    string // how they differ, or why it is unknown; on a match, what could not be compared
}

// compareHosts reads both runs' fingerprints from their meta.json (run
// folders relative to refRoot and newRoot) and compares them. A run
// without a readable fingerprint does not match: its host-dependent
// items are shown, not judged.
func compareHosts(refRoot, refRun, newRoot, newRun string) hostPair {
	ref, err := readRunInfo(refRoot, refRun)
	if err != nil {
		return hostPair{unknown: true, note: "the reference run's host is unknown: " + err.Error()}
	}
	now, err := readRunInfo(newRoot, newRun)
	if err != nil {
		return hostPair{unknown: true, note: "the new run's host is unknown: " + err.Error()}
	}
	a, b := ref.host, now.host
	if d := a.Differences(b); len(d) > 0 {
		return hostPair{note: strings.Join(d, "; ")}
	}
	// What one run did not record (the CPU flags of a run made before
	// meta.json had them) is unknown, said, and not a mismatch.
	return hostPair{match: true, note: strings.Join(a.Unknown(b), "; ")}
}
