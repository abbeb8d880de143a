// Package ttlbmechanism tests the registered mechanism of Study B's
// transfer block: the hybrid's larger first flight opens a larger window.
//
// Why: in the pinned full run the hybrid (X25519MLKEM768) had the lower
// time to last byte in 7 of 12 cells with a response, although its
// handshake was slower. The
// registration analysis/ttlb/mechanism.txt, committed before the run
// that tests it, says why and how to tell: the client acknowledges the
// hybrid's 1,120-byte key share before its request, and Linux grows the
// congestion window by the bytes acknowledged during slow start (RFC 5681
// 3.1) or BBR's startup, so the response may start with more in flight
// than the initial window of 10 segments (RFC 6928).
//
// From the controlled block's rows (datasets/netdata.ControlledColumns),
// per connection P = TTLB - Ths, W (resp_window) and A (hs_acked_segs),
// and per cell (scenario x size > 0 x congestion control), as hybrid
// minus X25519 of the cell's means:
//
//  1. order: the TTLB difference, both toolchains pooled, with a 95 %
//     percentile interval over resamples of the interleaved pairs; it
//     "holds" when in at least one cell above 10 segments on each of wan
//     and far the interval lies below 0, else "order effect";
//  2. window: dP_pred = sum_w (p_hyb(w) - p_x(w)) Pbar(w), p_g from the
//     predicted series and Pbar from the other toolchain's series of the
//     cell; the error e_i = dP_pred - dP_obs (both averaged over the two
//     toolchains) must lie within bound_i = z sqrt(SE_i^2 + tau^2),
//     z = Phi^-1(1 - alpha / (2 m)), in every cell of a congestion control;
//  3. cause: dA and dW, descriptive.
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

	"gonum.org/v1/gonum/stat/distuv"

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

// SegmentBytes is the segment size that "a response above 10 segments"
// is counted in.
//
// The rows do not hold the connections' segment size (the capture's SYN
// MSS enters only hs_acked_segs), so it is 1460 bytes: the MSS of the
// emulated links' MTU, 1500 (linkemu's default; Study B sets no other).
const SegmentBytes = 1460

// InitialWindowSegs is Linux's initial congestion window (RFC 6928).
const InitialWindowSegs = 10

// OrderLevel is prediction 1's interval level (95 %).
const OrderLevel = 0.95

// The groups compared: X25519 (index 0) and the hybrid (index 1).
var groups = [2]string{"X25519", "X25519MLKEM768"}

// Prediction 1's verdicts.
const (
	OrderHolds  = "holds"
	OrderEffect = "order effect"
)

// Prediction 2's verdicts per congestion control.
const (
	WindowPasses    = "passes"
	WindowFails     = "fails"
	WindowMoot      = "moot: order effect"
	WindowNotJudged = "not judged: no cell could be predicted"
)

// Why a connection is left out (beside netdata's Incomplete* reasons of a
// row without a time to last byte).
const (
	ExcludedNoThs      = "no_handshake_time" // the capture shows no client Finished
	ExcludedNoWindow   = "no_resp_window"    // no W: the capture lacks the SYN round trip
	ExcludedOtherGroup = "other_group"       // neither X25519 nor the hybrid
	ExcludedUnknownCC  = "no_cc"             // the connection had no socket to read it from
	// KeptNoAckedSegs counts, beside them, connections kept without A:
	// in predictions 1 and 2, left out of dA.
	KeptNoAckedSegs = "no_hs_acked_segs"
)

