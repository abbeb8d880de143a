// Package quiet samples the machine before and during a recorded run and
// says whether the run was measured on a quiet machine. That is, the load
// average (/proc/loadavg), the CPU time of processes that are not the
// experiment's (/proc/stat against /proc/[pid]/stat), the time the
// hypervisor stole (/proc/stat steal) and the CPU frequency where the
// machine shows it, as proc(5) and the kernel's cpufreq documentation
// define them. A run whose samples cross the Thresholds too often is busy;
// the runners (experiments/instruments/runlife) record the Record in
// meta.json and do not pin a busy run as a reference run unless told why.
//
// The anchors are pyperf's `system tune` / `system check` (stop other
// jobs, fix the frequency, and warn when a benchmark looks unstable) and
// Google Benchmark's warning when CPU frequency scaling is on. A quiet
// machine is necessary, not sufficient: the analysis must still treat
// the rounds of a run as its unit of replication.
//
// The experiment is the sampler's own process (Options.Self) and its
// descendants, plus the processes Options.Include names and theirs. Other
// processes' CPU is the process time of the whole machine (user, nice and
// system of /proc/stat) less the experiment's (utime+stime of its live
// processes plus cutime+cstime, the children they have reaped), so a
// compiler that starts and ends between two samples still counts.
//
// It knows no study and lives in internal/ so that both the runners and
// the paper's stage (which reads Record back from meta.json) can use it.
package quiet

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Verdicts of a Record.
const (
	Quiet   = "quiet"
	Busy    = "busy"
	Unknown = "unknown" // no sample could be taken (no /proc)
)

// Thresholds say when a sample is busy and when a run is.
//
// The defaults (DefaultThresholds) and why:
//
//   - OtherCores 0.10: other processes used more than a tenth of one core
//     over the interval. An idle Linux machine's own daemons and kernel
//     threads stay well below that (a few hundredths of a core); one
//     compiler, test binary or second run is 0.5-1 core. On the studies'
//     two-core machines the experiment keeps one or both cores busy
//     (client and server, or two emulator workers), so any competitor
//     takes its time slices from the measured handshakes.
//   - LoadPerCore 1.0: the 1-minute load average, less the cores the
//     experiment itself kept busy in the interval, above 1.0 per core (2
//     on two cores): that many runnable tasks that are not the experiment
//     could fill every core on their own. Subtracting the experiment keeps
//     a run that saturates the machine by design (Study C's emulator
//     workers, one per core) from judging itself busy. The busy reference
//     runs this check was made for showed load averages up to 17 on two
//     cores, the quiet re-run under 1.5 with the experiment running. The
//     load average lags by about a minute: after other jobs stop,
//     `uptime` must have fallen before a run starts.
//   - StealShare 0.05: the hypervisor took more than 5 % of the CPU time
//     of the interval (steal). Above that the virtual machine's host is
//     visibly contended; the drift it causes is not something a runner
//     can fix, but the run must say so.
//   - BusyShare 0.10: a run is busy when more than a tenth of its samples
//     (pre-flight included) are busy. A single burst (a cron job, a log
//     rotation) does not condemn a long run; a build running beside it
//     does. This is pyperf's stance on unstable benchmarks turned into a
//     rule: warn on what is measurable, not on a single outlier.
type Thresholds struct {
	BusyShare   float64 `json:"busy_sample_share"`
	LoadPerCore float64 `json:"load1_per_core"`
	OtherCores  float64 `json:"other_cores"`
	StealShare  float64 `json:"steal_share"`
}

// DefaultThresholds are the documented thresholds (docs/quiet.md).
var DefaultThresholds = Thresholds{BusyShare: 0.10, LoadPerCore: 1.0, OtherCores: 0.10, StealShare: 0.05}

// Clock is the sampler's time: Now stamps samples, After paces them.
type Clock interface {
	Now() time.Time
	After(time.Duration) <-chan time.Time
}

type realClock struct{}

func (realClock) Now() time.Time                         { return time.Now() }
func (realClock) After(d time.Duration) <-chan time.Time { return time.After(d) }

// Options configure a Sampler; the zero value samples this machine.
type Options struct {
	// Proc and Sys are the roots of procfs and sysfs; "" is /proc and
	// /sys. Tests point them at a fake tree.
	Proc, Sys string
	// Clock is the time; nil is the real clock.
	Clock Clock
	// Self is the experiment's main process; 0 is this process.
	Self int
	// Include, when set, names more processes of the experiment (and so
	// their descendants), for example ones started through a daemon.
	Include func() []int
	// Preflight is the pre-flight window Start blocks for, sampling every
	// PreflightEvery; 0 is 3 s every 1 s.
	Preflight, PreflightEvery time.Duration
	// Every is the interval of the samples during the run; 0 is 5 s.
	Every time.Duration
	// Thresholds; the zero value is DefaultThresholds.
	Thresholds Thresholds
	// Top is how many other processes a sample names; 0 is 3.
	Top int
	// MaxPoints bounds Record.Series: when it is full, neighbouring
	// points are merged (each then covers twice as many samples); 0 is
	// 120.
	MaxPoints int
}

