package quiet

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// Record is what meta.json holds under measured.machine: the thresholds,
// a summary of every sample, a bounded series and the verdict. Its JSON
// keys are in sorted order, like the rest of meta.json (the fields are
// declared so; a test checks it).
type Record struct {
	// BusySamples counts the samples that crossed a threshold.
	BusySamples int `json:"busy_samples"`
	// Cores is the number of CPUs /proc/stat lists.
	Cores int `json:"cores"`
	// Frequency is the CPUs' frequency range over the samples.
	Frequency Frequency `json:"frequency_mhz"`
	// Governor is the cpufreq scaling governor, or "not readable" (most
	// virtual machines). Google Benchmark warns when it is not
	// "performance"; so does the pre-flight line.
	Governor string `json:"governor"`
	// Load1 is the 1-minute load average over the samples.
	Load1 Range `json:"load1"`
	// OtherCores is other processes' CPU, in cores, over the samples.
	OtherCores Range `json:"other_cores"`
	// Override is the reason given to pin a busy run anyway
	// (PQREPRO_PIN_BUSY); empty when none was given.
	Override string `json:"override,omitempty"`
	// Preflight summarises the samples before the run's work.
	Preflight Phase `json:"preflight"`
	// Reasons say, for a busy or unknown run, which thresholds were
	// crossed how often and by how much.
	Reasons []string `json:"reasons"`
	// Samples counts the samples (pre-flight included).
	Samples int `json:"samples"`
	// Series is the run's samples, merged pairwise whenever it reaches
	// Options.MaxPoints; each point covers SeriesSpan samples (the last
	// point possibly fewer).
	Series     []Point `json:"series"`
	SeriesSpan int     `json:"series_span"`
	// Steal is the share of all CPU time the hypervisor stole, over the
	// samples (mean of the samples' shares).
	Steal Range `json:"steal_share"`
	// Thresholds are the ones the verdict used.
	Thresholds Thresholds `json:"thresholds"`
	// TopOther are the other processes that used the most CPU in the
	// samples that named them, busiest first.
	TopOther []Proc `json:"top_other"`
	// Verdict is "quiet", "busy" or "unknown".
	Verdict string `json:"verdict"`
}

// Frequency is a frequency range and where it was read.
type Frequency struct {
	Max    float64 `json:"max"`
	Min    float64 `json:"min"`
	Source string  `json:"source"`
}

// Range is the maximum and the mean of a figure over samples.
type Range struct {
	Max  float64 `json:"max"`
	Mean float64 `json:"mean"`
}

// Phase is the pre-flight's part of a Record.
type Phase struct {
	BusySamples int     `json:"busy_samples"`
	Load1       float64 `json:"load1_max"`
	OtherCores  float64 `json:"other_cores_max"`
	Samples     int     `json:"samples"`
}

// Point is one point of Record.Series: T is its last sample's end in
// seconds after the first reading. Load1 and OtherCores are maxima, Steal
// the mean, Busy whether any of its samples was.
type Point struct {
	Busy       bool    `json:"busy"`
	Load1      float64 `json:"load1"`
	OtherCores float64 `json:"other_cores"`
	Steal      float64 `json:"steal"`
	T          float64 `json:"t_s"`
	n          int
}

func (p Point) merge(q Point) Point {
	n := p.n + q.n
	return Point{Busy: p.Busy || q.Busy, Load1: max(p.Load1, q.Load1), OtherCores: max(p.OtherCores, q.OtherCores),
		Steal: round3((p.Steal*float64(p.n) + q.Steal*float64(q.n)) / float64(max(n, 1))), T: q.T, n: n}
}

// aggregate accumulates samples in bounded memory.
type aggregate struct {
	opt                Options
	cores              int
	n, busy            int
	byReason           map[string]int
	worst              map[string]float64 // the largest value of each failed criterion
	pre                Phase
	load, other, steal struct{ max, sum float64 }
	fmin, fmax         float64
	fsrc               string
	governor           string
	series             []Point
	span               int
	top                map[procKey]Proc // bounded by maxTop
}

const maxTop = 64

func (a *aggregate) init(o Options) {
	a.opt, a.span = o, 1
	a.byReason, a.worst, a.top = map[string]int{}, map[string]float64{}, map[procKey]Proc{}
	_, a.fsrc = readFreq(o.Proc, o.Sys)
	a.governor = readGovernor(o.Sys)
}