// Results is results/net-ttlbmechanism.json: the three registered
// predictions per cell and prediction 2's acceptance per congestion
// control.
type Results struct {
	Extension    string      `json:"extension"`
	Registration string      `json:"registration"`
	Measured     bool        `json:"measured"`
	Note         string      `json:"note,omitempty"`
	Model        string      `json:"model"`
	Fit          string      `json:"fit"`
	Alpha        jsonnum.Num `json:"alpha"`
	Resamples    int         `json:"resamples"`
	Seed         uint64      `json:"seed"`
	SegmentBytes int         `json:"segment_bytes"`
	// Connections counts the connections kept; Excluded the others by
	// reason (and no_hs_acked_segs those kept but left out of dA).
	Connections int            `json:"connections"`
	Excluded    map[string]int `json:"excluded"`
	Order       Order          `json:"order"`
	CCs         []CC           `json:"congestion_controls"`
	Cells       []Cell         `json:"cells"`
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
	Cells   int         `json:"cells"` // m: the cells predicted
	Z       jsonnum.Num `json:"z"`
	TauMs   jsonnum.Num `json:"tau_ms"`
	Pass    bool        `json:"pass"`
	Verdict string      `json:"verdict"`
	Misses  []string    `json:"misses"`          // cells whose |e| exceeds the bound
	Skipped []string    `json:"not_predictable"` // cells without a prediction
}

// Cell is one scenario, response size and congestion control.
type Cell struct {
	Scenario  string   `json:"scenario"`
	SizeBytes int      `json:"size_bytes"`
	CC        string   `json:"cc"`
	N         [2]int   `json:"n"` // connections kept, X25519 then hybrid, toolchains pooled
	Series    []Series `json:"series"`
	// Prediction 1: mean TTLB, hybrid minus X25519, toolchains pooled.
	AboveOrder  bool        `json:"above_10_segments"`
	TTLBDiffMs  jsonnum.Num `json:"ttlb_diff_ms"`
	TTLBLowerMs jsonnum.Num `json:"ttlb_diff_lower_ms"`
	TTLBUpperMs jsonnum.Num `json:"ttlb_diff_upper_ms"`
	// Prediction 2; Reason says why a cell is not Predictable.
	Predictable bool        `json:"predictable"`
	Reason      string      `json:"reason,omitempty"`
	ObservedMs  jsonnum.Num `json:"observed_ms"`
	PredictedMs jsonnum.Num `json:"predicted_ms"`
	ErrorMs     jsonnum.Num `json:"error_ms"`
	SEMs        jsonnum.Num `json:"se_ms"`
	// ToolchainDiffMs is d_i, the first toolchain's error minus the
	// second's, and ToolchainDiffSEMs its bootstrap SD (tau's terms).
	ToolchainDiffMs   jsonnum.Num `json:"toolchain_diff_ms"`
	ToolchainDiffSEMs jsonnum.Num `json:"toolchain_diff_se_ms"`
	BoundMs           jsonnum.Num `json:"bound_ms"`
	Pass              bool        `json:"pass"`
	Share             jsonnum.Num `json:"share"` // PredictedMs / ObservedMs
	// Dropped counts the resamples in which a series lacked a group
	// (left out of SE and of the interval).
	Dropped int `json:"dropped_resamples"`
	// Prediction 3 (descriptive): mean W and A, hybrid minus X25519, the
	// toolchains' series averaged; AboveWindow is a response above the
	// initial window.
	DW          jsonnum.Num `json:"dw_segs"`
	DA          jsonnum.Num `json:"da_segs"`
	AboveWindow bool        `json:"above_initial_window"`
}

// Series is one toolchain's series of a cell.
type Series struct {
	Toolchain   string      `json:"toolchain"`
	Pairs       int         `json:"pairs"`
	N           [2]int      `json:"n"`
	ObservedMs  jsonnum.Num `json:"observed_ms"`
	PredictedMs jsonnum.Num `json:"predicted_ms"`
	// Nearest lists the w of this series absent from the other
	// toolchain's, whose Pbar came from the nearest w present there.
	Nearest []int `json:"nearest_w"`
}

// Label names a cell in messages and lists: scenario/size/cc.
func (c *Cell) Label() string { return fmt.Sprintf("%s/%dB/%s", c.Scenario, c.SizeBytes, c.CC) }

const extensionLabel = "our extension: the registered mechanism of the transfer block's differences, a finding, not a judged claim"

