package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"pqrepro/analysis/compare"
	"pqrepro/analysis/stats"
)

// writeFiles writes name -> content into a temp dir and returns the paths
// in the order given.
func writeFiles(t *testing.T, files ...[2]string) []string {
	t.Helper()
	return writeFilesB(t, files...)
}

// writeFilesB is writeFiles for tests and benchmarks.
func writeFilesB(t testing.TB, files ...[2]string) []string {
	t.Helper()
	dir := t.TempDir()
	var paths []string
	for _, f := range files {
		p := filepath.Join(dir, f[0])
		if err := os.WriteFile(p, []byte(f[1]), 0o644); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	return paths
}

func run(t *testing.T, f func([]string, *bytes.Buffer, *bytes.Buffer) int, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := f(args, &out, &errb)
	return code, out.String(), errb.String()
}

func compareCmd(args []string, out, errb *bytes.Buffer) int { return runCompare(args, out, errb) }

func keys(m map[string]any) []string {
	var k []string
	for s := range m {
		k = append(k, s)
	}
	sort.Strings(k)
	return k
}

func TestCompareJSONShape(t *testing.T) {
	p := writeFiles(t,
		[2]string{"base.txt", "3.9\n4.1\n3.8\n4.0\n3.95\n4.2\n"},
		[2]string{"mldsa.txt", "8.5\n8.9\n8.1\n9.2\n8.7\n"})
	plain := writeFiles(t, [2]string{"hybrid.txt", "13\n12.5\n12.9\n13.4\n12.0\n"})
	code, out, errs := run(t, compareCmd, "--json", p[0], p[1], plain[0], "--seed", "9")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var doc map[string]any
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("invalid JSON: %v\n%s", err, out)
	}
	if got := keys(doc); !reflect.DeepEqual(got, []string{"kruskal", "pairs", "samples"}) {
		t.Fatalf("top-level keys %v", got)
	}
	s := doc["samples"].([]any)
	if len(s) != 3 {
		t.Fatalf("%d samples", len(s))
	}
	wantS := []string{"cv", "mean", "median", "n", "name", "p95", "p99", "q1", "q3", "sd"}
	if got := keys(s[0].(map[string]any)); !reflect.DeepEqual(got, wantS) {
		t.Fatalf("sample keys %v, want %v", got, wantS)
	}
	pairs := doc["pairs"].([]any)
	if len(pairs) != 2 {
		t.Fatalf("%d pairs", len(pairs))
	}
	wantP := []string{"a", "a12", "a12_magnitude", "b", "cliffs_delta", "cliffs_delta_ci", "cliffs_magnitude",
		"hodges_lehmann", "median_diff", "p", "p_bonferroni", "p_holm", "u"}
	p0 := pairs[0].(map[string]any)
	if got := keys(p0); !reflect.DeepEqual(got, wantP) {
		t.Fatalf("pair keys %v, want %v", got, wantP)
	}
	if p0["a"] != p[0] || p0["b"] != p[1] {
		t.Fatalf("pair names %v %v", p0["a"], p0["b"])
	}
	// U of A: every B value exceeds every A value, so U_A = 0; exact
	// p = 2/C(11,5) = 2/462; Holm over 2 pairs doubles the smallest.
	if p0["u"].(float64) != 0 || !closeTo(p0["p"].(float64), 2.0/462) || !closeTo(p0["p_holm"].(float64), 4.0/462) {
		t.Fatalf("u/p/p_holm = %v %v %v", p0["u"], p0["p"], p0["p_holm"])
	}
	if p0["cliffs_delta"].(float64) != 1 || p0["a12"].(float64) != 1 || p0["cliffs_magnitude"] != "large" || p0["a12_magnitude"] != "large" {
		t.Fatalf("effect sizes %v", p0)
	}
	if ci := p0["cliffs_delta_ci"].([]any); len(ci) != 2 || ci[1].(float64) != 1 {
		t.Fatalf("ci %v", ci)
	}
	if !closeTo(p0["median_diff"].(float64), 8.7-3.975) || !closeTo(p0["hodges_lehmann"].(float64), 4.7) {
		t.Fatalf("median_diff %v hl %v", p0["median_diff"], p0["hodges_lehmann"])
	}
	k := doc["kruskal"].(map[string]any)
	if got := keys(k); !reflect.DeepEqual(got, []string{"epsilon2", "h", "p"}) {
		t.Fatalf("kruskal keys %v", got)
	}
	// Deterministic output: the same run gives the same bytes.
	_, out2, _ := run(t, compareCmd, "--json", p[0], p[1], plain[0], "--seed", "9")
	if out != out2 {
		t.Fatal("two runs differ")
	}
}

