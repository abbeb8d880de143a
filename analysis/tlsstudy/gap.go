package tlsstudy

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"

	"pqrepro/analysis/stats"
	"pqrepro/datasets/tlsdata"
)

// The gap analysis (issue 11 section 5): the paper's four configurations
// in every cell (stack x path x key-share mode) of a run, each cell
// compared with its own baseline, and for each factor the change of each
// increase when that factor alone switches, set against the published
// increase. Increases are the round-level ones (rounds.go).

// Key-share modes of a cell: the client's only key share is for the
// configured group, or every handshake takes the HelloRetryRequest path.
const (
	KeyShareDirect = "direct"
	KeyShareHRR    = "hrr"
)

// Cell is a combination of the run's factors other than the
// configuration. The zero Cell, as Params.Cell, means the records'
// defaults: Go's stack on loopback, direct.
type Cell struct {
	Stack    string `json:"stack"`    // tlsdata.StackGo or StackOpenSSL
	Path     string `json:"path"`     // tlsdata.KnownPaths
	KeyShare string `json:"keyshare"` // KeyShareDirect or KeyShareHRR
}

// String is "stack/path/keyshare", e.g. "openssl/bridge/direct".
func (c Cell) String() string { return c.Stack + "/" + c.Path + "/" + c.KeyShare }

// orDefault fills the zero fields with the records' defaults.
func (c Cell) orDefault() Cell {
	return Cell{Stack: cmp.Or(c.Stack, tlsdata.StackGo), Path: cmp.Or(c.Path, tlsdata.DefaultPath), KeyShare: cmp.Or(c.KeyShare, KeyShareDirect)}
}

// ParseCell parses "stack/path/keyshare".
func ParseCell(s string) (Cell, error) {
	parts := strings.Split(s, "/")
	if len(parts) != 3 {
		return Cell{}, fmt.Errorf("cell %q: want stack/path/keyshare, e.g. openssl/bridge/direct", s)
	}
	c := Cell{Stack: parts[0], Path: parts[1], KeyShare: parts[2]}
	return c, c.validate()
}

func (c Cell) validate() error {
	var errs []string
	if !slices.Contains(tlsdata.Stacks, c.Stack) {
		errs = append(errs, fmt.Sprintf("stack %q is not one of %v", c.Stack, tlsdata.Stacks))
	}
	if !slices.Contains(tlsdata.KnownPaths, c.Path) {
		errs = append(errs, fmt.Sprintf("path %q is not one of %v", c.Path, tlsdata.KnownPaths))
	}
	if c.KeyShare != KeyShareDirect && c.KeyShare != KeyShareHRR {
		errs = append(errs, fmt.Sprintf("key-share mode %q is not %s or %s", c.KeyShare, KeyShareDirect, KeyShareHRR))
	}
	if len(errs) > 0 {
		return fmt.Errorf("cell %s: %s", c, strings.Join(errs, "; "))
	}
	return nil
}

// recordCell is the cell a record belongs to.
func recordCell(r *tlsdata.Record, id tlsdata.ConfigID) Cell {
	ks := KeyShareDirect
	if id.HRR {
		ks = KeyShareHRR
	}
	return Cell{Stack: id.StackName(), Path: r.PathOrDefault(), KeyShare: ks}
}

// inCell returns config ID base (a Go, direct ID such as "ed25519/X25519")
// as cell c names it: "/hrr" for the HRR mode, "/openssl" for OpenSSL.
func inCell(base string, c Cell) string {
	id, err := tlsdata.ParseConfigID(base)
	if err != nil {
		return base // Params.Validate has rejected it
	}
	id.HRR = c.KeyShare == KeyShareHRR
	id.Stack = ""
	if c.Stack == tlsdata.StackOpenSSL {
		id.Stack = tlsdata.StackOpenSSL
	}
	return id.ID()
}

