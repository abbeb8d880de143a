package tlsstudy

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"

	"pqrepro/analysis/stats"
	"pqrepro/analysis/tlscompare"
	"pqrepro/datasets/tlsdata"
)

// The gap analysis (issue 11 section 5): the paper's four configurations
// in every cell (stack x path x key-share mode) of a run, each cell
// compared with its own baseline, and for each factor the change of each
// increase when that factor alone switches, set against the published
// increase. Increases are the round-level ones (analysis/tlscompare).

// Key-share modes of a cell (tlsdata.KeyShareDirect, tlsdata.KeyShareHRR).
const (
	KeyShareDirect = tlsdata.KeyShareDirect
	KeyShareHRR    = tlsdata.KeyShareHRR
)

// Cell is a combination of the run's factors other than the
// configuration (tlsdata.Cell). The zero Cell, as Params.Cell, means the
// records' defaults: Go's stack on loopback, direct.
type Cell = tlsdata.Cell

// inCell returns config ID base (a Go, direct ID such as "ed25519/X25519")
// as cell c names it: "/hrr" for the HRR mode, "/openssl" for our OpenSSL
// harness, "/openssl-cli" for OpenSSL's s_server and s_client.
func inCell(base string, c Cell) string {
	id, err := tlsdata.ParseConfigID(base)
	if err != nil {
		return base // Params.Validate has rejected it
	}
	id.HRR = c.KeyShare == KeyShareHRR
	id.Stack = ""
	if c.Stack == tlsdata.StackOpenSSL || c.Stack == tlsdata.StackOpenSSLCLI {
		id.Stack = c.Stack
	}
	return id.ID()
}

// Factor is one of the run's factors and its two levels.
//
// The levels go from the one farther from the original to the original's
// (stack, process, path, runtime), or from the original's presumed mode to
// the retry (key share). Two factors may share a column of the cell: stack
// (go -> openssl) and process (openssl -> openssl-cli) are steps along the
// stack column, path (loopback -> bridge) and runtime (bridge -> docker)
// along the path column.
type Factor struct {
	Name     string `json:"name"`
	From, To string
	// column names the cell's field the factor switches ("stack",
	// "path", "keyshare").
	column string
	level  func(Cell) string
	set    func(Cell, string) Cell
}

func stackOf(c Cell) string              { return c.Stack }
func withStack(c Cell, v string) Cell    { c.Stack = v; return c }
func pathOf(c Cell) string               { return c.Path }
func withPath(c Cell, v string) Cell     { c.Path = v; return c }
func keyShareOf(c Cell) string           { return c.KeyShare }
func withKeyShare(c Cell, v string) Cell { c.KeyShare = v; return c }

// Factors are the gap analysis's factors in table order. That is, stack
// (Go's crypto/tls -> our OpenSSL harness), process (the harness's
// long-lived processes -> s_server and one s_client process per
// connection), path (loopback -> the Docker-like bridge), runtime (that
// bridge -> a real Docker daemon's Compose network) and key share
// (direct -> HRR).
var Factors = []Factor{
	{Name: "stack", From: tlsdata.StackGo, To: tlsdata.StackOpenSSL, column: "stack", level: stackOf, set: withStack},
	{Name: "process", From: tlsdata.StackOpenSSL, To: tlsdata.StackOpenSSLCLI, column: "stack", level: stackOf, set: withStack},
	{Name: "path", From: "loopback", To: "bridge", column: "path", level: pathOf, set: withPath},
	{Name: "runtime", From: "bridge", To: "docker", column: "path", level: pathOf, set: withPath},
	{Name: "keyshare", From: KeyShareDirect, To: KeyShareHRR, column: "keyshare", level: keyShareOf, set: withKeyShare},
}

// cellDistance is the number of factors in which cell c differs from the
// primary cell: along each column the number of factor steps between c's
// level and the primary cell's (go -> openssl -> openssl-cli, loopback ->
// bridge -> docker, direct -> hrr). A level on no factor's chain (the
// remote path) counts as one step more than the column's longest chain.
func cellDistance(c, primary Cell) int {
	d := 0
	for _, col := range []string{"stack", "path", "keyshare"} {
		var chain []string
		var get func(Cell) string
		for _, f := range Factors {
			if f.column != col {
				continue
			}
			get = f.level
			if len(chain) == 0 {
				chain = append(chain, f.From)
			}
			chain = append(chain, f.To)
		}
		a, b := slices.Index(chain, get(c)), slices.Index(chain, get(primary))
		switch {
		case get(c) == get(primary):
		case a < 0 || b < 0:
			d += len(chain)
		default:
			d += max(a-b, b-a)
		}
	}
	return d
}

