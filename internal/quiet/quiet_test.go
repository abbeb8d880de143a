package quiet

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"
)

// stepClock is a Clock the test drives: Now moves by the interval each
// time After is asked, and After fires at once (or, when hold is set,
// only when the test sends on tick).
type stepClock struct {
	now  time.Time
	hold bool
	tick chan time.Time
}

func (c *stepClock) Now() time.Time { return c.now }
func (c *stepClock) After(d time.Duration) <-chan time.Time {
	if c.hold {
		return c.tick
	}
	c.now = c.now.Add(d)
	ch := make(chan time.Time, 1)
	ch <- c.now
	return ch
}

var t0 = time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)

// pair samples the fake trees testdata/proc/<name>-0 and -1, five seconds
// apart, with the experiment rooted at PID 100.
func pair(t *testing.T, name string, opt Options) (*Sampler, Sample) {
	t.Helper()
	clk := &stepClock{now: t0}
	opt.Proc, opt.Sys, opt.Self, opt.Clock = filepath.Join("testdata", "proc", name+"-0"), filepath.Join("testdata", "nosys"), 100, clk
	s := New(opt)
	if _, ok, err := s.Sample(); ok || err != nil {
		t.Fatalf("first sample: ok %v, err %v; want a priming read", ok, err)
	}
	s.opt.Proc = filepath.Join("testdata", "proc", name+"-1")
	clk.now = clk.now.Add(5 * time.Second)
	sm, ok, err := s.Sample()
	if !ok || err != nil {
		t.Fatalf("second sample: ok %v, err %v", ok, err)
	}
	return s, sm
}

func TestSampleBusy(t *testing.T) {
	s, sm := pair(t, "busy", Options{})
	// 1000 ticks over 2 CPUs: 500 ticks are one core. Process time 662,
	// the experiment's 250 (PID 100: +100 own, +80 reaped from 102 which
	// had 30 at t0; PID 101: +100), the rest 412.
	want := Sample{At: t0.Add(5 * time.Second), Seconds: 5, Load: [3]float64{4.5, 0, 0}, OtherCores: 0.824, ExperimentCores: 0.5,
		Steal: 0.02, FreqMinMHz: 2100.5, FreqMaxMHz: 2299.998,
		Top:     []Proc{{Cores: 0.8, Name: "cc1", PID: 200}, {Cores: 0.02, Name: "my (odd) sh", PID: 300}, {Cores: 0.004, Name: "systemd", PID: 1}},
		Reasons: []string{ReasonOther, ReasonLoad}}
	if !reflect.DeepEqual(sm, want) {
		t.Errorf("sample\n got %+v\nwant %+v", sm, want)
	}
	rec := s.Record()
	if rec.Verdict != Busy || rec.BusySamples != 1 || rec.Samples != 1 || rec.Cores != 2 {
		t.Fatalf("record %+v, want busy 1 of 1 on 2 cores", rec)
	}
	joined := strings.Join(rec.Reasons, "; ")
	for _, w := range []string{"other processes above 0.10 core in 1 of 1 samples (max 0.82 core)", "1-minute load beyond the experiment's above 2.0", "1 of 1 samples busy"} {
		if !strings.Contains(joined, w) {
			t.Errorf("reasons %q lack %q", joined, w)
		}
	}
	if rec.Frequency != (Frequency{Max: 2299.998, Min: 2100.5, Source: FreqCPUInfo}) || rec.Governor != FreqNone {
		t.Errorf("frequency %+v governor %q", rec.Frequency, rec.Governor)
	}
	line := rec.Line()
	for _, w := range []string{"BUSY", "cc1 200 0.80 core", "stop other jobs; see docs/quiet.md"} {
		if !strings.Contains(line, w) {
			t.Errorf("line %q lacks %q", line, w)
		}
	}
}

func TestSampleQuiet(t *testing.T) {
	s, sm := pair(t, "quiet", Options{})
	if sm.OtherCores != 0.004 || sm.ExperimentCores != 0.5 || sm.Busy() {
		t.Errorf("sample %+v, want 0.004 other core, 0.5 experiment, not busy", sm)
	}
	rec := s.Record()
	if rec.Verdict != Quiet || len(rec.Reasons) != 0 {
		t.Errorf("record %+v, want quiet without reasons", rec)
	}
	if l := rec.Line(); !strings.HasPrefix(l, "QUIET: ") || strings.Contains(l, "docs/quiet.md") {
		t.Errorf("line %q", l)
	}
}

