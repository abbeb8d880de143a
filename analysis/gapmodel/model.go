package gapmodel

import (
	"cmp"
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"slices"
	"strings"

	"pqrepro/analysis/stats"
)

// Roles are the paper's four configurations, in the order of the published
// medians. They are the baseline (Ed25519 + X25519), ML-DSA-87,
// ML-KEM-1024 and the hybrid (tlsstudy's role names).
var Roles = []string{"baseline", "pq-sig", "pq-kem", "hybrid"}

// Row is one measured cell: one delay level, client group list,
// certificate chain and paper configuration.
type Row struct {
	OneWayDelayMs float64 `json:"one_way_delay_ms"` // nominal one-way delay of the level (ms)
	RTTMs         float64 `json:"rtt_ms"`           // the link's self-tested round-trip time (ms)
	Groups        string  `json:"groups"`           // the client's group-list mode
	Chain         string  `json:"chain"`            // "leaf" or "leaf+ca"
	Role          string  `json:"role"`             // one of Roles
	HRRShare      float64 `json:"hrr_share"`        // share of connections with an HRR: 0 or 1
	RoundTrips    float64 `json:"round_trips"`      // median measured round trips before the client's Finished
	CPUMs         float64 `json:"cpu_ms"`           // the host's predicted cryptographic time (ms)
	SignMs        float64 `json:"sign_ms"`          // one signature with the leaf's key by `openssl speed` (ms)
	ServerBytes   float64 `json:"server_bytes"`     // median TCP payload bytes the server sent per connection
	// RoundThsMs is the median Ths (ms) of each round, indexed by round:
	// round r is the same round in every row of a fit.
	RoundThsMs []float64 `json:"round_ths_ms"`
	// ThsByDefMs is the cell's median over rounds of its per-round median
	// Ths under each definition the run's captures give (Definitions'
	// names), for JointFit.
	ThsByDefMs map[string]float64 `json:"ths_by_def_ms,omitempty"`
}

// Combo is one combination of factors: a client group list and a chain.
type Combo struct{ Groups, Chain string }

func (c Combo) String() string { return c.Groups + ", " + c.Chain }

func (r *Row) combo() Combo { return Combo{r.Groups, r.Chain} }

// Label names a row in errors and output.
func (r *Row) Label() string {
	return fmt.Sprintf("%s/%s/%s at %g ms one way", r.Groups, r.Chain, r.Role, r.OneWayDelayMs)
}

// Interval is an estimate with a percentile bootstrap interval.
type Interval struct{ Est, Lower, Upper float64 }

// Prediction is one held-out cell's observed and predicted Ths.
type Prediction struct {
	Row         *Row
	ObservedMs  float64
	PredictedMs float64
	ErrorMs     float64 // predicted - observed
}

// Fit is the fitted model and its test on the held-out levels.
type Fit struct {
	Reg         Registration
	FitLevels   []float64 // one-way delays fitted on (ms)
	HeldOut     []float64 // one-way delays predicted (ms)
	C0          Interval  // ms
	S           Interval  // dimensionless CPU scale
	Rounds      int
	Predictions []Prediction
	MaxAbsErrMs float64
	Pass        bool // every held-out |error| <= Reg.BoundMs
}

// Published is what Explain explains: the original's four medians in
// Roles order, with where they were printed. The one copy is
// tlsstudy.Published, which the caller converts.
type Published struct {
	Source     string
	BaselineMs float64
	IncreaseMs map[string]float64 // by role, over the baseline
}

func (p Published) medians() ([]float64, error) {
	if !(p.BaselineMs > 0) {
		return nil, fmt.Errorf("published baseline %v ms: want a positive median", p.BaselineMs)
	}
	out := []float64{p.BaselineMs}
	for _, role := range Roles[1:] {
		inc, ok := p.IncreaseMs[role]
		if !ok || math.IsNaN(inc) || math.IsInf(inc, 0) {
			return nil, fmt.Errorf("published increase of %s: missing or not finite", role)
		}
		out = append(out, p.BaselineMs+inc)
	}
	return out, nil
}