func closeTo(a, b float64) bool {
	d := a - b
	if d < 0 {
		d = -d
	}
	return d <= 1e-12*max(1, b, -b)
}

func TestCompareTwoSamplesKruskalNull(t *testing.T) {
	p := writeFiles(t, [2]string{"a.csv", "x,y\n1,1.5\n2,2.5\n3,3.5\n"}, [2]string{"b.csv", "y,x\n4,0\n5,0\n6,0\n"})
	code, out, errs := run(t, compareCmd, "--json", "--column", "y", p[0], p[1])
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var doc map[string]json.RawMessage
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	if string(doc["kruskal"]) != "null" {
		t.Fatalf("kruskal = %s, want null with two samples", doc["kruskal"])
	}
	if !strings.Contains(out, `"median": 2.5`) || !strings.Contains(out, `"median": 5`) {
		t.Fatalf("column y not read:\n%s", out)
	}
}

func TestCompareTable(t *testing.T) {
	p := writeFiles(t, [2]string{"a", "1\n2\n3\n4\n"}, [2]string{"b", "3\n4\n5\n6\n7\n"})
	code, out, errs := run(t, compareCmd, "--seed", "77", "--resamples", "300", p[0], p[1])
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, want := range []string{"median", "Cliff's delta", "seed 77", "300 resamples", "Hodges-Lehmann 95% CI"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "Kruskal") {
		t.Errorf("Kruskal-Wallis with two samples:\n%s", out)
	}
}

// TestCompareBootstrapMethods: the table's interval is the one
// stats.BootstrapMedianDiff gives for the method chosen, on the samples in
// file order (the values method draws by index, so handing it sorted
// samples would change its numbers).
func TestCompareBootstrapMethods(t *testing.T) {
	x := []float64{4.1, 3.2, 5.9, 3.3, 4.8, 3.9, 6.2, 3.1, 4.4}
	y := []float64{5.2, 4.9, 7.1, 4.2, 6.6, 5.5, 4.7, 6.0}
	var a, b strings.Builder
	for _, v := range x {
		fmt.Fprintln(&a, v)
	}
	for _, v := range y {
		fmt.Fprintln(&b, v)
	}
	p := writeFiles(t, [2]string{"a", a.String()}, [2]string{"b", b.String()})
	for _, m := range []stats.BootstrapMethod{stats.ResampleOrderStats, stats.ResampleValues} {
		want, err := stats.BootstrapMedianDiff(x, y, stats.BootstrapConfig{Seed: 5, Resamples: 400, Level: 0.95, Method: m})
		if err != nil {
			t.Fatal(err)
		}
		code, out, errs := run(t, compareCmd, "--seed", "5", "--resamples", "400", "--bootstrap", string(m), p[0], p[1])
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errs)
		}
		line := fmt.Sprintf("bootstrap CI [%s, %s] (400 resamples, %s, seed 5)", compare.FormatNum(compare.Num(want.Lower)), compare.FormatNum(compare.Num(want.Upper)), m)
		if !strings.Contains(out, line) {
			t.Errorf("%s: table lacks %q:\n%s", m, line, out)
		}
	}
}

