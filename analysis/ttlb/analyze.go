// Package ttlb is Study B's transfer block, our extension (issue 34): per
// scenario and response size, the hybrid's increase of the time to last
// byte over X25519, in results/net-ttlb.json, a table, macros and a
// figure, as one repro stage (net:ttlb).
//
// It reads the run of Study B (datasets/netdata's transfer.csv.gz, and
// the rounds' records for size 0) with analysis/netstudy's design, rows
// and parameters, and judges four statements of Kampanakis and
// Childs-Klein as our claims K1-K4 (claims.go) with analysis/claims'
// verdicts. They are not in Study B's catalogue: the original's claim
// counts do not change.
package ttlb

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"

	"pqrepro/analysis/netstudy"
	"pqrepro/analysis/stats"
	"pqrepro/datasets/netdata"
	"pqrepro/internal/jsonnum"
)

// ResultsFile is the transfer block's results (our extension, issue 34).
const ResultsFile = "results/net-ttlb.json"

// NotMeasuredPinned is what every output of the transfer block says for a
// run recorded before the block existed.
const NotMeasuredPinned = "not measured in the pinned run (it was recorded before the transfer block existed)"

// Results are the transfer block's results: the hybrid's increase of the
// time to last byte over X25519, per scenario and response size.
//
// The series pairs of the design are its replicates. A replicate is one series pair (Replicate): the X25519 series and the
// hybrid's series of one scenario, size, toolchain and congestion
// control (the block as first designed: one series per group), or the
// one series that holds both groups interleaved (the controlled block of
// issue 41, rows with cc and position). Each replicate gives one
// estimate; the cell's estimate and interval are over the replicates
// (Cell), never over the connections of one series. Size 0 is the
// block's own handshake-only connection when the run has it, else the
// rounds' (its ths from the largest round's series of each toolchain:
// the time to the client's Finished, the last byte of a connection that
// carries none).
type Results struct {
	Extension string   `json:"extension"`
	Source    string   `json:"source"`
	Measured  bool     `json:"measured"`
	Note      string   `json:"note,omitempty"`
	Toolchain string   `json:"toolchain,omitempty"` // the primary, whose within-series interval is the secondary column
	Scenarios []string `json:"scenarios"`           // by RTT
	Fastest   string   `json:"fastest,omitempty"`
	Cells     []Cell   `json:"cells"`
	// Below5 and Below1 are per scenario the smallest size from which the
	// relative increase (point estimate) stays below 5 % (1 %) at every
	// larger size measured; -1 when it never does.
	Below5 map[string]int `json:"below_5pct"`
	Below1 map[string]int `json:"below_1pct"`
	Claims []Claim        `json:"claims"`
	// ByCC are the cells split by congestion control, for a run that set
	// one per socket (the controlled block): per scenario, size and
	// control, the replicates are its toolchains' series. The claims read
	// Cells, which pool the controls as replicates; the figure reads
	// ByCC, since a control is a factor whose effect the reader must see.
	ByCC []Cell `json:"by_cc"`
}

