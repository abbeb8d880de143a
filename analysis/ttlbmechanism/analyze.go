// Package ttlbmechanism tests the registered mechanism of Study B's
// transfer block by intervention: an X25519 arm padded to the hybrid's flight.
//
// Why: in the pinned full run the hybrid (X25519MLKEM768) had the lower
// time to last byte in 7 of 12 cells with a response, although its
// handshake was slower. The first registration (analysis/ttlb/mechanism.txt)
// explained it by the response's starting window W and predicted the
// difference from the groups' distributions of W. That prediction 2 was
// found, before any run tested it, to be an identity where W separates
// the groups (it returns the observed difference whatever the cause), so
// its code is gone: the second registration,
// analysis/ttlb/mechanism2.txt, committed before any run of its design,
// supersedes it with an intervention. A third arm, X25519-padded, is
// X25519 whose server staples an OCSP response of 1,080 zero bytes
// (RFC 8446 4.4.2.1, RFC 6066 8), so that its first flight carries as
// many TLS bytes as the hybrid's (1,088 + 32 byte key share, FIPS 203
// table 3, draft-ietf-tls-ecdhe-mlkem) without ML-KEM's computation.
//
// From the controlled block's rows (datasets/netdata.ControlledColumns),
// per connection P = TTLB - Ths, W (resp_window) and A (hs_acked_segs),
// the unit of resampling the interleaved triple (positions 3k..3k+2),
// first the pad check: in every size-0 series the padded arm's median
// server payload bytes (payload_bytes_s2c) must be the hybrid's within
// 16 bytes, else the arm "failed" and predictions 2 and 3 are moot. Then
// per cell (scenario x size > 0 x congestion control):
//
//  1. order: the TTLB difference, hybrid minus X25519, both toolchains
//     pooled, with a 95 % percentile interval; it "holds" when in at
//     least one cell above 10 segments on each of wan and far the
//     interval lies below 0, else "order effect" (2 and 3 moot);
//  2. intervention: e_i = dP_padded - dP_hybrid (each arm's mean P minus
//     X25519's), averaged over the two toolchains' series, must lie
//     within bound_i = z sqrt(SE_i^2 + tau^2), z = Phi^-1(1 - alpha /
//     (2 m)), in every cell of a congestion control; bound_i is also the
//     test's power (the largest |e| it lets through), and where a cell
//     passes, dP_padded / dP_hybrid with its interval says how much of
//     the effect the padding carries;
//  3. cause: dA and dW of each arm against X25519, descriptive.
//
// The stage net:ttlbmechanism (Stage) writes ResultsFile and Table. It is a
// finding, never a judged claim.
package ttlbmechanism

import (
	"fmt"
	"hash/fnv"
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"strings"

	"pqrepro/analysis/stats"
	"pqrepro/analysis/ttlb"
	"pqrepro/datasets/netdata"
	"pqrepro/internal/jsonnum"
)

// ResultsFile is the mechanism's results.
const ResultsFile = "results/net-ttlbmechanism.json"

// NotMeasured is what every output says for a run without the controlled
// transfer block (the pinned run is one).
const NotMeasured = "not measured: the run has no controlled transfer block"

// NotMeasuredNoArm is what every output says for a controlled block
// without the padded arm (a run of the first registration's design).
const NotMeasuredNoArm = "not measured: the run's controlled transfer block has no X25519-padded arm"

// SegmentBytes is the segment size that "a response above 10 segments"
// is counted in.
//
// The rows do not hold the connections' segment size (the capture's SYN
// MSS enters only hs_acked_segs), so it is 1460 bytes: the MSS of the
// emulated links' MTU, 1500 (linkemu's default; Study B sets no other).
const SegmentBytes = 1460

// InitialWindowSegs is Linux's initial congestion window (RFC 6928).
const InitialWindowSegs = 10

// OrderLevel is the intervals' level (95 %): prediction 1's and the
// share's.
const OrderLevel = 0.95

// PadToleranceBytes is the pad check's tolerance: the padded arm's median
// size-0 server payload bytes within this many of the hybrid's.
const PadToleranceBytes = 16

// The arms compared, by index: X25519 (the reference), the hybrid, and
// the padded arm.
const (
	armX = iota
	armHybrid
	armPadded
	nArms
)

