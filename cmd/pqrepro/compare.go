package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strconv"
	"text/tabwriter"
	"time"

	"pqrepro/analysis/sample"
	"pqrepro/analysis/stats"
)

func init() {
	register("compare", "compare samples: Mann-Whitney, Kruskal-Wallis, Cliff's delta, A12, Hodges-Lehmann", runCompare)
}

// errUsage marks errors that are the caller's fault (exit status 2).
var errUsage = errors.New("usage")

// jnum is a float64 that encodes NaN and ±Inf as JSON null, so that an
// undefined statistic (the sd of one value) never breaks the document.
type jnum float64

func (v jnum) MarshalJSON() ([]byte, error) {
	f := float64(v)
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return []byte("null"), nil
	}
	return strconv.AppendFloat(nil, f, 'g', -1, 64), nil
}

type sampleJSON struct {
	Name   string `json:"name"`
	N      int    `json:"n"`
	Mean   jnum   `json:"mean"`
	SD     jnum   `json:"sd"`
	CV     jnum   `json:"cv"`
	Median jnum   `json:"median"`
	Q1     jnum   `json:"q1"`
	Q3     jnum   `json:"q3"`
	P95    jnum   `json:"p95"`
	P99    jnum   `json:"p99"`
}

type pairJSON struct {
	A               string  `json:"a"`
	B               string  `json:"b"`
	U               jnum    `json:"u"`
	P               jnum    `json:"p"`
	PHolm           jnum    `json:"p_holm"`
	PBonferroni     jnum    `json:"p_bonferroni"`
	MedianDiff      jnum    `json:"median_diff"`
	HodgesLehmann   jnum    `json:"hodges_lehmann"`
	CliffsDelta     jnum    `json:"cliffs_delta"`
	CliffsDeltaCI   [2]jnum `json:"cliffs_delta_ci"`
	CliffsMagnitude string  `json:"cliffs_magnitude"`
	A12             jnum    `json:"a12"`
	A12Magnitude    string  `json:"a12_magnitude"`
}

type kruskalJSON struct {
	H        jnum `json:"h"`
	P        jnum `json:"p"`
	Epsilon2 jnum `json:"epsilon2"`
}

// compareJSON is the --json document; its shape is fixed by issue 3.
type compareJSON struct {
	Samples []sampleJSON `json:"samples"`
	Pairs   []pairJSON   `json:"pairs"`
	Kruskal *kruskalJSON `json:"kruskal"`
}

// compareDetail holds what the plain table shows beyond the JSON.
type compareDetail struct {
	hl   []stats.HodgesLehmannResult
	boot []stats.BootstrapResult
	mwu  []stats.MannWhitneyResult
}

// parseInterspersed parses flags that may appear before, between or after
// the positional arguments (Go's flag package stops at the first
// positional one); "--" ends flag parsing.
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return pos, nil
		}
		if len(args) > 0 && len(rest) < len(args) && args[len(args)-len(rest)-1] == "--" {
			return append(pos, rest...), nil
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}

func runCompare(args []string, stdout, stderr io.Writer) int {
	return runCompareClock(args, stdout, stderr, time.Now)
}