func (o Options) withDefaults() Options {
	o.Proc = cmp.Or(o.Proc, "/proc")
	o.Sys = cmp.Or(o.Sys, "/sys")
	if o.Clock == nil {
		o.Clock = realClock{}
	}
	o.Self = cmp.Or(o.Self, os.Getpid())
	o.Preflight = cmp.Or(o.Preflight, 3*time.Second)
	o.PreflightEvery = cmp.Or(o.PreflightEvery, time.Second)
	o.Every = cmp.Or(o.Every, 5*time.Second)
	if o.Thresholds == (Thresholds{}) {
		o.Thresholds = DefaultThresholds
	}
	o.Top = cmp.Or(o.Top, 3)
	o.MaxPoints = max(cmp.Or(o.MaxPoints, 120), 2)
	return o
}

// Proc is another process and the CPU it used, in cores (1 = one core
// the whole time). Its reaped children's time counts as its own, so a
// build shows as its driver (make, go).
type Proc struct {
	Cores float64 `json:"cores"`
	Name  string  `json:"name"`
	PID   int     `json:"pid"`
}

func (p Proc) String() string { return fmt.Sprintf("%s %d %.2f core", p.Name, p.PID, p.Cores) }

// Sample is one interval between two readings of the machine.
type Sample struct {
	At              time.Time
	Seconds         float64    // the interval
	Load            [3]float64 // 1, 5 and 15 minute load averages at its end
	OtherCores      float64    // other processes' CPU, in cores
	ExperimentCores float64    // the experiment's CPU, in cores
	Steal           float64    // share of the interval's CPU time stolen
	FreqMinMHz      float64    // 0 when not readable
	FreqMaxMHz      float64
	Top             []Proc // the busiest other processes, at most Options.Top
	Preflight       bool
	Reasons         []string // why the sample is busy; none when it is not
}

// ExcessLoad is the 1-minute load average less the cores the experiment
// kept busy: the load it does not account for (at least 0).
func (s Sample) ExcessLoad() float64 { return max(round3(s.Load[0]-s.ExperimentCores), 0) }

// Busy reports whether the sample crossed a threshold.
func (s Sample) Busy() bool { return len(s.Reasons) > 0 }

// Line is the sample in a few words, for a progress line.
func (s Sample) Line() string {
	if s.At.IsZero() {
		return "machine: no sample yet"
	}
	return fmt.Sprintf("machine: load %.2f, other processes %.2f core, steal %.1f %%", s.Load[0], s.OtherCores, 100*s.Steal)
}

// snapshot is one reading of /proc.
type snapshot struct {
	at    time.Time
	cpu   cpuTimes
	ncpu  int
	load  [3]float64
	procs map[procKey]pidStat
	freq  []float64
}

type procKey struct {
	pid   int
	start uint64
}

// Watcher is what a run needs of a sampler; *Sampler is the real one and
// Fixed a stand-in for tests.
type Watcher interface {
	// Start takes the pre-flight samples (blocking for the window), then
	// keeps sampling in the background until Stop. It returns the
	// pre-flight's Record; it fails only when ctx ends, and then nothing
	// keeps running.
	Start(ctx context.Context) (Record, error)
	// Latest is the last sample (zero before the first).
	Latest() Sample
	// Stop ends the sampling (once; later calls return the same Record)
	// and returns the Record of every sample.
	Stop() Record
}

// Sampler samples one machine. Its methods are safe for concurrent use.
type Sampler struct {
	opt Options

	mu      sync.Mutex
	prev    *snapshot
	first   time.Time
	agg     aggregate
	latest  Sample
	started bool
	stopped bool
	final   Record
	quit    chan struct{}
	done    chan struct{}
}

// New returns a sampler; it reads nothing until Start or Sample.
func New(opt Options) *Sampler {
	opt = opt.withDefaults()
	s := &Sampler{opt: opt}
	s.agg.init(opt)
	return s
}

// Sample reads the machine once and returns the interval since the
// previous reading.
//
// The first reading only primes: it returns ok false. A /proc that
// cannot be read is an error; the sampler stays usable.
func (s *Sampler) Sample() (sm Sample, ok bool, err error) {
	return s.sample(false)
}