var arms = [nArms]string{"X25519", "X25519MLKEM768", PaddedArm}

// The pad check's verdicts.
const (
	PadWorked = "worked"
	PadFailed = "failed"
)

// Prediction 1's verdicts.
const (
	OrderHolds  = "holds"
	OrderEffect = "order effect"
)

// Prediction 2's verdicts per congestion control; prediction 3's status.
const (
	InterventionPasses    = "passes"
	InterventionFails     = "fails"
	InterventionMoot      = "moot: order effect"
	InterventionPadFailed = "moot: the padding failed"
	InterventionNotJudged = "not judged: no cell could be tested"
	CauseDescriptive      = "descriptive"
)

// Why a connection is left out (beside netdata's Incomplete* reasons of a
// row without a time to last byte).
const (
	ExcludedNoThs      = "no_handshake_time" // the capture shows no client Finished
	ExcludedNoWindow   = "no_resp_window"    // no W: the capture lacks the SYN round trip
	ExcludedOtherGroup = "other_group"       // none of the three arms
	ExcludedUnknownCC  = "no_cc"             // the connection had no socket to read it from
	// KeptNoAckedSegs counts, beside them, connections kept without A:
	// left out of dA only.
	KeptNoAckedSegs = "no_hs_acked_segs"
)

// Results is results/net-ttlbmechanism.json: the pad check, the three
// registered predictions per cell and prediction 2's acceptance per
// congestion control.
type Results struct {
	Extension    string      `json:"extension"`
	Registration string      `json:"registration"`
	Supersedes   string      `json:"supersedes"`
	Measured     bool        `json:"measured"`
	Note         string      `json:"note,omitempty"`
	Model        string      `json:"model"`
	Arm          string      `json:"arm"`
	PadBytes     int         `json:"pad_bytes"`
	Alpha        jsonnum.Num `json:"alpha"`
	Resamples    int         `json:"resamples"`
	Seed         uint64      `json:"seed"`
	SegmentBytes int         `json:"segment_bytes"`
	// Connections counts the connections kept; Excluded the others by
	// reason (and no_hs_acked_segs those kept but left out of dA).
	Connections int            `json:"connections"`
	Excluded    map[string]int `json:"excluded"`
	PadCheck    PadCheck       `json:"pad_check"`
	Order       Order          `json:"order"`
	CCs         []CC           `json:"congestion_controls"`
	// Cause is prediction 3's status: descriptive, or moot.
	Cause string `json:"cause"`
	Cells []Cell `json:"cells"`
}

// PadCheck is the registration's check that the padding worked.
type PadCheck struct {
	Verdict        string      `json:"verdict"`
	ToleranceBytes int         `json:"tolerance_bytes"`
	Reason         string      `json:"reason,omitempty"`
	Series         []PadSeries `json:"series"`
}

// PadSeries is one size-0 series' median server payload bytes per arm
// (X25519, hybrid, padded) and whether the padded arm's is the hybrid's
// within the tolerance.
type PadSeries struct {
	Scenario    string         `json:"scenario"`
	CC          string         `json:"cc"`
	Toolchain   string         `json:"toolchain"`
	N           [nArms]int     `json:"n"`
	MedianBytes [nArms]float64 `json:"median_payload_bytes_s2c"`
	OK          bool           `json:"ok"`
}

// Order is prediction 1's verdict.
type Order struct {
	Verdict    string      `json:"verdict"`
	AboveBytes int         `json:"above_bytes"` // 10 x SegmentBytes
	Roles      []OrderRole `json:"roles"`
}

// OrderRole counts, for one scenario role (wan or far, quick variants
// included), its cells above 10 segments and those whose interval lies
// below 0.
type OrderRole struct {
	Role     string `json:"role"`
	Cells    int    `json:"cells"`
	Negative int    `json:"negative"`
}

// CC is prediction 2's acceptance for one congestion control.
type CC struct {
	CC      string      `json:"cc"`
	Cells   int         `json:"cells"` // m: the cells tested
	Z       jsonnum.Num `json:"z"`
	TauMs   jsonnum.Num `json:"tau_ms"`
	Pass    bool        `json:"pass"`
	Verdict string      `json:"verdict"`
	Misses  []string    `json:"misses"`     // cells whose |e| exceeds the bound
	Skipped []string    `json:"not_tested"` // cells that could not be tested
}