// runCompareClock is runCompare with the clock that times the progress
// lines, so that tests can drive them.
func runCompareClock(args []string, stdout, stderr io.Writer, now func() time.Time) int {
	fs := flag.NewFlagSet("compare", flag.ContinueOnError)
	fs.SetOutput(stderr)
	asJSON := fs.Bool("json", false, "print the result as JSON")
	column := fs.String("column", "", "read this column of CSV files (with a header row) instead of one number per line")
	seed := fs.Uint64("seed", 1, "seed of the PCG for the bootstrap interval of the median difference (table output)")
	resamples := fs.Int("resamples", 2000, "bootstrap resamples (table output)")
	method := fs.String("bootstrap", string(stats.ResampleOrderStats), "how a bootstrap resample's medians are drawn: "+
		string(stats.ResampleOrderStats)+" (directly, O(1) per resample) or "+string(stats.ResampleValues)+
		" (every value, O(n) per resample, as the study analyses do); the same estimator, other numbers for a seed")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: pqrepro compare [--json] [--column NAME] [--seed N] [--resamples N] [--bootstrap METHOD] FILE FILE...")
		fmt.Fprintln(stderr, "\nEach FILE is one sample. Every later sample B is compared with the first, A:")
		fmt.Fprintln(stderr, "Mann-Whitney U of A (two-sided, SciPy 1.10 conventions), Holm and Bonferroni")
		fmt.Fprintln(stderr, "p over the pairs, median(B)-median(A), Hodges-Lehmann shift of B-A, Cliff's delta")
		fmt.Fprintln(stderr, "P(B>A)-P(B<A) with its 95% interval, Vargha-Delaney A12; Kruskal-Wallis over all")
		fmt.Fprintln(stderr, "samples when there are three or more. The table adds the Hodges-Lehmann interval")
		fmt.Fprintln(stderr, "and a bootstrap interval of the median difference with its seed.")
		fmt.Fprintln(stderr, "\nSteps expected to take over a second (every step when stderr is a terminal)")
		fmt.Fprintln(stderr, "print a progress line with an estimate of the time left to stderr.")
		fmt.Fprintln(stderr, "\nflags:")
		fs.PrintDefaults()
	}
	files, err := parseInterspersed(fs, args)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		return 2
	}
	if *resamples < 1 {
		fmt.Fprintf(stderr, "pqrepro compare: --resamples must be at least 1, got %d\n", *resamples)
		return 2
	}
	if m := stats.BootstrapMethod(*method); m != stats.ResampleOrderStats && m != stats.ResampleValues {
		fmt.Fprintf(stderr, "pqrepro compare: --bootstrap %q: want %s or %s\n", *method, stats.ResampleOrderStats, stats.ResampleValues)
		return 2
	}
	if len(files) < 2 {
		fmt.Fprintf(stderr, "pqrepro compare: need at least two sample files (a baseline and one to compare), got %d; see 'pqrepro compare -h'\n", len(files))
		return 2
	}
	pr := newProgress(stderr, now, "pqrepro compare")
	data, err := readSamples(pr, files, *column)
	if err != nil {
		fmt.Fprintf(stderr, "pqrepro compare: %v\n", err)
		return 2
	}
	var boot *stats.BootstrapConfig
	if !*asJSON {
		boot = &stats.BootstrapConfig{Seed: *seed, Resamples: *resamples, Level: 0.95, Method: stats.BootstrapMethod(*method)}
	}
	doc, detail, err := compare(pr, files, data, boot)
	if err != nil {
		fmt.Fprintf(stderr, "pqrepro compare: %v\n", err)
		return 1
	}
	var out bytes.Buffer
	if *asJSON {
		b, err := marshalJSON(doc)
		if err != nil {
			fmt.Fprintf(stderr, "pqrepro compare: encode JSON: %v\n", err)
			return 1
		}
		out.Write(b)
	} else {
		writeCompareTable(&out, doc, detail)
	}
	if _, err := stdout.Write(out.Bytes()); err != nil {
		fmt.Fprintf(stderr, "pqrepro compare: write output: %v\n", err)
		return 1
	}
	return 0
}

