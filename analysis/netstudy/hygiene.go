package netstudy

import (
	"bytes"
	"compress/gzip"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/netip"
	"path"
	"slices"
	"strconv"

	"pqrepro/analysis/stats"
	"pqrepro/datasets/netdata"
	"pqrepro/internal/repro"
)

// Measurement hygiene (issue #13 section 2): how far the machine, rather
// than the emulated network, shaped the handshakes.
//
// The late-packet flag. The run's late.csv.gz (datasets/netdata) lists
// every packet the link emulator wrote more than the run's bound after its
// due time. A handshake is touched by a late packet when a TCP packet of
// its flow (the same series, the client's port) was held across its
// window: due at or before the window's end and written at or after its
// start, both ends inclusive. The window is the attempt's start
// (start_unix_ns, taken just before the dial) to start + client_ns (the
// client's handshake time), or start + the timeout when the client
// measured none (a failed attempt). Series and ports come from
// inproc.csv.gz, whose rows are records.csv.gz's in the same order; the
// warm-up's and the self-test's packets touch no recorded handshake. The
// study's comparisons stay on all handshakes (as pre-registered); the
// same comparisons without the flagged handshakes are a robustness check.
//
// The serial controls. control.csv.gz holds series run a second time
// alone after the concurrent phase (the spec's serial_control); each is
// compared with the same series' concurrent rows in records.csv.gz: the
// shift of the median (concurrent minus alone) with its percentile
// bootstrap interval and the Hodges-Lehmann shift, against the smallest
// median difference the study reports.

// Hygiene is results/net.json's hygiene.
type Hygiene struct {
	// Note says what the run lacks (a run recorded before the records
	// existed), else is empty.
	Note string `json:"note,omitempty"`
	// ParallelSeries is the most series the run had at once (1: one at a
	// time), Exclusive the scenarios whose series ran alone, WallTimeMin
	// the run's wall time (meta.json measured.schedule); 0 and empty for
	// runs that do not record them.
	ParallelSeries int      `json:"parallel_series"`
	Exclusive      []string `json:"exclusive_scenarios"`
	WallTimeMin    Num      `json:"wall_time_min"`
	// LateBoundMs is the run's bound (meta.json measured.late.bound_ns).
	LateBoundMs Num `json:"late_bound_ms"`
	// LateEvents counts late.csv.gz's rows; LateTCP those of TCP packets;
	// LateTouching those that touched a recorded handshake (of any
	// toolchain or control); the rest fell in warm-ups, self-tests or
	// between handshakes.
	LateEvents   int `json:"late_events"`
	LateTCP      int `json:"late_tcp"`
	LateTouching int `json:"late_touching"`
	// Flagged and Sample count the study's sample (primary toolchain,
	// successful with a captured latency) and its flagged handshakes.
	Flagged  int `json:"flagged"`
	Sample   int `json:"sample"`
	SharePct Num `json:"share_pct"`
	// Series are the study's series with their flagged counts and
	// medians with and without them.
	Series []FlagSeries `json:"series"`
	// WithoutFlagged are the study's comparisons and summary numbers on
	// the unflagged handshakes only.
	WithoutFlagged WithoutFlagged `json:"without_flagged"`
	// VerdictChanges lists the comparisons (scenario/round) whose
	// direction differs without the flagged handshakes; empty: none. A
	// comparison has no test of its own (its two series are one
	// replication each), so significance is not compared here.
	VerdictChanges []string `json:"verdict_changes"`
	Control        *Control `json:"control"`
}

// FlagSeries is one series' flag count and medians.
type FlagSeries struct {
	Scenario      string `json:"scenario"`
	Round         int    `json:"round"`
	Group         string `json:"group"`
	N             int    `json:"n"`
	Flagged       int    `json:"flagged"`
	SharePct      Num    `json:"share_pct"`
	MedianMs      Num    `json:"median_ms"`
	MedianCleanMs Num    `json:"median_without_flagged_ms"`
}

// WithoutFlagged are the comparisons without the flagged handshakes.
type WithoutFlagged struct {
	Comparisons []Comparison `json:"comparisons"`
	// Scenarios are the scenario-level differences over the rounds of
	// Comparisons (inference.go), which claim B3 reads; absent from
	// results written before they were recorded.
	Scenarios  []ScenarioEffect `json:"scenarios,omitempty"`
	Reproduced Reproduced       `json:"reproduced"`
}