// Cell is one scenario and size, over its replicates.
//
// With k replicates whose relative increases are e_1..e_k, RelPct is
// their mean m and [RelLowerPct, RelUpperPct] the Student t interval
//
//	m -+ t_{0.975, k-1} s / sqrt(k),  s^2 = sum (e_i - m)^2 / (k-1)
//
// (stats.BetweenSeriesInterval), the same for DiffMs. Why: the
// connections of one series share its link's draws and the machine's
// state while it ran, so they are not independent replicates of the
// hybrid's effect; the series pairs are (Kalibera and Jones 2013: the
// unit of replication is the series), and on the pinned run the two
// toolchains' series of one cell differ by more than either one's
// within-series interval. With k = 2 (two toolchains), t = 12.71: the
// interval is wide, and that is what two replicates can show. One
// replicate gives no interval (Note says so), and neither do k equal
// estimates.
//
// Agree checks the replicates against each other: "yes" when every
// replicate's estimate lies inside every other replicate's within-series
// 95 % interval (block bootstrap of its series, Replicate), "no" when
// one does not, "" when there is one replicate or an interval is
// missing. The within-series interval of the primary toolchain is kept
// as a secondary column (WithinLowerPct, WithinUpperPct); no claim
// reads it.
type Cell struct {
	Scenario    string      `json:"scenario"`
	SizeBytes   int         `json:"size_bytes"`
	CC          string      `json:"cc,omitempty"` // set in Results.ByCC only
	N           [2]int      `json:"n"`            // connections with a TTLB over the replicates, X25519 then hybrid
	Incomplete  int         `json:"incomplete"`   // transfer rows without one
	K           int         `json:"k"`            // replicates with an estimate
	BaseMs      jsonnum.Num `json:"base_ms"`      // mean over the replicates of the median TTLB, X25519
	TargetMs    jsonnum.Num `json:"target_ms"`    // the same, X25519MLKEM768
	DiffMs      jsonnum.Num `json:"diff_ms"`
	DiffLowerMs jsonnum.Num `json:"diff_lower_ms"`
	DiffUpperMs jsonnum.Num `json:"diff_upper_ms"`
	RelPct      jsonnum.Num `json:"rel_pct"` // mean of the replicates' 100 (target/base - 1)
	RelLowerPct jsonnum.Num `json:"rel_lower_pct"`
	RelUpperPct jsonnum.Num `json:"rel_upper_pct"`
	// WithinLowerPct and WithinUpperPct are the primary toolchain's
	// within-series interval (secondary; see Replicate).
	WithinLowerPct jsonnum.Num `json:"within_lower_pct"`
	WithinUpperPct jsonnum.Num `json:"within_upper_pct"`
	Agree          string      `json:"agree"`
	// HsDiffMs and HsRelPct are the handshake's (ths) increase on the same
	// connections, means over the replicates.
	HsDiffMs   jsonnum.Num `json:"hs_diff_ms"`
	HsRelPct   jsonnum.Num `json:"hs_rel_pct"`
	Replicates []Replicate `json:"replicates"`
	Note       string      `json:"note,omitempty"`
}

// Replicate is one series pair of a cell: one toolchain and congestion
// control.
//
// RelPct = 100 (median hybrid TTLB / median X25519 TTLB - 1) over its
// connections; [WithinLowerPct, WithinUpperPct] is that ratio's 95 %
// percentile interval when each group's series is block-bootstrapped as
// a whole (stats.BootstrapSeries, docs/net-inference.md): how precisely
// the one series pair measures itself, not how far another would land.
type Replicate struct {
	Toolchain      string      `json:"toolchain"`
	CC             string      `json:"cc,omitempty"` // "" when the run did not set one
	N              [2]int      `json:"n"`
	BaseMs         jsonnum.Num `json:"base_ms"`
	TargetMs       jsonnum.Num `json:"target_ms"`
	DiffMs         jsonnum.Num `json:"diff_ms"`
	RelPct         jsonnum.Num `json:"rel_pct"`
	WithinLowerPct jsonnum.Num `json:"within_lower_pct"`
	WithinUpperPct jsonnum.Num `json:"within_upper_pct"`
	HsRelPct       jsonnum.Num `json:"hs_rel_pct"`
	Note           string      `json:"note,omitempty"`
}

// key names a replicate: its toolchain, and its congestion control when
// the run set one.
func (r Replicate) key() string {
	if r.CC == "" {
		return r.Toolchain
	}
	return r.Toolchain + "/" + r.CC
}

func (t *Results) cell(sc string, size int) *Cell {
	for i := range t.Cells {
		if t.Cells[i].Scenario == sc && t.Cells[i].SizeBytes == size {
			return &t.Cells[i]
		}
	}
	return nil
}

const extensionLabel = "our extension (issue 34), not the original study's design or claims"

// notMeasured is the result of a run without the transfer block: its
// claims not measurable, with NotMeasuredPinned.
func notMeasured() (*Results, error) {
	t := &Results{Extension: extensionLabel, Source: Source, Note: NotMeasuredPinned,
		Scenarios: []string{}, Cells: []Cell{}, ByCC: []Cell{}, Below5: map[string]int{}, Below1: map[string]int{}}
	cs, err := judge(t)
	t.Claims = cs
	return t, err
}

