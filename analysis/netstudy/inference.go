package netstudy

import (
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"slices"

	"pqrepro/analysis/stats"
)

// Inference for dependent, drifting series (issue 19, Study B).
//
// A series (one scenario, round, group and toolchain) is a run of
// handshakes in time order, and consecutive handshakes are not
// independent: on their ranks the lag-1 autocorrelation of the lan series
// is 0.5-0.7, and the machine drifts over a run. So:
//
//   - Every interval of a difference of medians resamples each series by
//     the circular block bootstrap (Politis and Romano 1992) with the
//     block length of Politis and White (2004), corrected by Patton,
//     Politis and White (2009), chosen per series on its ranks
//     (stats.BootstrapSeries). The series of a contrast are resampled
//     independently of each other (they ran on links of their own, at
//     different times), each from a PCG stream derived from its name
//     (SeriesStream), so a series' replicates are the same in every
//     contrast it enters. The interval is the percentile interval of the
//     contrast's replicates, the test the bootstrap z test
//     (stats.BootstrapReplicates), p floored at 10^-6 when printed, with
//     the effective sample sizes of the series beside it.
//   - The unit of replication of a scenario is the series: the rounds of
//     1,000, 5,000 and 10,000 handshakes are three replications of the
//     same comparison, and their differences disagree by more than each
//     one's interval. The interval the paper gives for a scenario's
//     difference is therefore the between-series one (Kalibera and Jones
//     2013): the Student t interval over the k rounds' differences (k-1
//     degrees of freedom; stats.BetweenSeriesInterval), with Cochran's Q
//     and I^2 saying how far the rounds disagree beyond their block
//     bootstrap standard errors. With k = 3 the t quantile is 4.30: the
//     interval is honest about having three replications, not 32,000
//     handshakes.

// resampling is results' params.resampling.
const resampling = "circular block bootstrap of each series (Politis and Romano 1992), block length per series by Politis and White (2004) with the Patton, Politis and White (2009) correction on the series' ranks (np::b.star defaults), series resampled independently; scenario intervals: Student t over the rounds' differences (Kalibera and Jones 2013)"

// SeriesStream is the PCG stream of a series' block bootstrap, which does
// not depend on the order of the analysis.
//
// It is FNV-1a of the series' toolchain, scenario, round, group and
// variant: "" for the study's series, also without the flagged handshakes
// (with none flagged the interval is the same); "alone" for a serial
// control; "ttlb-<size>" for the transfer block's (analysis/ttlb).
func SeriesStream(toolchain, scenario string, round int, group, variant string) uint64 {
	h := fnv.New64a()
	fmt.Fprintf(h, "%s|%s|%d|%s", toolchain, scenario, round, group)
	if variant != "" {
		fmt.Fprintf(h, "|%s", variant)
	}
	return h.Sum64()
}

// bootstrap returns the series' block bootstrap, computed once.
func (s *sample) bootstrap(p Params) (*stats.SeriesBootstrap, error) {
	if s.boot == nil && s.bootErr == nil {
		b, err := stats.BootstrapSeries(s.lat, p.BootstrapSeed, s.stream, p.BootstrapResamples)
		if err != nil {
			s.bootErr = fmt.Errorf("%d latencies: %w", len(s.lat), err)
		} else {
			s.boot = &b
		}
	}
	return s.boot, s.bootErr
}

// contrast is the block bootstrap of sum_i sign_i median(series_i): its
// estimate and replicate summary; an error says why there is none.
func contrast(p Params, terms ...term) (stats.ReplicateSummary, error) {
	var reps []float64
	var est float64
	for _, t := range terms {
		b, err := t.s.bootstrap(p)
		if err != nil {
			return stats.ReplicateSummary{}, err
		}
		if reps == nil {
			reps = make([]float64, len(b.Medians))
		}
		for i, m := range b.Medians {
			reps[i] += t.sign * m
		}
		est += t.sign * b.Median
	}
	return stats.BootstrapReplicates(est, reps, Level)
}

// term is one term of a contrast.
type term struct {
	sign float64
	s    *sample
}