// compare computes the whole document as a list of steps run under pr.
// The bootstrap runs only when boot is set (the table), since the JSON
// has no field for it.
func compare(pr *progress, names []string, data [][]float64, boot *stats.BootstrapConfig) (compareJSON, compareDetail, error) {
	var doc compareJSON
	var det compareDetail
	var steps []step
	doc.Samples = make([]sampleJSON, len(data))
	// Every statistic below except the mean and sd of Describe (float
	// sums in input order) and the values bootstrap (which draws by
	// index) is a function of the sorted sample, and each sorts its own
	// copy; Go's pdqsort takes linear time on sorted input, so handing
	// them sorted copies saves four sorts per sample and changes no bit.
	sorted := make([][]float64, len(data))
	for i, x := range data {
		steps = append(steps, step{fmt.Sprintf("describe %s", names[i]), 2 * costSort(len(x)), func() error {
			s, err := stats.Describe(x)
			if err != nil {
				return fmt.Errorf("describe %s: %w", names[i], err)
			}
			sorted[i] = slices.Sorted(slices.Values(x))
			doc.Samples[i] = sampleJSON{
				Name: names[i], N: s.N, Mean: jnum(s.Mean), SD: jnum(s.SD), CV: jnum(s.CV),
				Median: jnum(s.Median), Q1: jnum(s.Q1), Q3: jnum(s.Q3), P95: jnum(s.P95), P99: jnum(s.P99),
			}
			return nil
		}})
	}
	npairs := len(data) - 1
	doc.Pairs = make([]pairJSON, npairs)
	det.hl = make([]stats.HodgesLehmannResult, npairs)
	det.mwu = make([]stats.MannWhitneyResult, npairs)
	if boot != nil {
		det.boot = make([]stats.BootstrapResult, npairs)
	}
	for i := 1; i < len(data); i++ {
		// The closures read sorted[0] and sorted[i] when they run, after
		// the describe steps have filled them.
		pi := i - 1
		pair := fmt.Sprintf("%s vs %s", names[i], names[0])
		nab := len(data[0]) + len(data[i])
		p := &doc.Pairs[pi]
		p.A, p.B = names[0], names[i]
		steps = append(steps,
			step{"Mann-Whitney " + pair, costSort(nab), func() error {
				mw, err := stats.MannWhitneyU(sorted[0], sorted[i])
				if err != nil {
					return fmt.Errorf("mann-whitney %s vs %s: %w", names[0], names[i], err)
				}
				det.mwu[pi] = mw
				p.U, p.P = jnum(mw.U), jnum(mw.P)
				return nil
			}},
			step{"Hodges-Lehmann " + pair, costHL * costSort(nab), func() error {
				hl, err := stats.HodgesLehmann(sorted[0], sorted[i], 0.95)
				if err != nil {
					return fmt.Errorf("hodges-lehmann %s vs %s: %w", names[0], names[i], err)
				}
				det.hl[pi] = hl
				p.HodgesLehmann = jnum(hl.Shift)
				return nil
			}},
			step{"Cliff's delta and A12 " + pair, 2 * costSort(nab), func() error {
				cd, err := stats.CliffsDelta(sorted[0], sorted[i], 0.95)
				if err != nil {
					return fmt.Errorf("cliff's delta %s vs %s: %w", names[0], names[i], err)
				}
				a12, err := stats.VarghaDelaneyA12(sorted[0], sorted[i])
				if err != nil {
					return fmt.Errorf("A12 %s vs %s: %w", names[0], names[i], err)
				}
				p.CliffsDelta = jnum(cd.Delta)
				p.CliffsDeltaCI = [2]jnum{jnum(cd.Lower), jnum(cd.Upper)}
				p.CliffsMagnitude = string(cd.Magnitude)
				p.A12, p.A12Magnitude = jnum(a12.A12), string(a12.Magnitude)
				return nil
			}})
		if boot != nil {
			steps = append(steps, step{"bootstrap " + pair, costBootstrap(*boot, len(data[0]), len(data[i])), func() error {
				x, y := sorted[0], sorted[i]
				if boot.Method == stats.ResampleValues {
					x, y = data[0], data[i]
				}
				br, err := stats.BootstrapMedianDiff(x, y, *boot)
				if err != nil {
					return fmt.Errorf("bootstrap %s vs %s: %w", names[0], names[i], err)
				}
				det.boot[pi] = br
				return nil
			}})
		}
	}
	if len(data) >= 3 {
		var n int
		for _, x := range data {
			n += len(x)
		}
		steps = append(steps, step{"Kruskal-Wallis", costSort(n), func() error {
			k, err := stats.KruskalWallis(sorted...)
			switch {
			case errors.Is(err, stats.ErrAllTied):
				// All values equal: H is undefined; say so with nulls.
				nan := jnum(math.NaN())
				doc.Kruskal = &kruskalJSON{H: nan, P: nan, Epsilon2: nan}
			case err != nil:
				return fmt.Errorf("kruskal-wallis: %w", err)
			default:
				doc.Kruskal = &kruskalJSON{H: jnum(k.H), P: jnum(k.P), Epsilon2: jnum(k.Epsilon2)}
			}
			return nil
		}})
	}
	if err := pr.run(steps); err != nil {
		return doc, det, err
	}
	var ps []float64
	for i := range doc.Pairs {
		p := &doc.Pairs[i]
		p.MedianDiff = jnum(float64(doc.Samples[i+1].Median) - float64(doc.Samples[0].Median))
		ps = append(ps, float64(p.P))
	}
	holm, bonf := stats.Holm(ps), stats.Bonferroni(ps)
	for i := range doc.Pairs {
		doc.Pairs[i].PHolm, doc.Pairs[i].PBonferroni = jnum(holm[i]), jnum(bonf[i])
	}
	return doc, det, nil
}