// Control is the concurrency control's result.
type Control struct {
	Note   string          `json:"note,omitempty"`
	Series []ControlSeries `json:"series"`
	// Diffs are the hybrid's differences (target - baseline medians) of
	// the (scenario, round, toolchain) whose both groups were controlled,
	// concurrent and alone.
	Diffs []ControlDiff `json:"diffs"`
	// SmallestDiffMs is the smallest absolute median difference among
	// the study's comparisons (SmallestAt: scenario/round); MaxShiftMs
	// the largest absolute median shift of a control series (MaxShiftAt)
	// and MaxShiftBoundMs the largest absolute limit of the shifts'
	// intervals. Exceeds: MaxShiftMs > SmallestDiffMs; ExceedsBound:
	// MaxShiftBoundMs > SmallestDiffMs (the interval cannot rule it out).
	SmallestDiffMs  Num    `json:"smallest_reported_diff_ms"`
	SmallestAt      string `json:"smallest_reported_diff_at"`
	MaxShiftMs      Num    `json:"max_abs_shift_ms"`
	MaxShiftAt      string `json:"max_abs_shift_at"`
	MaxShiftBoundMs Num    `json:"max_abs_shift_bound_ms"`
	Exceeds         bool   `json:"exceeds"`
	ExceedsBound    bool   `json:"exceeds_bound"`
}

// ControlSeries is one series measured concurrently and alone.
type ControlSeries struct {
	Scenario     string `json:"scenario"`
	Round        int    `json:"round"`
	Group        string `json:"group"`
	Toolchain    string `json:"toolchain"`
	NConcurrent  int    `json:"n_concurrent"`
	NAlone       int    `json:"n_alone"`
	ConcurrentMs Num    `json:"median_concurrent_ms"`
	AloneMs      Num    `json:"median_alone_ms"`
	// ShiftMs = concurrent - alone median, with its percentile interval
	// from the circular block bootstrap of both series (inference.go);
	// HL is the Hodges-Lehmann shift of concurrent against alone, its
	// distribution-free interval (which assumes independent handshakes,
	// so the paper does not print it) kept for the record.
	ShiftMs      Num `json:"shift_ms"`
	ShiftLowerMs Num `json:"shift_lower_ms"`
	ShiftUpperMs Num `json:"shift_upper_ms"`
	HLMs         Num `json:"hl_shift_ms"`
	HLLowerMs    Num `json:"hl_lower_ms"`
	HLUpperMs    Num `json:"hl_upper_ms"`
	// Note says why the shift has no interval (null).
	Note string `json:"note,omitempty"`
}

// ControlDiff is one difference measured concurrently and alone.
type ControlDiff struct {
	Scenario     string `json:"scenario"`
	Round        int    `json:"round"`
	Toolchain    string `json:"toolchain"`
	ConcurrentMs Num    `json:"diff_concurrent_ms"`
	AloneMs      Num    `json:"diff_alone_ms"`
	ShiftMs      Num    `json:"shift_ms"`
}

// inprocRef is what the flag needs of one row of inproc.csv.gz.
type inprocRef struct {
	series, scenario, group string
	round, seq              int
	port                    uint16
	start, clientNs         int64
}

// readInprocRefs parses inproc.csv.gz (gzip'd CSV, experiments/net/netjoin's
// InprocColumns) for the series, the client's port and the attempt's
// times.
func readInprocRefs(r io.Reader, name string) ([]inprocRef, error) {
	zr, err := gzip.NewReader(r)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	body, err := io.ReadAll(zr)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	cr := csv.NewReader(bytes.NewReader(body))
	cr.ReuseRecord = true
	head, err := cr.Read()
	if err != nil {
		return nil, fmt.Errorf("%s: header: %w", name, err)
	}
	col := map[string]int{}
	for i, h := range head {
		col[h] = i
	}
	for _, c := range []string{"series", "scenario", "round", "group", "seq", "start_unix_ns", "client", "client_ns"} {
		if _, ok := col[c]; !ok {
			return nil, fmt.Errorf("%s: header has no column %q", name, c)
		}
	}
	var out []inprocRef
	for line := 2; ; line++ {
		rec, err := cr.Read()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		get := func(c string) string { return rec[col[c]] }
		ref := inprocRef{series: get("series"), scenario: get("scenario"), group: get("group")}
		var errs []error
		atoi := func(c string) int64 {
			if get(c) == "" {
				return 0
			}
			v, err := strconv.ParseInt(get(c), 10, 64)
			if err != nil || v < 0 {
				errs = append(errs, fmt.Errorf("%s %q: want a non-negative integer", c, get(c)))
			}
			return v
		}
		ref.round, ref.seq = int(atoi("round")), int(atoi("seq"))
		ref.start, ref.clientNs = atoi("start_unix_ns"), atoi("client_ns")
		if c := get("client"); c != "" {
			ap, err := netip.ParseAddrPort(c)
			if err != nil {
				errs = append(errs, fmt.Errorf("client %q: want ip:port", c))
			}
			ref.port = ap.Port()
		}
		if ref.series == "" {
			errs = append(errs, errors.New("empty series"))
		}
		if err := errors.Join(errs...); err != nil {
			return nil, fmt.Errorf("%s line %d: %w", name, line, err)
		}
		out = append(out, ref)
	}
}