// compareCells orders cells as the tables list them: stack, path and
// key-share mode, each in the order of its known values.
func compareCells(a, b Cell) int {
	return cmp.Or(
		cmp.Compare(slices.Index(tlsdata.Stacks, a.Stack), slices.Index(tlsdata.Stacks, b.Stack)),
		cmp.Compare(slices.Index(tlsdata.KnownPaths, a.Path), slices.Index(tlsdata.KnownPaths, b.Path)),
		cmp.Compare(a.KeyShare, b.KeyShare)) // "direct" < "hrr"
}

// Factor is one of the run's factors and its two levels, from the one
// farther from the original to the original's (stack, path), or from
// the original's presumed mode to the retry (key share).
type Factor struct {
	Name     string `json:"name"`
	From, To string
	level    func(Cell) string
	set      func(Cell, string) Cell
}

// Factors are the gap analysis's factors in table order.
var Factors = []Factor{
	{Name: "stack", From: tlsdata.StackGo, To: tlsdata.StackOpenSSL,
		level: func(c Cell) string { return c.Stack }, set: func(c Cell, v string) Cell { c.Stack = v; return c }},
	{Name: "path", From: "loopback", To: "bridge",
		level: func(c Cell) string { return c.Path }, set: func(c Cell, v string) Cell { c.Path = v; return c }},
	{Name: "keyshare", From: KeyShareDirect, To: KeyShareHRR,
		level: func(c Cell) string { return c.KeyShare }, set: func(c Cell, v string) Cell { c.KeyShare = v; return c }},
}

// CellResult is the paper's four configurations in one cell, each target
// compared with the cell's baseline (Holm over the cell's three).
type CellResult struct {
	Cell
	Primary bool `json:"primary"` // the cell the paper's claims are judged on
	// Missing lists the paper's configurations (config IDs) the cell has
	// no or too few measured connections of; then Comparisons is empty.
	Missing          []string     `json:"missing,omitempty"`
	Baseline         string       `json:"baseline"`
	NBaseline        int          `json:"n_baseline"`
	MedianBaselineMs Num          `json:"median_baseline_ms"`
	Comparisons      []Comparison `json:"comparisons"`
}

// complete says whether the cell has all of the paper's comparisons.
func (c *CellResult) complete() bool { return len(c.Missing) == 0 && len(c.Comparisons) > 0 }

// role returns the cell's comparison of a role, or nil.
func (c *CellResult) role(role string) *Comparison {
	for i := range c.Comparisons {
		if c.Comparisons[i].Role == role {
			return &c.Comparisons[i]
		}
	}
	return nil
}

// Gap is the gap analysis: every cell, and per factor the change of each
// increase when only that factor switches.
type Gap struct {
	Cells   []CellResult   `json:"cells"`
	Factors []FactorResult `json:"factors"`
}

// FactorResult is one factor: the levels present and its effects.
type FactorResult struct {
	Factor string   `json:"factor"`
	From   string   `json:"from"`
	To     string   `json:"to"`
	Levels []string `json:"levels"` // present in the run, in Factors' order
	// Note says why there are no effects (one level only, or no pair of
	// complete cells), else is empty.
	Note    string         `json:"note,omitempty"`
	Effects []FactorEffect `json:"effects"`
}