var groups = [2]string{"X25519", "X25519MLKEM768"}

// series are one replicate's values by group: TTLB and ths in ms, in
// time order.
type series struct {
	toolchain, cc string
	tt, hs        [2][]float64
}

// Analyze computes the transfer block's results from its rows
// (transfer.csv.gz) and the rounds' rows (records.csv.gz, for size 0
// when the block has none).
func Analyze(d *netstudy.Design, xfer []netdata.Row, rounds []netstudy.Row, p netstudy.Params) (*Results, error) {
	xfer = withoutPaddedArm(xfer)
	if len(xfer) == 0 {
		return notMeasured()
	}
	p = p.WithDefaults()
	prim := netstudy.PrimaryToolchain(d, rounds)
	t := &Results{Extension: extensionLabel, Source: Source, Measured: true, Toolchain: prim,
		Scenarios: []string{}, Cells: []Cell{}, ByCC: []Cell{}, Below5: map[string]int{}, Below1: map[string]int{}}
	scs := slices.Clone(d.Scenarios)
	slices.SortStableFunc(scs, func(a, b netstudy.Scenario) int { return cmp.Compare(a.RTTms, b.RTTms) })
	if len(scs) > 0 {
		t.Fastest = scs[0].Name
	}
	// The controlled block's rows in each series' time order.
	xfer = slices.Clone(xfer)
	slices.SortStableFunc(xfer, func(a, b netdata.Row) int {
		if a.Controlled && b.Controlled {
			return cmp.Compare(a.Position, b.Position)
		}
		return 0
	})
	var sizes []int
	for _, r := range xfer {
		if !slices.Contains(sizes, r.ResponseBytes) {
			sizes = append(sizes, r.ResponseBytes)
		}
	}
	slices.Sort(sizes)
	maxRound := slices.Max(append([]int{0}, d.Rounds...))
	for _, sc := range scs {
		t.Scenarios = append(t.Scenarios, sc.Name)
		if !slices.Contains(sizes, 0) {
			// Size 0: the rounds' handshake-only connection.
			var reps []*series
			for _, r := range rounds {
				if r.Scenario != sc.Name || r.Round != maxRound || !r.OK || !r.HasThs {
					continue
				}
				if gi := slices.Index(groups[:], r.Group); gi >= 0 {
					s := seriesOf(&reps, r.Toolchain, "")
					s.tt[gi] = append(s.tt[gi], r.ThsMs)
					s.hs[gi] = append(s.hs[gi], r.ThsMs)
				}
			}
			c0 := Cell{Scenario: sc.Name, SizeBytes: 0}
			fillCell(&c0, reps, prim, p)
			t.Cells = append(t.Cells, c0)
		}
		for _, size := range sizes {
			var reps []*series
			incomplete := map[string]int{}
			c := Cell{Scenario: sc.Name, SizeBytes: size}
			for _, r := range xfer {
				if r.Scenario != sc.Name || r.ResponseBytes != size {
					continue
				}
				gi := slices.Index(groups[:], r.Group)
				if gi < 0 {
					continue
				}
				var ttlb *int64
				if size == 0 && r.Cap != nil {
					ttlb = r.Cap.ThsNs // the block's handshake-only connection: its last byte is the Finished
				} else if r.Xfer != nil {
					ttlb = r.Xfer.TTLBNs
				}
				if ttlb == nil {
					c.Incomplete++
					incomplete[r.CC]++
					continue
				}
				s := seriesOf(&reps, r.ToolchainName(), r.CC)
				s.tt[gi] = append(s.tt[gi], float64(*ttlb)/1e6)
				if r.Cap != nil && r.Cap.ThsNs != nil {
					s.hs[gi] = append(s.hs[gi], float64(*r.Cap.ThsNs)/1e6)
				}
			}
			est := estimateReplicates(reps, sc.Name, size, p)
			fillCellFrom(&c, est, prim)
			t.Cells = append(t.Cells, c)
			t.ByCC = append(t.ByCC, splitByCC(sc.Name, size, est, incomplete, prim)...)
		}
		t.Below5[sc.Name] = belowFrom(t, sc.Name, 5)
		t.Below1[sc.Name] = belowFrom(t, sc.Name, 1)
	}
	cs, err := judge(t)
	if err != nil {
		return nil, err
	}
	t.Claims = cs
	return t, nil
}