func (a *aggregate) add(sm Sample, t float64, cores int) {
	a.cores = cores
	a.n++
	if sm.Busy() {
		a.busy++
	}
	for _, r := range sm.Reasons {
		a.byReason[r]++
		v := map[string]float64{ReasonOther: sm.OtherCores, ReasonLoad: sm.ExcessLoad(), ReasonSteal: sm.Steal}[r]
		a.worst[r] = max(a.worst[r], v)
	}
	if sm.Preflight {
		a.pre.Samples++
		if sm.Busy() {
			a.pre.BusySamples++
		}
		a.pre.Load1, a.pre.OtherCores = max(a.pre.Load1, sm.Load[0]), max(a.pre.OtherCores, sm.OtherCores)
	}
	for _, f := range []struct {
		acc *struct{ max, sum float64 }
		v   float64
	}{{&a.load, sm.Load[0]}, {&a.other, sm.OtherCores}, {&a.steal, sm.Steal}} {
		f.acc.max = max(f.acc.max, f.v)
		f.acc.sum += f.v
	}
	if sm.FreqMaxMHz > 0 {
		if a.fmin == 0 || sm.FreqMinMHz < a.fmin {
			a.fmin = sm.FreqMinMHz
		}
		a.fmax = max(a.fmax, sm.FreqMaxMHz)
	}
	for _, p := range sm.Top {
		k := procKey{pid: p.PID}
		q := a.top[k]
		q.PID, q.Name, q.Cores = p.PID, p.Name, max(q.Cores, p.Cores)
		a.top[k] = q
	}
	if len(a.top) > maxTop { // drop the quietest
		keys := slices.SortedFunc(maps.Keys(a.top), func(x, y procKey) int {
			return cmp.Or(cmp.Compare(a.top[x].Cores, a.top[y].Cores), cmp.Compare(y.pid, x.pid))
		})
		for _, k := range keys[:len(a.top)-maxTop] {
			delete(a.top, k)
		}
	}
	// The series: the last point fills up to span samples; when the
	// series is full, neighbours merge and span doubles.
	pt := Point{Busy: sm.Busy(), Load1: sm.Load[0], OtherCores: sm.OtherCores, Steal: sm.Steal, T: round3(t), n: 1}
	if k := len(a.series); k > 0 && a.series[k-1].n < a.span {
		a.series[k-1] = a.series[k-1].merge(pt)
		return
	}
	if len(a.series) == a.opt.MaxPoints {
		merged := a.series[:0]
		for i := 0; i < len(a.series); i += 2 {
			p := a.series[i]
			if i+1 < len(a.series) {
				p = p.merge(a.series[i+1])
			}
			merged = append(merged, p)
		}
		a.series = merged
		a.span *= 2
		if k := len(a.series); a.series[k-1].n < a.span {
			a.series[k-1] = a.series[k-1].merge(pt)
			return
		}
	}
	a.series = append(a.series, pt)
}

func (a *aggregate) record() Record {
	th := a.opt.Thresholds
	r := Record{
		BusySamples: a.busy, Cores: a.cores, Governor: a.governor, Preflight: a.pre, Samples: a.n,
		Series: slices.Clone(a.series), SeriesSpan: a.span, Thresholds: th, Reasons: []string{},
		Frequency: Frequency{Min: a.fmin, Max: a.fmax, Source: cmp.Or(a.fsrc, FreqNone)},
	}
	if r.Series == nil {
		r.Series = []Point{}
	}
	if a.n > 0 {
		n := float64(a.n)
		r.Load1 = Range{Max: round3(a.load.max), Mean: round3(a.load.sum / n)}
		r.OtherCores = Range{Max: round3(a.other.max), Mean: round3(a.other.sum / n)}
		r.Steal = Range{Max: round3(a.steal.max), Mean: round3(a.steal.sum / n)}
	}
	r.TopOther = slices.SortedFunc(maps.Values(a.top), func(x, y Proc) int {
		return cmp.Or(cmp.Compare(y.Cores, x.Cores), cmp.Compare(x.PID, y.PID))
	})
	r.TopOther = r.TopOther[:min(len(r.TopOther), a.opt.Top)]
	switch {
	case a.n == 0:
		r.Verdict = Unknown
		r.Reasons = append(r.Reasons, "no sample: the machine's /proc could not be read (or the run was shorter than one interval)")
	case float64(a.busy) > th.BusyShare*float64(a.n):
		r.Verdict = Busy
	default:
		r.Verdict = Quiet
	}
	if r.Verdict == Busy {
		what := map[string]string{
			ReasonOther: fmt.Sprintf("other processes above %.2f core", th.OtherCores),
			ReasonLoad:  fmt.Sprintf("1-minute load beyond the experiment's above %.1f (%.1f per core x %d cores)", th.LoadPerCore*float64(a.cores), th.LoadPerCore, a.cores),
			ReasonSteal: fmt.Sprintf("steal above %.0f %%", 100*th.StealShare),
		}
		unit := map[string]string{ReasonOther: " core", ReasonLoad: "", ReasonSteal: ""}
		for _, k := range []string{ReasonOther, ReasonLoad, ReasonSteal} {
			if c := a.byReason[k]; c > 0 {
				r.Reasons = append(r.Reasons, fmt.Sprintf("%s in %d of %d samples (max %.2f%s)", what[k], c, a.n, a.worst[k], unit[k]))
			}
		}
		r.Reasons = append(r.Reasons, fmt.Sprintf("%d of %d samples busy, more than %.0f %%", a.busy, a.n, 100*th.BusyShare))
	}
	return r
}

// Line is the record in one line: the verdict, the figures and the
// busiest other processes. A busy or unknown record ends with what to
// do.
func (r Record) Line() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: load %.2f max (%d cores), other processes %.2f core max / %.2f mean, steal %.1f %%",
		strings.ToUpper(r.Verdict), r.Load1.Max, r.Cores, r.OtherCores.Max, r.OtherCores.Mean, 100*r.Steal.Mean)
	if r.Frequency.Max > 0 {
		fmt.Fprintf(&b, ", %.0f-%.0f MHz", r.Frequency.Min, r.Frequency.Max)
	} else {
		b.WriteString(", frequency not readable")
	}
	fmt.Fprintf(&b, ", %d samples", r.Samples)
	if len(r.TopOther) > 0 {
		top := make([]string, len(r.TopOther))
		for i, p := range r.TopOther {
			top[i] = p.String()
		}
		fmt.Fprintf(&b, "; top other: %s", strings.Join(top, ", "))
	}
	if r.Governor != FreqNone && r.Governor != "performance" {
		fmt.Fprintf(&b, "; WARNING: CPU frequency scaling governor %s (not performance), timings may be noisy", r.Governor)
	}
	if r.Verdict != Quiet {
		fmt.Fprintf(&b, "; %s; stop other jobs; see docs/quiet.md", strings.Join(r.Reasons, "; "))
	}
	return b.String()
}
