package netrun

import (
	"context"
	"fmt"
	"runtime"
	"strconv"
	"time"

	"pqrepro/datasets/netdata"
	"pqrepro/internal/provenance"
)

type captureInfo struct {
	SHA256      string `json:"sha256"`
	Packets     uint64 `json:"packets"`
	KernelSeen  uint64 `json:"kernel_seen"`
	KernelDrops uint64 `json:"kernel_drops"`
	Truncated   uint64 `json:"truncated"`
	Connections int    `json:"connections"` // capture records (warm-up included)
	Joined      int    `json:"joined"`      // recorded attempts with a capture record
	Unmatched   int    `json:"unmatched"`   // recorded, handshake ok, but no complete capture record
}

// scheduleMeta is measured.schedule in meta.json.
type scheduleMeta struct {
	ParallelSeries int          `json:"parallel_series"`
	Exclusive      []string     `json:"exclusive_scenarios"`
	DispatchOrder  []string     `json:"dispatch_order"`
	WallS          float64      `json:"wall_s"` // first series' start to last series' end
	WorkS          float64      `json:"handshake_work_s"`
	TheoreticalS   float64      `json:"theoretical_min_s"`
	ScheduledMinS  float64      `json:"scheduled_min_s"`
	ExpectedS      float64      `json:"expected_s"`
	Series         []seriesMeta `json:"series"` // record order
}

// seriesMeta is one series in measured.schedule. Times are seconds from
// the start of the first series (no wall-clock stamps).
type seriesMeta struct {
	ID         string     `json:"id"`
	Scenario   string     `json:"scenario"`
	Round      int        `json:"round"`
	Groups     []string   `json:"groups"`
	Seed       uint64     `json:"seed"`
	Exclusive  bool       `json:"exclusive"`
	Handshakes int        `json:"handshakes"`
	StartS     float64    `json:"start_s"` // link start
	EndS       float64    `json:"end_s"`   // capture joined and stored
	HSStartS   float64    `json:"handshakes_start_s"`
	HSEndS     float64    `json:"handshakes_end_s"`
	HSWallS    float64    `json:"handshakes_wall_s"`
	MinS       float64    `json:"theoretical_min_s"`
	Ratio      float64    `json:"wall_to_theoretical_ratio"` // handshake phase / minimum
	PlannedS   [2]float64 `json:"planned_s"`                 // Estimate's start and end
	// ConcurrentWith lists the series whose handshake phase overlapped this
	// series' handshake phase.
	ConcurrentWith []string `json:"concurrent_with"`
	MaxConcurrent  int      `json:"max_concurrent"` // most series handshaking at once during this one, itself included
}

func (r *runner) scheduleMeta(res []seriesResult) scheduleMeta {
	m := scheduleMeta{ParallelSeries: r.plan.Parallel, Exclusive: []string{}, TheoreticalS: r.est.Minimum.Seconds(),
		ScheduledMinS: r.est.ScheduledMinimum.Seconds(), ExpectedS: r.est.Expected.Seconds()}
	for i, sc := range r.plan.Scenarios {
		if r.plan.Exclusive[i] {
			m.Exclusive = append(m.Exclusive, sc.Name)
		}
	}
	for _, i := range r.est.Order {
		m.DispatchOrder = append(m.DispatchOrder, r.est.Series[i].ID)
	}
	if len(res) == 0 {
		return m
	}
	t0, t1 := res[0].start, res[0].end
	for _, x := range res {
		if x.start.Before(t0) {
			t0 = x.start
		}
		if x.end.After(t1) {
			t1 = x.end
		}
	}
	sec := func(t time.Time) float64 { return t.Sub(t0).Seconds() }
	m.WallS = t1.Sub(t0).Seconds()
	for i, se := range r.est.Series {
		x := res[i]
		groups := make([]string, len(se.Groups))
		for k, g := range se.Groups {
			groups[k] = r.plan.armName(g)
		}
		hs := x.hsEnd.Sub(x.hsStart).Seconds()
		m.WorkS += hs
		sm := seriesMeta{ID: se.ID, Scenario: r.plan.Scenarios[se.Scenario].Name, Round: se.Round, Groups: groups, Seed: se.Link.Seed,
			Exclusive: se.Exclusive, Handshakes: se.Handshakes(), StartS: sec(x.start), EndS: sec(x.end),
			HSStartS: sec(x.hsStart), HSEndS: sec(x.hsEnd), HSWallS: hs, MinS: se.Minimum.Seconds(),
			PlannedS: [2]float64{se.Start.Seconds(), se.End.Seconds()}, ConcurrentWith: []string{}}
		if sm.MinS > 0 {
			sm.Ratio = hs / sm.MinS
		}
		for j, o := range r.est.Series {
			if j != i && res[j].hsStart.Before(x.hsEnd) && x.hsStart.Before(res[j].hsEnd) {
				sm.ConcurrentWith = append(sm.ConcurrentWith, o.ID)
			}
		}
		sm.MaxConcurrent = maxOverlap(res, x.hsStart, x.hsEnd)
		m.Series = append(m.Series, sm)
	}
	return m
}

// maxOverlap is the largest number of handshake phases in res running at
// one instant inside [from, to).
func maxOverlap(res []seriesResult, from, to time.Time) int {
	best := 0
	// The count only rises at a phase's start, so it is enough to count at
	// from and at every start inside the window.
	points := []time.Time{from}
	for _, x := range res {
		if x.hsStart.After(from) && x.hsStart.Before(to) {
			points = append(points, x.hsStart)
		}
	}
	for _, p := range points {
		n := 0
		for _, x := range res {
			if !x.hsStart.After(p) && x.hsEnd.After(p) {
				n++
			}
		}
		best = max(best, n)
	}
	return best
}

