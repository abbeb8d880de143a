package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"time"

	"pqrepro/analysis/compare"
	"pqrepro/analysis/sample"
	"pqrepro/analysis/stats"
)

func init() {
	register("compare", "compare samples: Mann-Whitney, Kruskal-Wallis, Cliff's delta, A12, Hodges-Lehmann", runCompare)
}

// errUsage marks errors that are the caller's fault (exit status 2).
var errUsage = errors.New("usage")

// parseInterspersed parses flags that may appear before, between or after
// the positional arguments. (Go's flag package stops at the first
// positional one.) "--" ends flag parsing.
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
	if *resamples < 1 || *resamples > stats.MaxResamples {
		fmt.Fprintf(stderr, "pqrepro compare: --resamples must be 1 to %d (the interval's Monte Carlo error is far below the printed digits long before), got %d\n", stats.MaxResamples, *resamples)
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
	doc, detail, err := compare.Compare(pr.run, files, data, boot)
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
		compare.WriteTable(&out, doc, detail)
	}
	if _, err := stdout.Write(out.Bytes()); err != nil {
		fmt.Fprintf(stderr, "pqrepro compare: write output: %v\n", err)
		return 1
	}
	return 0
}

// readSamples reads every file as a step of pr.
func readSamples(pr *progress, files []string, column string) ([][]float64, error) {
	data := make([][]float64, len(files))
	steps := make([]step, len(files))
	for i, f := range files {
		steps[i] = step{Name: "read " + f, Cost: costRead(f), Run: func() error {
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