// window is one handshake attempt's flow and time window.
type window struct {
	series     string
	port       uint16
	start, end int64 // Unix ns, inclusive
}

// windows returns the attempts' windows (timeout: of an attempt without a
// client time).
func windows(refs []inprocRef, timeoutNs int64) []window {
	out := make([]window, len(refs))
	for i, r := range refs {
		d := r.clientNs
		if d <= 0 {
			d = timeoutNs
		}
		out[i] = window{series: r.series, port: r.port, start: r.start, end: r.start + d}
	}
	return out
}

// flagTouched returns, for each window, whether a late TCP packet of its
// flow was held across it (due <= end and written >= start), and how many
// events touched at least one window.
func flagTouched(ws []window, evs []netdata.LateEvent) (flags []bool, touching int) {
	type flow struct {
		series string
		port   uint16
	}
	byFlow := map[flow][]int{}
	for i, e := range evs {
		if e.Proto != 6 {
			continue
		}
		k := flow{e.Series, e.ClientPort()}
		byFlow[k] = append(byFlow[k], i)
	}
	flags = make([]bool, len(ws))
	used := make([]bool, len(evs))
	for i, w := range ws {
		if w.port == 0 {
			continue
		}
		for _, j := range byFlow[flow{w.series, w.port}] {
			if e := evs[j]; e.DueNs <= w.end && e.WrittenNs >= w.start {
				flags[i] = true
				used[j] = true
			}
		}
	}
	for _, u := range used {
		if u {
			touching++
		}
	}
	return flags, touching
}

// hygieneMeta is the part of meta.json the hygiene reads: the late bound
// and the schedule (how many series ran at once, which alone, the wall
// time).
type hygieneMeta struct {
	Measured struct {
		Late *struct {
			BoundNs int64 `json:"bound_ns"`
		} `json:"late"`
		Schedule *struct {
			ParallelSeries int      `json:"parallel_series"`
			Exclusive      []string `json:"exclusive_scenarios"`
			WallS          float64  `json:"wall_s"`
		} `json:"schedule"`
	} `json:"measured"`
}

// hygieneInput is what the stage read for the hygiene analysis; nil
// slices mean the run has no such file.
type hygieneInput struct {
	boundNs     int64
	late        []netdata.LateEvent
	inproc      []inprocRef // aligned with the records' rows
	control     []Row       // control.csv.gz
	ctlInproc   []inprocRef // aligned with control
	hasLate     bool
	hasControls bool
	touching    int // late events that touched a recorded or control handshake
	// The schedule (meta.json measured.schedule; zero for runs without).
	parallel  int
	exclusive []string
	wallS     float64
}

// markLate sets Row.Late on rows (and ctl) from the late events; it
// checks that the inproc rows are the records' rows in the same order.
func markLate(d *Design, rows []Row, refs []inprocRef, evs []netdata.LateEvent) (touching int, err error) {
	if len(refs) != len(rows) {
		return 0, fmt.Errorf("inproc.csv.gz has %d rows, records.csv.gz %d: they must be the same attempts in the same order", len(refs), len(rows))
	}
	for i, r := range rows {
		ref := refs[i]
		if ref.scenario != r.Scenario || ref.round != r.Round || ref.group != r.Group || ref.seq != r.Seq {
			return 0, fmt.Errorf("row %d: records.csv.gz has %s/%d/%s/%d, inproc.csv.gz %s/%d/%s/%d: not the same attempt", i+1, r.Scenario, r.Round, r.Group, r.Seq, ref.scenario, ref.round, ref.group, ref.seq)
		}
	}
	flags, touching := flagTouched(windows(refs, int64(d.TimeoutMs*1e6)), evs)
	for i := range rows {
		rows[i].Late = flags[i]
	}
	return touching, nil
}