// ComboFit is one combination's best path (and CPU speed) for the
// published medians.
type ComboFit struct {
	Combo       Combo
	RTTMs       float64
	CPUFactor   float64   // 1 unless solved
	FreeParams  int       // 1 (R) or 2 (R and f)
	K           []float64 // round trips per role (median over levels)
	CPU         []float64 // CPU per role (ms, median over levels)
	PredictedMs []float64 // per role
	PublishedMs []float64
	ResidualMs  []float64 // predicted - published
	RMSMs       float64
	Fits        bool // every |residual| <= ExplainBoundMs
	Explanation bool // Fits and FreeParams < numbers explained
	Note        string
}

// Explanation is Explain's answer for every combination.
type Explanation struct {
	Source string
	Combos []ComboFit
	// Best is the index of the best combination that fits, or -1.
	Best int
	// BaselineAccounted: the best combination's baseline residual is
	// within the bound; BaselineNote says so or what is left.
	BaselineAccounted bool
	BaselineNote      string
}

// check validates rows: finite values, known roles, rounds.
func check(rows []Row) error {
	if len(rows) == 0 {
		return errors.New("gapmodel: no rows: export the emulated-path cells of Study A first")
	}
	n := len(rows[0].RoundThsMs)
	for i := range rows {
		r := &rows[i]
		if !slices.Contains(Roles, r.Role) {
			return fmt.Errorf("gapmodel: row %s: role %q is not one of %v", r.Label(), r.Role, Roles)
		}
		for name, v := range map[string]float64{"one-way delay": r.OneWayDelayMs, "RTT": r.RTTMs, "HRR share": r.HRRShare, "round trips": r.RoundTrips, "CPU": r.CPUMs} {
			if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
				return fmt.Errorf("gapmodel: row %s: %s is %v: want a finite value >= 0; check the export", r.Label(), name, v)
			}
		}
		if r.HRRShare > 0 && r.HRRShare < 1 || r.HRRShare > 1 {
			return fmt.Errorf("gapmodel: row %s: HRR share %v: a cell's connections must all take a HelloRetryRequest (1) or none (0), since its CPU term counts 3 or 4 ECDH operations; a connection whose HRR does not match its cell is an error of the run, not a sample", r.Label(), r.HRRShare)
		}
		if len(r.RoundThsMs) == 0 {
			return fmt.Errorf("gapmodel: row %s has no rounds: a cell needs its per-round medians", r.Label())
		}
		if len(r.RoundThsMs) != n {
			return fmt.Errorf("gapmodel: row %s has %d rounds, row %s %d: rounds are the unit of replication and must be the same in every row", r.Label(), len(r.RoundThsMs), rows[0].Label(), n)
		}
		for j, v := range r.RoundThsMs {
			if math.IsNaN(v) || math.IsInf(v, 0) || v <= 0 {
				return fmt.Errorf("gapmodel: row %s, round %d: Ths %v ms: want a positive finite median", r.Label(), j, v)
			}
		}
	}
	return nil
}

// levels returns the distinct one-way delays, ascending.
func levels(rows []Row) []float64 {
	var ls []float64
	for i := range rows {
		if !slices.Contains(ls, rows[i].OneWayDelayMs) {
			ls = append(ls, rows[i].OneWayDelayMs)
		}
	}
	slices.Sort(ls)
	return ls
}

// ols is the least-squares line y = a + b x.
func ols(x, y []float64) (a, b float64) {
	mx, my := mean(x), mean(y)
	var sxy, sxx float64
	for i := range x {
		sxy += (x[i] - mx) * (y[i] - my)
		sxx += (x[i] - mx) * (x[i] - mx)
	}
	b = sxy / sxx
	return my - b*mx, b
}

func mean(x []float64) float64 {
	s := 0.0
	for _, v := range x {
		s += v
	}
	return s / float64(len(x))
}

// levelSplit is the registered split of rows: the fitted and held-out
// levels, the indices of their rows, and the fitted rows' CPU.
type levelSplit struct {
	fitLevels, heldOut []float64
	fit, held          []int
	cpu                []float64
}