// runMeta makes the run's meta.json. It records the design, the endpoints,
// each series' self-test, link statistics and capture, the handshake counts
// and failures, the schedule against the estimate's minimums, the seeds and
// the notes. where says where the captures went (storeCaptures). It also
// returns the attempts and the handshakes that succeeded.
func (r *runner) runMeta(ctx context.Context, out *runOutputs, sched scheduleMeta, where string) (m provenance.Meta, attempts, oks int) {
	sp, plan, est, eps, rem, measured := r.spec, r.plan, r.est, r.eps, r.rem, out.measured
	scen := make([]netdata.Scenario, len(plan.Scenarios))
	for i, sc := range plan.Scenarios {
		ss := sp.Scenarios[sc.Name]
		scen[i] = netdata.Scenario{Name: sc.Name, RTTms: ss.RTTMs, JitterMs: ss.JitterMs, LossPct: ss.LossPct, RateBps: sc.AtoB.Rate, QueueBytes: sc.AtoB.Queue, Seed: sc.Seed, Link: sc.String()}
	}
	groups := plan.groupNames()
	attempts, oks, failures := countHandshakes(out.rows)
	measured["design"] = netdata.Design{Order: plan.Order, Groups: groups, Rounds: plan.Rounds, CertKey: string(plan.CertKey), CertChain: sp.CertChain, Warmup: plan.Warmup, TimeoutMs: float64(plan.Timeout) / 1e6, Scenarios: scen, Toolchains: plan.Toolchains}
	if len(eps) > 0 {
		em := map[string]any{}
		for tc, ep := range eps {
			em[tc] = map[string]string{"go_version": ep.GoVersion, "source_sha256": ep.SourceSHA, "source": EndpointDir}
		}
		measured["endpoints"] = em
	} else {
		measured["endpoints"] = map[string]any{InProcess: map[string]string{"go_version": runtime.Version(), "source": "experiments/instruments/handshake (in process)"}}
	}
	measured["selftest"] = out.selfTests
	measured["link_stats"] = out.linkStats
	measured["capture"] = out.captures
	measured["tcp_stack"] = out.tcpStack
	measured["handshakes"] = map[string]int{"attempts": attempts, "ok": oks, "failed": attempts - oks}
	measured["failures"] = failures
	measured["schedule"] = sched
	measured["wall_time_s"] = sched.WallS
	measured["handshake_work_s"] = sched.WorkS
	measured["theoretical_min_s"] = est.Minimum.Seconds()
	measured["scheduled_min_s"] = est.ScheduledMinimum.Seconds()
	measured["expected_s"] = est.Expected.Seconds()
	if est.Minimum > 0 {
		measured["wall_to_theoretical_ratio"] = sched.WallS / est.Minimum.Seconds()
		measured["work_to_theoretical_ratio"] = sched.WorkS / est.Minimum.Seconds()
	}
	if est.ScheduledMinimum > 0 {
		measured["wall_to_scheduled_min_ratio"] = sched.WallS / est.ScheduledMinimum.Seconds()
	}
	measured["rtts_per_connection"] = RTTsPerConnection

	m = r.life.Meta(ctx, nil)
	m.Seeds = map[string]uint64{"certificates": sp.Seeds.Certificates, "order": sp.Seeds.Order}
	for _, sc := range plan.Scenarios {
		m.Seeds["link-"+sc.Name] = sc.Seed
	}
	for _, se := range est.Series {
		m.Seeds["link-"+se.ID] = se.Link.Seed
	}
	m.Board = "host: linkemu userspace link between two network namespaces"
	if rem != nil {
		measured["remote_host"] = rem.srv.Prov
		measured["remote_ready_s"] = rem.srv.Ready.Seconds()
	}
	m.Measured = measured
	m.Files = out.files
	m.Notes = []string{
		"captures/<series>.pcapng are " + where + ", one per series (scenario-round-group), each from its own link; they hold the client key log as a Decryption Secrets Block; records.csv.gz is derived from them and inproc.csv.gz by experiments/net/netjoin (the build's net:records stage re-derives it)",
		"latency ths_ns: capture on namespace A's TUN device (the client side), first segment of the ClientHello to first segment of the client Finished",
		"selftest, link_stats and capture are keyed by series; link-<series> seeds are SeriesSeed(scenario seed, round, group code point)",
		fmt.Sprintf("wall_time_s: first series' link start to last series' end (self-tests, capture joins included); handshake_work_s: sum of the series' handshake phases; theoretical_min_s = sum over connections of %d x RTT; scheduled_min_s: the schedule's makespan at that minimum; schedule: which series ran when, with which", RTTsPerConnection),
	}
	if rem != nil {
		m.Notes = append(m.Notes, fmt.Sprintf("remote host: the servers ran on %s (pqrepro remote serve, binary sha256:%s); namespace B relayed each connection to them over the real network, so a handshake crossed its emulated link, then that network; server_ns is the remote server's, its accept time this host's", rem.srv.Host.Dest(), rem.srv.Dep.SHA256))
	}
	return m, attempts, oks
}

// countHandshakes counts the recorded attempts, those that succeeded, and
// the failures by scenario, round and group (measured.failures).
func countHandshakes(rows []netdata.Row) (attempts, oks int, failures map[string]map[string]map[string]int) {
	failures = map[string]map[string]map[string]int{}
	for _, row := range rows {
		attempts++
		if row.OK {
			oks++
			continue
		}
		f := failures[row.Scenario]
		if f == nil {
			f = map[string]map[string]int{}
			failures[row.Scenario] = f
		}
		rk := strconv.Itoa(row.Round)
		if f[rk] == nil {
			f[rk] = map[string]int{}
		}
		f[rk][row.Group]++
	}
	return attempts, oks, failures
}