// readSamples reads every file as a step of pr.
func readSamples(pr *progress, files []string, column string) ([][]float64, error) {
	data := make([][]float64, len(files))
	steps := make([]step, len(files))
	for i, f := range files {
		steps[i] = step{"read " + f, costRead(f), func() error {
			x, err := sample.ReadFile(f, column)
			data[i] = x
			return err
		}}
	}
	return data, pr.run(steps)
}

// marshalJSON encodes v with two-space indentation and a final newline.
func marshalJSON(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := newJSONEncoder(&buf)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// fmtNum prints a number for the table: 6 significant digits, "-" for an
// undefined value.
func fmtNum(v jnum) string {
	f := float64(v)
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return "-"
	}
	return strconv.FormatFloat(f, 'g', 6, 64)
}

func writeCompareTable(w io.Writer, doc compareJSON, det compareDetail) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "sample\tn\tmean\tsd\tcv\tmedian\tq1\tq3\tp95\tp99\t")
	for _, s := range doc.Samples {
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", s.Name, s.N, fmtNum(s.Mean), fmtNum(s.SD), fmtNum(s.CV),
			fmtNum(s.Median), fmtNum(s.Q1), fmtNum(s.Q3), fmtNum(s.P95), fmtNum(s.P99))
	}
	tw.Flush()
	fmt.Fprintln(w)
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "B vs A\tU(A)\tp\tp_holm\tp_bonf\tmedian diff\tHL shift\tCliff's delta\t95% CI\t\tA12\t")
	for _, p := range doc.Pairs {
		fmt.Fprintf(tw, "%s vs %s\t%s\t%s\t%s\t%s\t%s\t%s\t%s %s\t[%s, %s]\t\t%s %s\t\n", p.B, p.A, fmtNum(p.U), fmtNum(p.P),
			fmtNum(p.PHolm), fmtNum(p.PBonferroni), fmtNum(p.MedianDiff), fmtNum(p.HodgesLehmann),
			fmtNum(p.CliffsDelta), p.CliffsMagnitude, fmtNum(p.CliffsDeltaCI[0]), fmtNum(p.CliffsDeltaCI[1]),
			fmtNum(p.A12), p.A12Magnitude)
	}
	tw.Flush()
	fmt.Fprintln(w)
	for i, p := range doc.Pairs {
		hl := det.hl[i]
		fmt.Fprintf(w, "%s vs %s: Mann-Whitney %s; Hodges-Lehmann 95%% CI [%s, %s] (%s)", p.B, p.A, det.mwu[i].Method,
			fmtNum(jnum(hl.Lower)), fmtNum(jnum(hl.Upper)), hl.Method)
		if i < len(det.boot) {
			b := det.boot[i]
			fmt.Fprintf(w, "; median diff 95%% bootstrap CI [%s, %s] (%d resamples, %s, seed %d)",
				fmtNum(jnum(b.Lower)), fmtNum(jnum(b.Upper)), b.Resamples, b.Method, b.Seed)
		}
		fmt.Fprintln(w)
	}
	if k := doc.Kruskal; k != nil {
		fmt.Fprintf(w, "Kruskal-Wallis over %d samples: H = %s, p = %s, epsilon2 = %s\n", len(doc.Samples), fmtNum(k.H), fmtNum(k.P), fmtNum(k.Epsilon2))
	}
}

