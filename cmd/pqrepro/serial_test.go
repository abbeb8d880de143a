package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
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
		{"too many lags", "1\n2\n3\n", []string{"--lags", "3"}, "between 1 and n-1 = 2"},
		{"zero lags", "1\n2\n3\n", []string{"--lags", "0"}, "--lags 0"},
		{"constant", "4\n4\n4\n4\n", []string{"--lags", "1"}, "one side of the median"},
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