func (s *Sampler) sample(preflight bool) (Sample, bool, error) {
	cur, err := s.read()
	if err != nil {
		return Sample{}, false, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	prev := s.prev
	s.prev = cur
	if prev == nil {
		s.first = cur.at
		return Sample{}, false, nil
	}
	sm, ok := s.delta(prev, cur)
	if !ok {
		return Sample{}, false, nil
	}
	sm.Preflight = preflight
	sm.Reasons = s.opt.Thresholds.judge(sm, cur.ncpu)
	s.latest = sm
	s.agg.add(sm, cur.at.Sub(s.first).Seconds(), cur.ncpu)
	return sm, true, nil
}

// read takes a snapshot. Processes that vanish while /proc is listed
// are skipped.
func (s *Sampler) read() (*snapshot, error) {
	at := s.opt.Clock.Now()
	b, err := os.ReadFile(filepath.Join(s.opt.Proc, "stat"))
	if err != nil {
		return nil, fmt.Errorf("quiet: %w", err)
	}
	cpu, ncpu, err := parseStat(b)
	if err != nil {
		return nil, fmt.Errorf("quiet: %w", err)
	}
	snap := &snapshot{at: at, cpu: cpu, ncpu: ncpu, procs: map[procKey]pidStat{}}
	if b, err := os.ReadFile(filepath.Join(s.opt.Proc, "loadavg")); err == nil {
		snap.load, _ = parseLoadavg(b)
	}
	ents, err := os.ReadDir(s.opt.Proc)
	if err != nil {
		return nil, fmt.Errorf("quiet: %w", err)
	}
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid <= 0 {
			continue
		}
		b, err := os.ReadFile(filepath.Join(s.opt.Proc, e.Name(), "stat"))
		if err != nil {
			continue // gone, or not ours to read
		}
		if p, err := parsePidStat(b); err == nil {
			snap.procs[procKey{pid, p.start}] = p
		}
	}
	snap.freq, _ = readFreq(s.opt.Proc, s.opt.Sys)
	return snap, nil
}

// experiment returns the PIDs of the experiment in snap: Self, Include,
// the processes registered with IncludeProcesses, and all their
// descendants.
func (s *Sampler) experiment(snap *snapshot) map[int]bool {
	children := map[int][]int{}
	for k, p := range snap.procs {
		children[p.ppid] = append(children[p.ppid], k.pid)
	}
	roots := []int{s.opt.Self}
	if s.opt.Include != nil {
		roots = append(roots, s.opt.Include()...)
	}
	roots = append(roots, daemonProcesses()...)
	in := map[int]bool{}
	for len(roots) > 0 {
		pid := roots[len(roots)-1]
		roots = roots[:len(roots)-1]
		if in[pid] {
			continue
		}
		in[pid] = true
		roots = append(roots, children[pid]...)
	}
	return in
}

func (s *Sampler) delta(prev, cur *snapshot) (Sample, bool) {
	total := float64(sub(cur.cpu.total(), prev.cpu.total()))
	if total <= 0 {
		return Sample{}, false
	}
	perCPU := total / float64(cur.ncpu) // ticks of wall time in the interval
	// The experiment's cumulative time at each reading: live processes'
	// own time plus what they collected from reaped children. A child
	// reaped in between leaves prev's sum and enters its parent's.
	exp := func(snap *snapshot, in map[int]bool) uint64 {
		var t uint64
		for k, p := range snap.procs {
			if in[k.pid] {
				t += p.ticks + p.child
			}
		}
		return t
	}
	curIn, prevIn := s.experiment(cur), s.experiment(prev)
	expTicks := float64(sub(exp(cur, curIn), exp(prev, prevIn)))
	procTicks := float64(sub(cur.cpu.process(), prev.cpu.process()))
	sm := Sample{
		At:              cur.at,
		Seconds:         cur.at.Sub(prev.at).Seconds(),
		Load:            cur.load,
		OtherCores:      round3(max(procTicks-expTicks, 0) / perCPU),
		ExperimentCores: round3(min(expTicks, procTicks) / perCPU),
		Steal:           round3(float64(sub(cur.cpu.steal, prev.cpu.steal)) / total),
	}
	if len(cur.freq) > 0 {
		sm.FreqMinMHz, sm.FreqMaxMHz = round3(slices.Min(cur.freq)), round3(slices.Max(cur.freq))
	}
	var top []Proc
	for k, p := range cur.procs {
		if curIn[k.pid] {
			continue
		}
		used := p.ticks + p.child
		if q, ok := prev.procs[k]; ok {
			used = sub(used, q.ticks+q.child)
		}
		if used > 0 {
			top = append(top, Proc{PID: k.pid, Name: p.comm, Cores: round3(float64(used) / perCPU)})
		}
	}
	slices.SortFunc(top, func(a, b Proc) int {
		return cmp.Or(cmp.Compare(b.Cores, a.Cores), cmp.Compare(a.PID, b.PID))
	})
	sm.Top = top[:min(len(top), s.opt.Top)]
	return sm, true
}

