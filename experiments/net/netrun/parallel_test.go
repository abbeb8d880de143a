package netrun

import (
	"context"
	"crypto/tls"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"pqrepro/datasets/netdata"
	"pqrepro/experiments/instruments/runlife"
	"pqrepro/internal/provenance"
)

// twoScenarioSpec has two scenarios x one round x two groups: four series.
func twoScenarioSpec(parallel int, rounds string) string {
	s := tinySpec(0, "5000", rounds)
	s = strings.Replace(s, "[profiles.test]", `[scenarios.tiny2]
rtt_ms = 8.0
jitter_ms = 0.5
loss_pct = 0.0
rate = "50mbit"
queue_bytes = 200000
seed = 8
[profiles.test]`, 1)
	s = strings.Replace(s, `scenarios = ["tiny"]`, `scenarios = ["tiny", "tiny2"]`+"\nparallel_series = "+strconv.Itoa(parallel), 1)
	return s
}

// TestRunParallelMatchesSerial runs the same spec one series at a time and
// four at once: the datasets must have the same rows in the same order
// (scenario, round, group, seq, index), every link must be gone, and the
// parallel run's meta.json must show the series overlapping.
func TestRunParallelMatchesSerial(t *testing.T) {
	needRoot(t)
	keys := map[int][]string{}
	for _, par := range []int{1, 4} {
		cfg, log := tree(t, twoScenarioSpec(par, "[10]"))
		cfg.CaptureInRepoMax = -1 // the content-store path of the runner
		start := time.Now()
		if _, err := Run(context.Background(), cfg); err != nil {
			t.Fatalf("parallel %d: Run: %v\n%s", par, err, log)
		}
		t.Logf("parallel %d: wall %v", par, time.Since(start))
		if l := leftovers(t); len(l) > 0 {
			t.Fatalf("parallel %d: namespaces left behind: %v", par, l)
		}
		dirs := runDirs(t, cfg)
		if len(dirs) != 1 {
			t.Fatalf("data/net holds %v", dirs)
		}
		dir := filepath.Join(cfg.Root, "data", Study, dirs[0])
		rows := readRows(t, filepath.Join(dir, netdata.RecordsFile))
		if len(rows) != 1+40 {
			t.Fatalf("parallel %d: %d lines, want header + 40", par, len(rows))
		}
		// In process with Go 1.27.3: the header of before the toolchain
		// column (netdata.ColumnsV1), else the one with it.
		want := netdata.Columns
		if runtime.Version() == netdata.LegacyToolchain {
			want = netdata.ColumnsV1
		}
		if !slices.Equal(rows[0], want) {
			t.Errorf("header %v, want %v", rows[0], want)
		}
		for _, r := range rows[1:] {
			if r[6] != "true" || r[9] == "" {
				t.Errorf("parallel %d: row %v: want ok with a capture", par, r)
			}
			keys[par] = append(keys[par], strings.Join(r[:5], ","))
		}
		m, err := provenance.Read(dir)
		if err != nil {
			t.Fatal(err)
		}
		sched, _ := m.Measured["schedule"].(map[string]any)
		series, _ := sched["series"].([]any)
		if len(series) != 4 || int(sched["parallel_series"].(float64)) != par {
			t.Fatalf("parallel %d: measured.schedule = %v", par, sched)
		}
		most := 0.0
		for _, x := range series {
			most = max(most, x.(map[string]any)["max_concurrent"].(float64))
		}
		if par == 1 && most != 1 || par == 4 && most < 2 {
			t.Errorf("parallel %d: at most %v series handshaking at once", par, most)
		}
		if r, _ := m.Measured["wall_to_scheduled_min_ratio"].(float64); r < 1 {
			t.Errorf("parallel %d: wall / scheduled minimum %v, want >= 1", par, r)
		}
		for _, id := range []string{"tiny-10-X25519", "tiny2-10-X25519MLKEM768"} {
			if err := cfg.Store.Check(m.Files["captures/"+id+".pcapng"]); err != nil {
				t.Errorf("capture of %s: %v", id, err)
			}
			if m.Seeds["link-"+id] == 0 {
				t.Errorf("no seed link-%s in %v", id, m.Seeds)
			}
		}
	}
	if !slices.Equal(keys[1], keys[4]) {
		t.Errorf("row order differs:\nserial   %v\nparallel %v", keys[1], keys[4])
	}
	want := []string{"tiny,10,X25519,0,0", "tiny,10,X25519,9,9", "tiny,10,X25519MLKEM768,0,10", "tiny2,10,X25519,0,0"}
	for _, w := range want {
		if !slices.Contains(keys[4], w) {
			t.Errorf("no row %s", w)
		}
	}
	if keys[4][0] != want[0] || keys[4][10] != want[2] || keys[4][20] != want[3] {
		t.Errorf("rows not in record order: %v", keys[4])
	}
}