// splitRows splits rows by the lowest-and-highest split: at least three
// levels, two fitted cells or more, and fitted CPUs that differ (else s
// cannot be fitted).
func splitRows(rows []Row, split string) (levelSplit, error) {
	ls := levels(rows)
	if len(ls) < 3 {
		return levelSplit{}, fmt.Errorf("gapmodel: %d delay level(s) %v: the registered split %q needs at least 3 (two fitted, one held out); measure more levels", len(ls), ls, split)
	}
	sp := levelSplit{fitLevels: []float64{ls[0], ls[len(ls)-1]}, heldOut: ls[1 : len(ls)-1]}
	for i := range rows {
		if slices.Contains(sp.fitLevels, rows[i].OneWayDelayMs) {
			sp.fit = append(sp.fit, i)
			sp.cpu = append(sp.cpu, rows[i].CPUMs)
		} else {
			sp.held = append(sp.held, i)
		}
	}
	const params = 2
	if len(sp.fit) < params {
		return levelSplit{}, fmt.Errorf("gapmodel: %d fitted cell(s) for %d parameters (c0, s): export more cells", len(sp.fit), params)
	}
	if slices.Min(sp.cpu) == slices.Max(sp.cpu) {
		return levelSplit{}, fmt.Errorf("gapmodel: every fitted cell has CPU %v ms: s cannot be fitted; the fit needs configurations of different cryptographic cost", sp.cpu[0])
	}
	return sp, nil
}

// FitModel fits c0 and s on the registered fit levels of rows, predicts
// the held-out levels and bootstraps the parameters over rounds.
func FitModel(rows []Row, reg Registration) (*Fit, error) {
	if err := check(rows); err != nil {
		return nil, err
	}
	sp, err := splitRows(rows, reg.Split)
	if err != nil {
		return nil, err
	}
	f := &Fit{Reg: reg, FitLevels: sp.fitLevels, HeldOut: sp.heldOut, Rounds: len(rows[0].RoundThsMs)}
	fit, held, cpu := sp.fit, sp.held, sp.cpu
	// estimate fits on the rounds idx (repeats allowed).
	estimate := func(idx []int) (c0, s float64) {
		y := make([]float64, len(fit))
		for j, i := range fit {
			y[j] = stats.MedianAt(rows[i].RoundThsMs, idx) - rows[i].RoundTrips*rows[i].RTTMs
		}
		return ols(cpu, y)
	}
	all := make([]int, f.Rounds)
	for i := range all {
		all[i] = i
	}
	c0, s := estimate(all)
	f.C0, f.S = Interval{c0, math.NaN(), math.NaN()}, Interval{s, math.NaN(), math.NaN()}
	if f.Rounds >= 2 {
		h := fnv.New64a()
		h.Write([]byte("gapmodel"))
		cfg := stats.ClusterConfig{Seed: reg.Seed, Stream: h.Sum64(), Resamples: reg.Resamples, Level: reg.Level}
		for _, p := range []struct {
			iv  *Interval
			get func(idx []int) float64
		}{
			{&f.C0, func(idx []int) float64 { c, _ := estimate(idx); return c }},
			{&f.S, func(idx []int) float64 { _, s := estimate(idx); return s }},
		} {
			rs, err := stats.ClusterBootstrap(f.Rounds, p.get, cfg)
			if err != nil {
				return nil, fmt.Errorf("gapmodel: bootstrap over rounds: %w", err)
			}
			p.iv.Lower, p.iv.Upper = rs.Lower, rs.Upper
		}
	}
	f.Pass = true
	for _, i := range held {
		r := &rows[i]
		obs := stats.MedianAt(r.RoundThsMs, all)
		pred := c0 + r.RoundTrips*r.RTTMs + s*r.CPUMs
		p := Prediction{Row: r, ObservedMs: obs, PredictedMs: pred, ErrorMs: pred - obs}
		f.Predictions = append(f.Predictions, p)
		f.MaxAbsErrMs = max(f.MaxAbsErrMs, math.Abs(p.ErrorMs))
		if math.Abs(p.ErrorMs) > reg.BoundMs {
			f.Pass = false
		}
	}
	return f, nil
}