// judge returns why a sample is busy.
func (t Thresholds) judge(sm Sample, cores int) []string {
	var r []string
	if sm.OtherCores > t.OtherCores {
		r = append(r, ReasonOther)
	}
	if sm.ExcessLoad() > t.LoadPerCore*float64(cores) {
		r = append(r, ReasonLoad)
	}
	if sm.Steal > t.StealShare {
		r = append(r, ReasonSteal)
	}
	return r
}

// The criteria a sample can fail, as Sample.Reasons names them.
const (
	ReasonOther = "other_cores"
	ReasonLoad  = "load1"
	ReasonSteal = "steal"
)

// Start implements Watcher.
//
// It primes, samples every PreflightEvery for the Preflight window,
// then samples every Every in a goroutine that Stop (or the end of ctx)
// ends.
func (s *Sampler) Start(ctx context.Context) (Record, error) {
	s.mu.Lock()
	if s.started {
		s.mu.Unlock()
		return Record{}, fmt.Errorf("quiet: sampler started twice")
	}
	s.started = true
	s.quit, s.done = make(chan struct{}), make(chan struct{})
	s.mu.Unlock()
	s.sample(true) // prime; an unreadable /proc gives an Unknown record
	n := max(int(s.opt.Preflight/s.opt.PreflightEvery), 1)
	for range n {
		select {
		case <-ctx.Done():
			close(s.done)
			s.Stop()
			return Record{}, ctx.Err()
		case <-s.opt.Clock.After(s.opt.PreflightEvery):
		}
		s.sample(true)
	}
	pre := s.Record()
	go s.loop(ctx)
	return pre, nil
}

func (s *Sampler) loop(ctx context.Context) {
	defer close(s.done)
	for {
		select {
		case <-ctx.Done():
			return
		case <-s.quit:
			return
		case <-s.opt.Clock.After(s.opt.Every):
			s.sample(false)
		}
	}
}

// Latest implements Watcher.
func (s *Sampler) Latest() Sample {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.latest
}

// Stop implements Watcher: it ends the goroutine, takes a last sample
// (the tail since the previous one) and returns the Record.
func (s *Sampler) Stop() Record {
	s.mu.Lock()
	if s.stopped {
		defer s.mu.Unlock()
		return s.final
	}
	s.stopped = true
	quit, done := s.quit, s.done
	s.mu.Unlock()
	if quit != nil {
		close(quit)
		<-done
		s.sample(false)
	}
	rec := s.Record()
	s.mu.Lock()
	s.final = rec
	s.mu.Unlock()
	return rec
}

// Record is the summary of every sample so far.
func (s *Sampler) Record() Record {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.agg.record()
}

func sub(a, b uint64) uint64 {
	if a < b {
		return 0 // a counter that went back (a reused PID, a hot-unplugged CPU)
	}
	return a - b
}

func round3(v float64) float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return 0
	}
	return math.Round(v*1000) / 1000
}

// readFreq reads the CPUs' current frequencies in MHz. It reads cpufreq's
// scaling_cur_freq (kHz) where the kernel exposes it, else /proc/cpuinfo's
// "cpu MHz"; the second result names the source ("" when neither).
func readFreq(proc, sys string) ([]float64, string) {
	files, _ := filepath.Glob(filepath.Join(sys, "devices/system/cpu/cpu[0-9]*/cpufreq/scaling_cur_freq"))
	var out []float64
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		if khz, err := strconv.ParseFloat(strings.TrimSpace(string(b)), 64); err == nil && khz > 0 {
			out = append(out, khz/1000)
		}
	}
	if len(out) > 0 {
		return out, FreqSysfs
	}
	if b, err := os.ReadFile(filepath.Join(proc, "cpuinfo")); err == nil {
		if out = parseCPUInfoMHz(b); len(out) > 0 {
			return out, FreqCPUInfo
		}
	}
	return nil, ""
}

// Sources of Record.Frequency.
const (
	FreqSysfs   = "cpufreq scaling_cur_freq"
	FreqCPUInfo = "/proc/cpuinfo cpu MHz"
	FreqNone    = "not readable"
)

// readGovernor returns the cpufreq scaling governors in use, sorted and
// joined, or FreqNone.
func readGovernor(sys string) string {
	files, _ := filepath.Glob(filepath.Join(sys, "devices/system/cpu/cpu[0-9]*/cpufreq/scaling_governor"))
	var gs []string
	for _, f := range files {
		if b, err := os.ReadFile(f); err == nil {
			gs = append(gs, strings.TrimSpace(string(b)))
		}
	}
	if len(gs) == 0 {
		return FreqNone
	}
	slices.Sort(gs)
	return strings.Join(slices.Compact(gs), ",")
}