func TestSeriesSeed(t *testing.T) {
	// Golden values: a change of the formula changes every loss pattern.
	if got := SeriesSeed(103, 10000, tls.X25519); got != SeriesSeed(103, 10000, tls.X25519) {
		t.Fatal("not deterministic")
	}
	seen := map[uint64]string{}
	for _, sc := range []uint64{101, 102, 103} {
		for _, r := range []int{1000, 5000, 10000} {
			for _, g := range []tls.CurveID{0, tls.X25519, tls.X25519MLKEM768} {
				s := SeriesSeed(sc, r, g)
				id := strconv.Itoa(int(sc)) + "/" + strconv.Itoa(r) + "/" + g.String()
				if prev, ok := seen[s]; ok {
					t.Errorf("%s and %s share seed %d", prev, id, s)
				}
				seen[s] = id
			}
		}
	}
	if got, want := mix64(0), uint64(0); got != want {
		t.Errorf("mix64(0) = %d, want %d", got, want)
	}
	// SplitMix64's first output for state 0 is mix64(0x9e3779b97f4a7c15)
	// = 0xe220a8397b1dcdaf (the reference implementation's known value).
	if got, want := mix64(0x9e3779b97f4a7c15), uint64(0xe220a8397b1dcdaf); got != want {
		t.Errorf("mix64 = %#x, want %#x", got, want)
	}
}

func TestSchedule(t *testing.T) {
	mk := func(id string, excl bool) Series { return Series{ID: id, Exclusive: excl} }
	s := func(d ...int) []time.Duration {
		out := make([]time.Duration, len(d))
		for i, x := range d {
			out[i] = time.Duration(x) * time.Second
		}
		return out
	}
	for _, tc := range []struct {
		name     string
		series   []Series
		dur      []time.Duration
		parallel int
		order    []int
		makespan time.Duration
	}{
		{"serial keeps record order", []Series{mk("a", false), mk("b", true), mk("c", false)}, s(1, 2, 3), 1, []int{0, 1, 2}, 6 * time.Second},
		{"exclusive first then longest first", []Series{mk("a", false), mk("b", true), mk("c", false), mk("d", false)}, s(1, 2, 3, 2), 2, []int{1, 2, 3, 0}, 5 * time.Second},
		{"critical path", []Series{mk("a", false), mk("b", false), mk("c", false)}, s(10, 1, 1), 6, []int{0, 1, 2}, 10 * time.Second},
		{"exclusive alone", []Series{mk("x", true), mk("y", true)}, s(3, 4), 6, []int{0, 1}, 7 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			order := dispatchOrder(tc.series, tc.dur, tc.parallel)
			if !slices.Equal(order, tc.order) {
				t.Errorf("order %v, want %v", order, tc.order)
			}
			start, end, ms := schedule(tc.series, order, tc.dur, tc.parallel, 0)
			if ms != tc.makespan {
				t.Errorf("makespan %v, want %v", ms, tc.makespan)
			}
			// An exclusive series overlaps nothing; at most parallel run at once.
			for i := range tc.series {
				n := 0
				for j := range tc.series {
					if start[j] <= start[i] && end[j] > start[i] {
						n++
						if j != i && (tc.series[i].Exclusive || tc.series[j].Exclusive) {
							t.Errorf("%s overlaps exclusive %s", tc.series[j].ID, tc.series[i].ID)
						}
					}
				}
				if n > max(1, tc.parallel) {
					t.Errorf("%d series at once at %v", n, start[i])
				}
			}
		})
	}
}

