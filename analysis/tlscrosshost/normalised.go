package tlscrosshost

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"pqrepro/analysis/tlshost"
	"pqrepro/analysis/tlsstudy"
)

// SpeedDriftBound is the largest change, in percent, of a predicted
// increase between `openssl speed` before and after the run for which the
// prediction is trusted. Set before any run was read: a prediction that
// moved more measured a host that changed during the run, or a speed
// measurement too short to tell, so that run's increase is not normalised
// by it.
const SpeedDriftBound = 10.0

// A NormalisedIncrease is one paper configuration's increase in the
// judged cell beside the host's own prediction of it.
//
// Times are a property of the host: the same code measures the hybrid's
// increase 2x apart on this project's Intel and AMD machines. The host
// measures its own primitives in the same run (`openssl speed`,
// tlshost.CryptoMeta), and tlshost.ConfigCPUMs turns them into the cryptographic
// time inside Ths of each configuration. The ratio
//
//	q = observed / predicted,
//	observed  = the round-level increase over the baseline (rounds.increase_ms),
//	predicted = ConfigCPUMs(configuration) - ConfigCPUMs(baseline),
//
// is what a host's CPU does not explain; it is the quantity compared
// across hosts (analysis/agreement, CrossHost).
type NormalisedIncrease struct {
	Role   string `json:"role"`   // pq-sig, pq-kem or hybrid
	Target string `json:"target"` // the configuration
	// ObservedMs and SEMs are the round-level increase and its cluster
	// bootstrap standard error over rounds.
	ObservedMs float64 `json:"observed_ms"`
	SEMs       float64 `json:"se_ms"`
	// PredictedMs is the host's predicted increase; Ratio is
	// ObservedMs / PredictedMs, NaN when not judged.
	PredictedMs float64 `json:"predicted_ms"`
	Ratio       float64 `json:"ratio"`
	// NotJudged says why the ratio must not be compared (no prediction,
	// a drifting host, a prediction too small to divide by); empty when
	// it may.
	NotJudged string `json:"not_judged,omitempty"`
}

// MinPredictedMs is the smallest predicted increase a ratio is formed
// with. ML-KEM-1024's predicted increase over X25519 is a few hundredths
// of a millisecond: dividing by it turns the increase's sampling error
// into a ratio of any size.
const MinPredictedMs = 0.2

// NormalisedIncreases returns the paper family's increases of the run's
// judged cell, each normalised by the host's own `openssl speed`
// measurements of the same run. It is an error only when the results
// have no judged cell; a role that cannot be normalised carries the
// reason in NotJudged.
func NormalisedIncreases(r *tlsstudy.Results) ([]NormalisedIncrease, error) {
	f, err := r.PaperFamily()
	if err != nil {
		return nil, fmt.Errorf("normalised increases: %w", err)
	}
	hrr := r.Primary.Judged.KeyShare == tlsstudy.KeyShareHRR
	// increase is the predicted increase of target over baseline from
	// one `openssl speed` measurement.
	increase := func(speed map[string]tlsstudy.Num, target, baseline string) (float64, error) {
		ms := map[string]float64{}
		for k, v := range speed {
			ms[k] = float64(v)
		}
		var cpu [2]float64
		for i, id := range []string{target, baseline} {
			c := r.Config(id)
			if c == nil {
				return 0, fmt.Errorf("configuration %s is not in the results' configs", id)
			}
			chain := 0
			if c.Chain {
				chain = 1
			}
			v, err := tlshost.ConfigCPUMs(ms, c.CertKey, c.Group, hrr, chain)
			if err != nil {
				return 0, err
			}
			cpu[i] = v
		}
		return cpu[0] - cpu[1], nil
	}
	var out []NormalisedIncrease
	for _, c := range f.Comparisons {
		if c.Role == "" {
			continue
		}
		n := NormalisedIncrease{Role: c.Role, Target: c.Target, ObservedMs: float64(c.Rounds.IncreaseMs), SEMs: float64(c.Rounds.SE),
			PredictedMs: math.NaN(), Ratio: math.NaN()}
		n.PredictedMs, n.NotJudged = predicted(r.Host, func(speed map[string]tlsstudy.Num) (float64, error) { return increase(speed, c.Target, c.Baseline) })
		switch {
		case n.NotJudged != "":
		case !(n.PredictedMs >= MinPredictedMs):
			n.NotJudged = fmt.Sprintf("predicted increase %.3f ms is below %.1f ms: a ratio would be noise", n.PredictedMs, MinPredictedMs)
		case math.IsNaN(n.ObservedMs) || math.IsInf(n.ObservedMs, 0):
			n.NotJudged = "no round-level increase"
		default:
			n.Ratio = n.ObservedMs / n.PredictedMs
		}
		out = append(out, n)
	}
	slices.SortStableFunc(out, func(a, b NormalisedIncrease) int { return strings.Compare(a.Role, b.Role) })
	return out, nil
}

// predicted is the mean of the increase predicted from the before and
// the after `openssl speed` measurement (the one there is when only one
// was made), or why there is none: no measurement, a primitive missing,
// or the two predictions more than SpeedDriftBound percent apart (the
// host's speed changed within the run, or `openssl speed` is too short
// to measure it: either way the prediction is not known to that bound).
func predicted(h *tlshost.Account, increase func(map[string]tlsstudy.Num) (float64, error)) (float64, string) {
	if h == nil || (h.Before == nil && h.After == nil) {
		return math.NaN(), "no `openssl speed` measurement in this run (meta.json measured.host_crypto)"
	}
	var ps []float64
	for _, speed := range []map[string]tlsstudy.Num{h.Before, h.After} {
		if speed == nil {
			continue
		}
		p, err := increase(speed)
		if err != nil {
			return math.NaN(), "no prediction: " + strings.ReplaceAll(err.Error(), "\n", "; ")
		}
		ps = append(ps, p)
	}
	if len(ps) == 2 {
		if m := (ps[0] + ps[1]) / 2; !(m >= MinPredictedMs) {
			return m, ""
		}
		if d := 100 * math.Abs(ps[1]-ps[0]) / math.Abs(ps[0]); d > SpeedDriftBound {
			return math.NaN(), fmt.Sprintf("the predicted increase moved %.1f %% between the before and after `openssl speed` (%.3f -> %.3f ms; bound %.0f %%)", d, ps[0], ps[1], SpeedDriftBound)
		}
		return (ps[0] + ps[1]) / 2, ""
	}
	return ps[0], ""
}