// Cell is one scenario, response size and congestion control.
type Cell struct {
	Scenario  string     `json:"scenario"`
	SizeBytes int        `json:"size_bytes"`
	CC        string     `json:"cc"`
	N         [nArms]int `json:"n"` // connections kept per arm, toolchains pooled
	Series    []Series   `json:"series"`
	// Prediction 1: mean TTLB, hybrid minus X25519, toolchains pooled.
	AboveOrder  bool        `json:"above_10_segments"`
	TTLBDiffMs  jsonnum.Num `json:"ttlb_diff_ms"`
	TTLBLowerMs jsonnum.Num `json:"ttlb_diff_lower_ms"`
	TTLBUpperMs jsonnum.Num `json:"ttlb_diff_upper_ms"`
	// Prediction 2; Reason says why a cell is not Tested. dP of each
	// arm against X25519 and the error, averaged over the toolchains.
	Tested     bool        `json:"tested"`
	Reason     string      `json:"reason,omitempty"`
	DPHybridMs jsonnum.Num `json:"dp_hybrid_ms"`
	DPPaddedMs jsonnum.Num `json:"dp_padded_ms"`
	ErrorMs    jsonnum.Num `json:"error_ms"`
	SEMs       jsonnum.Num `json:"se_ms"`
	// ToolchainDiffMs is d_i, the first toolchain's error minus the
	// second's, and ToolchainDiffSEMs its bootstrap SD (tau's terms).
	ToolchainDiffMs   jsonnum.Num `json:"toolchain_diff_ms"`
	ToolchainDiffSEMs jsonnum.Num `json:"toolchain_diff_se_ms"`
	// BoundMs is bound_i, also the test's power in the cell: the largest
	// |e| it lets through.
	BoundMs jsonnum.Num `json:"bound_ms"`
	Pass    bool        `json:"pass"`
	// Share is dP_padded / dP_hybrid with its 95 % percentile interval,
	// given only where the cell passes.
	Share      jsonnum.Num `json:"share"`
	ShareLower jsonnum.Num `json:"share_lower"`
	ShareUpper jsonnum.Num `json:"share_upper"`
	// Dropped counts the resamples in which a series lacked an arm
	// (left out of SE and of the intervals).
	Dropped int `json:"dropped_resamples"`
	// Prediction 3 (descriptive): mean W and A of the hybrid and of the
	// padded arm minus X25519's, the toolchains' series averaged;
	// AboveWindow is a response above the initial window.
	DWHybrid    jsonnum.Num `json:"dw_hybrid_segs"`
	DWPadded    jsonnum.Num `json:"dw_padded_segs"`
	DAHybrid    jsonnum.Num `json:"da_hybrid_segs"`
	DAPadded    jsonnum.Num `json:"da_padded_segs"`
	AboveWindow bool        `json:"above_initial_window"`
}

// Series is one toolchain's series of a cell.
type Series struct {
	Toolchain  string      `json:"toolchain"`
	Triples    int         `json:"triples"`
	N          [nArms]int  `json:"n"`
	DPHybridMs jsonnum.Num `json:"dp_hybrid_ms"`
	DPPaddedMs jsonnum.Num `json:"dp_padded_ms"`
}

// Label names a cell in messages and lists: scenario/size/cc.
func (c *Cell) Label() string { return fmt.Sprintf("%s/%dB/%s", c.Scenario, c.SizeBytes, c.CC) }

const extensionLabel = "our extension: the registered mechanism of the transfer block's differences, tested by a padded X25519 arm; a finding, not a judged claim"

func newResults(reg Registration) *Results {
	return &Results{Extension: extensionLabel, Registration: ttlb.Mechanism2File, Supersedes: ttlb.MechanismFile, Model: reg.Model,
		Arm: reg.Arm, PadBytes: reg.PadBytes, Alpha: jsonnum.Num(reg.Alpha), Resamples: reg.Resamples, Seed: reg.Seed, SegmentBytes: SegmentBytes,
		Excluded: map[string]int{}, PadCheck: PadCheck{Verdict: NotMeasured, ToleranceBytes: PadToleranceBytes, Series: []PadSeries{}},
		Order: Order{Verdict: NotMeasured, AboveBytes: InitialWindowSegs * SegmentBytes, Roles: []OrderRole{}},
		CCs:   []CC{}, Cause: NotMeasured, Cells: []Cell{}}
}