// FactorEffect is the change of one role's increase when the factor
// switches from From to To with the other two factors held at Held's
// levels. Increases are the round-level ones (RoundComparison) within a
// cell; the change is the To cell's minus the From cell's, with a percentile
// cluster-bootstrap interval over the rounds the two cells share and the
// two-sided Wilcoxon signed-rank p of the per-round changes (Holm over
// all effects that have one).
type FactorEffect struct {
	Role string `json:"role"`
	From Cell   `json:"from_cell"`
	To   Cell   `json:"to_cell"`
	// Primary: the pair that holds the other factors at the primary
	// cell's levels (one of its cells is the primary cell).
	Primary        bool `json:"primary"`
	FromIncreaseMs Num  `json:"from_increase_ms"`
	ToIncreaseMs   Num  `json:"to_increase_ms"`
	ChangeMs       Num  `json:"change_ms"`
	// ChangeHodgesLehmannMs is the To cell's Hodges-Lehmann shift minus
	// the From cell's, the same change by the other estimator.
	ChangeHodgesLehmannMs Num `json:"change_hodges_lehmann_ms"`
	Lower                 Num `json:"lower"`
	Upper                 Num `json:"upper"`
	SE                    Num `json:"se_bootstrap"` // standard deviation of the cluster-bootstrap changes
	P                     Num `json:"p_signed_rank"`
	PHolm                 Num `json:"p_holm"`
	// NEff is the number of rounds the two cells share; Note says why
	// the interval or the test is null.
	NEff            int    `json:"n_eff"`
	Note            string `json:"note,omitempty"`
	ChangePctPoints Num    `json:"change_pct_points"` // of the relative increases
	// Published is the published increase; DistanceFromMs and
	// DistanceToMs the absolute distances of each cell's increase from
	// it, TowardMs = DistanceFromMs - DistanceToMs (positive: switching
	// the factor moves our increase toward the published one) and
	// ClosedPct = 100 TowardMs / DistanceFromMs, the share of the gap the
	// switch closes.
	PublishedMs    Num `json:"published_ms"`
	DistanceFromMs Num `json:"distance_from_ms"`
	DistanceToMs   Num `json:"distance_to_ms"`
	TowardMs       Num `json:"toward_ms"`
	ClosedPct      Num `json:"closed_pct"`
}

// cellSamples holds each cell's Ths per config ID.
type cellSamples map[Cell]map[string]*measured

// gapAnalysis compares every cell's paper configurations and every
// factor's effect.
func gapAnalysis(p Params, cells cellSamples, primary Cell) (*Gap, error) {
	g := &Gap{}
	keys := make([]Cell, 0, len(cells))
	for c := range cells {
		keys = append(keys, c)
	}
	slices.SortFunc(keys, compareCells)
	byCell := map[Cell]*CellResult{}
	for _, c := range keys {
		cr := CellResult{Cell: c, Primary: c == primary, Baseline: inCell(p.Paper[0], c)}
		samples := map[string]*measured{}
		var ids []string
		roles := map[string]string{}
		for i, base := range p.Paper {
			id := inCell(base, c)
			m := cells[c][id]
			if m == nil || len(m.ths) < MinConnections {
				cr.Missing = append(cr.Missing, id)
				continue
			}
			samples[id], ids, roles[id] = m, append(ids, id), Roles[i]
		}
		if bm := cells[c][cr.Baseline]; bm != nil && len(bm.ths) > 0 {
			cr.NBaseline = len(bm.ths)
			med, _ := stats.Median(bm.ths)
			cr.MedianBaselineMs = Num(med)
		}
		if len(cr.Missing) == 0 {
			f, err := family(p, c, ids, samples, roles)
			if err != nil {
				return nil, fmt.Errorf("cell %s: %w", c, err)
			}
			cr.Comparisons = f.Comparisons
		}
		g.Cells = append(g.Cells, cr)
	}
	for i := range g.Cells {
		byCell[g.Cells[i].Cell] = &g.Cells[i]
	}

	var ps []float64
	var where [][2]int
	for _, f := range Factors {
		fr := FactorResult{Factor: f.Name, From: f.From, To: f.To, Effects: []FactorEffect{}}
		for _, lv := range []string{f.From, f.To} {
			if slices.ContainsFunc(keys, func(c Cell) bool { return f.level(c) == lv }) {
				fr.Levels = append(fr.Levels, lv)
			}
		}
		for _, c0 := range keys {
			if f.level(c0) != f.From {
				continue
			}
			c1 := f.set(c0, f.To)
			a, b := byCell[c0], byCell[c1]
			if a == nil || b == nil || !a.complete() || !b.complete() {
				continue
			}
			for _, role := range Roles[1:] {
				e, err := factorEffect(p, a, b, role)
				if err != nil {
					return nil, fmt.Errorf("factor %s, %s to %s, %s: %w", f.Name, c0, c1, role, err)
				}
				e.Primary = c0 == primary || c1 == primary
				fr.Effects = append(fr.Effects, e)
				ps = append(ps, float64(e.P))
				where = append(where, [2]int{len(g.Factors), len(fr.Effects) - 1})
			}
		}
		switch {
		case len(fr.Levels) < 2:
			fr.Note = fmt.Sprintf("the run has one %s only (%s): no effect to estimate", f.Name, strings.Join(fr.Levels, ", "))
		case len(fr.Effects) == 0:
			fr.Note = fmt.Sprintf("no pair of cells that differ in %s only has all of the paper's configurations", f.Name)
		}
		g.Factors = append(g.Factors, fr)
	}
	holm, _ := holmFinite(ps)
	for i, h := range holm {
		g.Factors[where[i][0]].Effects[where[i][1]].PHolm = Num(h)
	}
	return g, nil
}