func TestPlanSeries(t *testing.T) {
	p := filepath.Join(t.TempDir(), "net.toml")
	os.WriteFile(p, []byte(twoScenarioSpec(4, "[10, 20]")), 0o644)
	s, err := LoadSpec(p)
	if err != nil {
		t.Fatal(err)
	}
	plan, err := s.Plan("test")
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, se := range plan.Series() {
		ids = append(ids, se.ID+"@"+strconv.Itoa(se.Offset))
		if want := SeriesSeed(s.Scenarios[plan.Scenarios[se.Scenario].Name].Seed, se.Round, plan.Groups[se.Groups[0]]); se.Link.Seed != want {
			t.Errorf("%s: seed %d, want %d", se.ID, se.Link.Seed, want)
		}
	}
	want := []string{"tiny-10-X25519@0", "tiny-10-X25519MLKEM768@10", "tiny-20-X25519@20", "tiny-20-X25519MLKEM768@40",
		"tiny2-10-X25519@0", "tiny2-10-X25519MLKEM768@10", "tiny2-20-X25519@20", "tiny2-20-X25519MLKEM768@40"}
	if !slices.Equal(ids, want) {
		t.Errorf("series %v\nwant %v", ids, want)
	}
	plan.Order = Interleaved
	if got := plan.Series(); len(got) != 4 || got[1].ID != "tiny-20" || got[1].Offset != 20 || len(got[1].Groups) != 2 {
		t.Errorf("interleaved series %+v", got)
	}
}

// TestProgressETA checks the ETA replays the schedule on the work left:
// with nothing done it is the plan's makespan, and it shrinks as series
// finish.
func TestProgressETA(t *testing.T) {
	p := filepath.Join(t.TempDir(), "net.toml")
	os.WriteFile(p, []byte(twoScenarioSpec(4, "[10]")), 0o644)
	s, err := LoadSpec(p)
	if err != nil {
		t.Fatal(err)
	}
	est, err := Estimate(s, "test")
	if err != nil {
		t.Fatal(err)
	}
	plan, _ := s.Plan("test")
	var log strings.Builder
	r := &runner{cfg: RunConfig{Config: runlife.Config{Log: &log}, ProgressEvery: time.Nanosecond}, plan: plan, est: est, started: time.Now(), progs: make([]seriesProgress, len(est.Series))}
	eta := func() time.Duration {
		lines := strings.Split(strings.TrimSpace(log.String()), "\n")
		last := lines[len(lines)-1]
		i := strings.Index(last, "ETA ")
		f := strings.Fields(last[i+4:])
		d, err := time.ParseDuration(f[0])
		if err != nil {
			t.Fatalf("line %q: %v", last, err)
		}
		return d
	}
	r.progress(0)
	if got := eta(); got > est.Expected+time.Second || got < est.Expected-time.Second {
		t.Errorf("ETA with nothing done %v, want the plan's %v", got, est.Expected)
	}
	for i := range r.progs {
		if i != 3 {
			r.progs[i].finished = true
		}
	}
	r.progress(3)
	if got := eta(); got > est.Series[3].Expected+time.Second {
		t.Errorf("ETA with one series left %v, want at most its %v", got, est.Series[3].Expected)
	}
}

// TestRunInterleavedParallel: with order = "interleaved" a series is one
// (scenario, round) with both groups on its link; rows still come out
// sorted by scenario, round, group, seq, and index keeps the time order
// within the scenario (a permutation of 0..2n-1).
func TestRunInterleavedParallel(t *testing.T) {
	needRoot(t)
	cfg, log := tree(t, strings.Replace(twoScenarioSpec(2, "[6]"), `order = "serial"`, `order = "interleaved"`, 1))
	if _, err := Run(context.Background(), cfg); err != nil {
		t.Fatalf("Run: %v\n%s", err, log)
	}
	if l := leftovers(t); len(l) > 0 {
		t.Fatalf("namespaces left behind: %v", l)
	}
	dirs := runDirs(t, cfg)
	rows := readRows(t, filepath.Join(cfg.Root, "data", Study, dirs[0], netdata.RecordsFile))
	if len(rows) != 1+24 {
		t.Fatalf("%d lines, want header + 24", len(rows))
	}
	var keys []string
	index := map[string][]int{}
	for _, r := range rows[1:] {
		seq, _ := strconv.Atoi(r[3])
		keys = append(keys, fmt.Sprintf("%s,%s,%02d", r[0], r[2], seq))
		i, _ := strconv.Atoi(r[4])
		index[r[0]] = append(index[r[0]], i)
		if r[6] != "true" || r[9] == "" {
			t.Errorf("row %v: want ok with a capture", r)
		}
	}
	if !slices.IsSorted(keys) {
		t.Errorf("rows not sorted by scenario, group, seq: %v", keys)
	}
	for sc, idx := range index {
		slices.Sort(idx)
		for i, v := range idx {
			if v != i {
				t.Errorf("%s: index column %v is not a permutation of 0..%d", sc, idx, len(idx)-1)
				break
			}
		}
	}
}