// Explain solves, per combination of the rows, the path RTT that best
// explains the published medians. It also solves a CPU-speed factor if the
// registered bound needs it. It refuses when the fit did not pass.
func Explain(f *Fit, rows []Row, pub Published) (*Explanation, error) {
	if !f.Pass {
		return nil, fmt.Errorf("gapmodel: the held-out prediction failed (max |error| %.3f ms > %.3f ms registered): the model explains nothing; report the failure instead", f.MaxAbsErrMs, f.Reg.BoundMs)
	}
	want, err := pub.medians()
	if err != nil {
		return nil, fmt.Errorf("gapmodel: %w", err)
	}
	byCombo := map[Combo]map[string][]*Row{}
	for i := range rows {
		r := &rows[i]
		if byCombo[r.combo()] == nil {
			byCombo[r.combo()] = map[string][]*Row{}
		}
		byCombo[r.combo()][r.Role] = append(byCombo[r.combo()][r.Role], r)
	}
	combos := make([]Combo, 0, len(byCombo))
	for c := range byCombo {
		combos = append(combos, c)
	}
	slices.SortFunc(combos, func(a, b Combo) int { return cmp.Or(cmp.Compare(a.Groups, b.Groups), cmp.Compare(a.Chain, b.Chain)) })
	e := &Explanation{Source: pub.Source, Best: -1}
	for _, c := range combos {
		cf := ComboFit{Combo: c, CPUFactor: 1}
		missing := []string{}
		for _, role := range Roles {
			rs := byCombo[c][role]
			if len(rs) == 0 {
				missing = append(missing, role)
				continue
			}
			var ks, cs []float64
			for _, r := range rs {
				ks, cs = append(ks, r.RoundTrips), append(cs, r.CPUMs)
			}
			k, _ := stats.Median(ks)
			cpu, _ := stats.Median(cs)
			cf.K, cf.CPU = append(cf.K, k), append(cf.CPU, cpu)
		}
		if len(missing) > 0 {
			return nil, fmt.Errorf("gapmodel: combination %s has no cells of %v: every combination needs the four configurations", c, missing)
		}
		solve(&cf, f, want, 1)
		if !cf.Fits {
			solve(&cf, f, want, 2)
		}
		if cf.FreeParams >= len(want) {
			cf.Explanation = false
			cf.Note = fmt.Sprintf("%d free parameters for %d numbers: a fit, not an explanation", cf.FreeParams, len(want))
		}
		e.Combos = append(e.Combos, cf)
	}
	for i := range e.Combos {
		if e.Combos[i].Explanation && (e.Best < 0 || e.Combos[i].RMSMs < e.Combos[e.Best].RMSMs) {
			e.Best = i
		}
	}
	if e.Best < 0 {
		e.BaselineNote = "no combination fits the published medians within the registered bound: the model does not explain the gap"
		return e, nil
	}
	b := e.Combos[e.Best]
	e.BaselineAccounted = math.Abs(b.ResidualMs[0]) <= f.Reg.ExplainBoundMs
	if e.BaselineAccounted {
		e.BaselineNote = fmt.Sprintf("the baseline is predicted within %.3f ms", math.Abs(b.ResidualMs[0]))
	} else {
		e.BaselineNote = fmt.Sprintf("the baseline is off by %+.3f ms: the original's Ths may start or end elsewhere than ours", b.ResidualMs[0])
	}
	return e, nil
}