// splitByCC splits a cell's replicates by congestion control, one Cell per
// control in name order. Each has its toolchains' series of that control
// as replicates; a run that set no control gives none.
func splitByCC(sc string, size int, reps []estimated, incomplete map[string]int, prim string) []Cell {
	var ccs []string
	for _, e := range reps {
		if e.r.CC != "" && !slices.Contains(ccs, e.r.CC) {
			ccs = append(ccs, e.r.CC)
		}
	}
	slices.Sort(ccs)
	var out []Cell
	for _, cc := range ccs {
		var sub []estimated
		for _, e := range reps {
			if e.r.CC == cc {
				sub = append(sub, e)
			}
		}
		c := Cell{Scenario: sc, SizeBytes: size, CC: cc, Incomplete: incomplete[cc]}
		fillCellFrom(&c, sub, prim)
		out = append(out, c)
	}
	return out
}

// ccCell is the ByCC cell of scenario, size and congestion control, nil
// when there is none.
func (t *Results) ccCell(sc string, size int, cc string) *Cell {
	for i := range t.ByCC {
		if c := &t.ByCC[i]; c.Scenario == sc && c.SizeBytes == size && c.CC == cc {
			return c
		}
	}
	return nil
}

// ccs are the congestion controls of ByCC, in name order.
func (t *Results) ccs() []string {
	var out []string
	for _, c := range t.ByCC {
		if !slices.Contains(out, c.CC) {
			out = append(out, c.CC)
		}
	}
	slices.Sort(out)
	return out
}

// seriesOf returns the replicate of toolchain and cc in *reps, adding it.
func seriesOf(reps *[]*series, toolchain, cc string) *series {
	for _, s := range *reps {
		if s.toolchain == toolchain && s.cc == cc {
			return s
		}
	}
	s := &series{toolchain: toolchain, cc: cc}
	*reps = append(*reps, s)
	return s
}

// estimated is one replicate's Replicate and its handshake increase in ms.
type estimated struct {
	r  Replicate
	hd float64
}

// estimateReplicates is each replicate's medians, relative increase and
// within-series interval (fillReplicate), sorted by toolchain and
// congestion control. A cell and its split by control share them, so
// each series is bootstrapped once.
func estimateReplicates(reps []*series, sc string, size int, p netstudy.Params) []estimated {
	slices.SortFunc(reps, func(a, b *series) int {
		return cmp.Or(cmp.Compare(a.toolchain, b.toolchain), cmp.Compare(a.cc, b.cc))
	})
	out := make([]estimated, len(reps))
	for i, s := range reps {
		out[i].r, out[i].hd = fillReplicate(s, sc, size, p)
	}
	return out
}

// fillCell sets a cell from its replicates' series: estimateReplicates, then
// fillCellFrom.
func fillCell(c *Cell, reps []*series, prim string, p netstudy.Params) {
	fillCellFrom(c, estimateReplicates(reps, c.Scenario, c.SizeBytes, p), prim)
}

