package gapmodel

import (
	_ "embed"
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"slices"
	"strconv"

	"pqrepro/analysis/stats"
)

// registration2Text is registration2.txt, the second registration,
// committed alone before the run that tests it.
//
//go:embed registration2.txt
var registration2Text []byte

// ModelOverlap names the second registration's model: a window stall
// that overlaps the server's signature.
const ModelOverlap = "overlap"

// Registration2 is what registration2.txt fixes before the run. That is
// the model, the split, the family-wise alpha of the precision-derived
// bounds, the bootstrap and the joint fit's grid and target.
type Registration2 struct {
	Model          string  // ModelOverlap
	Split          string  // SplitLowestHighest
	Alpha          float64 // family-wise rate of the held-out bounds
	Resamples      int     // bootstrap resamples over rounds
	Seed           uint64  // bootstrap seed
	JointStepMs    float64 // RTT grid of the joint fit (ms)
	JointTargetPct float64 // a joint-fit row reaches the published medians within this (%)
}

// Registered2 is the registration committed in registration2.txt.
var Registered2 = Must(ParseRegistration2(registration2Text))

// ParseRegistration2 reads the key lines of the second registration
// (KeyLines, strict).
//
// An unknown key, a key twice or missing, or a value out of range is an
// error naming its line.
func ParseRegistration2(b []byte) (Registration2, error) {
	var r Registration2
	keys := []string{"model", "split", "alpha", "resamples", "seed", "joint-step-ms", "joint-target-pct"}
	err := KeyLines(b, keys, true, func(key, val string) (err error) {
		switch key {
		case "model":
			r.Model = val
			if val != ModelOverlap {
				err = fmt.Errorf("model %q: the one model of this registration is %q", val, ModelOverlap)
			}
		case "split":
			r.Split, err = split(val)
		case "alpha":
			r.Alpha, err = Fraction(val)
		case "resamples":
			r.Resamples, err = resamples(val)
		case "seed":
			r.Seed, err = strconv.ParseUint(val, 10, 64)
		case "joint-step-ms":
			r.JointStepMs, err = positive(val)
		case "joint-target-pct":
			r.JointTargetPct, err = positive(val)
		}
		return err
	})
	if err != nil {
		return Registration2{}, err
	}
	return r, nil
}

// Stalls is w = max(k - 1 - h, 0), a cell's window stalls.
//
// They are the round trips beyond the ClientHello's and the
// HelloRetryRequest's, each a server flight that waited for an ACK to
// open TCP's initial window (RFC 6928).
func (r *Row) Stalls() float64 { return max(r.RoundTrips-1-r.HRRShare, 0) }

// OverlapMs is the window stalls' cost O of the second registration:
//
//	O = min(w, 1) x max(RTT - t_sign, 0) + max(w - 1, 0) x RTT.
//
// s_server writes ServerHello to Certificate, then signs its
// CertificateVerify (RFC 8446 4.4.3) while the ACK is on its way, so only
// the part of the first stall that outlasts the signature costs time.
func (r *Row) OverlapMs() float64 {
	w := r.Stalls()
	return min(w, 1)*max(r.RTTMs-r.SignMs, 0) + max(w-1, 0)*r.RTTMs
}

// pathMs is the second model's path term (1 + h) RTT + O.
func (r *Row) pathMs() float64 { return (1+r.HRRShare)*r.RTTMs + r.OverlapMs() }

// OverlapPrediction is one held-out cell under the second model, with its
// precision-derived bound.
type OverlapPrediction struct {
	Row         *Row
	ObservedMs  float64
	PredictedMs float64
	ErrorMs     float64 // predicted - observed
	SEMs        float64 // bootstrap SD of the error over rounds
	BoundMs     float64 // z sqrt(SE^2 + tau^2)
	Pass        bool    // |ErrorMs| <= BoundMs
}