// hygiene computes Results.Hygiene. rows are all the records' rows (Late
// set by markLate), ctl the controls' rows.
func hygiene(res *Results, d *Design, all []Row, in hygieneInput, p Params) (*Hygiene, error) {
	p = p.WithDefaults()
	h := &Hygiene{Series: []FlagSeries{}, VerdictChanges: []string{}, WithoutFlagged: WithoutFlagged{Comparisons: []Comparison{}},
		ParallelSeries: in.parallel, Exclusive: slices.Clone(in.exclusive), WallTimeMin: Num(in.wallS / 60)}
	if h.Exclusive == nil {
		h.Exclusive = []string{}
	}
	var notes []string
	if in.hasLate {
		h.LateBoundMs = Num(float64(in.boundNs) / 1e6)
		h.LateEvents, h.LateTouching = len(in.late), in.touching
		for _, e := range in.late {
			if e.Proto == 6 {
				h.LateTCP++
			}
		}
	} else {
		notes = append(notes, "the run has no late-packet record (recorded before it existed): no handshake is flagged")
	}
	rows, _ := primary(d, all)
	type key struct {
		s, g string
		r    int
	}
	byKey := map[key][]Row{}
	for _, r := range rows {
		byKey[key{r.Scenario, r.Group, r.Round}] = append(byKey[key{r.Scenario, r.Group, r.Round}], r)
	}
	clean := map[key]*sample{}
	for _, sc := range d.Scenarios {
		for _, rd := range d.Rounds {
			for _, g := range d.Groups {
				k := key{sc.Name, g, rd}
				rs := slices.Clone(byKey[k])
				slices.SortStableFunc(rs, func(a, b Row) int { return a.Seq - b.Seq })
				fs := FlagSeries{Scenario: sc.Name, Round: rd, Group: g}
				var lat, latClean []float64
				var kept []Row
				for _, r := range rs {
					if !r.OK || !r.HasThs || !r.HasBytes {
						kept = append(kept, r) // failures stay in both analyses
						continue
					}
					lat = append(lat, r.ThsMs)
					if r.Late {
						fs.Flagged++
						continue
					}
					latClean = append(latClean, r.ThsMs)
					kept = append(kept, r)
				}
				fs.N = len(lat)
				if fs.N > 0 {
					fs.SharePct = Num(100 * float64(fs.Flagged) / float64(fs.N))
				}
				m, _ := stats.Median(lat)
				fs.MedianMs = Num(m)
				fs.MedianCleanMs = Num(math.NaN())
				if len(latClean) > 0 {
					m, _ = stats.Median(latClean)
					fs.MedianCleanMs = Num(m)
				}
				h.Series = append(h.Series, fs)
				h.Sample += fs.N
				h.Flagged += fs.Flagged
				s, _, err := series(sc.Name, rd, g, kept, p.MaxLag)
				if err != nil {
					return nil, fmt.Errorf("without flagged: scenario %s round %d group %s: %w", sc.Name, rd, g, err)
				}
				// The study's stream: with nothing flagged, the same
				// resamples and so the same interval.
				s.stream = SeriesStream(PrimaryToolchain(d, all), sc.Name, rd, g, "")
				clean[k] = s
			}
		}
	}
	if h.Sample > 0 {
		h.SharePct = Num(100 * float64(h.Flagged) / float64(h.Sample))
	}
	var err error
	for _, s := range clean {
		if len(s.lat) < 2 {
			return nil, errors.New("without the flagged handshakes a series has fewer than 2 latencies: no comparison possible")
		}
	}
	h.WithoutFlagged.Comparisons, err = comparisons(d, func(sc string, rd int, g string) *sample { return clean[key{sc, g, rd}] }, p)
	if err != nil {
		return nil, fmt.Errorf("without flagged: %w", err)
	}
	h.WithoutFlagged.Scenarios = scenarioEffects(d, h.WithoutFlagged.Comparisons)
	h.WithoutFlagged.Reproduced = res.Reproduced
	h.WithoutFlagged.Reproduced.HigherLatency, h.WithoutFlagged.Reproduced.HigherBytes, h.WithoutFlagged.Reproduced.Significant = 0, 0, 0
	h.WithoutFlagged.Reproduced.fill(d, h.WithoutFlagged.Comparisons, res.Reproduced.Round)
	h.WithoutFlagged.Reproduced.Handshakes = res.Reproduced.Handshakes - h.Flagged
	for i, c := range h.WithoutFlagged.Comparisons {
		a := res.Comparisons[i]
		if a.HigherLatency != c.HigherLatency {
			h.VerdictChanges = append(h.VerdictChanges, fmt.Sprintf("%s/%d", c.Scenario, c.Round))
		}
	}
	if h.Control, err = control(res, all, in, p); err != nil {
		return nil, err
	}
	if !in.hasControls {
		notes = append(notes, "the run has no serial controls")
	}
	if len(notes) > 0 {
		h.Note = fmt.Sprint(notes)
	}
	return h, nil
}