// solve fits R (params 1) or R and f (params 2) by least squares and
// fills the predictions, residuals and verdict.
func solve(cf *ComboFit, f *Fit, want []float64, params int) {
	c0, s := f.C0.Est, f.S.Est
	switch params {
	case 1:
		var num, den float64
		for j := range want {
			num += cf.K[j] * (want[j] - c0 - s*cf.CPU[j])
			den += cf.K[j] * cf.K[j]
		}
		cf.RTTMs, cf.CPUFactor = 0, 1
		if den > 0 {
			cf.RTTMs = max(0, num/den)
		}
	case 2:
		// P - c0 = k R + g CPU, g = s f: the 2x2 normal equations.
		var kk, kc, cc, ky, cy float64
		for j := range want {
			y := want[j] - c0
			kk += cf.K[j] * cf.K[j]
			kc += cf.K[j] * cf.CPU[j]
			cc += cf.CPU[j] * cf.CPU[j]
			ky += cf.K[j] * y
			cy += cf.CPU[j] * y
		}
		det := kk*cc - kc*kc
		if det == 0 || s == 0 {
			cf.Note = "round trips and CPU are collinear over the configurations: R and f cannot be told apart"
			return
		}
		r, g := (ky*cc-cy*kc)/det, (kk*cy-kc*ky)/det
		if r < 0 { // the constrained optimum lies on R = 0
			r, g = 0, cy/cc
		}
		cf.RTTMs, cf.CPUFactor = r, g/s
	}
	cf.FreeParams = params
	cf.PredictedMs, cf.ResidualMs, cf.PublishedMs = nil, nil, want
	var ss float64
	cf.Fits = true
	for j := range want {
		p := c0 + cf.K[j]*cf.RTTMs + s*cf.CPUFactor*cf.CPU[j]
		cf.PredictedMs = append(cf.PredictedMs, p)
		cf.ResidualMs = append(cf.ResidualMs, p-want[j])
		ss += (p - want[j]) * (p - want[j])
		if math.Abs(p-want[j]) > f.Reg.ExplainBoundMs {
			cf.Fits = false
		}
	}
	cf.RMSMs = math.Sqrt(ss / float64(len(want)))
	cf.Explanation = cf.Fits && params < len(want)
}

// Text renders a fit and, if any, its explanation, deterministically.
func Text(f *Fit, e *Explanation) string {
	var b strings.Builder
	fmt.Fprintf(&b, "model: Ths = c0 + k x RTT + s x CPU; fit on one-way delays %v ms, held out %v ms, %d rounds\n", f.FitLevels, f.HeldOut, f.Rounds)
	fmt.Fprintf(&b, "c0 = %.3f ms [%.3f, %.3f]; s = %.3f [%.3f, %.3f] (%.0f %% bootstrap over rounds)\n", f.C0.Est, f.C0.Lower, f.C0.Upper, f.S.Est, f.S.Lower, f.S.Upper, 100*f.Reg.Level)
	for _, p := range f.Predictions {
		fmt.Fprintf(&b, "held out %s: observed %.3f, predicted %.3f, error %+.3f ms\n", p.Row.Label(), p.ObservedMs, p.PredictedMs, p.ErrorMs)
	}
	verdict := "passes"
	if !f.Pass {
		verdict = "FAILS"
	}
	fmt.Fprintf(&b, "prediction %s: max |error| %.3f ms, bound %.3f ms (registered)\n", verdict, f.MaxAbsErrMs, f.Reg.BoundMs)
	if e == nil {
		b.WriteString("no explanation attempted\n")
		return b.String()
	}
	for i, c := range e.Combos {
		fmt.Fprintf(&b, "%s: RTT %.3f ms, CPU factor %.3f, %d free parameter(s), RMS %.3f ms", c.Combo, c.RTTMs, c.CPUFactor, c.FreeParams, c.RMSMs)
		if i == e.Best {
			b.WriteString(" (best)")
		}
		b.WriteString("\n")
		for j, role := range Roles {
			fmt.Fprintf(&b, "  %-8s published %.3f, predicted %.3f, residual %+.3f ms\n", role, c.PublishedMs[j], c.PredictedMs[j], c.ResidualMs[j])
		}
		switch {
		case c.Note != "":
			fmt.Fprintf(&b, "  %s\n", c.Note)
		case !c.Fits:
			fmt.Fprintf(&b, "  does not fit within %.3f ms\n", f.Reg.ExplainBoundMs)
		}
	}
	fmt.Fprintf(&b, "%s\n", e.BaselineNote)
	return b.String()
}