// OverlapFit is the second model fitted and tested on the held-out
// levels.
type OverlapFit struct {
	Reg       Registration2
	FitLevels []float64 // one-way delays fitted on (ms)
	HeldOut   []float64 // one-way delays predicted (ms)
	C0, S     Interval  // at level 1 - alpha, percentile over rounds
	Rounds    int
	// Z is Phi^-1(1 - alpha / (2 m)), m = len(Predictions).
	Z float64
	// TauMs is the between-cell SD from Pairs identical-handshake pairs
	// at the fit levels (0 without a pair).
	TauMs       float64
	Pairs       int
	Predictions []OverlapPrediction
	MaxAbsErrMs float64
	// MaxErrOverBound is the largest |error| / bound: at most 1 passes.
	MaxErrOverBound float64
	Misses          int
	Pass            bool
}

// FitOverlap fits the second registration's model on the fit levels of
// rows and tests every held-out cell against its precision-derived bound.
//
// The model is Ths = c0 + (1 + h) RTT + O + s CPU (OverlapMs); c0 and s
// are least squares of Ths - (1 + h) RTT - O on CPU. Resample b of the
// rounds (stats.ClusterReplicates, the same draws for every statistic)
// refits c0 and s and recomputes every held-out error; SE_i is the SD of
// cell i's errors. tau^2 = max(0, mean_p (d_p^2 - SE_p^2) / 2) over pairs
// of fit-level cells with the same level, chain, role, h and k under
// different group lists, and bound_i = z sqrt(SE_i^2 + tau^2).
func FitOverlap(rows []Row, reg Registration2) (*OverlapFit, error) {
	if err := check(rows); err != nil {
		return nil, err
	}
	for i := range rows {
		if r := &rows[i]; r.Stalls() > 0 && !(r.SignMs > 0) {
			return nil, fmt.Errorf("gapmodel: row %s has %g window stall(s) but no signing time (%v ms): the overlap term needs the leaf key's `openssl speed` sign figure", r.Label(), r.Stalls(), r.SignMs)
		}
	}
	sp, err := splitRows(rows, reg.Split)
	if err != nil {
		return nil, err
	}
	f := &OverlapFit{Reg: reg, FitLevels: sp.fitLevels, HeldOut: sp.heldOut, Rounds: len(rows[0].RoundThsMs)}
	if f.Rounds < 2 {
		return nil, fmt.Errorf("gapmodel: %d round(s): the precision-derived bound needs at least 2 rounds to resample", f.Rounds)
	}
	fit, held, cpu := sp.fit, sp.held, sp.cpu
	estimate := func(idx []int) (c0, s float64) {
		y := make([]float64, len(fit))
		for j, i := range fit {
			y[j] = stats.MedianAt(rows[i].RoundThsMs, idx) - rows[i].pathMs()
		}
		return ols(cpu, y)
	}
	draws, err := roundDraws(f.Rounds, reg)
	if err != nil {
		return nil, err
	}
	all := draws[0]
	c0, s := estimate(all)
	c0s, ss := make([]float64, len(draws)-1), make([]float64, len(draws)-1)
	for b, idx := range draws[1:] {
		c0s[b], ss[b] = estimate(idx)
	}
	level := 1 - reg.Alpha
	for _, p := range []struct {
		iv   *Interval
		est  float64
		reps []float64
	}{{&f.C0, c0, c0s}, {&f.S, s, ss}} {
		sum, err := stats.BootstrapReplicates(p.est, p.reps, level)
		if err != nil {
			return nil, fmt.Errorf("gapmodel: bootstrap over rounds: %w", err)
		}
		*p.iv = Interval{p.est, sum.Lower, sum.Upper}
	}
	// sd is the SD over the resamples b of g(b, idx), a statistic on
	// draw b (its rounds idx).
	sd := func(g func(b int, idx []int) float64) float64 {
		v := make([]float64, len(draws)-1)
		for b, idx := range draws[1:] {
			v[b] = g(b, idx)
		}
		d, _ := stats.Describe(v) // at least 2 resamples (the registration)
		return d.SD
	}
	f.TauMs, f.Pairs = tau(rows, fit, all, sd)
	f.Z = stats.BonferroniZ(reg.Alpha, len(held))
	f.Pass = true
	for _, i := range held {
		r := &rows[i]
		obs := stats.MedianAt(r.RoundThsMs, all)
		pred := c0 + r.pathMs() + s*r.CPUMs
		p := OverlapPrediction{Row: r, ObservedMs: obs, PredictedMs: pred, ErrorMs: pred - obs}
		p.SEMs = sd(func(b int, idx []int) float64 {
			return c0s[b] + r.pathMs() + ss[b]*r.CPUMs - stats.MedianAt(r.RoundThsMs, idx)
		})
		p.BoundMs = f.Z * math.Hypot(p.SEMs, f.TauMs)
		p.Pass = math.Abs(p.ErrorMs) <= p.BoundMs
		if !p.Pass {
			f.Pass = false
			f.Misses++
		}
		f.MaxAbsErrMs = max(f.MaxAbsErrMs, math.Abs(p.ErrorMs))
		f.MaxErrOverBound = max(f.MaxErrOverBound, math.Abs(p.ErrorMs)/p.BoundMs)
		f.Predictions = append(f.Predictions, p)
	}
	return f, nil
}