// conn is one kept connection: its arm (armX, armHybrid, armPadded), P
// and TTLB in ms, W and A in segments (A -1 when unknown).
type conn struct {
	arm       int
	pMs, ttlb float64
	w, a      int
}

// series holds one toolchain's connections of a cell by interleaved
// triple; bad says why its positions do not form triples.
type series struct {
	toolchain string
	triples   map[int][]conn
	armsAt    map[int][]int // every row's arm by triple, kept or not
	units     [][]conn      // the triples with a kept connection, by triple index
	bad       string
}

type cellKey struct {
	scenario string
	size     int
	cc       string
}

// padKey is a size-0 series: scenario, congestion control, toolchain.
type padKey struct{ scenario, cc, toolchain string }

// tripleOf is the interleaved triple of a position: seriesSteps measures
// one connection of each arm per triple, so positions 3k..3k+2 are
// triple k.
func tripleOf(position int) int { return position / nArms }

// Analyze computes the pad check and the registered predictions from a
// run's transfer rows (transfer.csv.gz).
//
// Only the controlled block's rows count: size 0 for the pad check, the
// sizes with a response for the predictions. A run without the block,
// or whose block has no padded arm, gives a result that says so. A
// connection without a capture record, a time to last byte, a handshake
// time or W is left out and counted by reason.
func Analyze(rows []netdata.Row, reg Registration) (*Results, error) {
	if reg.Resamples < 2 || !(reg.Alpha > 0 && reg.Alpha < 1) || reg.Arm != PaddedArm {
		return nil, fmt.Errorf("ttlbmechanism: registration %+v: want arm %s, alpha in (0, 1) and at least 2 resamples; parse it with ParseRegistration", reg, PaddedArm)
	}
	t := newResults(reg)
	if !slices.ContainsFunc(rows, func(r netdata.Row) bool { return r.Controlled && r.ResponseBytes > 0 }) {
		t.Note = NotMeasured
		return t, nil
	}
	if !slices.ContainsFunc(rows, func(r netdata.Row) bool { return r.Controlled && r.Group == PaddedArm }) {
		t.Note = NotMeasuredNoArm
		t.PadCheck.Verdict, t.Order.Verdict, t.Cause = NotMeasuredNoArm, NotMeasuredNoArm, NotMeasuredNoArm
		return t, nil
	}
	t.Measured = true
	checkPad(t, rows)
	cells, order := collect(rows, t)
	h := fnv.New64a()
	h.Write([]byte("ttlb-mechanism-2"))
	rng := rand.New(rand.NewPCG(reg.Seed, h.Sum64()))
	d := make([]cellStats, len(order))
	for i, k := range order {
		t.Cells = append(t.Cells, Cell{})
		d[i] = analyzeCell(&t.Cells[i], k, cells[k], reg, rng)
	}
	accept(t, d, reg)
	judgeOrder(t)
	return t, nil
}

// checkPad is the pad check on the size-0 series, in the order they first
// appear. Per series it takes the median server payload bytes of each
// arm's connections with a capture record. The padding worked when every series has all
// three arms and the padded arm's median is the hybrid's within
// PadToleranceBytes.
func checkPad(t *Results, rows []netdata.Row) {
	bytesOf := map[padKey]*[nArms][]float64{}
	var order []padKey
	for _, r := range rows {
		gi := slices.Index(arms[:], r.Group)
		if !r.Controlled || r.ResponseBytes != 0 || gi < 0 || r.Cap == nil {
			continue
		}
		k := padKey{r.Scenario, r.CC, r.ToolchainName()}
		if bytesOf[k] == nil {
			bytesOf[k] = &[nArms][]float64{}
			order = append(order, k)
		}
		bytesOf[k][gi] = append(bytesOf[k][gi], float64(r.Cap.PayloadBytesS2C))
	}
	pc := &t.PadCheck
	pc.Verdict = PadWorked
	if len(order) == 0 {
		pc.Verdict, pc.Reason = PadFailed, "no size-0 connection of the controlled block has a capture record: the padding cannot be shown to have worked"
		return
	}
	for _, k := range order {
		ps := PadSeries{Scenario: k.scenario, CC: k.cc, Toolchain: k.toolchain, OK: true}
		for g, v := range bytesOf[k] {
			ps.N[g] = len(v)
			m, err := stats.Median(v)
			if err != nil {
				m, ps.OK = math.NaN(), false
			}
			ps.MedianBytes[g] = m
		}
		if !(math.Abs(ps.MedianBytes[armPadded]-ps.MedianBytes[armHybrid]) <= PadToleranceBytes) {
			ps.OK = false
		}
		if !ps.OK && pc.Verdict == PadWorked {
			pc.Verdict = PadFailed
			pc.Reason = fmt.Sprintf("%s/%s/%s: the padded arm's median server payload is %v bytes, the hybrid's %v (tolerance %d)",
				k.scenario, k.cc, k.toolchain, ps.MedianBytes[armPadded], ps.MedianBytes[armHybrid], PadToleranceBytes)
		}
		pc.Series = append(pc.Series, ps)
	}
}