// primaryPair picks a factor's primary pair among its pairs (From cell,
// To cell): the pair nearest the primary cell, where a pair's distance
// is the smaller cellDistance of its two cells, ties broken by the other
// cell's distance, then by table order (tlsdata.CompareCells of the From
// cells).
// With the primary cell openssl-cli/docker/direct this is the stack
// factor at bridge/direct (go/bridge/direct -> openssl/bridge/direct),
// process at bridge/direct, path for openssl-cli at direct, runtime for
// openssl-cli at direct and key share at openssl-cli/docker: the chain
// from go/loopback to the primary cell one factor at a time. It returns
// -1 when pairs is empty.
func primaryPair(pairs [][2]Cell, primary Cell) int {
	best := -1
	var bd [2]int
	for i, p := range pairs {
		a, b := cellDistance(p[0], primary), cellDistance(p[1], primary)
		d := [2]int{min(a, b), max(a, b)}
		if best < 0 || d[0] < bd[0] || (d[0] == bd[0] && d[1] < bd[1]) ||
			(d == bd && tlsdata.CompareCells(p[0], pairs[best][0]) < 0) {
			best, bd = i, d
		}
	}
	return best
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
	// Emulated are the emulated-path cells under the per-config group
	// list, one per delay and chain, compared as the primary cell is:
	// the claims' curve counts them as alternatives (CellAlternatives).
	Emulated []EmulatedCellResult `json:"emulated,omitempty"`
}

// EmulatedCellResult is one emulated-path cell's paper comparisons under
// one client group list and chain.
type EmulatedCellResult struct {
	CellResult
	Groups string `json:"groups"`
	Chain  string `json:"chain"` // "leaf" or "leaf+ca"
}

// Name names the cell in the curve: its cell, group list and chain.
func (e *EmulatedCellResult) Name() string {
	return fmt.Sprintf("%s, %s, %s", e.Cell, e.Groups, e.Chain)
}

// emulatedFamilies compares the paper's four configurations in every
// emulated-path cell under the per-config group list, per chain, by round
// as the primary cell is compared (family). The other group lists change
// the handshake the client asks for (a HelloRetryRequest), so only
// per-config is an alternative specification of the same claim.
func emulatedFamilies(p Params, emulated cellSamples) ([]EmulatedCellResult, error) {
	keys := make([]Cell, 0, len(emulated))
	for c := range emulated {
		keys = append(keys, c)
	}
	slices.SortFunc(keys, func(a, b Cell) int { return cmp.Compare(a.String(), b.String()) })
	var out []EmulatedCellResult
	for _, c := range keys {
		for _, chain := range []bool{false, true} {
			ids := make([]string, len(p.Paper))
			for config, m := range emulated[c] {
				if m.id.GroupsName() != tlsdata.ClientGroupsPerConfig || m.id.Chain != chain {
					continue
				}
				if k := slices.Index(p.Paper, tlsdata.ConfigID{CertKey: m.id.CertKey, Group: m.id.Group}.ID()); k >= 0 {
					ids[k] = config
				}
			}
			if !slices.ContainsFunc(ids, func(id string) bool { return id != "" }) {
				continue // the design has no such cell
			}
			e := EmulatedCellResult{Groups: tlsdata.ClientGroupsPerConfig, Chain: map[bool]string{false: "leaf", true: "leaf+ca"}[chain]}
			var err error
			if e.CellResult, err = paperCell(p, c, ids, emulated[c]); err != nil {
				return nil, fmt.Errorf("emulated cell %s: %w", e.Name(), err)
			}
			out = append(out, e)
		}
	}
	return out, nil
}

// paperCell compares the paper's configurations in one cell, by round as
// the primary cell is (family). ids[k] is the cell's configuration of
// p.Paper[k], "" where the run has none; one missing or with fewer than
// MinConnections makes the cell incomplete, without comparisons.
func paperCell(p Params, c Cell, ids []string, ms map[string]*measured) (CellResult, error) {
	cr := CellResult{Cell: c, Baseline: ids[0]}
	samples := map[string]*measured{}
	roles := map[string]string{}
	var present []string
	for k, id := range ids {
		m := ms[id]
		if id == "" || m == nil || len(m.ths) < MinConnections {
			cr.Missing = append(cr.Missing, cmp.Or(id, p.Paper[k]))
			continue
		}
		samples[id], present, roles[id] = m, append(present, id), Roles[k]
	}
	if bm := ms[ids[0]]; ids[0] != "" && bm != nil && len(bm.ths) > 0 {
		cr.NBaseline = len(bm.ths)
		med, _ := stats.Median(bm.ths)
		cr.MedianBaselineMs = Num(med)
	}
	if len(cr.Missing) == 0 {
		f, err := family(p, c, present, samples, roles)
		if err != nil {
			return cr, err
		}
		cr.Comparisons = f.Comparisons
	}
	return cr, nil
}