// PredictedAt is the second model's Ths of a cell like r on a path of
// the given RTT (ms).
//
// It is c0 + (1 + h) RTT + O + s CPU, r's RTT replaced.
func (f *OverlapFit) PredictedAt(r Row, rttMs float64) float64 {
	r.RTTMs = rttMs
	return f.C0.Est + r.pathMs() + f.S.Est*r.CPUMs
}

// roundDraws returns the identity draw and then reg.Resamples cluster
// draws of n rounds, PCG(reg.Seed, FNV-1a 64 of "gapmodel-overlap"), the
// draws of stats.ClusterReplicates.
func roundDraws(n int, reg Registration2) ([][]int, error) {
	h := fnv.New64a()
	h.Write([]byte("gapmodel-overlap"))
	cfg := stats.ClusterConfig{Seed: reg.Seed, Stream: h.Sum64(), Resamples: reg.Resamples, Level: 1 - reg.Alpha}
	var draws [][]int
	_, _, err := stats.ClusterReplicates(n, func(idx []int) float64 {
		draws = append(draws, slices.Clone(idx))
		return 0
	}, cfg)
	if err != nil {
		return nil, fmt.Errorf("gapmodel: bootstrap over rounds: %w", err)
	}
	if len(draws) != reg.Resamples+1 {
		return nil, errors.New("gapmodel: the cluster bootstrap drew an unexpected number of resamples")
	}
	return draws, nil
}

// tau is the between-cell SD of identical handshakes at the fit levels
// (registration2.txt) and the number of pairs it rests on; all is the
// identity draw of the rounds, sd the SD of a statistic over the resamples.
func tau(rows []Row, fit, all []int, sd func(func(int, []int) float64) float64) (float64, int) {
	type key struct {
		delay       float64
		chain, role string
		h, k        float64
	}
	groups := map[key][]int{}
	var order []key
	for _, i := range fit {
		r := &rows[i]
		k := key{r.OneWayDelayMs, r.Chain, r.Role, r.HRRShare, r.RoundTrips}
		if groups[k] == nil {
			order = append(order, k)
		}
		groups[k] = append(groups[k], i)
	}
	var ds, ses []float64
	for _, k := range order {
		g := groups[k]
		for a := range g {
			for b := a + 1; b < len(g); b++ {
				x, y := rows[g[a]].RoundThsMs, rows[g[b]].RoundThsMs
				ds = append(ds, stats.MedianAt(x, all)-stats.MedianAt(y, all))
				ses = append(ses, sd(func(_ int, idx []int) float64 { return stats.MedianAt(x, idx) - stats.MedianAt(y, idx) }))
			}
		}
	}
	return stats.ExcessSD(ds, ses), len(ds)
}