// The experiment named by Include (and its descendants) is not "other".
func TestInclude(t *testing.T) {
	_, sm := pair(t, "busy", Options{Include: func() []int { return []int{200} }})
	if sm.OtherCores != 0.024 || sm.ExperimentCores != 1.3 {
		t.Errorf("with cc1 included: other %v, experiment %v; want 0.024, 1.3", sm.OtherCores, sm.ExperimentCores)
	}
}

// Processes registered with IncludeProcesses (a container's shim) count
// as the experiment's like Include's, until they are removed.
func TestIncludeProcesses(t *testing.T) {
	remove := IncludeProcesses(func() []int { return []int{200} })
	_, sm := pair(t, "busy", Options{})
	remove()
	if sm.OtherCores != 0.024 || sm.ExperimentCores != 1.3 {
		t.Errorf("with cc1 registered: other %v, experiment %v; want 0.024, 1.3", sm.OtherCores, sm.ExperimentCores)
	}
	if _, after := pair(t, "busy", Options{}); after.OtherCores == 0.024 {
		t.Errorf("still counted after remove: other %v", after.OtherCores)
	}
}

func TestThresholdsAndShare(t *testing.T) {
	th := DefaultThresholds
	cases := []struct {
		name string
		sm   Sample
		want []string
	}{
		{"idle", Sample{Load: [3]float64{0.5}, OtherCores: 0.02}, nil},
		{"at the bounds", Sample{Load: [3]float64{2}, OtherCores: 0.10, Steal: 0.05}, nil},
		{"the experiment's own load", Sample{Load: [3]float64{3.9}, ExperimentCores: 1.9}, nil},
		{"other", Sample{OtherCores: 0.11}, []string{ReasonOther}},
		{"load", Sample{Load: [3]float64{2.01}}, []string{ReasonLoad}},
		{"load beyond the experiment's", Sample{Load: [3]float64{4}, ExperimentCores: 1.9}, []string{ReasonLoad}},
		{"steal", Sample{Steal: 0.051}, []string{ReasonSteal}},
	}
	for _, c := range cases {
		if got := th.judge(c.sm, 2); !slices.Equal(got, c.want) {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
	// 1 busy sample in 10 is 10 %: not more than BusyShare, quiet; 2 are busy.
	for busy, want := range map[int]string{1: Quiet, 2: Busy} {
		a := aggregate{}
		a.init(Options{Thresholds: th, MaxPoints: 120, Top: 3, Sys: "testdata/nosys", Proc: "testdata/nosys"})
		for i := range 10 {
			sm := Sample{OtherCores: 0.01}
			if i < busy {
				sm.Reasons = []string{ReasonOther}
			}
			a.add(sm, float64(i), 2)
		}
		if got := a.record().Verdict; got != want {
			t.Errorf("%d of 10 busy: %s, want %s", busy, got, want)
		}
	}
}

// The series stays within MaxPoints however long the run, and its
// points keep every sample's maximum.
func TestSeriesBounded(t *testing.T) {
	a := aggregate{}
	a.init(Options{Thresholds: DefaultThresholds, MaxPoints: 8, Top: 3, Sys: "testdata/nosys", Proc: "testdata/nosys"})
	for i := range 1000 {
		a.add(Sample{Load: [3]float64{float64(i % 7)}, OtherCores: float64(i) / 1000}, float64(i), 2)
	}
	r := a.record()
	if len(r.Series) > 8 || r.Samples != 1000 {
		t.Fatalf("%d points for %d samples, want at most 8", len(r.Series), r.Samples)
	}
	total := 0
	for _, p := range r.Series {
		total += p.n
	}
	if total != 1000 || r.Series[len(r.Series)-1].OtherCores != 0.999 || r.Series[len(r.Series)-1].T != 999 {
		t.Errorf("points cover %d samples, last %+v", total, r.Series[len(r.Series)-1])
	}
}

func TestUnreadableProc(t *testing.T) {
	s := New(Options{Proc: t.TempDir(), Sys: "testdata/nosys", Clock: &stepClock{now: t0}})
	if _, _, err := s.Sample(); err == nil {
		t.Fatal("Sample of an empty /proc: no error")
	}
	rec, err := s.Start(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if rec.Verdict != Unknown || len(rec.Reasons) != 1 {
		t.Errorf("record %+v, want unknown with a reason", rec)
	}
	if rec := s.Stop(); rec.Verdict != Unknown {
		t.Errorf("after Stop: %s", rec.Verdict)
	}
}

// meta.json keeps its keys sorted: Record's fields are declared in the
// order of their JSON names.
func TestRecordKeysSorted(t *testing.T) {
	var check func(t reflect.Type)
	check = func(typ reflect.Type) {
		var names []string
		for f := range typ.Fields() {
			if !f.IsExported() {
				continue
			}
			names = append(names, strings.Split(f.Tag.Get("json"), ",")[0])
			switch ft := f.Type; {
			case ft.Kind() == reflect.Struct:
				check(ft)
			case ft.Kind() == reflect.Slice && ft.Elem().Kind() == reflect.Struct:
				check(ft.Elem())
			}
		}
		if !slices.IsSorted(names) {
			t.Errorf("%s: JSON keys %v are not sorted", typ.Name(), names)
		}
	}
	check(reflect.TypeFor[Record]())
	b, err := json.Marshal(NewFixed(Busy).Rec)
	if err != nil || !strings.Contains(string(b), `"verdict":"busy"`) {
		t.Errorf("encoded %s, %v", b, err)
	}
}

// Interrupted during the pre-flight, Start returns ctx's error and leaves
// no goroutine; cancelled while sampling in the background, the goroutine
// ends and Stop still returns the record. The sampler writes no file.
func TestInterruption(t *testing.T) {
	dir := t.TempDir()
	before := runtime.NumGoroutine()
	clk := &stepClock{now: t0, hold: true, tick: make(chan time.Time)}
	s := New(Options{Proc: "testdata/proc/quiet-0", Sys: "testdata/nosys", Self: 100, Clock: clk})
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error)
	go func() { _, err := s.Start(ctx); errc <- err }()
	clk.tick <- t0.Add(time.Second) // one pre-flight sample, then Ctrl-C
	cancel()
	if err := <-errc; err != context.Canceled {
		t.Fatalf("Start: %v, want context.Canceled", err)
	}
	s.Stop()
	waitGoroutines(t, before)

	clk2 := &stepClock{now: t0}
	s2 := New(Options{Proc: "testdata/proc/quiet-0", Sys: "testdata/nosys", Self: 100, Clock: clk2, Preflight: 2 * time.Second})
	ctx2, cancel2 := context.WithCancel(context.Background())
	clk2.hold, clk2.tick = false, nil
	if _, err := s2.Start(ctx2); err != nil {
		t.Fatal(err)
	}
	cancel2()
	rec := s2.Stop()
	if rec.Verdict != Unknown { // a tree that never changes has no interval
		t.Errorf("verdict %s, want unknown", rec.Verdict)
	}
	if again := s2.Stop(); !reflect.DeepEqual(again, rec) {
		t.Errorf("second Stop differs")
	}
	waitGoroutines(t, before)
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("files left: %v", ents)
	}
}

// waitGoroutines lets exited goroutines be reaped, then checks none of
// the sampler's is left.
func waitGoroutines(t *testing.T, want int) {
	t.Helper()
	for range 100 {
		if runtime.NumGoroutine() <= want {
			return
		}
		runtime.Gosched()
		time.Sleep(time.Millisecond)
	}
	t.Errorf("%d goroutines, want at most %d", runtime.NumGoroutine(), want)
}

// On this machine a pre-flight returns sane figures: some load, other
// processes' CPU between none and every core, a steal share and
// frequency in range, and the experiment (this test) named nowhere in
// the top list.
func TestRealMachine(t *testing.T) {
	if _, err := os.Stat("/proc/stat"); err != nil {
		t.Skip("no /proc")
	}
	s := New(Options{Preflight: 1 * time.Second, PreflightEvery: 500 * time.Millisecond})
	rec, err := s.Start(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	fin := s.Stop()
	t.Logf("pre-flight: %s", rec.Line())
	if rec.Samples < 1 || fin.Samples < rec.Samples {
		t.Fatalf("samples: pre-flight %d, final %d", rec.Samples, fin.Samples)
	}
	cores := runtime.NumCPU()
	if rec.Cores != cores {
		t.Errorf("cores %d, want %d", rec.Cores, cores)
	}
	if rec.Load1.Max < 0 || rec.Load1.Max > 1000 || rec.OtherCores.Max < 0 || rec.OtherCores.Max > float64(cores)+0.01 ||
		rec.Steal.Max < 0 || rec.Steal.Max > 1 {
		t.Errorf("figures out of range: %+v", rec)
	}
	if rec.Frequency.Source != FreqNone && (rec.Frequency.Min <= 0 || rec.Frequency.Max < rec.Frequency.Min) {
		t.Errorf("frequency %+v", rec.Frequency)
	}
	for _, p := range rec.TopOther {
		if p.PID == os.Getpid() {
			t.Errorf("the experiment itself is listed as other: %+v", p)
		}
	}
	if rec.Verdict != Quiet && rec.Verdict != Busy {
		t.Errorf("verdict %q", rec.Verdict)
	}
}
