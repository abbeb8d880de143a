package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"slices"
	"time"

	"pqrepro/analysis/compare"
	"pqrepro/analysis/stats"
)

func init() {
	register("serial", "serial dependence of one sample: runs test, ACF, Ljung-Box", runSerial)
}

// A statistic that the sample cannot support (too few values, constant
// data) is null in the JSON with a "reason". In the table it is "-"
// with the reason. It is not an error, and the others are still reported. The
// minimum n of each is stats.RunsMinN, stats.ACFMinN and
// stats.LjungBoxMinN.
type runsJSON struct {
	Runs   int         `json:"runs"`
	Above  int         `json:"above"`
	Below  int         `json:"below"`
	Z      compare.Num `json:"z"`
	P      compare.Num `json:"p"`
	Reason string      `json:"reason,omitempty"` // why z and p are null
}

type ljungBoxJSON struct {
	Lags   int         `json:"lags"`
	Q      compare.Num `json:"q"`
	P      compare.Num `json:"p"`
	Reason string      `json:"reason,omitempty"` // why q and p are null
}

// serialJSON is the --json document of pqrepro serial. ACF holds the
// autocorrelations at lags 1..K (lag 0 is always 1 and is left out); a
// lag the sample is too short for, or every lag of a constant sample, is
// null, and ACFReason says why. Of the lags n..K, all undefined for n
// values, only lag n is listed, so ACF has min(K, n) entries.
type serialJSON struct {
	Name      string        `json:"name"`
	N         int           `json:"n"`
	Runs      runsJSON      `json:"runs"`
	ACF       []compare.Num `json:"acf"`
	ACFReason string        `json:"acf_reason,omitempty"`
	LjungBox  ljungBoxJSON  `json:"ljung_box"`
}

func runSerial(args []string, stdout, stderr io.Writer) int {
	return runSerialClock(args, stdout, stderr, time.Now)
}

// runSerialClock is runSerial with the clock of the progress lines.
func runSerialClock(args []string, stdout, stderr io.Writer, now func() time.Time) int {
	fs := flag.NewFlagSet("serial", flag.ContinueOnError)
	fs.SetOutput(stderr)
	asJSON := fs.Bool("json", false, "print the result as JSON")
	lags := fs.Int("lags", 10, "largest lag K of the ACF and of the Ljung-Box test (K >= 1; lags of n or more are reported as undefined)")
	column := fs.String("column", "", "read this column of a CSV file (with a header row) instead of one number per line")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: pqrepro serial [--json] [--lags K] [--column NAME] FILE")
		fmt.Fprintln(stderr, "\nTests one sample, in measurement order, for serial dependence: the runs test")
		fmt.Fprintln(stderr, "about the median (statsmodels runstest_1samp, correction=True), the")
		fmt.Fprintln(stderr, "autocorrelation at lags 1..K (statsmodels acf, adjusted=False) and the")
		fmt.Fprintln(stderr, "Ljung-Box Q at lag K with its p-value.")
		fmt.Fprintf(stderr, "\nA statistic the sample is too short for is shown as \"-\" (null in JSON) with\n")
		fmt.Fprintf(stderr, "the reason: the runs test needs n >= %d and values on both sides of the median,\n", stats.RunsMinN)
		fmt.Fprintln(stderr, "the ACF at lag k and Ljung-Box at lag K need n >= k+1 and n >= K+1, and both")
		fmt.Fprintln(stderr, "need values that are not all equal. Long steps print progress to stderr.")
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
	if len(files) != 1 {
		fmt.Fprintf(stderr, "pqrepro serial: need exactly one sample file, got %d; see 'pqrepro serial -h'\n", len(files))
		return 2
	}
	if *lags < 1 {
		fmt.Fprintf(stderr, "pqrepro serial: --lags %d: the largest lag must be at least 1\n", *lags)
		return 2
	}
	name := files[0]
	pr := newProgress(stderr, now, "pqrepro serial")
	data, err := readSamples(pr, files, *column)
	if err != nil {
		fmt.Fprintf(stderr, "pqrepro serial: %v\n", err)
		return 2
	}
	doc, err := serial(pr, name, data[0], *lags)
	if err != nil {
		fmt.Fprintf(stderr, "pqrepro serial: %s: %v\n", name, err)
		return 1
	}
	var out bytes.Buffer
	if *asJSON {
		b, err := marshalJSON(doc)
		if err != nil {
			fmt.Fprintf(stderr, "pqrepro serial: encode JSON: %v\n", err)
			return 1
		}
		out.Write(b)
	} else {
		writeSerialTable(&out, doc)
	}
	if _, err := stdout.Write(out.Bytes()); err != nil {
		fmt.Fprintf(stderr, "pqrepro serial: write output: %v\n", err)
		return 1
	}
	return 0
}