// collect sorts the controlled rows with a response into cells (in the
// order they first appear) and series, counting the rows left out.
func collect(rows []netdata.Row, t *Results) (map[cellKey]map[string]*series, []cellKey) {
	cells := map[cellKey]map[string]*series{}
	var order []cellKey
	for _, r := range rows {
		if !r.Controlled || r.ResponseBytes <= 0 {
			continue
		}
		k := cellKey{r.Scenario, r.ResponseBytes, r.CC}
		gi := slices.Index(arms[:], r.Group)
		why := exclusion(r, gi)
		if why == ExcludedUnknownCC || why == ExcludedOtherGroup {
			t.Excluded[why]++
			continue
		}
		if cells[k] == nil {
			cells[k] = map[string]*series{}
			order = append(order, k)
		}
		tc := r.ToolchainName()
		s := cells[k][tc]
		if s == nil {
			s = &series{toolchain: tc, triples: map[int][]conn{}, armsAt: map[int][]int{}}
			cells[k][tc] = s
		}
		p := tripleOf(r.Position)
		s.armsAt[p] = append(s.armsAt[p], gi)
		if why != "" {
			t.Excluded[why]++
			continue
		}
		x := r.Xfer
		ttlbMs := float64(*x.TTLBNs) / 1e6
		s.triples[p] = append(s.triples[p], conn{arm: gi, ttlb: ttlbMs, pMs: ttlbMs - float64(*r.Cap.ThsNs)/1e6, w: x.RespWindow, a: x.HsAckedSegs})
		if x.HsAckedSegs < 0 {
			t.Excluded[KeptNoAckedSegs]++
		}
		t.Connections++
	}
	for _, ss := range cells {
		for _, s := range ss {
			s.finish()
		}
	}
	return cells, order
}

// exclusion is why row r (arm index gi) is left out, "" when it is kept.
func exclusion(r netdata.Row, gi int) string {
	switch x := r.Xfer; {
	case r.CC == "":
		return ExcludedUnknownCC
	case gi < 0:
		return ExcludedOtherGroup
	case x == nil:
		return netdata.IncompleteNoCapture
	case x.TTLBNs == nil:
		if x.Incomplete != "" {
			return x.Incomplete
		}
		return netdata.IncompleteNoEnd
	case r.Cap == nil || r.Cap.ThsNs == nil:
		return ExcludedNoThs
	case x.RespWindow < 0:
		return ExcludedNoWindow
	}
	return ""
}

// finish checks that no triple holds an arm twice and lists the triples
// with a kept connection by triple index. A triple may lack a connection
// whose row could not be placed: a failed dial has no congestion control.
func (s *series) finish() {
	for _, p := range slices.Sorted(maps.Keys(s.armsAt)) {
		g := slices.Sorted(slices.Values(s.armsAt[p]))
		if len(slices.Compact(g)) != len(s.armsAt[p]) && s.bad == "" {
			s.bad = fmt.Sprintf("series %s: positions %d to %d are not one connection of each arm (an interleaved triple); was the block run interleaved with the padded arm?", s.toolchain, nArms*p, nArms*p+nArms-1)
		}
		if len(s.triples[p]) > 0 {
			s.units = append(s.units, s.triples[p])
		}
	}
}

// drawn is the connections of the triples idx (repeats count).
func (s *series) drawn(idx []int) []conn {
	var out []conn
	for _, i := range idx {
		out = append(out, s.units[i]...)
	}
	return out
}

