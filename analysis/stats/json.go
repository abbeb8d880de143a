package stats

import "pqrepro/internal/jsonnum"

// JSON is the summary as results files write it (jsonnum.Summary: every
// number rounded, null where undefined). The conversion lives here, not
// in jsonnum, so that the bottom layer (internal/) imports no analysis.
func (s Summary) JSON() jsonnum.Summary {
	n := func(x float64) jsonnum.Num { return jsonnum.Num(x) }
	return jsonnum.Summary{N: s.N, Mean: n(s.Mean), SD: n(s.SD), CV: n(s.CV), Min: n(s.Min), Q1: n(s.Q1),
		Median: n(s.Median), Q3: n(s.Q3), IQR: n(s.IQR), P95: n(s.P95), P99: n(s.P99), Max: n(s.Max)}
}
