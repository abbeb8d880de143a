package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"pqrepro/analysis/compare"
)

func serialCmd(args []string, out, errb *bytes.Buffer) int { return runSerial(args, out, errb) }

// goldenSerial reads the statsmodels values of analysis/stats/testdata.
func goldenSerial(t *testing.T) []struct {
	Name  string
	X     []float64
	Lags  int
	RunsZ float64   `json:"runs_z"`
	RunsP float64   `json:"runs_p"`
	ACF   []float64 `json:"acf"`
	LBQ   float64   `json:"lb_q"`
	LBP   float64   `json:"lb_p"`
} {
	b, err := os.ReadFile(filepath.Join("..", "..", "analysis", "stats", "testdata", "golden.json"))
	if err != nil {
		t.Fatal(err)
	}
	var g struct {
		Serial []struct {
			Name  string
			X     []float64
			Lags  int
			RunsZ float64   `json:"runs_z"`
			RunsP float64   `json:"runs_p"`
			ACF   []float64 `json:"acf"`
			LBQ   float64   `json:"lb_q"`
			LBP   float64   `json:"lb_p"`
		}
	}
	if err := json.Unmarshal(b, &g); err != nil {
		t.Fatal(err)
	}
	return g.Serial
}

func relClose(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(math.Abs(b), 1e-300) }

func TestSerialAgainstStatsmodels(t *testing.T) {
	cases := goldenSerial(t)
	if len(cases) == 0 {
		t.Fatal("no golden serial cases")
	}
	for _, c := range cases {
		var sb strings.Builder
		for _, v := range c.X {
			fmt.Fprintf(&sb, "%v\n", v)
		}
		p := writeFiles(t, [2]string{"x.txt", sb.String()})
		code, out, errs := run(t, serialCmd, "--json", "--lags", fmt.Sprint(c.Lags), p[0])
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", c.Name, code, errs)
		}
		var doc map[string]any
		if err := json.Unmarshal([]byte(out), &doc); err != nil {
			t.Fatal(err)
		}
		if got := keys(doc); !reflect.DeepEqual(got, []string{"acf", "ljung_box", "n", "name", "runs"}) {
			t.Fatalf("keys %v", got)
		}
		runs := doc["runs"].(map[string]any)
		lb := doc["ljung_box"].(map[string]any)
		acf := doc["acf"].([]any)
		if len(acf) != c.Lags {
			t.Fatalf("%s: %d acf values, want %d", c.Name, len(acf), c.Lags)
		}
		for k, v := range acf {
			if !relClose(v.(float64), c.ACF[k+1]) {
				t.Errorf("%s: acf[%d] = %v, statsmodels %v", c.Name, k+1, v, c.ACF[k+1])
			}
		}
		if !relClose(runs["z"].(float64), c.RunsZ) || !relClose(runs["p"].(float64), c.RunsP) {
			t.Errorf("%s: runs z %v p %v, statsmodels %v %v", c.Name, runs["z"], runs["p"], c.RunsZ, c.RunsP)
		}
		if !relClose(lb["q"].(float64), c.LBQ) || !relClose(lb["p"].(float64), c.LBP) || lb["lags"].(float64) != float64(c.Lags) {
			t.Errorf("%s: ljung-box %v, statsmodels Q %v p %v", c.Name, lb, c.LBQ, c.LBP)
		}
	}
}

func TestSerialTable(t *testing.T) {
	p := writeFiles(t, [2]string{"x", "1\n3\n1\n3\n1\n3\n1\n3\n"})
	code, out, errs := run(t, serialCmd, p[0], "--lags", "2")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, want := range []string{"8 runs", "Ljung-Box at lag 2", "  1  -0.875"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

func TestSerialBadInput(t *testing.T) {
	for _, c := range []struct {
		name, content string
		args          []string
		want          string
	}{
		{"empty", "", nil, "FILE: no values"},
		{"non-numeric", "1\n2\nabc\n", nil, "FILE:3:"},
		{"nan", "1\nnan\n3\n", nil, "FILE:2:"},
		{"zero lags", "1\n2\n3\n", []string{"--lags", "0"}, "--lags 0"},
		{"negative lags", "1\n2\n3\n", []string{"--lags", "-2"}, "at least 1"},
		{"missing column", "a\n1\n", []string{"--column", "b"}, "FILE:1: no column"},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := writeFiles(t, [2]string{"s.txt", c.content})
			code, out, errs := run(t, serialCmd, append(c.args, p[0])...)
			if code != 2 || out != "" {
				t.Errorf("exit %d stdout %q, want 2 and nothing", code, out)
			}
			if want := strings.ReplaceAll(c.want, "FILE", p[0]); !strings.Contains(errs, want) {
				t.Errorf("stderr %q lacks %q", errs, want)
			}
		})
	}
	code, out, _ := run(t, serialCmd, "a", "b")
	if code != 2 || out != "" {
		t.Errorf("two files: exit %d", code)
	}
}