// fillCellFrom sets a cell from its replicates' estimates: the cell's
// means and their t interval over the replicates, and Agree (see Cell).
func fillCellFrom(c *Cell, reps []estimated, prim string) {
	nan := jsonnum.Num(math.NaN())
	c.BaseMs, c.TargetMs, c.DiffMs, c.DiffLowerMs, c.DiffUpperMs = nan, nan, nan, nan, nan
	c.RelPct, c.RelLowerPct, c.RelUpperPct, c.HsDiffMs, c.HsRelPct = nan, nan, nan, nan, nan
	c.WithinLowerPct, c.WithinUpperPct = nan, nan
	c.Replicates = []Replicate{}
	var rel, diff, base, target, hsRel, hsDiff []float64
	var notes []string
	for _, e := range reps {
		r, hd := e.r, e.hd
		c.Replicates = append(c.Replicates, r)
		c.N[0] += r.N[0]
		c.N[1] += r.N[1]
		if r.Note != "" {
			notes = append(notes, r.key()+": "+r.Note)
		}
		if math.IsNaN(float64(r.RelPct)) {
			continue
		}
		rel, diff = append(rel, float64(r.RelPct)), append(diff, float64(r.DiffMs))
		base, target = append(base, float64(r.BaseMs)), append(target, float64(r.TargetMs))
		if !math.IsNaN(float64(r.HsRelPct)) {
			hsRel, hsDiff = append(hsRel, float64(r.HsRelPct)), append(hsDiff, hd)
		}
		if r.Toolchain == prim && math.IsNaN(float64(c.WithinLowerPct)) {
			c.WithinLowerPct, c.WithinUpperPct = r.WithinLowerPct, r.WithinUpperPct
		}
	}
	c.K = len(rel)
	switch {
	case len(reps) == 0:
		notes = append(notes, "no series in the run")
	case c.K == 0:
		notes = append(notes, "no replicate with a time to last byte in both groups")
	}
	if c.K > 0 {
		c.BaseMs, c.TargetMs = jsonnum.Num(stats.Mean(base)), jsonnum.Num(stats.Mean(target))
		c.RelPct, c.DiffMs = jsonnum.Num(stats.Mean(rel)), jsonnum.Num(stats.Mean(diff))
	}
	if len(hsRel) > 0 {
		c.HsRelPct, c.HsDiffMs = jsonnum.Num(stats.Mean(hsRel)), jsonnum.Num(stats.Mean(hsDiff))
	}
	if c.K == 1 {
		notes = append(notes, "one replicate ("+c.Replicates[0].key()+"): no interval, which needs two or more series pairs")
	}
	if c.K >= 2 {
		if iv, err := stats.BetweenSeriesInterval(rel, nanSE(c.K), netstudy.Level); err != nil {
			notes = append(notes, fmt.Sprintf("no interval over the %d replicates: %v", c.K, err))
		} else {
			c.RelLowerPct, c.RelUpperPct = jsonnum.Num(iv.Lower), jsonnum.Num(iv.Upper)
		}
		if iv, err := stats.BetweenSeriesInterval(diff, nanSE(c.K), netstudy.Level); err == nil {
			c.DiffLowerMs, c.DiffUpperMs = jsonnum.Num(iv.Lower), jsonnum.Num(iv.Upper)
		}
		c.Agree = agree(c.Replicates)
	}
	c.Note = strings.Join(notes, "; ")
}

// nanSE are k unknown standard errors: BetweenSeriesInterval then skips
// its heterogeneity statistic, which no output here reads.
func nanSE(k int) []float64 {
	se := make([]float64, k)
	for i := range se {
		se[i] = math.NaN()
	}
	return se
}

// agree is Cell.Agree over the replicates with an estimate.
func agree(reps []Replicate) string {
	var ok []Replicate
	for _, r := range reps {
		if !math.IsNaN(float64(r.RelPct)) {
			ok = append(ok, r)
		}
	}
	if len(ok) < 2 {
		return ""
	}
	for _, a := range ok {
		if math.IsNaN(float64(a.WithinLowerPct)) {
			return ""
		}
	}
	for _, a := range ok {
		for _, b := range ok {
			if !(a.RelPct >= b.WithinLowerPct && a.RelPct <= b.WithinUpperPct) {
				return "no"
			}
		}
	}
	return "yes"
}