// serial computes the document for x with lags 1..maxLag; statistics the
// sample cannot support get nulls and a reason.
func serial(pr *progress, name string, x []float64, maxLag int) (serialJSON, error) {
	n := len(x)
	nan := compare.Num(math.NaN())
	doc := serialJSON{
		Name: name, N: n,
		Runs:     runsJSON{Z: nan, P: nan},
		LjungBox: ljungBoxJSON{Lags: maxLag, Q: nan, P: nan},
		// Lags 1..K, but only the first undefined one past n-1 (lag n):
		// listing K nulls would let --lags 1e9 fill memory.
		ACF: slices.Repeat([]compare.Num{nan}, min(maxLag, n)),
	}
	// The lags this sample supports: k <= n-1.
	defined := min(maxLag, n-1)
	steps := []step{
		{Name: "runs test", Cost: compare.CostSort(n), Run: func() error {
			runs, err := stats.RunsTest(x)
			doc.Runs.Runs, doc.Runs.Above, doc.Runs.Below = runs.Runs, runs.Above, runs.Below
			switch {
			case errors.Is(err, stats.ErrTooFew):
				doc.Runs.Reason = fmt.Sprintf("the runs test needs at least %d values, got %d", stats.RunsMinN, n)
			case errors.Is(err, stats.ErrOneClass):
				doc.Runs.Reason = fmt.Sprintf("all %d values are on one side of the median (%d >= median, %d below), so the number of runs has no variance", n, runs.Above, runs.Below)
			case err != nil:
				return err
			default:
				doc.Runs.Z, doc.Runs.P = compare.Num(runs.Z), compare.Num(runs.P)
			}
			return nil
		}},
		{Name: fmt.Sprintf("ACF and Ljung-Box at lags 1..%d", max(defined, 0)), Cost: nsPerACFTerm * float64(n) * float64(max(defined, 1)), Run: func() error {
			if defined < maxLag {
				which := fmt.Sprintf("lags %d..%d are", defined+1, maxLag)
				if defined+1 == maxLag {
					which = fmt.Sprintf("lag %d is", maxLag)
				}
				doc.ACFReason = fmt.Sprintf("the autocorrelation at lag k needs at least k+1 values; with %d, %s undefined", n, which)
				doc.LjungBox.Reason = fmt.Sprintf("Ljung-Box at lag %d needs at least %d values, got %d", maxLag, stats.LjungBoxMinN(maxLag), n)
				if defined >= 1 {
					doc.LjungBox.Reason += fmt.Sprintf("; --lags %d is the largest that %d values allow", defined, n)
				}
			}
			if defined < 1 {
				return nil
			}
			r, err := stats.ACF(x, defined)
			if errors.Is(err, stats.ErrAllTied) {
				const constant = "all values are equal, so the autocorrelations are 0/0"
				doc.ACFReason, doc.LjungBox.Reason = constant, constant
				return nil
			}
			if err != nil {
				return err
			}
			for k, v := range r[1:] {
				doc.ACF[k] = compare.Num(v)
			}
			if defined == maxLag {
				lb := stats.LjungBoxACF(r, n)
				doc.LjungBox.Q, doc.LjungBox.P = compare.Num(lb.Q), compare.Num(lb.P)
			}
			return nil
		}},
	}
	return doc, pr.run(steps)
}

// nsPerACFTerm is the cost of one product in the ACF sums, in seconds on
// the reference machine (see the cost model in compare.go).
const nsPerACFTerm = 1e-9

// writeSerialTable prints doc as text; an undefined statistic is "-"
// followed by the reason.
func writeSerialTable(w io.Writer, doc serialJSON) {
	fmt.Fprintf(w, "%s: n = %d\n", doc.Name, doc.N)
	if r := doc.Runs; r.Reason != "" {
		fmt.Fprintf(w, "runs test about the median: - (%s)\n", r.Reason)
	} else {
		fmt.Fprintf(w, "runs test about the median: %d runs (%d >= median, %d below), z = %s, p = %s\n",
			r.Runs, r.Above, r.Below, compare.FormatNum(r.Z), compare.FormatNum(r.P))
	}
	if lb := doc.LjungBox; lb.Reason != "" {
		fmt.Fprintf(w, "Ljung-Box at lag %d: - (%s)\n", lb.Lags, lb.Reason)
	} else {
		fmt.Fprintf(w, "Ljung-Box at lag %d: Q = %s, p = %s\n", lb.Lags, compare.FormatNum(lb.Q), compare.FormatNum(lb.P))
	}
	fmt.Fprintln(w, "lag  acf")
	undefined := false
	for k, v := range doc.ACF {
		if f := float64(v); math.IsNaN(f) && !undefined {
			fmt.Fprintf(w, "%3d  - (%s)\n", k+1, doc.ACFReason)
			undefined = true
			continue
		}
		fmt.Fprintf(w, "%3d  %s\n", k+1, compare.FormatNum(v))
	}
}
