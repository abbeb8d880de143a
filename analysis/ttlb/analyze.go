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

// Results are the transfer block's results: per scenario and response
// size, the hybrid's increase of the time to last byte over X25519. They
// are taken on the primary toolchain's series.
//
// Size 0 is the rounds' handshake-only connection (its ths from the
// largest round's series: the time to the client's Finished, the last
// byte of a connection that carries none). Intervals are at the level of
// the design: each (scenario, size, group) is one series, block-
// bootstrapped as a whole (docs/net-inference.md), never its connections
// resampled independently.
type Results struct {
	Extension string   `json:"extension"`
	Source    string   `json:"source"`
	Measured  bool     `json:"measured"`
	Note      string   `json:"note,omitempty"`
	Toolchain string   `json:"toolchain,omitempty"`
	Scenarios []string `json:"scenarios"` // by RTT
	Fastest   string   `json:"fastest,omitempty"`
	Cells     []Cell   `json:"cells"`
	// Below5 and Below1 are per scenario the smallest size from which the
	// relative increase (point estimate) stays below 5 % (1 %) at every
	// larger size measured; -1 when it never does.
	Below5 map[string]int `json:"below_5pct"`
	Below1 map[string]int `json:"below_1pct"`
	Claims []Claim        `json:"claims"`
}