// factorEffect is role's change from cell a to cell b: the difference of
// the two cells' round-level increases, with a cluster-bootstrap
// interval over the rounds both cells' comparisons have (a round is
// resampled with all four of its blocks, so whatever the cells share in
// a round stays paired), and the two-sided Wilcoxon signed-rank p of the
// per-round changes d_b,r - d_a,r.
func factorEffect(p Params, a, b *CellResult, role string) (FactorEffect, error) {
	ca, cb := a.role(role), b.role(role)
	if ca == nil || cb == nil {
		return FactorEffect{}, fmt.Errorf("no %s comparison", role)
	}
	nan := Num(math.NaN())
	e := FactorEffect{Role: role, From: a.Cell, To: b.Cell,
		FromIncreaseMs: ca.Rounds.IncreaseMs, ToIncreaseMs: cb.Rounds.IncreaseMs,
		ChangeMs:              Num(float64(cb.Rounds.IncreaseMs) - float64(ca.Rounds.IncreaseMs)),
		ChangeHodgesLehmannMs: Num(float64(cb.HodgesLehmann.Shift) - float64(ca.HodgesLehmann.Shift)),
		ChangePctPoints:       Num(float64(cb.Rounds.IncreasePct) - float64(ca.Rounds.IncreasePct)),
		Lower:                 nan, Upper: nan, SE: nan, P: nan, PHolm: nan,
	}
	_, da, db := pairRounds(floats(ca.Rounds.DiffsMs), floats(cb.Rounds.DiffsMs))
	e.NEff = len(da)
	per := make([]float64, len(da))
	for i := range da {
		per[i] = db[i] - da[i]
	}
	switch {
	case e.NEff < MinRounds:
		e.Note = fmt.Sprintf("%d round(s) shared by both cells: the interval and the test need at least %d", e.NEff, MinRounds)
	case slices.Min(per) == slices.Max(per):
		e.Note = fmt.Sprintf("every round's change is %g ms: no spread to resample or rank", per[0])
	default:
		change := func(idx []int) float64 { return stats.MedianAt(db, idx) - stats.MedianAt(da, idx) }
		rs, err := stats.ClusterBootstrap(e.NEff, change, stats.ClusterConfig{
			Seed: p.BootstrapSeed, Stream: streamOf(a.Cell.String() + ">" + b.Cell.String() + "|" + role), Resamples: p.resamples(), Level: Level})
		if err != nil {
			return FactorEffect{}, err
		}
		e.Lower, e.Upper, e.SE = Num(rs.Lower), Num(rs.Upper), Num(rs.SE)
		if sr, err := stats.WilcoxonSignedRank(per); err == nil {
			e.P = Num(sr.P)
		}
	}
	if pub, ok := Published.Increases[role]; ok {
		from := math.Abs(pub.IncreaseMs - float64(e.FromIncreaseMs))
		to := math.Abs(pub.IncreaseMs - float64(e.ToIncreaseMs))
		e.PublishedMs, e.DistanceFromMs, e.DistanceToMs, e.TowardMs = Num(pub.IncreaseMs), Num(from), Num(to), Num(from-to)
		e.ClosedPct = Num(math.NaN())
		if from > 0 {
			e.ClosedPct = Num(100 * (from - to) / from)
		}
	}
	return e, nil
}

func floats(x []Num) []float64 {
	out := make([]float64, len(x))
	for i, v := range x {
		out[i] = float64(v)
	}
	return out
}