// TestSerialDegenerate: samples too short (or too flat) for a statistic
// report it as "-" / null with the reason, keep the statistics they do
// support, exit 0, never print p = 0 for an undefined test, and never
// advise a smaller --lags that would not help.
func TestSerialDegenerate(t *testing.T) {
	for _, c := range []struct {
		name, content string
		lags          int
		table         []string // substrings of the table
		runsReason    string   // substring; "" means the runs test is defined
		lbReason      string   // substring; "" means Ljung-Box is defined
		acf           []any    // the JSON acf array: float64 or nil
	}{
		{"one value", "5\n", 3,
			[]string{"runs test about the median: - (the runs test needs at least 3 values, got 1)", "Ljung-Box at lag 3: - (Ljung-Box at lag 3 needs at least 4 values, got 1)", "  1  - ("},
			"needs at least 3 values, got 1", "needs at least 4 values, got 1", []any{nil}},
		{"two values", "1\n2\n", 1,
			[]string{"runs test about the median: - (", "Ljung-Box at lag 1: Q = 2, p = 0.157299", "  1  -0.5"},
			"needs at least 3 values, got 2", "", []any{-0.5}},
		{"three values, lag 3", "1\n2\n3\n", 3,
			[]string{"2 runs (2 >= median, 1 below)", "got 3; --lags 2 is the largest that 3 values allow", "  2  -0.5", "  3  - (the autocorrelation at lag k needs at least k+1 values; with 3, lag 3 is undefined)"},
			"", "needs at least 4 values, got 3", []any{0.0, -0.5, nil}},
		{"huge lag", "1\n2\n", 1_000_000_000,
			[]string{"Ljung-Box at lag 1000000000: - (", "--lags 1 is the largest that 2 values allow", "  1  -0.5", "  2  - (the autocorrelation at lag k needs at least k+1 values; with 2, lags 2..1000000000 are undefined)"},
			"needs at least 3 values, got 2", "needs at least 1000000001 values, got 2", []any{-0.5, nil}},
		{"constant", "4\n4\n4\n4\n", 2,
			[]string{"runs test about the median: - (all 4 values are on one side of the median", "Ljung-Box at lag 2: - (all values are equal"},
			"one side of the median", "all values are equal", []any{nil, nil}},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := writeFiles(t, [2]string{"s.txt", c.content})
			lags := fmt.Sprint(c.lags)
			code, out, errs := run(t, serialCmd, "--lags", lags, p[0])
			if code != 0 {
				t.Fatalf("table: exit %d: %s", code, errs)
			}
			for _, want := range c.table {
				if !strings.Contains(out, want) {
					t.Errorf("table lacks %q:\n%s", want, out)
				}
			}
			for _, bad := range []string{"p = 0,", "p = 0\n", "smaller --lags", "NaN", "Inf"} {
				if strings.Contains(out, bad) {
					t.Errorf("table holds %q:\n%s", bad, out)
				}
			}
			code, out, errs = run(t, serialCmd, "--json", "--lags", lags, p[0])
			if code != 0 {
				t.Fatalf("json: exit %d: %s", code, errs)
			}
			var doc struct {
				Runs     map[string]any `json:"runs"`
				ACF      []any          `json:"acf"`
				LjungBox map[string]any `json:"ljung_box"`
			}
			if err := json.Unmarshal([]byte(out), &doc); err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			checkUndefined(t, "runs", doc.Runs, []string{"z", "p"}, c.runsReason)
			checkUndefined(t, "ljung_box", doc.LjungBox, []string{"q", "p"}, c.lbReason)
			if !reflect.DeepEqual(doc.ACF, c.acf) {
				t.Errorf("acf %v, want %v", doc.ACF, c.acf)
			}
			if strings.Contains(out, "smaller --lags") {
				t.Errorf("JSON advises a smaller --lags:\n%s", out)
			}
		})
	}
}