// fillReplicate is one series pair's medians, increases and
// within-series interval. Each group's series is block-bootstrapped as a
// whole from a stream of its own (SeriesStream with the variant
// "ttlb-<size>"); a series too short for the block bootstrap leaves the
// interval NaN (null) with a note. It also returns the handshake's
// increase in ms.
func fillReplicate(s *series, sc string, size int, p netstudy.Params) (Replicate, float64) {
	nan := jsonnum.Num(math.NaN())
	r := Replicate{Toolchain: s.toolchain, CC: s.cc, N: [2]int{len(s.tt[0]), len(s.tt[1])},
		BaseMs: nan, TargetMs: nan, DiffMs: nan, RelPct: nan, WithinLowerPct: nan, WithinUpperPct: nan, HsRelPct: nan}
	hd := math.NaN()
	if len(s.tt[0]) == 0 || len(s.tt[1]) == 0 {
		r.Note = "no connection with a time to last byte in a group"
		return r, hd
	}
	mx, _ := stats.Median(s.tt[0])
	my, _ := stats.Median(s.tt[1])
	r.BaseMs, r.TargetMs, r.DiffMs, r.RelPct = jsonnum.Num(mx), jsonnum.Num(my), jsonnum.Num(my-mx), jsonnum.Num(100*(my/mx-1))
	if len(s.hs[0]) > 0 && len(s.hs[1]) > 0 {
		hx, _ := stats.Median(s.hs[0])
		hy, _ := stats.Median(s.hs[1])
		r.HsRelPct, hd = jsonnum.Num(100*(hy/hx-1)), hy-hx
	}
	variant := fmt.Sprintf("ttlb-%d", size)
	if s.cc != "" {
		variant += "-" + s.cc
	}
	var meds [2][]float64
	for gi, g := range groups {
		b, err := stats.BootstrapSeries(s.tt[gi], p.BootstrapSeed, netstudy.SeriesStream(s.toolchain, sc, size, g, variant), p.BootstrapResamples)
		if err != nil {
			r.Note = fmt.Sprintf("no within-series interval: %s series of %d: %v", g, len(s.tt[gi]), err)
			return r, hd
		}
		meds[gi] = b.Medians
	}
	rel := make([]float64, len(meds[0]))
	for i := range rel {
		rel[i] = 100 * (meds[1][i]/meds[0][i] - 1)
	}
	if iv, err := stats.BootstrapReplicates(float64(r.RelPct), rel, netstudy.Level); err == nil {
		r.WithinLowerPct, r.WithinUpperPct = jsonnum.Num(iv.Lower), jsonnum.Num(iv.Upper)
	}
	return r, hd
}

// belowFrom is the smallest size from which the relative increase stays
// below bound at every larger size of the scenario; -1 when none.
func belowFrom(t *Results, sc string, bound float64) int {
	from := -1
	for _, c := range t.Cells {
		if c.Scenario != sc {
			continue
		}
		ok := !math.IsNaN(float64(c.RelPct)) && float64(c.RelPct) < bound
		switch {
		case ok && from < 0:
			from = c.SizeBytes
		case !ok:
			from = -1
		}
	}
	return from
}

// PaddedArm is the group column of the mechanism's intervention arm
// (mechanism2.txt): X25519 with a padded server flight.
const PaddedArm = "X25519-padded"

// withoutPaddedArm drops the padded arm's rows.
//
// The claims K1-K4 compare the hybrid with X25519 only; the padded arm
// is the mechanism's intervention (analysis/ttlbmechanism), and its
// rows must never enter a claim's cell, its size-0 handshakes or its
// incomplete counts.
func withoutPaddedArm(xfer []netdata.Row) []netdata.Row {
	if !slices.ContainsFunc(xfer, isPadded) {
		return xfer
	}
	return slices.DeleteFunc(slices.Clone(xfer), isPadded)
}

func isPadded(r netdata.Row) bool { return r.Group == PaddedArm }

// readTransfer reads the run's transfer.csv.gz when it is among the
// stage's inputs (the glob <run>/*.csv.gz matched it); a run without one
// (every run recorded before the block) has none.
func readTransfer(inputs []string, read func(string) ([]byte, error), runDir string) ([]netdata.Row, error) {
	name := runDir + "/" + netdata.TransferFile
	if !slices.Contains(inputs, name) {
		return nil, nil
	}
	b, err := read(name)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", name, err)
	}
	return netdata.ReadRecords(bytes.NewReader(b), name)
}

// encode is results/net-ttlb.json's bytes.
func encode(t *Results) ([]byte, error) {
	b, err := json.MarshalIndent(t, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("encode %s: %w", ResultsFile, err)
	}
	return append(b, '\n'), nil
}