func newResults(reg Registration) *Results {
	return &Results{Extension: extensionLabel, Registration: ttlb.MechanismFile, Model: reg.Model, Fit: reg.Fit,
		Alpha: jsonnum.Num(reg.Alpha), Resamples: reg.Resamples, Seed: reg.Seed, SegmentBytes: SegmentBytes,
		Excluded: map[string]int{}, Order: Order{Verdict: NotMeasured, AboveBytes: InitialWindowSegs * SegmentBytes, Roles: []OrderRole{}},
		CCs: []CC{}, Cells: []Cell{}}
}

// conn is one kept connection: its group (0 X25519, 1 hybrid), P and
// TTLB in ms, W and A in segments (A -1 when unknown).
type conn struct {
	group     int
	pMs, ttlb float64
	w, a      int
}

// series holds one toolchain's connections of a cell by interleaved
// pair; bad says why its positions do not form pairs.
type series struct {
	toolchain string
	pairs     map[int][]conn
	groupsAt  map[int][]int // every row's group by pair, kept or not
	units     [][]conn      // the pairs with a kept connection, by pair index
	bad       string
}

type cellKey struct {
	scenario string
	size     int
	cc       string
}

// pairOf is the interleaved pair of a position: seriesSteps measures one
// connection of each group per pair, so positions 2k and 2k+1 are pair k.
func pairOf(position int) int { return position / len(groups) }

// Analyze computes the registered predictions from a run's transfer rows
// (transfer.csv.gz).
//
// Only the controlled block's rows with a response count; a run without
// one gives a result that says NotMeasured. A connection without a
// capture record, a time to last byte, a handshake time or W is left out
// and counted by reason.
func Analyze(rows []netdata.Row, reg Registration) (*Results, error) {
	if reg.Resamples < 2 || !(reg.Alpha > 0 && reg.Alpha < 1) {
		return nil, fmt.Errorf("ttlbmechanism: registration %+v: want alpha in (0, 1) and at least 2 resamples; parse it with ParseRegistration", reg)
	}
	t := newResults(reg)
	cells, order := collect(rows, t)
	if len(order) == 0 {
		t.Note = NotMeasured
		return t, nil
	}
	t.Measured = true
	h := fnv.New64a()
	h.Write([]byte("ttlb-mechanism"))
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
		gi := slices.Index(groups[:], r.Group)
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
			s = &series{toolchain: tc, pairs: map[int][]conn{}, groupsAt: map[int][]int{}}
			cells[k][tc] = s
		}
		p := pairOf(r.Position)
		s.groupsAt[p] = append(s.groupsAt[p], gi)
		if why != "" {
			t.Excluded[why]++
			continue
		}
		x := r.Xfer
		ttlbMs := float64(*x.TTLBNs) / 1e6
		s.pairs[p] = append(s.pairs[p], conn{group: gi, ttlb: ttlbMs, pMs: ttlbMs - float64(*r.Cap.ThsNs)/1e6, w: x.RespWindow, a: x.HsAckedSegs})
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

// exclusion is why row r (group index gi) is left out, "" when it is kept.
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

// finish checks that no pair holds a group twice (a pair may lack a
// connection whose row could not be placed: a failed dial has no
// congestion control) and lists the pairs with a kept connection by pair
// index.
func (s *series) finish() {
	for _, p := range slices.Sorted(maps.Keys(s.groupsAt)) {
		g := slices.Sorted(slices.Values(s.groupsAt[p]))
		if len(slices.Compact(g)) != len(s.groupsAt[p]) && s.bad == "" {
			s.bad = fmt.Sprintf("series %s: positions %d and %d are not one connection of each group (an interleaved pair); was the block run interleaved?", s.toolchain, 2*p, 2*p+1)
		}
		if len(s.pairs[p]) > 0 {
			s.units = append(s.units, s.pairs[p])
		}
	}
}

// drawn is the connections of the pairs idx (repeats count).
func (s *series) drawn(idx []int) []conn {
	var out []conn
	for _, i := range idx {
		out = append(out, s.units[i]...)
	}
	return out
}

