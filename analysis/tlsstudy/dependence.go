package tlsstudy

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"pqrepro/analysis/stats"
)

// Dependence holds Study A's checks of the assumptions an
// independent-sample analysis would make: serial dependence within each
// configuration's series, and drift of the whole run.
type Dependence struct {
	// Configs are the primary cell's configurations in table order.
	Configs []SerialConfig `json:"configs"`
	// Fifths splits the run into five equal spans of ClientHello time.
	Fifths Fifths `json:"fifths"`
}

// SerialConfig is the serial dependence of one configuration's measured
// Ths in record (time) order, all of its blocks concatenated.
type SerialConfig struct {
	Config string `json:"config"`
	N      int    `json:"n"`                 // measured connections
	Rounds int    `json:"rounds" range:"0,"` // blocks
	// RankACF1 is the lag-1 autocorrelation of the mid-ranks of Ths
	// (stats.Ranks, stats.ACF): robust to the heavy tail that hides
	// dependence in a raw ACF.
	RankACF1 Num `json:"rank_acf1"`
	// Runs is the runs test about the median (stats.RunsTest): runs,
	// z (negative: fewer runs than independence gives, i.e. clustering)
	// and the two-sided p, floored at stats.PFloor when printed.
	Runs  int `json:"runs" range:"0,"`
	RunsZ Num `json:"runs_z"`
	RunsP Num `json:"runs_p" range:"0,1"`
	// Note says why a statistic is null.
	Note string `json:"note,omitempty"`
}

func serialConfig(id string, m *measured) SerialConfig {
	nan := Num(math.NaN())
	s := SerialConfig{Config: id, N: len(m.ths), Rounds: m.blocks, RankACF1: nan, RunsZ: nan, RunsP: nan}
	var notes []string
	if acf, err := stats.ACF(stats.Ranks(m.ths), 1); err != nil {
		notes = append(notes, "rank ACF: "+err.Error())
	} else {
		s.RankACF1 = Num(acf[1])
	}
	rt, err := stats.RunsTest(m.ths)
	s.Runs = rt.Runs
	if err != nil {
		notes = append(notes, "runs test: "+err.Error())
	} else {
		s.RunsZ, s.RunsP = Num(rt.Z), Num(rt.P)
	}
	if len(notes) > 0 {
		s.Note = strings.Join(notes, "; ")
	}
	return s
}

// Fifths are the run cut into five equal spans of ClientHello time (over
// every measured connection of the run, all cells). That is, per fifth
// the primary cell's baseline median and each paper target's increase,
// median(target in the fifth) - median(baseline in the fifth). Null where
// a fifth has no connection of either.
type Fifths struct {
	BaselineMs []Num            `json:"baseline_ms"`
	NBaseline  []int            `json:"n_baseline"`
	IncreaseMs map[string][]Num `json:"increase_ms"` // by role
	// MaxOverMin is the largest baseline median of a fifth over the
	// smallest.
	MaxOverMin Num `json:"max_over_min"`
}

// fifthsOf computes Fifths; t0 and t1 are the first and last ClientHello
// time (ns) of the run's measured connections.
func fifthsOf(t0, t1 int64, base *measured, targets map[string]*measured) Fifths {
	const k = 5
	span := float64(t1-t0) + 1
	split := func(m *measured) [k][]float64 {
		var out [k][]float64
		for i, r := range m.recs {
			f := int(float64(*r.ClientHelloNs-t0) / span * k)
			f = min(max(f, 0), k-1)
			out[f] = append(out[f], m.ths[i])
		}
		return out
	}
	med := func(x []float64) float64 {
		if len(x) == 0 {
			return math.NaN()
		}
		v, _ := stats.Median(x)
		return v
	}
	b := split(base)
	f := Fifths{IncreaseMs: map[string][]Num{}}
	lo, hi := math.Inf(1), math.Inf(-1)
	for i := range k {
		v := med(b[i])
		f.BaselineMs, f.NBaseline = append(f.BaselineMs, Num(v)), append(f.NBaseline, len(b[i]))
		if !math.IsNaN(v) {
			lo, hi = min(lo, v), max(hi, v)
		}
	}
	f.MaxOverMin = Num(math.NaN())
	if lo > 0 && hi >= lo {
		f.MaxOverMin = Num(hi / lo)
	}
	for _, role := range slices.Sorted(maps.Keys(targets)) {
		t := split(targets[role])
		inc := make([]Num, k)
		for i := range k {
			inc[i] = Num(med(t[i]) - med(b[i]))
		}
		f.IncreaseMs[role] = inc
	}
	return f
}

// dependence computes Dependence for the primary cell.
func dependence(ids []string, byID map[string]*measured, cells cellSamples, paper []string) (*Dependence, error) {
	d := &Dependence{}
	for _, id := range ids {
		d.Configs = append(d.Configs, serialConfig(id, byID[id]))
	}
	t0, t1 := int64(math.MaxInt64), int64(math.MinInt64)
	for _, ms := range cells {
		for _, m := range ms {
			for _, r := range m.recs {
				t0, t1 = min(t0, *r.ClientHelloNs), max(t1, *r.ClientHelloNs)
			}
		}
	}
	if t0 > t1 {
		return nil, fmt.Errorf("no measured connection has a ClientHello time")
	}
	targets := map[string]*measured{}
	for i, id := range paper[1:] {
		targets[Roles[i+1]] = byID[id]
	}
	d.Fifths = fifthsOf(t0, t1, byID[paper[0]], targets)
	return d, nil
}