// diff is the mean of f over arm g's connections minus over X25519's.
// It is NaN when either has none (or f is NaN for every one of them).
func diff(cs []conn, g int, f func(conn) float64) float64 {
	var sum [nArms]float64
	var n [nArms]int
	for _, c := range cs {
		if v := f(c); !math.IsNaN(v) {
			sum[c.arm] += v
			n[c.arm]++
		}
	}
	if n[armX] == 0 || n[g] == 0 {
		return math.NaN()
	}
	return sum[g]/float64(n[g]) - sum[armX]/float64(n[armX])
}

func pOf(c conn) float64    { return c.pMs }
func ttlbOf(c conn) float64 { return c.ttlb }
func wOf(c conn) float64    { return float64(c.w) }
func aOf(c conn) float64 {
	if c.a < 0 {
		return math.NaN()
	}
	return float64(c.a)
}

// cellStats is what the acceptance needs of a tested cell.
type cellStats struct {
	tested bool
	e, se  float64 // the error and its bootstrap SD
	d, sed float64 // the toolchains' error difference and its SD
}

// intervention is dP_hybrid and dP_padded on the two series' connections,
// averaged over the toolchains. It also returns the error e (their
// difference, so averaged) and d, the first toolchain's error minus the
// second's.
func intervention(a, b []conn) (dpHyb, dpPad, e, d float64) {
	var eOf [2]float64
	for i, cs := range [2][]conn{a, b} {
		h, p := diff(cs, armHybrid, pOf), diff(cs, armPadded, pOf)
		dpHyb, dpPad, eOf[i] = dpHyb+h/2, dpPad+p/2, p-h
	}
	return dpHyb, dpPad, (eOf[0] + eOf[1]) / 2, eOf[0] - eOf[1]
}