func TestCompareBadInput(t *testing.T) {
	good := "1\n2\n3\n"
	for _, c := range []struct {
		name    string
		files   [][2]string
		extra   []string
		wantErr string // substring of stderr; "FILE" is replaced by the path of the bad file
	}{
		{"empty file", [][2]string{{"a", good}, {"empty", ""}}, nil, "FILE: no values"},
		{"non-numeric", [][2]string{{"a", good}, {"bad", "1\n2\nx12\n"}}, nil, "FILE:3: \"x12\" is not a number"},
		{"nan", [][2]string{{"nan", "1\nNaN\n"}, {"a", good}}, nil, "FILE:2: \"NaN\" is not a finite number"},
		{"inf", [][2]string{{"a", good}, {"inf", "-inf\n"}}, nil, "FILE:1:"},
		{"single sample", [][2]string{{"a", good}}, nil, "need at least two sample files"},
		{"missing column", [][2]string{{"a.csv", "t\n1\n"}, {"b.csv", "u\n2\n"}}, []string{"--column", "t"}, "FILE:1: no column \"t\""},
		{"bad flag", [][2]string{{"a", good}, {"b", good}}, []string{"--nope"}, "flag provided but not defined"},
		{"bad resamples", [][2]string{{"a", good}, {"b", good}}, []string{"--resamples", "0"}, "--resamples"},
		{"too many resamples", [][2]string{{"a", good}, {"b", good}}, []string{"--resamples", "1000000000"}, "--resamples must be 1 to 1000000"},
		{"bad seed", [][2]string{{"a", good}, {"b", good}}, []string{"--seed", "-1"}, "invalid value"},
		{"bad bootstrap", [][2]string{{"a", good}, {"b", good}}, []string{"--bootstrap", "jackknife"}, `--bootstrap "jackknife": want order-statistics or values`},
	} {
		t.Run(c.name, func(t *testing.T) {
			paths := writeFiles(t, c.files...)
			bad := paths[len(paths)-1]
			if c.name == "nan" {
				bad = paths[0]
			}
			code, out, errs := run(t, compareCmd, append(c.extra, paths...)...)
			if code != 2 {
				t.Errorf("exit %d, want 2", code)
			}
			if out != "" {
				t.Errorf("stdout not empty: %q", out)
			}
			want := strings.ReplaceAll(c.wantErr, "FILE", bad)
			if !strings.Contains(errs, want) {
				t.Errorf("stderr %q lacks %q", errs, want)
			}
		})
	}
	// A missing file.
	code, out, errs := run(t, compareCmd, "--json", "no-such-file", "other")
	if code != 2 || out != "" || !strings.Contains(errs, "no-such-file") {
		t.Errorf("missing file: exit %d out %q err %q", code, out, errs)
	}
}

func TestCompareHelp(t *testing.T) {
	code, out, errs := run(t, compareCmd, "-h")
	if code != 0 || out != "" || !strings.Contains(errs, "usage: pqrepro compare") {
		t.Fatalf("help: %d %q %q", code, out, errs)
	}
}

func TestCompareRegistered(t *testing.T) {
	var out, errb bytes.Buffer
	dispatch([]string{"help"}, &out, &errb)
	for _, name := range []string{"compare", "serial"} {
		if !strings.Contains(errb.String(), name) {
			t.Errorf("%s not registered:\n%s", name, errb.String())
		}
	}
}

func TestParseInterspersed(t *testing.T) {
	fs := newTestFlagSet()
	pos, err := parseInterspersed(fs.fs, []string{"a", "--json", "b", "--", "--c"})
	if err != nil || !slices.Equal(pos, []string{"a", "b", "--c"}) || !*fs.json {
		t.Fatalf("pos %v err %v json %v", pos, err, *fs.json)
	}
}

// fakeClock advances by step on every reading.
func fakeClock(step time.Duration) func() time.Time {
	t := time.Date(2026, 4, 3, 12, 0, 0, 0, time.UTC)
	return func() time.Time {
		t = t.Add(step)
		return t
	}
}

