// Package compare compares samples as `pqrepro compare` reports them.
//
// It describes each sample (stats.Describe) and compares every later sample
// B against the first, A: Mann-Whitney U (two-sided, SciPy 1.10 conventions)
// with Holm and Bonferroni adjusted p over the pairs, the median difference,
// the Hodges-Lehmann shift and interval, Cliff's delta with its 95%
// interval, Vargha-Delaney A12, a bootstrap interval of the median
// difference when asked, and Kruskal-Wallis over all samples when there are
// three or more (the statistics are analysis/stats').
//
// The work is a list of Steps, each with its expected cost in seconds on
// the reference machine (the cost model below), so that a caller can
// report progress on long comparisons; the command's progress reporter
// lives in cmd/pqrepro.
package compare

import (
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"text/tabwriter"

	"pqrepro/analysis/stats"
)

// A Step is one unit of a statistics command that a progress reporter
// can time.
type Step struct {
	Name string
	Cost float64 // expected seconds on the reference machine (see CostSort)
	Run  func() error
}

// Num is a float64 that encodes NaN and ±Inf as JSON null.
//
// With it an undefined statistic (the sd of one value) never breaks
// the document.
type Num float64

// MarshalJSON writes v in the shortest form that reads back as v, or
// null.
func (v Num) MarshalJSON() ([]byte, error) {
	f := float64(v)
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return []byte("null"), nil
	}
	return strconv.AppendFloat(nil, f, 'g', -1, 64), nil
}

// Sample is one sample's description in the document.
type Sample struct {
	Name   string `json:"name"`
	N      int    `json:"n"`
	Mean   Num    `json:"mean"`
	SD     Num    `json:"sd"`
	CV     Num    `json:"cv"`
	Median Num    `json:"median"`
	Q1     Num    `json:"q1"`
	Q3     Num    `json:"q3"`
	P95    Num    `json:"p95"`
	P99    Num    `json:"p99"`
}

// Pair is one comparison of a later sample B with the first, A.
type Pair struct {
	A               string `json:"a"`
	B               string `json:"b"`
	U               Num    `json:"u"`
	P               Num    `json:"p"`
	PHolm           Num    `json:"p_holm"`
	PBonferroni     Num    `json:"p_bonferroni"`
	MedianDiff      Num    `json:"median_diff"`
	HodgesLehmann   Num    `json:"hodges_lehmann"`
	CliffsDelta     Num    `json:"cliffs_delta"`
	CliffsDeltaCI   [2]Num `json:"cliffs_delta_ci"`
	CliffsMagnitude string `json:"cliffs_magnitude"`
	A12             Num    `json:"a12"`
	A12Magnitude    string `json:"a12_magnitude"`
}

// Kruskal is the Kruskal-Wallis test over all samples.
type Kruskal struct {
	H        Num `json:"h"`
	P        Num `json:"p"`
	Epsilon2 Num `json:"epsilon2"`
}

// Result is the `pqrepro compare --json` document; its shape is fixed
// by issue 3.
type Result struct {
	Samples []Sample `json:"samples"`
	Pairs   []Pair   `json:"pairs"`
	Kruskal *Kruskal `json:"kruskal"`
}

// Detail holds what the plain table (WriteTable) shows beyond the JSON.
type Detail struct {
	hl   []stats.HodgesLehmannResult
	boot []stats.BootstrapResult
	mwu  []stats.MannWhitneyResult
}

