package tlscompare

import (
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"slices"
	"strings"

	"pqrepro/analysis/stats"
	"pqrepro/internal/jsonnum"
)

// Study A by round. The runner (experiments/tls/tlsrun.Plan)
// cuts every configuration's measured connections into blocks and runs,
// in round r, the r-th block of every configuration in a freshly shuffled
// order, so that drift of the host between rounds hits every
// configuration of a round alike. The unit of replication is therefore
// the round, not the handshake: consecutive handshakes of a block are
// serially dependent (rank ACF at lag 1 of 0.5-0.8 in the reference run)
// and the host drifts between rounds. A configuration's increase over
// the baseline is estimated from the per-round paired differences
//
//	d_r = median(target's block in round r) - median(baseline's block in round r)
//
// as their median (robust to a round whose blocks a transient of the host
// hit unevenly, and the estimator that matches the study's medians); its
// interval by the cluster bootstrap over rounds (stats.ClusterBootstrap);
// its test by the Wilcoxon signed-rank test of the d_r (exact for up to
// 50 untied rounds), with Holm over a family's comparisons; all
// configurations together by Friedman's test over rounds (block medians).

// MinRounds is the fewest paired rounds the round-level interval and test
// need. That is, the smallest exact two-sided signed-rank p over n rounds
// is 2/2^n, which is below 0.05 only from n = 6, and a bootstrap over
// fewer rounds has too few distinct resamples to be an interval. With
// fewer rounds the estimate is still given, the interval and test are
// null and Note says why.
const MinRounds = 6

// Stream is the bootstrap stream of a comparison named s (FNV-1a 64 of
// s), so that every comparison resamples its own way.
func Stream(s string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(s))
	return h.Sum64()
}

// Num is how the results files write a number (jsonnum.Num).
type Num = jsonnum.Num

// RoundComparison is a target against its baseline at the round level.
type RoundComparison struct {
	// NEff is the number of paired rounds (rounds in which both
	// configurations have a block): the effective n of the interval and
	// the test.
	NEff int `json:"n_eff" range:"0,"`
	// DiffsMs are the paired differences d_r in round order (index =
	// round, 0-based); null where a round lacks a block of either.
	DiffsMs []Num `json:"diffs_ms"`
	// BaselineMs is the median of the baseline's block medians over the
	// paired rounds; IncreaseMs the median of the d_r and IncreasePct
	// 100 IncreaseMs / BaselineMs.
	BaselineMs  Num `json:"baseline_ms"`
	IncreaseMs  Num `json:"increase_ms"`
	IncreasePct Num `json:"increase_pct"`
	// Lower and Upper are the percentile cluster-bootstrap interval of
	// IncreaseMs (rounds resampled with replacement), SE the standard
	// deviation of its replicates.
	Lower Num `json:"lower"`
	Upper Num `json:"upper"`
	SE    Num `json:"se"`
	// SignedRank is the two-sided Wilcoxon signed-rank test of the d_r.
	SignedRank SignedRank `json:"signed_rank"`
	// Note says why the interval or the test is null (too few rounds, no
	// spread, a missing round), else is empty.
	Note string `json:"note,omitempty"`
}

// SignedRank is stats.SignedRankResult; P is null when there is no test.
type SignedRank struct {
	N      int    `json:"n" range:"0,"` // non-zero differences
	WPlus  Num    `json:"w_plus"`
	Z      Num    `json:"z"`
	P      Num    `json:"p" range:"0,1"`
	Method string `json:"method"`
}

func nanRoundComparison() RoundComparison {
	nan := Num(math.NaN())
	return RoundComparison{DiffsMs: []Num{}, BaselineMs: nan, IncreaseMs: nan, IncreasePct: nan, Lower: nan, Upper: nan, SE: nan,
		SignedRank: SignedRank{WPlus: nan, Z: nan, P: nan}}
}

// PairRounds returns the paired rounds of x and y (per-round values, NaN
// where absent): their indices and the values.
func PairRounds(x, y []float64) (rounds []int, xs, ys []float64) {
	for r := 0; r < min(len(x), len(y)); r++ {
		if !math.IsNaN(x[r]) && !math.IsNaN(y[r]) {
			rounds, xs, ys = append(rounds, r), append(xs, x[r]), append(ys, y[r])
		}
	}
	return rounds, xs, ys
}

