package netrun

import (
	"time"
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
			groups[k] = r.plan.Groups[g].String()
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