// ScenarioEffect is a scenario's difference over its series (rounds).
type ScenarioEffect struct {
	Scenario string  `json:"scenario"`
	RTTms    float64 `json:"rtt_ms"`
	Rounds   []int   `json:"rounds"`
	// DiffsMs are the rounds' differences (target - baseline medians),
	// SEsMs their block bootstrap standard errors.
	DiffsMs []Num `json:"diffs_ms"`
	SEsMs   []Num `json:"ses_ms"`
	// The between-series t interval (stats.BetweenSeriesInterval): mean
	// of the rounds' differences, its interval and t test (df K-1, so the
	// test's effective n is K), and Cochran's Q with its p and I^2.
	K       int    `json:"k" range:"0,"`
	MeanMs  Num    `json:"mean_ms"`
	SDMs    Num    `json:"sd_ms"`
	LowerMs Num    `json:"lower_ms"`
	UpperMs Num    `json:"upper_ms"`
	P       Num    `json:"p_t" range:"0,1"`
	RangeMs Num    `json:"range_ms"` // largest minus smallest round difference
	Q       Num    `json:"q"`
	QP      Num    `json:"q_p" range:"0,1"`
	I2      Num    `json:"i2"`
	Note    string `json:"note,omitempty"`
}

// scenarioEffects puts each scenario's interval at the level of its
// series: the rounds' differences of cs (Comparisons, in design order).
func scenarioEffects(d *Design, cs []Comparison) []ScenarioEffect {
	out := []ScenarioEffect{}
	for _, sc := range d.Scenarios {
		e := ScenarioEffect{Scenario: sc.Name, RTTms: sc.RTTms, Rounds: []int{}, DiffsMs: []Num{}, SEsMs: []Num{}}
		var est, se []float64
		for _, c := range cs {
			if c.Scenario != sc.Name {
				continue
			}
			e.Rounds = append(e.Rounds, c.Round)
			e.DiffsMs, e.SEsMs = append(e.DiffsMs, c.DiffMs), append(e.SEsMs, c.DiffSEMs)
			est, se = append(est, float64(c.DiffMs)), append(se, float64(c.DiffSEMs))
		}
		e.fill(est, se)
		out = append(out, e)
	}
	return out
}

// fill sets the between-series interval of the estimates est (standard
// errors se); with fewer than two series, or equal estimates, the
// interval is null and Note says why.
func (e *ScenarioEffect) fill(est, se []float64) {
	e.K = len(est)
	nan := Num(math.NaN())
	e.MeanMs, e.SDMs, e.LowerMs, e.UpperMs, e.P, e.RangeMs, e.Q, e.QP, e.I2 = nan, nan, nan, nan, nan, nan, nan, nan, nan
	if len(est) > 0 && !slices.ContainsFunc(est, math.IsNaN) {
		e.RangeMs = Num(slices.Max(est) - slices.Min(est))
		e.MeanMs = Num(stats.Mean(est))
	}
	r, err := stats.BetweenSeriesInterval(est, se, Level)
	switch {
	case errors.Is(err, stats.ErrTooFew):
		e.Note = fmt.Sprintf("%d series: no between-series variance, no interval", len(est))
		return
	case errors.Is(err, stats.ErrAllTied):
		e.Note = "the series' differences are all equal: no between-series variance, no interval"
		return
	case err != nil:
		e.Note = "no interval: " + err.Error()
		return
	}
	e.MeanMs, e.SDMs, e.LowerMs, e.UpperMs, e.P = Num(r.Mean), Num(r.SD), Num(r.Lower), Num(r.Upper), Num(r.P)
	e.Q, e.QP, e.I2 = Num(r.Q), Num(r.QP), Num(r.I2)
}

// holmFinite is stats.Holm over the finite p-values; the others stay NaN.
func holmFinite(ps []float64) []float64 {
	var idx []int
	var fin []float64
	for i, v := range ps {
		if !math.IsNaN(v) {
			idx, fin = append(idx, i), append(fin, v)
		}
	}
	out := make([]float64, len(ps))
	for i := range out {
		out[i] = math.NaN()
	}
	for j, h := range stats.Holm(fin) {
		out[idx[j]] = h
	}
	return out
}
