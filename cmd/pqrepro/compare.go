package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"strconv"
	"text/tabwriter"

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
	fs := flag.NewFlagSet("compare", flag.ContinueOnError)
	fs.SetOutput(stderr)
	asJSON := fs.Bool("json", false, "print the result as JSON")
	column := fs.String("column", "", "read this column of CSV files (with a header row) instead of one number per line")
	seed := fs.Uint64("seed", 1, "seed of the PCG for the bootstrap interval of the median difference (table output)")
	resamples := fs.Int("resamples", 2000, "bootstrap resamples (table output)")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: pqrepro compare [--json] [--column NAME] [--seed N] [--resamples N] FILE FILE...")
		fmt.Fprintln(stderr, "\nEach FILE is one sample. Every later sample B is compared with the first, A:")
		fmt.Fprintln(stderr, "Mann-Whitney U of A (two-sided, SciPy 1.10 conventions), Holm and Bonferroni")
		fmt.Fprintln(stderr, "p over the pairs, median(B)-median(A), Hodges-Lehmann shift of B-A, Cliff's delta")
		fmt.Fprintln(stderr, "P(B>A)-P(B<A) with its 95% interval, Vargha-Delaney A12; Kruskal-Wallis over all")
		fmt.Fprintln(stderr, "samples when there are three or more. The table adds the Hodges-Lehmann interval")
		fmt.Fprintln(stderr, "and a bootstrap interval of the median difference with its seed.")
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
	if len(files) < 2 {
		fmt.Fprintf(stderr, "pqrepro compare: need at least two sample files (a baseline and one to compare), got %d; see 'pqrepro compare -h'\n", len(files))
		return 2
	}
	data := make([][]float64, len(files))
	for i, f := range files {
		x, err := sample.ReadFile(f, *column)
		if err != nil {
			fmt.Fprintf(stderr, "pqrepro compare: %v\n", err)
			return 2
		}
		data[i] = x
	}
	doc, detail, err := compare(files, data, !*asJSON, stats.BootstrapConfig{Seed: *seed, Resamples: *resamples, Level: 0.95})
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

// compare computes the whole document. The bootstrap runs only when
// withBoot is set, since the JSON has no field for it.
func compare(names []string, data [][]float64, withBoot bool, boot stats.BootstrapConfig) (compareJSON, compareDetail, error) {
	var doc compareJSON
	var det compareDetail
	for i, x := range data {
		s, err := stats.Describe(x)
		if err != nil {
			return doc, det, fmt.Errorf("describe %s: %w", names[i], err)
		}
		doc.Samples = append(doc.Samples, sampleJSON{
			Name: names[i], N: s.N, Mean: jnum(s.Mean), SD: jnum(s.SD), CV: jnum(s.CV),
			Median: jnum(s.Median), Q1: jnum(s.Q1), Q3: jnum(s.Q3), P95: jnum(s.P95), P99: jnum(s.P99),
		})
	}
	a := data[0]
	var ps []float64
	for i := 1; i < len(data); i++ {
		b := data[i]
		mw, err := stats.MannWhitneyU(a, b)
		if err != nil {
			return doc, det, fmt.Errorf("mann-whitney %s vs %s: %w", names[0], names[i], err)
		}
		hl, err := stats.HodgesLehmann(a, b, 0.95)
		if err != nil {
			return doc, det, fmt.Errorf("hodges-lehmann %s vs %s: %w", names[0], names[i], err)
		}
		cd, err := stats.CliffsDelta(a, b, 0.95)
		if err != nil {
			return doc, det, fmt.Errorf("cliff's delta %s vs %s: %w", names[0], names[i], err)
		}
		a12, err := stats.VarghaDelaneyA12(a, b)
		if err != nil {
			return doc, det, fmt.Errorf("A12 %s vs %s: %w", names[0], names[i], err)
		}
		if withBoot {
			br, err := stats.BootstrapMedianDiff(a, b, boot)
			if err != nil {
				return doc, det, fmt.Errorf("bootstrap %s vs %s: %w", names[0], names[i], err)
			}
			det.boot = append(det.boot, br)
		}
		det.hl = append(det.hl, hl)
		det.mwu = append(det.mwu, mw)
		ps = append(ps, mw.P)
		doc.Pairs = append(doc.Pairs, pairJSON{
			A: names[0], B: names[i], U: jnum(mw.U), P: jnum(mw.P),
			MedianDiff:      jnum(float64(doc.Samples[i].Median) - float64(doc.Samples[0].Median)),
			HodgesLehmann:   jnum(hl.Shift),
			CliffsDelta:     jnum(cd.Delta),
			CliffsDeltaCI:   [2]jnum{jnum(cd.Lower), jnum(cd.Upper)},
			CliffsMagnitude: string(cd.Magnitude),
			A12:             jnum(a12.A12),
			A12Magnitude:    string(a12.Magnitude),
		})
	}
	holm, bonf := stats.Holm(ps), stats.Bonferroni(ps)
	for i := range doc.Pairs {
		doc.Pairs[i].PHolm, doc.Pairs[i].PBonferroni = jnum(holm[i]), jnum(bonf[i])
	}
	if len(data) >= 3 {
		k, err := stats.KruskalWallis(data...)
		switch {
		case errors.Is(err, stats.ErrAllTied):
			// All values equal: H is undefined; say so with nulls.
			nan := jnum(math.NaN())
			doc.Kruskal = &kruskalJSON{H: nan, P: nan, Epsilon2: nan}
		case err != nil:
			return doc, det, fmt.Errorf("kruskal-wallis: %w", err)
		default:
			doc.Kruskal = &kruskalJSON{H: jnum(k.H), P: jnum(k.P), Epsilon2: jnum(k.Epsilon2)}
		}
	}
	return doc, det, nil
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
			fmt.Fprintf(w, "; median diff 95%% bootstrap CI [%s, %s] (%d resamples, seed %d)",
				fmtNum(jnum(b.Lower)), fmtNum(jnum(b.Upper)), b.Resamples, b.Seed)
		}
		fmt.Fprintln(w)
	}
	if k := doc.Kruskal; k != nil {
		fmt.Fprintf(w, "Kruskal-Wallis over %d samples: H = %s, p = %s, epsilon2 = %s\n", len(doc.Samples), fmtNum(k.H), fmtNum(k.P), fmtNum(k.Epsilon2))
	}
}