// control compares each control series with its concurrent run.
func control(res *Results, all []Row, in hygieneInput, p Params) (*Control, error) {
	c := &Control{Series: []ControlSeries{}, Diffs: []ControlDiff{}}
	inf := math.Inf(1)
	smallest := inf
	for _, cmp := range res.Comparisons {
		if v := math.Abs(float64(cmp.DiffMs)); v < smallest {
			smallest, c.SmallestAt = v, fmt.Sprintf("%s/%d", cmp.Scenario, cmp.Round)
		}
	}
	c.SmallestDiffMs = Num(smallest)
	if !in.hasControls {
		c.Note = "the run has no serial controls"
		c.MaxShiftMs, c.MaxShiftBoundMs = Num(math.NaN()), Num(math.NaN())
		return c, nil
	}
	type key struct {
		s, g, t string
		r       int
	}
	lat := func(rows []Row) map[key][]float64 {
		m := map[key][]float64{}
		for _, r := range rows {
			if r.OK && r.HasThs && r.HasBytes {
				k := key{r.Scenario, r.Group, r.Toolchain, r.Round}
				m[k] = append(m[k], r.ThsMs)
			}
		}
		return m
	}
	conc, alone := lat(all), lat(in.control)
	keys := make([]key, 0, len(alone))
	for k := range alone {
		keys = append(keys, k)
	}
	// Study order: scenarios and groups as the design lists them, then round.
	sIdx := func(s string) int {
		return slices.IndexFunc(res.Design.Scenarios, func(x Scenario) bool { return x.Name == s })
	}
	slices.SortFunc(keys, func(a, b key) int {
		if x, y := sIdx(a.s), sIdx(b.s); x != y {
			return x - y
		}
		if a.r != b.r {
			return a.r - b.r
		}
		if x, y := slices.Index(res.Design.Groups, a.g), slices.Index(res.Design.Groups, b.g); x != y {
			return x - y
		}
		if a.t < b.t {
			return -1
		}
		if a.t > b.t {
			return 1
		}
		return 0
	})
	maxShift, maxBound := -1.0, -1.0
	for _, k := range keys {
		x, y := alone[k], conc[k]
		if len(x) < 2 || len(y) < 2 {
			return nil, fmt.Errorf("control %s/%d/%s/%s: %d handshakes alone and %d concurrent with a latency, need at least 2 of each", k.s, k.r, k.g, k.t, len(x), len(y))
		}
		note := ""
		sa := &sample{lat: x, stream: SeriesStream(k.t, k.s, k.r, k.g, "alone")}
		sc := &sample{lat: y, stream: SeriesStream(k.t, k.s, k.r, k.g, "")}
		bs, err := contrast(p, term{-1, sa}, term{1, sc})
		if err != nil {
			nan := math.NaN()
			mx, _ := stats.Median(x)
			my, _ := stats.Median(y)
			bs = stats.ReplicateSummary{Estimate: my - mx, Lower: nan, Upper: nan}
			note = "no block bootstrap interval: " + err.Error()
		}
		hl, err := stats.HodgesLehmann(x, y, Level)
		if err != nil {
			return nil, fmt.Errorf("control %s/%d/%s: %w", k.s, k.r, k.g, err)
		}
		mx, _ := stats.Median(x)
		my, _ := stats.Median(y)
		cs := ControlSeries{Scenario: k.s, Round: k.r, Group: k.g, Toolchain: k.t, NConcurrent: len(y), NAlone: len(x),
			ConcurrentMs: Num(my), AloneMs: Num(mx), ShiftMs: Num(bs.Estimate), ShiftLowerMs: Num(bs.Lower), ShiftUpperMs: Num(bs.Upper),
			HLMs: Num(hl.Shift), HLLowerMs: Num(hl.Lower), HLUpperMs: Num(hl.Upper), Note: note}
		c.Series = append(c.Series, cs)
		if v := math.Abs(bs.Estimate); v > maxShift {
			maxShift, c.MaxShiftAt = v, fmt.Sprintf("%s/%d/%s", k.s, k.r, k.g)
		}
		if !math.IsNaN(bs.Lower) {
			maxBound = max(maxBound, math.Abs(bs.Lower), math.Abs(bs.Upper))
		}
	}
	c.MaxShiftMs, c.MaxShiftBoundMs = Num(maxShift), Num(maxBound)
	c.Exceeds, c.ExceedsBound = maxShift > smallest, maxBound > smallest
	// Differences where both groups were controlled.
	g0, g1 := res.Design.Groups[0], res.Design.Groups[1]
	for _, k := range keys {
		if k.g != g0 {
			continue
		}
		kt := k
		kt.g = g1
		if _, ok := alone[kt]; !ok {
			continue
		}
		med := func(m map[key][]float64, k key) float64 { v, _ := stats.Median(m[k]); return v }
		dc, da := med(conc, kt)-med(conc, k), med(alone, kt)-med(alone, k)
		c.Diffs = append(c.Diffs, ControlDiff{Scenario: k.s, Round: k.r, Toolchain: k.t, ConcurrentMs: Num(dc), AloneMs: Num(da), ShiftMs: Num(dc - da)})
	}
	return c, nil
}