// A step is one unit of a statistics command that progress can time.
type step struct {
	name string
	cost float64 // expected seconds on the reference machine (see costSort)
	run  func() error
}

// progress runs the steps of a statistics command and reports them on
// its writer (stderr, never stdout): one line per step, before it starts,
// with the step's expected duration and the clock time when the steps
// will be done. A step prints only when it is expected to take longer
// than quiet, or always when the writer is a terminal, so that scripts
// and tests see nothing for quick runs. The expectation is the step's
// cost scaled by how long the finished steps took against their costs,
// so it adapts to the machine after the first step. The clock is
// injected so that tests can drive it.
type progress struct {
	w      io.Writer
	now    func() time.Time
	prefix string
	always bool          // the writer is a terminal
	quiet  time.Duration // report steps expected to take longer than this

	spent, costDone float64 // seconds taken by and cost of finished steps
}

func newProgress(w io.Writer, now func() time.Time, prefix string) *progress {
	return &progress{w: w, now: now, prefix: prefix, always: isTerminal(w), quiet: time.Second}
}

// isTerminal reports whether w is a character device such as a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// scale is the ratio of measured to expected time so far, 1 before any
// step has taken measurable time.
func (p *progress) scale() float64 {
	if p.spent <= 0 || p.costDone <= 0 {
		return 1
	}
	return p.spent / p.costDone
}

// run runs steps in order and stops at the first error.
func (p *progress) run(steps []step) error {
	for i, s := range steps {
		var left float64
		for _, r := range steps[i:] {
			left += r.cost + stepBase
		}
		cost := s.cost + stepBase
		sc := p.scale()
		expect := time.Duration(cost * sc * float64(time.Second))
		start := p.now()
		if p.always || expect > p.quiet {
			rest := time.Duration(left * sc * float64(time.Second))
			fmt.Fprintf(p.w, "%s: [%d/%d] %s: about %s; all %d done about %s (%s left)\n", p.prefix, i+1, len(steps), s.name,
				roundDuration(expect), len(steps), start.Add(rest).Format("15:04:05"), roundDuration(rest))
		}
		if err := s.run(); err != nil {
			return err
		}
		p.spent += p.now().Sub(start).Seconds()
		p.costDone += cost
	}
	return nil
}

// roundDuration keeps two significant figures of the seconds.
func roundDuration(d time.Duration) time.Duration {
	switch {
	case d >= 10*time.Second:
		return d.Round(time.Second)
	case d >= time.Second:
		return d.Round(100 * time.Millisecond)
	}
	return d.Round(time.Millisecond)
}

// The cost model of the steps, in seconds on the reference machine (the
// one of docs/performance.md); progress rescales it by the time
// the finished steps really took. Sorting n values costs about
// nsPerSortOp n log2 n; the constants were fitted to BenchmarkCompare at
// 10^6 values.
const (
	stepBase      = 1e-4 // every step: allocation and bookkeeping
	nsPerSortOp   = 5e-9
	costHL        = 3     // Hodges-Lehmann: a few selection passes per order statistic
	nsPerReadByte = 15e-9 // parsing one byte of a sample file
	sPerResample  = 2e-6  // one order-statistics resample (two Beta variates)
	nsPerDraw     = 10e-9 // one value drawn in a values resample
)

func costSort(n int) float64 { return nsPerSortOp * float64(n) * math.Log2(float64(n)+2) }

func costRead(path string) float64 {
	fi, err := os.Stat(path)
	if err != nil {
		return 0
	}
	return nsPerReadByte * float64(fi.Size())
}

func costBootstrap(cfg stats.BootstrapConfig, m, n int) float64 {
	if cfg.Method == stats.ResampleValues {
		return nsPerDraw * float64(cfg.Resamples) * float64(m+n)
	}
	return costSort(m) + costSort(n) + sPerResample*float64(cfg.Resamples)
}