// analyzeCell fills c from the cell's series (by toolchain) and returns
// what the acceptance needs. The bootstrap draws, for each of B resamples
// and each series in toolchain order, its triples with replacement
// (rng.IntN, as stats.ClusterReplicates draws): the same draw for all
// three arms, for the error, the share and prediction 1's pooled
// difference.
func analyzeCell(c *Cell, k cellKey, byTc map[string]*series, reg Registration, rng *rand.Rand) cellStats {
	nan := jsonnum.Num(math.NaN())
	*c = Cell{Scenario: k.scenario, SizeBytes: k.size, CC: k.cc, Series: []Series{},
		AboveOrder: k.size > InitialWindowSegs*SegmentBytes, AboveWindow: k.size > InitialWindowSegs*SegmentBytes,
		TTLBDiffMs: nan, TTLBLowerMs: nan, TTLBUpperMs: nan, DPHybridMs: nan, DPPaddedMs: nan, ErrorMs: nan, SEMs: nan,
		ToolchainDiffMs: nan, ToolchainDiffSEMs: nan, BoundMs: nan, Share: nan, ShareLower: nan, ShareUpper: nan,
		DWHybrid: nan, DWPadded: nan, DAHybrid: nan, DAPadded: nan}
	ss := make([]*series, 0, len(byTc))
	for _, tc := range slices.Sorted(maps.Keys(byTc)) {
		if s := byTc[tc]; len(s.units) > 0 {
			ss = append(ss, s)
		}
	}
	all := make([][]conn, len(ss))
	var dw, da [nArms][]float64
	for i, s := range ss {
		all[i] = s.drawn(seq(len(s.units)))
		se := Series{Toolchain: s.toolchain, Triples: len(s.units), DPHybridMs: jsonnum.Num(diff(all[i], armHybrid, pOf)), DPPaddedMs: jsonnum.Num(diff(all[i], armPadded, pOf))}
		for _, x := range all[i] {
			se.N[x.arm]++
			c.N[x.arm]++
		}
		c.Series = append(c.Series, se)
		for _, g := range []int{armHybrid, armPadded} {
			dw[g], da[g] = append(dw[g], diff(all[i], g, wOf)), append(da[g], diff(all[i], g, aOf))
		}
	}
	c.DWHybrid, c.DWPadded = jsonnum.Num(meanFinite(dw[armHybrid])), jsonnum.Num(meanFinite(dw[armPadded]))
	c.DAHybrid, c.DAPadded = jsonnum.Num(meanFinite(da[armHybrid])), jsonnum.Num(meanFinite(da[armPadded]))
	c.Reason = testable(ss, all)
	c.Tested = c.Reason == ""
	pooled := func(sets [][]conn) float64 { return diff(slices.Concat(sets...), armHybrid, ttlbOf) }
	c.TTLBDiffMs = jsonnum.Num(pooled(all))
	var st cellStats
	var share float64
	if c.Tested {
		h, p, e, d := intervention(all[0], all[1])
		share = p / h
		c.DPHybridMs, c.DPPaddedMs, c.ErrorMs, c.ToolchainDiffMs = jsonnum.Num(h), jsonnum.Num(p), jsonnum.Num(e), jsonnum.Num(d)
		st.tested, st.e, st.d = true, e, d
	}
	if len(ss) == 0 {
		return st
	}
	var ttlbReps, eReps, dReps, shareReps []float64
	sets := make([][]conn, len(ss))
	for range reg.Resamples {
		for i, s := range ss {
			idx := make([]int, len(s.units))
			for j := range idx {
				idx[j] = rng.IntN(len(s.units))
			}
			sets[i] = s.drawn(idx)
		}
		v := pooled(sets)
		var h, p, e, d float64
		if c.Tested {
			h, p, e, d = intervention(sets[0], sets[1])
		}
		if math.IsNaN(v) || math.IsNaN(e) {
			c.Dropped++
			continue
		}
		ttlbReps = append(ttlbReps, v)
		if c.Tested {
			eReps, dReps, shareReps = append(eReps, e), append(dReps, d), append(shareReps, p/h)
		}
	}
	if s, err := stats.BootstrapReplicates(float64(c.TTLBDiffMs), ttlbReps, OrderLevel); err == nil && !math.IsNaN(float64(c.TTLBDiffMs)) {
		c.TTLBLowerMs, c.TTLBUpperMs = jsonnum.Num(s.Lower), jsonnum.Num(s.Upper)
	}
	if !c.Tested {
		return st
	}
	se, err1 := stats.BootstrapReplicates(st.e, eReps, OrderLevel)
	sd, err2 := stats.BootstrapReplicates(st.d, dReps, OrderLevel)
	if err1 != nil || err2 != nil {
		c.Tested, c.Reason, st.tested = false, fmt.Sprintf("%d of %d resamples lacked an arm in a series: too few for SE", c.Dropped, reg.Resamples), false
		return st
	}
	st.se, st.sed = se.SE, sd.SE
	c.SEMs, c.ToolchainDiffSEMs = jsonnum.Num(st.se), jsonnum.Num(st.sed)
	if sh, err := stats.BootstrapReplicates(share, slices.DeleteFunc(shareReps, func(v float64) bool { return math.IsNaN(v) || math.IsInf(v, 0) }), OrderLevel); err == nil && !math.IsNaN(share) && !math.IsInf(share, 0) {
		c.Share, c.ShareLower, c.ShareUpper = jsonnum.Num(share), jsonnum.Num(sh.Lower), jsonnum.Num(sh.Upper)
	}
	return st
}

// testable is why a cell's intervention cannot be tested, "" when it can.
// The registration averages exactly two toolchains' series, each of
// interleaved triples, at least two of them, with all three arms.
func testable(ss []*series, all [][]conn) string {
	var tcs []string
	for _, s := range ss {
		tcs = append(tcs, s.toolchain)
	}
	if len(ss) != 2 {
		return fmt.Sprintf("%d toolchains' series (%s): the registered test averages two and takes tau from their difference", len(ss), strings.Join(tcs, ", "))
	}
	for i, s := range ss {
		switch {
		case s.bad != "":
			return s.bad
		case len(s.units) < 2:
			return fmt.Sprintf("series %s has %d triple(s): resampling triples needs at least 2", s.toolchain, len(s.units))
		case math.IsNaN(diff(all[i], armHybrid, pOf)) || math.IsNaN(diff(all[i], armPadded, pOf)):
			return fmt.Sprintf("series %s lacks an arm's connections", s.toolchain)
		}
	}
	return ""
}