// Cell is one scenario and size.
type Cell struct {
	Scenario    string      `json:"scenario"`
	SizeBytes   int         `json:"size_bytes"`
	N           [2]int      `json:"n"`          // connections with a TTLB, X25519 then hybrid
	Incomplete  int         `json:"incomplete"` // transfer rows without one
	BaseMs      jsonnum.Num `json:"base_ms"`    // median TTLB, X25519
	TargetMs    jsonnum.Num `json:"target_ms"`  // median TTLB, X25519MLKEM768
	DiffMs      jsonnum.Num `json:"diff_ms"`
	DiffLowerMs jsonnum.Num `json:"diff_lower_ms"`
	DiffUpperMs jsonnum.Num `json:"diff_upper_ms"`
	RelPct      jsonnum.Num `json:"rel_pct"` // 100 (target/base - 1)
	RelLowerPct jsonnum.Num `json:"rel_lower_pct"`
	RelUpperPct jsonnum.Num `json:"rel_upper_pct"`
	// HsDiffMs and HsRelPct are the handshake's (ths) increase on the same
	// connections.
	HsDiffMs jsonnum.Num `json:"hs_diff_ms"`
	HsRelPct jsonnum.Num `json:"hs_rel_pct"`
	Note     string      `json:"note,omitempty"`
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

// notMeasured is the result of a run without the transfer block.
func notMeasured() *Results {
	t := &Results{Extension: extensionLabel, Source: Source, Note: NotMeasuredPinned,
		Scenarios: []string{}, Cells: []Cell{}, Below5: map[string]int{}, Below1: map[string]int{}}
	t.Claims = judgeExt(t)
	return t
}

// Analyze computes the transfer block's results from its rows
// (transfer.csv.gz) and the rounds' rows (records.csv.gz, for size 0).
func Analyze(d *netstudy.Design, xfer []netdata.Row, rounds []netstudy.Row, p netstudy.Params) (*Results, error) {
	if len(xfer) == 0 {
		return notMeasured(), nil
	}
	p = p.WithDefaults()
	prim := netstudy.PrimaryToolchain(d, rounds)
	t := &Results{Extension: extensionLabel, Source: Source, Measured: true, Toolchain: prim,
		Scenarios: []string{}, Cells: []Cell{}, Below5: map[string]int{}, Below1: map[string]int{}}
	scs := slices.Clone(d.Scenarios)
	slices.SortStableFunc(scs, func(a, b netstudy.Scenario) int { return cmp.Compare(a.RTTms, b.RTTms) })
	if len(scs) > 0 {
		t.Fastest = scs[0].Name
	}
	var sizes []int
	for _, r := range xfer {
		if !slices.Contains(sizes, r.ResponseBytes) {
			sizes = append(sizes, r.ResponseBytes)
		}
	}
	slices.Sort(sizes)
	maxRound := slices.Max(append([]int{0}, d.Rounds...))
	groups := [2]string{"X25519", "X25519MLKEM768"}
	for _, sc := range scs {
		t.Scenarios = append(t.Scenarios, sc.Name)
		// Size 0: the rounds' handshake-only connection.
		var z [2][]float64
		for _, r := range rounds {
			if r.Scenario == sc.Name && r.Round == maxRound && r.Toolchain == prim && r.OK && r.HasThs {
				for gi, g := range groups {
					if r.Group == g {
						z[gi] = append(z[gi], r.ThsMs)
					}
				}
			}
		}
		c0 := Cell{Scenario: sc.Name, SizeBytes: 0}
		fillCell(&c0, z, z, p, sc.Name, 0)
		t.Cells = append(t.Cells, c0)
		for _, size := range sizes {
			var tt, hs [2][]float64
			c := Cell{Scenario: sc.Name, SizeBytes: size}
			for _, r := range xfer {
				if r.Scenario != sc.Name || r.ResponseBytes != size || r.ToolchainName() != prim {
					continue
				}
				gi := slices.Index(groups[:], r.Group)
				if gi < 0 {
					continue
				}
				if r.Xfer == nil || r.Xfer.TTLBNs == nil {
					c.Incomplete++
					continue
				}
				tt[gi] = append(tt[gi], float64(*r.Xfer.TTLBNs)/1e6)
				if r.Cap != nil && r.Cap.ThsNs != nil {
					hs[gi] = append(hs[gi], float64(*r.Cap.ThsNs)/1e6)
				}
			}
			fillCell(&c, tt, hs, p, sc.Name, size)
			t.Cells = append(t.Cells, c)
		}
		t.Below5[sc.Name] = belowFrom(t, sc.Name, 5)
		t.Below1[sc.Name] = belowFrom(t, sc.Name, 1)
	}
	t.Claims = judgeExt(t)
	return t, nil
}

// fillCell sets a cell's medians, differences and their block bootstrap
// intervals (each series resampled as a whole, from a stream of its own:
// SeriesStream with the variant "ttlb-<size>"); a series too short for
// the block bootstrap leaves the intervals NaN (null) with a note.
func fillCell(c *Cell, tt, hs [2][]float64, p netstudy.Params, sc string, size int) {
	nan := jsonnum.Num(math.NaN())
	c.BaseMs, c.TargetMs, c.DiffMs, c.DiffLowerMs, c.DiffUpperMs = nan, nan, nan, nan, nan
	c.RelPct, c.RelLowerPct, c.RelUpperPct, c.HsDiffMs, c.HsRelPct = nan, nan, nan, nan, nan
	c.N = [2]int{len(tt[0]), len(tt[1])}
	if len(tt[0]) == 0 || len(tt[1]) == 0 {
		c.Note = "no connection with a time to last byte in a group"
		return
	}
	mx, _ := stats.Median(tt[0])
	my, _ := stats.Median(tt[1])
	c.BaseMs, c.TargetMs, c.DiffMs, c.RelPct = jsonnum.Num(mx), jsonnum.Num(my), jsonnum.Num(my-mx), jsonnum.Num(100*(my/mx-1))
	if len(hs[0]) > 0 && len(hs[1]) > 0 {
		hx, _ := stats.Median(hs[0])
		hy, _ := stats.Median(hs[1])
		c.HsDiffMs, c.HsRelPct = jsonnum.Num(hy-hx), jsonnum.Num(100*(hy/hx-1))
	}
	variant := fmt.Sprintf("ttlb-%d", size)
	bx, err := stats.BootstrapSeries(tt[0], p.BootstrapSeed, netstudy.SeriesStream("", sc, size, "X25519", variant), p.BootstrapResamples)
	if err != nil {
		c.Note = fmt.Sprintf("no interval: X25519 series of %d: %v", len(tt[0]), err)
		return
	}
	by, err := stats.BootstrapSeries(tt[1], p.BootstrapSeed, netstudy.SeriesStream("", sc, size, "X25519MLKEM768", variant), p.BootstrapResamples)
	if err != nil {
		c.Note = fmt.Sprintf("no interval: X25519MLKEM768 series of %d: %v", len(tt[1]), err)
		return
	}
	d, rel := make([]float64, len(bx.Medians)), make([]float64, len(bx.Medians))
	for i := range d {
		d[i] = by.Medians[i] - bx.Medians[i]
		rel[i] = 100 * (by.Medians[i]/bx.Medians[i] - 1)
	}
	if s, err := stats.BootstrapReplicates(my-mx, d, netstudy.Level); err == nil {
		c.DiffLowerMs, c.DiffUpperMs = jsonnum.Num(s.Lower), jsonnum.Num(s.Upper)
	}
	if s, err := stats.BootstrapReplicates(100*(my/mx-1), rel, netstudy.Level); err == nil {
		c.RelLowerPct, c.RelUpperPct = jsonnum.Num(s.Lower), jsonnum.Num(s.Upper)
	}
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