// diff is the mean of f over group 1's connections minus over group 0's,
// NaN when a group has none (or f is NaN for every one of them).
func diff(cs []conn, f func(conn) float64) float64 {
	var sum [2]float64
	var n [2]int
	for _, c := range cs {
		if v := f(c); !math.IsNaN(v) {
			sum[c.group] += v
			n[c.group]++
		}
	}
	if n[0] == 0 || n[1] == 0 {
		return math.NaN()
	}
	return sum[1]/float64(n[1]) - sum[0]/float64(n[0])
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

// nearest is the w of ws (sorted, not empty) nearest to w, ties to the
// smaller.
func nearest(ws []int, w int) int {
	i, found := slices.BinarySearch(ws, w)
	switch {
	case found:
		return w
	case i == 0:
		return ws[0]
	case i == len(ws):
		return ws[len(ws)-1]
	case w-ws[i-1] <= ws[i]-w:
		return ws[i-1]
	}
	return ws[i]
}

// predict is dP_pred of the connections cs with the times of other:
//
//	dP_pred = sum over w of (p_hyb(w) - p_x(w)) x Pbar(w),
//
// p_g(w) the share of group g's connections of cs with W = w, Pbar(w) the
// mean P of other's connections (both groups) with W = w, or with the
// nearest w present in other (ties to the smaller), which are listed.
// NaN when a group of cs has no connection.
func predict(cs, other []conn) (float64, []int) {
	sum, n := map[int]float64{}, map[int]int{}
	for _, c := range other {
		sum[c.w] += c.pMs
		n[c.w]++
	}
	ws := slices.Sorted(maps.Keys(n))
	var count [2]map[int]int
	var total [2]int
	count[0], count[1] = map[int]int{}, map[int]int{}
	for _, c := range cs {
		count[c.group][c.w]++
		total[c.group]++
	}
	if total[0] == 0 || total[1] == 0 || len(ws) == 0 {
		return math.NaN(), nil
	}
	seen := map[int]bool{}
	var own []int
	for _, c := range cs {
		if !seen[c.w] {
			seen[c.w] = true
			own = append(own, c.w)
		}
	}
	slices.Sort(own)
	var pred float64
	var fallback []int
	for _, w := range own {
		v := nearest(ws, w)
		if v != w {
			fallback = append(fallback, w)
		}
		share := float64(count[1][w])/float64(total[1]) - float64(count[0][w])/float64(total[0])
		pred += share * sum[v] / float64(n[v])
	}
	return pred, fallback
}

// cellStats is what the acceptance needs of a predicted cell.
type cellStats struct {
	predicted bool
	cc        string
	e, se     float64 // the error and its bootstrap SD
	d, sed    float64 // the toolchains' error difference and its SD
}

// errorsOf is, on the connections of the two series, each series' observed
// and predicted difference, the error averaged over the toolchains and
// the difference of the toolchains' errors.
func errorsOf(a, b []conn) (obs, pred [2]float64, e, d float64) {
	obs = [2]float64{diff(a, pOf), diff(b, pOf)}
	pred[0], _ = predict(a, b)
	pred[1], _ = predict(b, a)
	e0, e1 := pred[0]-obs[0], pred[1]-obs[1]
	return obs, pred, (e0 + e1) / 2, e0 - e1
}

// analyzeCell fills c from the cell's series (by toolchain) and returns
// what the acceptance needs. The bootstrap draws, for each of B resamples
// and each series in toolchain order, its pairs with replacement
// (rng.IntN, as stats.ClusterReplicates draws), the same draw for the
// prediction, the observation and prediction 1's pooled difference.
func analyzeCell(c *Cell, k cellKey, byTc map[string]*series, reg Registration, rng *rand.Rand) cellStats {
	nan := jsonnum.Num(math.NaN())
	*c = Cell{Scenario: k.scenario, SizeBytes: k.size, CC: k.cc, Series: []Series{},
		AboveOrder: k.size > InitialWindowSegs*SegmentBytes, AboveWindow: k.size > InitialWindowSegs*SegmentBytes,
		TTLBDiffMs: nan, TTLBLowerMs: nan, TTLBUpperMs: nan, ObservedMs: nan, PredictedMs: nan, ErrorMs: nan, SEMs: nan,
		ToolchainDiffMs: nan, ToolchainDiffSEMs: nan, BoundMs: nan, Share: nan, DW: nan, DA: nan}
	ss := make([]*series, 0, len(byTc))
	for _, tc := range slices.Sorted(maps.Keys(byTc)) {
		if s := byTc[tc]; len(s.units) > 0 {
			ss = append(ss, s)
		}
	}
	all := make([][]conn, len(ss))
	var dw, da []float64
	for i, s := range ss {
		all[i] = s.drawn(seq(len(s.units)))
		se := Series{Toolchain: s.toolchain, Pairs: len(s.units), ObservedMs: jsonnum.Num(diff(all[i], pOf)), PredictedMs: nan, Nearest: []int{}}
		for _, x := range all[i] {
			se.N[x.group]++
			c.N[x.group]++
		}
		c.Series = append(c.Series, se)
		dw, da = append(dw, diff(all[i], wOf)), append(da, diff(all[i], aOf))
	}
	c.DW, c.DA = jsonnum.Num(meanFinite(dw)), jsonnum.Num(meanFinite(da))
	c.Reason = predictable(ss, all)
	c.Predictable = c.Reason == ""
	pooled := func(sets [][]conn) float64 { return diff(slices.Concat(sets...), ttlbOf) }
	c.TTLBDiffMs = jsonnum.Num(pooled(all))
	st := cellStats{cc: k.cc}
	if c.Predictable {
		obs, pred, e, d := errorsOf(all[0], all[1])
		_, near0 := predict(all[0], all[1])
		_, near1 := predict(all[1], all[0])
		for i, near := range [][]int{near0, near1} {
			c.Series[i].PredictedMs = jsonnum.Num(pred[i])
			if near != nil {
				c.Series[i].Nearest = near
			}
		}
		o, p := (obs[0]+obs[1])/2, (pred[0]+pred[1])/2
		c.ObservedMs, c.PredictedMs, c.ErrorMs, c.ToolchainDiffMs, c.Share = jsonnum.Num(o), jsonnum.Num(p), jsonnum.Num(e), jsonnum.Num(d), jsonnum.Num(p/o)
		st.predicted, st.e, st.d = true, e, d
	}
	if len(ss) == 0 {
		return st
	}
	var ttlbReps, eReps, dReps []float64
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
		var e, d float64
		if c.Predictable {
			_, _, e, d = errorsOf(sets[0], sets[1])
		}
		if math.IsNaN(v) || math.IsNaN(e) {
			c.Dropped++
			continue
		}
		ttlbReps = append(ttlbReps, v)
		if c.Predictable {
			eReps, dReps = append(eReps, e), append(dReps, d)
		}
	}
	if s, err := stats.BootstrapReplicates(float64(c.TTLBDiffMs), ttlbReps, OrderLevel); err == nil && !math.IsNaN(float64(c.TTLBDiffMs)) {
		c.TTLBLowerMs, c.TTLBUpperMs = jsonnum.Num(s.Lower), jsonnum.Num(s.Upper)
	}
	if !c.Predictable {
		return st
	}
	se, err1 := stats.BootstrapReplicates(st.e, eReps, OrderLevel)
	sd, err2 := stats.BootstrapReplicates(st.d, dReps, OrderLevel)
	if err1 != nil || err2 != nil {
		c.Predictable, c.Reason, st.predicted = false, fmt.Sprintf("%d of %d resamples lacked a group in a series: too few for SE", c.Dropped, reg.Resamples), false
		return st
	}
	st.se, st.sed = se.SE, sd.SE
	c.SEMs, c.ToolchainDiffSEMs = jsonnum.Num(st.se), jsonnum.Num(st.sed)
	return st
}