// accept applies prediction 2's acceptance per congestion control, in the
// cells' order. With m the cells tested, z = Phi^-1(1 - alpha / (2 m)),
// tau^2 = max(0, mean over them of (d_i^2 - SE_d,i^2) / 2), bound_i =
// z sqrt(SE_i^2 + tau^2), a pass when every |e_i| <= bound_i. The share
// is kept only in the cells that pass (the registration: never a share
// the test did not check).
func accept(t *Results, d []cellStats, reg Registration) {
	var ccs []string
	for _, c := range t.Cells {
		if !slices.Contains(ccs, c.CC) {
			ccs = append(ccs, c.CC)
		}
	}
	nan := jsonnum.Num(math.NaN())
	for _, name := range ccs {
		cc := CC{CC: name, Misses: []string{}, Skipped: []string{}, Z: nan, TauMs: nan}
		var ds, seds []float64
		for i, c := range t.Cells {
			switch {
			case c.CC != name:
			case d[i].tested:
				cc.Cells++
				ds, seds = append(ds, d[i].d), append(seds, d[i].sed)
			default:
				cc.Skipped = append(cc.Skipped, c.Label())
			}
		}
		if cc.Cells == 0 {
			cc.Verdict = InterventionNotJudged
			t.CCs = append(t.CCs, cc)
			continue
		}
		z := stats.BonferroniZ(reg.Alpha, cc.Cells)
		tau := stats.ExcessSD(ds, seds)
		cc.Z, cc.TauMs, cc.Pass = jsonnum.Num(z), jsonnum.Num(tau), true
		for i := range t.Cells {
			c := &t.Cells[i]
			if c.CC != name || !d[i].tested {
				continue
			}
			b := z * math.Hypot(d[i].se, tau)
			c.BoundMs, c.Pass = jsonnum.Num(b), math.Abs(d[i].e) <= b
			if !c.Pass {
				cc.Pass = false
				cc.Misses = append(cc.Misses, c.Label())
				c.Share, c.ShareLower, c.ShareUpper = nan, nan, nan
			}
		}
		cc.Verdict = InterventionFails
		if cc.Pass {
			cc.Verdict = InterventionPasses
		}
		t.CCs = append(t.CCs, cc)
	}
}

// Role is a scenario's role: its name before the first "-" (wan-quick is
// a wan).
func Role(scenario string) string { r, _, _ := strings.Cut(scenario, "-"); return r }

// judgeOrder is prediction 1's verdict, then what it and the pad check
// leave of predictions 2 and 3. It holds when, on each of wan and far, a
// cell above 10 segments has its TTLB difference below 0 with the
// interval's upper end below 0; else the effect is an order effect. A
// failed pad check, or an order effect, makes prediction 2's verdicts
// and prediction 3 moot (the pad check's reason first).
func judgeOrder(t *Results) {
	holds := true
	for _, role := range []string{"wan", "far"} {
		r := OrderRole{Role: role}
		for _, c := range t.Cells {
			if Role(c.Scenario) != role || !c.AboveOrder {
				continue
			}
			r.Cells++
			if float64(c.TTLBDiffMs) < 0 && float64(c.TTLBUpperMs) < 0 {
				r.Negative++
			}
		}
		holds = holds && r.Negative > 0
		t.Order.Roles = append(t.Order.Roles, r)
	}
	t.Order.Verdict, t.Cause = OrderHolds, CauseDescriptive
	moot := ""
	switch {
	case t.PadCheck.Verdict != PadWorked:
		moot = InterventionPadFailed
	case !holds:
		moot = InterventionMoot
	}
	if !holds {
		t.Order.Verdict = OrderEffect
	}
	if moot == "" {
		return
	}
	t.Cause = moot
	for i := range t.CCs {
		if t.CCs[i].Cells > 0 {
			t.CCs[i].Verdict = moot
		}
	}
}

// seq is 0, 1, ..., n-1: the identity draw.
func seq(n int) []int {
	s := make([]int, n)
	for i := range s {
		s[i] = i
	}
	return s
}

// meanFinite is the mean of the finite values of x, NaN without one.
func meanFinite(x []float64) float64 {
	x = slices.DeleteFunc(slices.Clone(x), math.IsNaN)
	if len(x) == 0 {
		return math.NaN()
	}
	return stats.Mean(x)
}

// DecodeResults reads results/net-ttlbmechanism.json strictly
// (jsonnum.Decode: the type is the schema); name is for messages.
func DecodeResults(name string, b []byte) (*Results, error) {
	return jsonnum.Decode[Results](name, b)
}