// parseHygieneMeta reads meta.json's late bound (ok: the run has one)
// and schedule into in.
func parseHygieneMeta(mb []byte, in *hygieneInput) (ok bool, err error) {
	var m hygieneMeta
	if err := json.Unmarshal(mb, &m); err != nil {
		return false, err
	}
	if s := m.Measured.Schedule; s != nil {
		in.parallel, in.exclusive, in.wallS = s.ParallelSeries, s.Exclusive, s.WallS
	}
	if m.Measured.Late == nil {
		return false, nil
	}
	in.boundNs = m.Measured.Late.BoundNs
	return true, nil
}

// readHygiene reads the run's hygiene files that exist (declared inputs
// through the stage's glob) and flags the records' rows touched by a late
// packet (Row.Late).
func readHygiene(env *repro.Env, runDir string, metaJSON []byte, d *Design, rows []Row) (hygieneInput, error) {
	var in hygieneInput
	have := map[string]bool{}
	for _, f := range env.Inputs() {
		have[f] = true
	}
	open := func(name string, fn func(io.Reader, string) error) error {
		p := path.Join(runDir, name)
		f, err := env.Open(p)
		if err != nil {
			return fmt.Errorf("read %s: %w", p, err)
		}
		defer f.Close()
		return fn(f, p)
	}
	ok, err := parseHygieneMeta(metaJSON, &in)
	if err != nil {
		return in, fmt.Errorf("meta.json: %w", err)
	}
	in.hasLate = ok && have[path.Join(runDir, netdata.LateFile)]
	if ok && !in.hasLate {
		return in, fmt.Errorf("meta.json names a late bound but the run has no %s", netdata.LateFile)
	}
	if in.hasLate {
		if err := open(netdata.LateFile, func(r io.Reader, name string) (err error) { in.late, err = netdata.ReadLate(r, name); return err }); err != nil {
			return in, err
		}
		if err := open("inproc.csv.gz", func(r io.Reader, name string) (err error) { in.inproc, err = readInprocRefs(r, name); return err }); err != nil {
			return in, err
		}
		n, err := markLate(d, rows, in.inproc, in.late)
		if err != nil {
			return in, err
		}
		in.touching += n
	}
	in.hasControls = have[path.Join(runDir, netdata.ControlFile)]
	if in.hasControls {
		if err := open(netdata.ControlFile, func(r io.Reader, name string) (err error) { in.control, err = ReadRecords(r, name); return err }); err != nil {
			return in, err
		}
		if in.hasLate {
			if err := open(netdata.ControlInprocFile, func(r io.Reader, name string) (err error) { in.ctlInproc, err = readInprocRefs(r, name); return err }); err != nil {
				return in, err
			}
			n, err := markLate(d, in.control, in.ctlInproc, in.late)
			if err != nil {
				return in, fmt.Errorf("controls: %w", err)
			}
			in.touching += n
		}
	}
	return in, nil
}