// predictable is why a cell's prediction cannot be made ("" when it can):
// the registered fit needs exactly two toolchains' series, each of
// interleaved pairs, at least two of them, and both groups in each.
func predictable(ss []*series, all [][]conn) string {
	var tcs []string
	for _, s := range ss {
		tcs = append(tcs, s.toolchain)
	}
	switch {
	case len(ss) < 2:
		return fmt.Sprintf("one toolchain's series only (%s): the prediction takes its times from the other toolchain's series", strings.Join(tcs, ", "))
	case len(ss) > 2:
		return fmt.Sprintf("%d toolchains' series (%s): the registered fit holds out one of two", len(ss), strings.Join(tcs, ", "))
	}
	for i, s := range ss {
		switch {
		case s.bad != "":
			return s.bad
		case len(s.units) < 2:
			return fmt.Sprintf("series %s has %d pair(s): resampling pairs needs at least 2", s.toolchain, len(s.units))
		case math.IsNaN(diff(all[i], pOf)):
			return fmt.Sprintf("series %s lacks a group's connections", s.toolchain)
		}
	}
	return ""
}

// accept applies prediction 2's acceptance per congestion control (in the
// cells' order): m the cells predicted, z = Phi^-1(1 - alpha / (2 m)),
// tau^2 = max(0, mean over them of (d_i^2 - SE_d,i^2) / 2), bound_i =
// z sqrt(SE_i^2 + tau^2), a pass when every |e_i| <= bound_i.
func accept(t *Results, d []cellStats, reg Registration) {
	var ccs []string
	for _, c := range t.Cells {
		if !slices.Contains(ccs, c.CC) {
			ccs = append(ccs, c.CC)
		}
	}
	for _, name := range ccs {
		cc := CC{CC: name, Misses: []string{}, Skipped: []string{}, Z: jsonnum.Num(math.NaN()), TauMs: jsonnum.Num(math.NaN())}
		var terms []float64
		for i, c := range t.Cells {
			switch {
			case c.CC != name:
			case d[i].predicted:
				cc.Cells++
				terms = append(terms, (d[i].d*d[i].d-d[i].sed*d[i].sed)/2)
			default:
				cc.Skipped = append(cc.Skipped, c.Label())
			}
		}
		if cc.Cells == 0 {
			cc.Verdict = WindowNotJudged
			t.CCs = append(t.CCs, cc)
			continue
		}
		z := distuv.UnitNormal.Quantile(1 - reg.Alpha/(2*float64(cc.Cells)))
		tau := math.Sqrt(max(0, stats.Mean(terms)))
		cc.Z, cc.TauMs, cc.Pass = jsonnum.Num(z), jsonnum.Num(tau), true
		for i := range t.Cells {
			c := &t.Cells[i]
			if c.CC != name || !d[i].predicted {
				continue
			}
			b := z * math.Hypot(d[i].se, tau)
			c.BoundMs, c.Pass = jsonnum.Num(b), math.Abs(d[i].e) <= b
			if !c.Pass {
				cc.Pass = false
				cc.Misses = append(cc.Misses, c.Label())
			}
		}
		cc.Verdict = WindowFails
		if cc.Pass {
			cc.Verdict = WindowPasses
		}
		t.CCs = append(t.CCs, cc)
	}
}

// Role is a scenario's role: its name before the first "-" (wan-quick is
// a wan).
func Role(scenario string) string { r, _, _ := strings.Cut(scenario, "-"); return r }

// judgeOrder is prediction 1's verdict: it holds when, on each of wan and
// far, a cell above 10 segments has its TTLB difference below 0 with the
// interval's upper end below 0; else the effect is an order effect and
// prediction 2's verdicts are moot.
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
	t.Order.Verdict = OrderHolds
	if !holds {
		t.Order.Verdict = OrderEffect
		for i := range t.CCs {
			if t.CCs[i].Cells > 0 {
				t.CCs[i].Verdict = WindowMoot
			}
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