// CompareRounds compares a target's per-round block medians with the
// baseline's (both indexed by round, NaN where absent). cfg is the
// cluster bootstrap's seed, stream, resamples and level.
func CompareRounds(base, target []float64, cfg stats.ClusterConfig) (RoundComparison, error) {
	rc := nanRoundComparison()
	n := max(len(base), len(target))
	rc.DiffsMs = make([]Num, n)
	for i := range rc.DiffsMs {
		rc.DiffsMs[i] = Num(math.NaN())
	}
	rounds, xs, ys := PairRounds(base, target)
	rc.NEff = len(rounds)
	if rc.NEff == 0 {
		rc.Note = "no round has a block of both configurations"
		return rc, nil
	}
	inc, d, err := stats.MedianOfDifferences(xs, ys)
	if err != nil {
		return rc, err
	}
	for i, r := range rounds {
		rc.DiffsMs[r] = Num(d[i])
	}
	bm, _ := stats.Median(xs)
	rc.BaselineMs, rc.IncreaseMs = Num(bm), Num(inc)
	if bm > 0 {
		rc.IncreasePct = Num(100 * inc / bm)
	}
	var notes []string
	if missing := n - rc.NEff; missing > 0 {
		notes = append(notes, fmt.Sprintf("%d of %d rounds lack a block of one of the two", missing, n))
	}
	switch {
	case rc.NEff < MinRounds:
		notes = append(notes, fmt.Sprintf("%d paired round(s): the interval and the signed-rank test need at least %d", rc.NEff, MinRounds))
	case slices.Min(d) == slices.Max(d):
		notes = append(notes, fmt.Sprintf("every round difference is %g ms: no spread to resample or rank", d[0]))
	default:
		bs, err := stats.ClusterBootstrap(len(d), func(idx []int) float64 { return stats.MedianAt(d, idx) }, cfg)
		if err != nil {
			return rc, fmt.Errorf("cluster bootstrap: %w", err)
		}
		rc.Lower, rc.Upper, rc.SE = Num(bs.Lower), Num(bs.Upper), Num(bs.SE)
		sr, err := stats.WilcoxonSignedRank(d)
		if err != nil && !errors.Is(err, stats.ErrAllZero) {
			return rc, fmt.Errorf("signed-rank: %w", err)
		}
		if err == nil {
			rc.SignedRank = SignedRank{N: sr.N, WPlus: Num(sr.WPlus), Z: Num(sr.Z), P: Num(sr.P), Method: string(sr.Method)}
		}
	}
	if len(notes) > 0 {
		rc.Note = strings.Join(notes, "; ")
	}
	return rc, nil
}

// HolmFinite adjusts the finite p-values of ps by Holm and Bonferroni over
// their number; a NaN (no test) stays NaN and does not count.
func HolmFinite(ps []float64) (holm, bonf []float64) {
	var idx []int
	var fin []float64
	for i, p := range ps {
		if !math.IsNaN(p) {
			idx, fin = append(idx, i), append(fin, p)
		}
	}
	holm, bonf = make([]float64, len(ps)), make([]float64, len(ps))
	for i := range ps {
		holm[i], bonf[i] = math.NaN(), math.NaN()
	}
	h, b := stats.Holm(fin), stats.Bonferroni(fin)
	for k, i := range idx {
		holm[i], bonf[i] = h[k], b[k]
	}
	return holm, bonf
}

// Friedman is Friedman's test over rounds. That is, the block medians
// of every configuration of a family, in the rounds in which all of
// them have a block.
type Friedman struct {
	Q        Num    `json:"q"`
	DF       int    `json:"df" range:"0,"`
	P        Num    `json:"p" range:"0,1"`
	KendallW Num    `json:"kendall_w" range:"0,1"`
	NEff     int    `json:"n_eff" range:"0,"` // rounds used
	Note     string `json:"note,omitempty"`
}

// FriedmanRounds is Friedman's test over the rounds of perConfig, each
// configuration's block medians indexed by round (NaN where absent).
func FriedmanRounds(perConfig [][]float64) Friedman {
	nan := Num(math.NaN())
	f := Friedman{Q: nan, P: nan, KendallW: nan, DF: len(perConfig) - 1}
	n := 0
	for _, x := range perConfig {
		n = max(n, len(x))
	}
	var blocks [][]float64
rounds:
	for r := 0; r < n; r++ {
		b := make([]float64, len(perConfig))
		for j, x := range perConfig {
			if r >= len(x) || math.IsNaN(x[r]) {
				continue rounds
			}
			b[j] = x[r]
		}
		blocks = append(blocks, b)
	}
	f.NEff = len(blocks)
	if f.NEff < MinRounds {
		f.Note = fmt.Sprintf("%d round(s) with a block of every configuration: Friedman's test over rounds needs at least %d", f.NEff, MinRounds)
		return f
	}
	fr, err := stats.Friedman(blocks)
	if err != nil {
		f.Note = "no test: " + err.Error()
		return f
	}
	f.Q, f.P, f.KendallW = Num(fr.Q), Num(fr.P), Num(fr.KendallW)
	return f
}