// FactorResult is one factor: the levels present and its effects.
type FactorResult struct {
	Factor string   `json:"factor"`
	From   string   `json:"from"`
	To     string   `json:"to"`
	Levels []string `json:"levels"` // present in the run, in Factors' order
	// Note says why there are no effects (one level only, or no pair of
	// complete cells), else is empty.
	Note string `json:"note,omitempty"`
	// Missing lists the pairs the design or the run lacks: a cell at one
	// level whose partner at the other level (the factor switched, the
	// others held) is not in the run (the cells are not fully crossed:
	// experiments/tls.toml [matrix] cells), or a pair whose cells lack
	// some of the paper's configurations.
	Missing []string       `json:"missing_pairs,omitempty"`
	Effects []FactorEffect `json:"effects"`
}

// FactorEffect is the change of one role's increase when the factor
// switches from From to To with the other two factors held at Held's
// levels. Increases are the round-level ones (tlscompare.RoundComparison) within a
// cell; the change is the To cell's minus the From cell's, with a percentile
// cluster-bootstrap interval over the rounds the two cells share and the
// two-sided Wilcoxon signed-rank p of the per-round changes (Holm over
// all effects that have one).
type FactorEffect struct {
	Role string `json:"role"`
	From Cell   `json:"from_cell"`
	To   Cell   `json:"to_cell"`
	// Primary: the factor's primary pair, the one nearest the primary
	// cell (primaryPair: fewest factors in which its nearer cell differs
	// from the primary cell, then its farther cell, then table order);
	// the paper's macros report this pair.
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
	P                     Num `json:"p_signed_rank" range:"0,1"`
	PHolm                 Num `json:"p_holm" range:"0,1"`
	// NEff is the number of rounds the two cells share; Note says why
	// the interval or the test is null.
	NEff            int    `json:"n_eff" range:"0,"`
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
func gapAnalysis(p Params, cells cellSamples, choice PrimaryChoice) (*Gap, error) {
	primary := p.Cell.OrDefault() // the primary pairs are nearest the stated cell
	g := &Gap{}
	keys := make([]Cell, 0, len(cells))
	for c := range cells {
		keys = append(keys, c)
	}
	slices.SortFunc(keys, tlsdata.CompareCells)
	byCell := map[Cell]*CellResult{}
	for _, c := range keys {
		ids := make([]string, len(p.Paper))
		for i, base := range p.Paper {
			ids[i] = inCell(base, c)
		}
		cr, err := paperCell(p, c, ids, cells[c])
		if err != nil {
			return nil, fmt.Errorf("cell %s: %w", c, err)
		}
		cr.Primary = choice.Status != PrimaryAbsent && c == choice.Judged
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
		var pairs [][2]Cell
		var missing []string
		for _, c0 := range keys {
			if f.level(c0) != f.From {
				continue
			}
			c1 := f.set(c0, f.To)
			a, b := byCell[c0], byCell[c1]
			switch {
			case b == nil:
				missing = append(missing, fmt.Sprintf("%s has no %s", c0, c1))
				continue
			case !a.complete() || !b.complete():
				missing = append(missing, fmt.Sprintf("%s -> %s lacks some of the paper's configurations", c0, c1))
				continue
			}
			pairs = append(pairs, [2]Cell{c0, c1})
		}
		for _, c1 := range keys {
			if c0 := f.set(c1, f.From); f.level(c1) == f.To && byCell[c0] == nil {
				missing = append(missing, fmt.Sprintf("%s has no %s", c1, c0))
			}
		}
		slices.Sort(missing)
		if len(fr.Levels) == 2 { // with one level, Note says it all
			fr.Missing = missing
		}
		pick := primaryPair(pairs, primary)
		for i, pr := range pairs {
			a, b := byCell[pr[0]], byCell[pr[1]]
			for _, role := range Roles[1:] {
				e, err := factorEffect(p, a, b, role)
				if err != nil {
					return nil, fmt.Errorf("factor %s, %s to %s, %s: %w", f.Name, pr[0], pr[1], role, err)
				}
				e.Primary = i == pick
				fr.Effects = append(fr.Effects, e)
				ps = append(ps, float64(e.P))
				where = append(where, [2]int{len(g.Factors), len(fr.Effects) - 1})
			}
		}
		switch {
		case len(fr.Levels) < 2:
			fr.Note = fmt.Sprintf("the run has one of %s's levels only (%s): no effect to estimate", f.Name, strings.Join(fr.Levels, ", "))
		case len(fr.Effects) == 0:
			fr.Note = fmt.Sprintf("no pair of cells that differ in %s only has all of the paper's configurations", f.Name)
		}
		g.Factors = append(g.Factors, fr)
	}
	holm, _ := tlscompare.HolmFinite(ps)
	for i, h := range holm {
		g.Factors[where[i][0]].Effects[where[i][1]].PHolm = Num(h)
	}
	return g, nil
}

// Status of PrimaryChoice: the run has the stated primary cell, only the
// fallback, or neither.
const (
	PrimaryStated   = "primary"
	PrimaryFallback = "fallback"
	PrimaryAbsent   = "absent"
)

// PrimaryChoice records which cell the paper's claims are judged on. That
// is, the first of [paper.cell] (Params.Cell) and [paper.fallback]
// (Params.Fallback) that the run has measured connections in, both stated
// before the run (analysis/claims/preregistration.txt). When the run has
// neither (a run recorded before the rule), the families describe the
// stand-in, the complete cell nearest the stated one (cellDistance, then
// table order), and the claims are not judged (Status PrimaryAbsent; Note
// says so).
type PrimaryChoice struct {
	Cell     Cell   `json:"cell"`
	Fallback *Cell  `json:"fallback,omitempty"`
	Judged   Cell   `json:"judged"` // the cell of families.paper and families.matrix
	Status   string `json:"status"` // PrimaryStated, PrimaryFallback or PrimaryAbsent
	Note     string `json:"note"`
}

// Judgeable says whether the claims may be judged on the families.
func (c PrimaryChoice) Judgeable() bool { return c.Status != PrimaryAbsent }

// choosePrimary picks the judged cell (PrimaryChoice); an error only when
// the run has no cell with all of the paper's configurations.
func choosePrimary(p Params, cells cellSamples) (PrimaryChoice, error) {
	stated := p.Cell.OrDefault()
	ch := PrimaryChoice{Cell: stated}
	has := func(c Cell) bool {
		for _, m := range cells[c] {
			if len(m.recs) > 0 {
				return true
			}
		}
		return false
	}
	var present []string
	for c := range cells {
		present = append(present, c.String())
	}
	slices.Sort(present)
	if p.Fallback != (Cell{}) {
		fb := p.Fallback.OrDefault()
		ch.Fallback = &fb
	}
	switch {
	case has(stated):
		ch.Judged, ch.Status = stated, PrimaryStated
		ch.Note = fmt.Sprintf("the claims are judged on the primary cell %s ([paper.cell])", stated)
		return ch, nil
	case ch.Fallback != nil && has(*ch.Fallback):
		ch.Judged, ch.Status = *ch.Fallback, PrimaryFallback
		ch.Note = fmt.Sprintf("the primary cell %s is not in this run (see meta.json notes: left out); the claims are judged on the fallback cell %s ([paper.fallback])", stated, *ch.Fallback)
		return ch, nil
	}
	var cands []Cell
	for c, ms := range cells {
		ok := true
		for _, base := range p.Paper {
			if m := ms[inCell(base, c)]; m == nil || len(m.recs) < MinConnections {
				ok = false
			}
		}
		if ok {
			cands = append(cands, c)
		}
	}
	if len(cands) == 0 {
		return ch, fmt.Errorf("the primary cell %s (stack/path/keyshare) has no connections, nor has the fallback %s, and no cell of the run (%s) has all of the paper's configurations: record a run that includes the primary cell",
			stated, cmp.Or(p.fallbackString(), "(none)"), strings.Join(present, ", "))
	}
	slices.SortFunc(cands, func(a, b Cell) int {
		return cmp.Or(cmp.Compare(cellDistance(a, stated), cellDistance(b, stated)), tlsdata.CompareCells(a, b))
	})
	ch.Judged, ch.Status = cands[0], PrimaryAbsent
	fb := " (and no fallback is stated)"
	if ch.Fallback != nil {
		fb = " nor the fallback " + ch.Fallback.String()
	}
	ch.Note = fmt.Sprintf("primary cell not in this run: it has neither the primary cell %s%s; the tables describe the nearest cell the run has, %s, and the claims are not judged on it", stated, fb, cands[0])
	return ch, nil
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
	_, da, db := tlscompare.PairRounds(floats(ca.Rounds.DiffsMs), floats(cb.Rounds.DiffsMs))
	e.NEff = len(da)
	per := make([]float64, len(da))
	for i := range da {
		per[i] = db[i] - da[i]
	}
	switch {
	case e.NEff < tlscompare.MinRounds:
		e.Note = fmt.Sprintf("%d round(s) shared by both cells: the interval and the test need at least %d", e.NEff, tlscompare.MinRounds)
	case slices.Min(per) == slices.Max(per):
		e.Note = fmt.Sprintf("every round's change is %g ms: no spread to resample or rank", per[0])
	default:
		change := func(idx []int) float64 { return stats.MedianAt(db, idx) - stats.MedianAt(da, idx) }
		rs, err := stats.ClusterBootstrap(e.NEff, change, stats.ClusterConfig{
			Seed: p.BootstrapSeed, Stream: tlscompare.Stream(a.Cell.String() + ">" + b.Cell.String() + "|" + role), Resamples: p.resamples(), Level: Level})
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