// Compare computes the whole document for the samples data as a list
// of steps.
//
// Names names the samples; every later sample is compared with the
// first. It hands the steps to run (a progress reporter, or
// RunSteps). The bootstrap runs only when boot is set (the table),
// since the JSON has no field for it.
func Compare(run func([]Step) error, names []string, data [][]float64, boot *stats.BootstrapConfig) (Result, Detail, error) {
	var doc Result
	var det Detail
	var steps []Step
	doc.Samples = make([]Sample, len(data))
	// Every statistic below except the mean and sd of Describe (float
	// sums in input order) and the values bootstrap (which draws by
	// index) is a function of the sorted sample, and each sorts its own
	// copy; Go's pdqsort takes linear time on sorted input, so handing
	// them sorted copies saves four sorts per sample and changes no bit.
	sorted := make([][]float64, len(data))
	for i, x := range data {
		steps = append(steps, Step{fmt.Sprintf("describe %s", names[i]), 2 * CostSort(len(x)), func() error {
			s, err := stats.Describe(x)
			if err != nil {
				return fmt.Errorf("describe %s: %w", names[i], err)
			}
			sorted[i] = slices.Sorted(slices.Values(x))
			doc.Samples[i] = Sample{
				Name: names[i], N: s.N, Mean: Num(s.Mean), SD: Num(s.SD), CV: Num(s.CV),
				Median: Num(s.Median), Q1: Num(s.Q1), Q3: Num(s.Q3), P95: Num(s.P95), P99: Num(s.P99),
			}
			return nil
		}})
	}
	npairs := len(data) - 1
	doc.Pairs = make([]Pair, npairs)
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
			Step{"Mann-Whitney " + pair, CostSort(nab), func() error {
				mw, err := stats.MannWhitneyU(sorted[0], sorted[i])
				if err != nil {
					return fmt.Errorf("mann-whitney %s vs %s: %w", names[0], names[i], err)
				}
				det.mwu[pi] = mw
				p.U, p.P = Num(mw.U), Num(mw.P)
				return nil
			}},
			Step{"Hodges-Lehmann " + pair, costHL * CostSort(nab), func() error {
				hl, err := stats.HodgesLehmann(sorted[0], sorted[i], 0.95)
				if err != nil {
					return fmt.Errorf("hodges-lehmann %s vs %s: %w", names[0], names[i], err)
				}
				det.hl[pi] = hl
				p.HodgesLehmann = Num(hl.Shift)
				return nil
			}},
			Step{"Cliff's delta and A12 " + pair, 2 * CostSort(nab), func() error {
				cd, err := stats.CliffsDelta(sorted[0], sorted[i], 0.95)
				if err != nil {
					return fmt.Errorf("cliff's delta %s vs %s: %w", names[0], names[i], err)
				}
				a12, err := stats.VarghaDelaneyA12(sorted[0], sorted[i])
				if err != nil {
					return fmt.Errorf("A12 %s vs %s: %w", names[0], names[i], err)
				}
				p.CliffsDelta = Num(cd.Delta)
				p.CliffsDeltaCI = [2]Num{Num(cd.Lower), Num(cd.Upper)}
				p.CliffsMagnitude = string(cd.Magnitude)
				p.A12, p.A12Magnitude = Num(a12.A12), string(a12.Magnitude)
				return nil
			}})
		if boot != nil {
			steps = append(steps, Step{"bootstrap " + pair, CostBootstrap(*boot, len(data[0]), len(data[i])), func() error {
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
		steps = append(steps, Step{"Kruskal-Wallis", CostSort(n), func() error {
			k, err := stats.KruskalWallis(sorted...)
			switch {
			case errors.Is(err, stats.ErrAllTied):
				// All values equal: H is undefined; say so with nulls.
				nan := Num(math.NaN())
				doc.Kruskal = &Kruskal{H: nan, P: nan, Epsilon2: nan}
			case err != nil:
				return fmt.Errorf("kruskal-wallis: %w", err)
			default:
				doc.Kruskal = &Kruskal{H: Num(k.H), P: Num(k.P), Epsilon2: Num(k.Epsilon2)}
			}
			return nil
		}})
	}
	if err := run(steps); err != nil {
		return doc, det, err
	}
	var ps []float64
	for i := range doc.Pairs {
		p := &doc.Pairs[i]
		p.MedianDiff = Num(float64(doc.Samples[i+1].Median) - float64(doc.Samples[0].Median))
		ps = append(ps, float64(p.P))
	}
	holm, bonf := stats.Holm(ps), stats.Bonferroni(ps)
	for i := range doc.Pairs {
		doc.Pairs[i].PHolm, doc.Pairs[i].PBonferroni = Num(holm[i]), Num(bonf[i])
	}
	return doc, det, nil
}

// FormatNum prints a number for the table: 6 significant digits, "-" for an
// undefined value.
func FormatNum(v Num) string {
	f := float64(v)
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return "-"
	}
	return strconv.FormatFloat(f, 'g', 6, 64)
}

// WriteTable writes the comparison as the command's plain tables: the
// samples, the pairs, then each pair's intervals and Kruskal-Wallis.
func WriteTable(w io.Writer, doc Result, det Detail) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "sample\tn\tmean\tsd\tcv\tmedian\tq1\tq3\tp95\tp99\t")
	for _, s := range doc.Samples {
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", s.Name, s.N, FormatNum(s.Mean), FormatNum(s.SD), FormatNum(s.CV),
			FormatNum(s.Median), FormatNum(s.Q1), FormatNum(s.Q3), FormatNum(s.P95), FormatNum(s.P99))
	}
	tw.Flush()
	fmt.Fprintln(w)
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "B vs A\tU(A)\tp\tp_holm\tp_bonf\tmedian diff\tHL shift\tCliff's delta\t95% CI\t\tA12\t")
	for _, p := range doc.Pairs {
		fmt.Fprintf(tw, "%s vs %s\t%s\t%s\t%s\t%s\t%s\t%s\t%s %s\t[%s, %s]\t\t%s %s\t\n", p.B, p.A, FormatNum(p.U), FormatNum(p.P),
			FormatNum(p.PHolm), FormatNum(p.PBonferroni), FormatNum(p.MedianDiff), FormatNum(p.HodgesLehmann),
			FormatNum(p.CliffsDelta), p.CliffsMagnitude, FormatNum(p.CliffsDeltaCI[0]), FormatNum(p.CliffsDeltaCI[1]),
			FormatNum(p.A12), p.A12Magnitude)
	}
	tw.Flush()
	fmt.Fprintln(w)
	for i, p := range doc.Pairs {
		hl := det.hl[i]
		fmt.Fprintf(w, "%s vs %s: Mann-Whitney %s; Hodges-Lehmann 95%% CI [%s, %s] (%s)", p.B, p.A, det.mwu[i].Method,
			FormatNum(Num(hl.Lower)), FormatNum(Num(hl.Upper)), hl.Method)
		if i < len(det.boot) {
			b := det.boot[i]
			fmt.Fprintf(w, "; median diff 95%% bootstrap CI [%s, %s] (%d resamples, %s, seed %d)",
				FormatNum(Num(b.Lower)), FormatNum(Num(b.Upper)), b.Resamples, b.Method, b.Seed)
		}
		fmt.Fprintln(w)
	}
	if k := doc.Kruskal; k != nil {
		fmt.Fprintf(w, "Kruskal-Wallis over %d samples: H = %s, p = %s, epsilon2 = %s\n", len(doc.Samples), FormatNum(k.H), FormatNum(k.P), FormatNum(k.Epsilon2))
	}
}

// The cost model of the steps, in seconds on the reference machine (the
// one of docs/performance.md). Progress rescales it by the time the
// finished steps really took. Sorting n values costs about nsPerSortOp n
// log2 n; the constants were fitted to cmd/pqrepro's BenchmarkCompare at
// 10^6 values.
const (
	StepBase     = 1e-4 // every step: allocation and bookkeeping
	nsPerSortOp  = 5e-9
	costHL       = 3     // Hodges-Lehmann: a few selection passes per order statistic
	sPerResample = 2e-6  // one order-statistics resample (two Beta variates)
	nsPerDraw    = 10e-9 // one value drawn in a values resample
)

// CostSort is the expected cost of sorting n values.
func CostSort(n int) float64 { return nsPerSortOp * float64(n) * math.Log2(float64(n)+2) }

// CostBootstrap is the expected cost of the bootstrap of the median
// difference of samples of m and n values.
func CostBootstrap(cfg stats.BootstrapConfig, m, n int) float64 {
	if cfg.Method == stats.ResampleValues {
		return nsPerDraw * float64(cfg.Resamples) * float64(m+n)
	}
	return CostSort(m) + CostSort(n) + sPerResample*float64(cfg.Resamples)
}
