package pipeline

import (
	"encoding/json"
	"fmt"
	"strings"

	"pqrepro/analysis/agreement"
	"pqrepro/internal/jsonnum"
)

// compareWith is a study's Compare from its analysis package's
// CompareItems: both runs' results are read as T (strictly: an unknown
// field is an error, so that a field renamed in the analysis stops the
// comparison here rather than turn every item into "absent").
func compareWith[T any](items func(ref, now *T) []agreement.Item) func(study string, ref, now []byte) ([]agreement.Item, error) {
	return func(study string, ref, now []byte) ([]agreement.Item, error) {
		name := "results/" + study + ".json"
		r, err := jsonnum.Decode[T]("the reference run's "+name, ref)
		if err != nil {
			return nil, err
		}
		n, err := jsonnum.Decode[T]("the new run's "+name, now)
		if err != nil {
			return nil, err
		}
		return items(r, n), nil
	}
}

// resampleWith is a study's Resample from its analysis package's
// resampler of its results (read as T, strictly, as compareWith reads
// them) and the line saying how it draws.
func resampleWith[T any](resampler func(ref *T) agreement.Resampler, method string) func(ref []byte) (agreement.Resampler, string, error) {
	return func(ref []byte) (agreement.Resampler, string, error) {
		r, err := jsonnum.Decode[T]("the reference run's results", ref)
		if err != nil {
			return nil, "", err
		}
		return resampler(r), method, nil
	}
}

// compareStudy is one study's items for agreement.Judge: its Compare
// (nil: no items, the claims are still compared), the two results'
// profiles and whether the two runs' hosts match.
func compareStudy(s Study, ref, now []byte, profile string, hosts hostPair) (agreement.Study, error) {
	as := agreement.Study{Name: s.Name, RefProfile: resultsProfile(ref, profile), NewProfile: resultsProfile(now, profile),
		HostsMatch: hosts.match, HostNote: hosts.note}
	if s.Compare == nil {
		return as, nil
	}
	items, err := s.Compare(s.Name, ref, now)
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
	note  string // how they differ, or why it is unknown; on a match, what could not be compared
}

// compareHosts reads both runs' fingerprints from their meta.json (run
// folders relative to refRoot and newRoot) and compares them. A run
// without a readable fingerprint does not match: its host-dependent
// items are shown, not judged.
func compareHosts(refRoot, refRun, newRoot, newRun string) hostPair {
	ref, err := readRunInfo(refRoot, refRun)
	if err != nil {
		return hostPair{note: "the reference run's host is unknown: " + err.Error()}
	}
	now, err := readRunInfo(newRoot, newRun)
	if err != nil {
		return hostPair{note: "the new run's host is unknown: " + err.Error()}
	}
	a, b := ref.host, now.host
	if d := a.Differences(b); len(d) > 0 {
		return hostPair{note: strings.Join(d, "; ")}
	}
	// What one run did not record (the CPU flags of a run made before
	// meta.json had them) is unknown, said, and not a mismatch.
	return hostPair{match: true, note: strings.Join(a.Unknown(b), "; ")}
}