// checkUndefined requires the fields to be null with a reason holding
// want, or, for want "", numbers in [0, Inf) with no reason.
func checkUndefined(t *testing.T, what string, m map[string]any, fields []string, want string) {
	t.Helper()
	reason, _ := m["reason"].(string)
	for _, f := range fields {
		v, isNum := m[f].(float64)
		switch {
		case want == "" && (!isNum || reason != ""):
			t.Errorf("%s.%s = %v (reason %q), want a number", what, f, m[f], reason)
		case want == "" && f == "p" && !(v > 0 && v <= 1):
			t.Errorf("%s.p = %v outside (0, 1]", what, v)
		case want != "" && (m[f] != nil || !strings.Contains(reason, want)):
			t.Errorf("%s.%s = %v reason %q, want null and a reason with %q", what, f, m[f], reason, want)
		}
	}
}

// FuzzSerial: for any sample and lag, every statistic is either a number
// (a p-value in [0, 1]) with no reason, or null with a reason; the ACF
// lags the sample is long enough for are numbers unless it is constant.
func FuzzSerial(f *testing.F) {
	f.Add([]byte{1, 2, 3}, uint8(1))
	f.Add([]byte{5}, uint8(3))
	f.Add([]byte{4, 4, 4, 4}, uint8(2))
	f.Add([]byte{1, 9, 1, 9, 1, 9, 2}, uint8(20))
	f.Fuzz(func(t *testing.T, in []byte, lags uint8) {
		if len(in) == 0 || lags == 0 {
			return
		}
		x := make([]float64, len(in))
		for i, b := range in {
			x[i] = float64(b % 16)
		}
		pr := newProgress(io.Discard, time.Now, "fuzz")
		doc, err := serial(pr, "x", x, int(lags))
		if err != nil {
			t.Fatal(err)
		}
		check := func(what string, p compare.Num, reason string) {
			f := float64(p)
			switch {
			case math.IsNaN(f) && reason == "":
				t.Fatalf("%v lags %d: %s null without a reason", x, lags, what)
			case !math.IsNaN(f) && (reason != "" || f < 0 || f > 1):
				t.Fatalf("%v lags %d: %s p = %v, reason %q", x, lags, what, f, reason)
			}
		}
		check("runs", doc.Runs.P, doc.Runs.Reason)
		check("ljung-box", doc.LjungBox.P, doc.LjungBox.Reason)
		if len(x) < 3 && doc.Runs.Reason == "" {
			t.Fatalf("%v: runs test defined for %d values", x, len(x))
		}
		if len(doc.ACF) != min(int(lags), len(x)) {
			t.Fatalf("%d acf values for lags %d and %d values", len(doc.ACF), lags, len(x))
		}
		constant := slices.Min(x) == slices.Max(x)
		for k, v := range doc.ACF {
			undefined := math.IsNaN(float64(v))
			if undefined != (constant || k+1 > len(x)-1) || (undefined && doc.ACFReason == "") {
				t.Fatalf("%v: acf lag %d = %v (reason %q)", x, k+1, v, doc.ACFReason)
			}
		}
	})
}

// TestHugeValuesNoDash: values near 1e300 get numbers, not "-" with no
// reason (or the short-sample reason on every lag): serial's ACF and
// Ljung-Box and compare's sd and cv are those of the sample scaled down.
func TestHugeValuesNoDash(t *testing.T) {
	var a, b strings.Builder
	for i := range 20 {
		fmt.Fprintf(&a, "%ge300\n", 1+float64((i*7)%11)/10)
		fmt.Fprintf(&b, "%ge300\n", 2+float64((i*5)%13)/10)
	}
	p := writeFiles(t, [2]string{"a", a.String()}, [2]string{"b", b.String()})
	code, out, errs := run(t, serialCmd, "--lags", "10", p[0])
	if code != 0 || strings.Contains(out, "-\n") || strings.Contains(out, "- (") || strings.Contains(out, "= -") {
		t.Errorf("serial: exit %d, a statistic undefined:\n%s%s", code, out, errs)
	}
	code, out, errs = run(t, serialCmd, "--lags", "25", p[0])
	if code != 0 || !strings.Contains(out, " 19  ") || strings.Contains(out, "  1  - (") || !strings.Contains(out, " 20  - (the autocorrelation at lag k needs at least k+1 values") {
		t.Errorf("serial --lags 25: exit %d, want lags 1..19 defined and lag 20 with the short-sample reason:\n%s%s", code, out, errs)
	}
	code, out, errs = run(t, compareCmd, p[0], p[1])
	if code != 0 {
		t.Fatalf("compare: exit %d: %s", code, errs)
	}
	for _, l := range strings.Split(out, "\n")[1:3] {
		if f := strings.Fields(l); len(f) < 5 || f[3] == "-" || f[4] == "-" {
			t.Errorf("compare: sd or cv undefined in %q", l)
		}
	}
}