// TestProgress: with a clock on which every step takes 3 s, every step
// after the first (whose cost the model alone predicts) is expected to
// take over a second and prints one progress line with its ETA to
// stderr; stdout is the same as without progress. With the real clock
// and small samples nothing is printed.
func TestProgress(t *testing.T) {
	p := writeFiles(t, [2]string{"a", "1\n2\n3\n4\n"}, [2]string{"b", "3\n4\n5\n6\n7\n"}, [2]string{"c", "2\n2\n9\n"})
	for _, c := range []struct {
		name  string
		run   func(args []string, stdout, stderr io.Writer, now func() time.Time) int
		args  []string
		lines int // progress lines: steps minus the first of each phase
	}{
		// read 3 files; describe 3, 4 steps for each of 2 pairs, Kruskal-Wallis.
		{"compare", runCompareClock, []string{"--resamples", "50", p[0], p[1], p[2]}, 2 + 3 + 8 + 1},
		{"compare json", runCompareClock, []string{"--json", p[0], p[1], p[2]}, 2 + 3 + 6 + 1},
		// read 1 file; runs test, ACF and Ljung-Box.
		{"serial", runSerialClock, []string{"--lags", "2", p[0]}, 0 + 2},
	} {
		t.Run(c.name, func(t *testing.T) {
			var quiet, quietErr, out, errb bytes.Buffer
			if code := c.run(c.args, &quiet, &quietErr, time.Now); code != 0 || quietErr.Len() != 0 {
				t.Fatalf("real clock: exit %d, stderr %q", code, quietErr.String())
			}
			if code := c.run(c.args, &out, &errb, fakeClock(3*time.Second)); code != 0 {
				t.Fatalf("exit %d: %s", code, errb.String())
			}
			if out.String() != quiet.String() {
				t.Errorf("stdout differs with progress:\n%s\nvs\n%s", out.String(), quiet.String())
			}
			lines := strings.Split(strings.TrimSuffix(errb.String(), "\n"), "\n")
			if len(lines) != c.lines {
				t.Errorf("%d progress lines, want %d:\n%s", len(lines), c.lines, errb.String())
			}
			for _, l := range lines {
				if !strings.HasPrefix(l, "pqrepro ") || !strings.Contains(l, "] ") || !strings.Contains(l, " left)") {
					t.Errorf("progress line %q", l)
				}
			}
		})
	}
}

// TestProgressETA checks the figures of a progress line: the clock
// advances 2 s per reading, so the first step (cost 1) takes 2 s; the
// second (cost 2) starts 2 s later, at 12:00:06, and is expected to take
// 4 s, with the two remaining steps (cost 2 + 1) done 6 s later.
func TestProgressETA(t *testing.T) {
	var w bytes.Buffer
	pr := newProgress(&w, fakeClock(2*time.Second), "pqrepro test")
	nop := func() error { return nil }
	err := pr.run([]step{{Name: "one", Cost: 1 - compare.StepBase, Run: nop}, {Name: "two", Cost: 2 - compare.StepBase, Run: nop}, {Name: "three", Cost: 1 - compare.StepBase, Run: nop}})
	if err != nil {
		t.Fatal(err)
	}
	want := "pqrepro test: [2/3] two: about 4s; all 3 done about 12:00:12 (6s left)\n"
	if got, _, _ := strings.Cut(w.String(), "pqrepro test: [3/3]"); got != want {
		t.Errorf("got %q, want %q", w.String(), want)
	}
	// A failing step stops the run with its error.
	boom := errors.New("boom")
	if err := pr.run([]step{{Name: "bad", Cost: 0, Run: func() error { return boom }}, {Name: "never", Cost: 0, Run: func() error { t.Fatal("ran after an error"); return nil }}}); err != boom {
		t.Errorf("err %v, want boom", err)
	}
}

// BenchmarkCompare runs `pqrepro compare` end to end (reading the files
// included) on two samples of n exponential values each, in both output
// modes. cpu-s/op is the process's CPU time (user + system) per run,
// steadier than ns/op on a shared machine:
//
//	go test -run '^$' -bench Compare -benchtime 1x ./cmd/pqrepro
func BenchmarkCompare(b *testing.B) {
	for _, n := range []int{10_000, 100_000, 1_000_000} {
		r := rand.New(rand.NewPCG(11, 12))
		var files [][2]string
		for _, name := range []string{"a", "b"} {
			var sb strings.Builder
			for range n {
				sb.WriteString(strconv.FormatFloat(3.9+r.ExpFloat64(), 'g', -1, 64))
				sb.WriteByte('\n')
			}
			files = append(files, [2]string{name, sb.String()})
		}
		paths := writeFilesB(b, files...)
		for _, mode := range []string{"table", "json"} {
			args := paths
			if mode == "json" {
				args = append([]string{"--json"}, paths...)
			}
			b.Run(fmt.Sprintf("n=%d/%s", n, mode), func(b *testing.B) {
				var ru0, ru syscall.Rusage
				_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru0)
				for b.Loop() {
					if code := runCompareClock(args, io.Discard, io.Discard, time.Now); code != 0 {
						b.Fatalf("exit %d", code)
					}
				}
				_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
				cpu := ru.Utime.Nano() + ru.Stime.Nano() - ru0.Utime.Nano() - ru0.Stime.Nano()
				b.ReportMetric(float64(cpu)/1e9/float64(b.N), "cpu-s/op")
			})
		}
	}
}
