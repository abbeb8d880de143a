package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"

	"pqrepro/analysis/sample"
	"pqrepro/analysis/stats"
)

func init() {
	register("serial", "serial dependence of one sample: runs test, ACF, Ljung-Box", runSerial)
}

type runsJSON struct {
	Runs  int  `json:"runs"`
	Above int  `json:"above"`
	Below int  `json:"below"`
	Z     jnum `json:"z"`
	P     jnum `json:"p"`
}

type ljungBoxJSON struct {
	Lags int  `json:"lags"`
	Q    jnum `json:"q"`
	P    jnum `json:"p"`
}

// serialJSON is the --json document of pqrepro serial. ACF holds the
// autocorrelations at lags 1..K (lag 0 is always 1 and is left out).
type serialJSON struct {
	Name     string       `json:"name"`
	N        int          `json:"n"`
	Runs     runsJSON     `json:"runs"`
	ACF      []jnum       `json:"acf"`
	LjungBox ljungBoxJSON `json:"ljung_box"`
}

func runSerial(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("serial", flag.ContinueOnError)
	fs.SetOutput(stderr)
	asJSON := fs.Bool("json", false, "print the result as JSON")
	lags := fs.Int("lags", 10, "largest lag K of the ACF and of the Ljung-Box test (1 <= K <= n-1)")
	column := fs.String("column", "", "read this column of a CSV file (with a header row) instead of one number per line")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: pqrepro serial [--json] [--lags K] [--column NAME] FILE")
		fmt.Fprintln(stderr, "\nTests one sample, in measurement order, for serial dependence: the runs test")
		fmt.Fprintln(stderr, "about the median (statsmodels runstest_1samp, correction=True), the")
		fmt.Fprintln(stderr, "autocorrelation at lags 1..K (statsmodels acf, adjusted=False) and the")
		fmt.Fprintln(stderr, "Ljung-Box Q at lag K with its p-value.")
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
	name := files[0]
	x, err := sample.ReadFile(name, *column)
	if err != nil {
		fmt.Fprintf(stderr, "pqrepro serial: %v\n", err)
		return 2
	}
	if *lags < 1 || *lags > len(x)-1 {
		fmt.Fprintf(stderr, "pqrepro serial: %s: --lags %d must be between 1 and n-1 = %d; give a smaller --lags or more values\n", name, *lags, len(x)-1)
		return 2
	}
	runs, err := stats.RunsTest(x)
	if errors.Is(err, stats.ErrOneClass) {
		fmt.Fprintf(stderr, "pqrepro serial: %s: all %d values are on one side of the median (constant data?); serial dependence is undefined\n", name, len(x))
		return 2
	}
	if err != nil {
		fmt.Fprintf(stderr, "pqrepro serial: %s: %v\n", name, err)
		return 1
	}
	r, err := stats.ACF(x, *lags)
	if err != nil {
		fmt.Fprintf(stderr, "pqrepro serial: %s: %v\n", name, err)
		return 2
	}
	lb, err := stats.LjungBox(x, *lags)
	if err != nil {
		fmt.Fprintf(stderr, "pqrepro serial: %s: %v\n", name, err)
		return 2
	}
	doc := serialJSON{
		Name: name, N: len(x),
		Runs:     runsJSON{Runs: runs.Runs, Above: runs.Above, Below: runs.Below, Z: jnum(runs.Z), P: jnum(runs.P)},
		LjungBox: ljungBoxJSON{Lags: lb.Lags, Q: jnum(lb.Q), P: jnum(lb.P)},
	}
	for _, v := range r[1:] {
		doc.ACF = append(doc.ACF, jnum(v))
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
		fmt.Fprintf(&out, "%s: n = %d\n", doc.Name, doc.N)
		fmt.Fprintf(&out, "runs test about the median: %d runs (%d >= median, %d below), z = %s, p = %s\n",
			runs.Runs, runs.Above, runs.Below, fmtNum(doc.Runs.Z), fmtNum(doc.Runs.P))
		fmt.Fprintf(&out, "Ljung-Box at lag %d: Q = %s, p = %s\n", lb.Lags, fmtNum(doc.LjungBox.Q), fmtNum(doc.LjungBox.P))
		fmt.Fprintln(&out, "lag  acf")
		for k, v := range doc.ACF {
			fmt.Fprintf(&out, "%3d  %s\n", k+1, fmtNum(v))
		}
	}
	if _, err := stdout.Write(out.Bytes()); err != nil {
		fmt.Fprintf(stderr, "pqrepro serial: write output: %v\n", err)
		return 1
	}
	return 0
}
