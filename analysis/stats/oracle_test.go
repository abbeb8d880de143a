package stats

import (
	"bytes"
	"encoding/json"
	"flag"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

var update = flag.Bool("update", false, "regenerate testdata/golden.json by running testdata/oracle.py (needs Debian's python3-scipy, python3-statsmodels and r-base-core)")

// golden mirrors testdata/golden.json, written by testdata/oracle.py.
type golden struct {
	MannWhitneyU []struct {
		Name string
		X, Y []float64
		U, P float64
	} `json:"mannwhitneyu"`
	Kruskal []struct {
		Name           string
		Groups         [][]float64
		H, P, Epsilon2 float64
	} `json:"kruskal"`
	PAdjust []struct {
		P, Holm, Bonferroni []float64
	} `json:"p_adjust"`
	Describe []struct {
		Name                               string
		X                                  []float64
		N                                  int
		Mean                               float64
		SD                                 *float64
		Min, Max, Median, Q1, Q3, P95, P99 float64
		RType7                             []float64 `json:"r_type7"`
	} `json:"describe"`
	HodgesLehmann []struct {
		Name                   string
		X, Y                   []float64
		Exact                  bool
		Estimate, Lower, Upper float64
		MedianOfDifferences    float64 `json:"median_of_differences"`
	} `json:"hodges_lehmann"`
	Cliff []struct {
		Name                          string
		X, Y                          []float64
		Delta, Var, Lower, Upper, A12 float64
	} `json:"cliff"`
	Serial []struct {
		Name  string
		X     []float64
		Lags  int
		RunsZ float64 `json:"runs_z"`
		RunsP float64 `json:"runs_p"`
		ACF   []float64
		LBQ   float64 `json:"lb_q"`
		LBP   float64 `json:"lb_p"`
	} `json:"serial"`
}

const goldenPath = "testdata/golden.json"

func loadGolden(t *testing.T) golden {
	t.Helper()
	if *update {
		py := "/usr/bin/python3"
		if _, err := exec.LookPath("Rscript"); err != nil {
			t.Fatalf("-update needs R (apt-get install r-base-core): %v", err)
		}
		cmd := exec.Command(py, filepath.Join("testdata", "oracle.py"))
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		if err := cmd.Run(); err != nil {
			t.Fatalf("run oracle.py (needs python3-scipy python3-statsmodels r-base-core): %v\n%s", err, errb.String())
		}
		tmp := goldenPath + ".tmp"
		if err := os.WriteFile(tmp, out.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, goldenPath); err != nil {
			t.Fatal(err)
		}
	}
	b, err := os.ReadFile(goldenPath)
	if err != nil {
		t.Fatalf("read golden values: %v (regenerate with go test -run Oracle -update)", err)
	}
	var g golden
	if err := json.Unmarshal(b, &g); err != nil {
		t.Fatalf("parse %s: %v", goldenPath, err)
	}
	return g
}

// close reports whether got agrees with want to rel relative tolerance
// (absolute tolerance rel when want is 0).
func near(got, want, rel float64) bool {
	if got == want {
		return true
	}
	d := math.Abs(got - want)
	return d <= rel*math.Max(math.Abs(want), 1e-300) || (want == 0 && d <= rel)
}

const rel = 1e-9

func check(t *testing.T, what string, got, want, tol float64) {
	t.Helper()
	if !near(got, want, tol) {
		t.Errorf("%s = %.17g, oracle %.17g (rel diff %.3g, tolerance %g)", what, got, want, math.Abs(got-want)/math.Abs(want), tol)
	}
}

func TestOracleMannWhitney(t *testing.T) {
	g := loadGolden(t)
	if len(g.MannWhitneyU) == 0 {
		t.Fatal("no Mann-Whitney cases in golden file")
	}
	for _, c := range g.MannWhitneyU {
		r, err := MannWhitneyU(c.X, c.Y)
		if err != nil {
			t.Errorf("%s: %v", c.Name, err)
			continue
		}
		check(t, c.Name+" U", r.U, c.U, rel)
		check(t, c.Name+" p", r.P, c.P, rel)
	}
}

func TestOracleKruskal(t *testing.T) {
	g := loadGolden(t)
	for _, c := range g.Kruskal {
		r, err := KruskalWallis(c.Groups...)
		if err != nil {
			t.Errorf("%s: %v", c.Name, err)
			continue
		}
		check(t, c.Name+" H", r.H, c.H, rel)
		check(t, c.Name+" p", r.P, c.P, rel)
		check(t, c.Name+" epsilon2", r.Epsilon2, c.Epsilon2, rel)
	}
}

func TestOraclePAdjust(t *testing.T) {
	g := loadGolden(t)
	for _, c := range g.PAdjust {
		h, b := Holm(c.P), Bonferroni(c.P)
		for i := range c.P {
			check(t, "holm", h[i], c.Holm[i], rel)
			check(t, "bonferroni", b[i], c.Bonferroni[i], rel)
		}
	}
}

func TestOracleDescribe(t *testing.T) {
	g := loadGolden(t)
	for _, c := range g.Describe {
		s, err := Describe(c.X)
		if err != nil {
			t.Errorf("%s: %v", c.Name, err)
			continue
		}
		if s.N != c.N {
			t.Errorf("%s: n = %d, want %d", c.Name, s.N, c.N)
		}
		check(t, c.Name+" mean", s.Mean, c.Mean, rel)
		if c.SD == nil {
			if !math.IsNaN(s.SD) {
				t.Errorf("%s: sd = %v, want NaN for n = 1", c.Name, s.SD)
			}
		} else {
			check(t, c.Name+" sd", s.SD, *c.SD, rel)
			check(t, c.Name+" cv", s.CV, *c.SD/c.Mean, rel)
		}
		check(t, c.Name+" min", s.Min, c.Min, 0)
		check(t, c.Name+" max", s.Max, c.Max, 0)
		check(t, c.Name+" median", s.Median, c.Median, rel)
		check(t, c.Name+" q1", s.Q1, c.Q1, rel)
		check(t, c.Name+" q3", s.Q3, c.Q3, rel)
		check(t, c.Name+" p95", s.P95, c.P95, rel)
		check(t, c.Name+" p99", s.P99, c.P99, rel)
		for i, p := range []float64{0.25, 0.5, 0.75, 0.95, 0.99} {
			q, err := Quantile(c.X, p)
			if err != nil {
				t.Fatal(err)
			}
			check(t, c.Name+" R type 7", q, c.RType7[i], rel)
		}
	}
}

func TestOracleHodgesLehmann(t *testing.T) {
	g := loadGolden(t)
	for _, c := range g.HodgesLehmann {
		r, err := HodgesLehmann(c.X, c.Y, 0.95)
		if err != nil {
			t.Errorf("%s: %v", c.Name, err)
			continue
		}
		if (r.Method == HLExact) != c.Exact {
			t.Errorf("%s: method %s, oracle exact=%v", c.Name, r.Method, c.Exact)
		}
		// The median of the differences is exact in both branches.
		check(t, c.Name+" shift vs numpy median of differences", r.Shift, c.MedianOfDifferences, rel)
		if c.Exact {
			check(t, c.Name+" shift", r.Shift, c.Estimate, rel)
			check(t, c.Name+" lower", r.Lower, c.Lower, rel)
			check(t, c.Name+" upper", r.Upper, c.Upper, rel)
			continue
		}
		// R finds the asymptotic limits and estimate with uniroot(tol =
		// 1e-4); ours are the exact order statistics R converges to.
		for _, v := range [][3]float64{{r.Shift, c.Estimate}, {r.Lower, c.Lower}, {r.Upper, c.Upper}} {
			if math.Abs(v[0]-v[1]) > 2e-4 {
				t.Errorf("%s: %.9g vs R %.9g, beyond R's root tolerance", c.Name, v[0], v[1])
			}
		}
	}
}

func TestOracleCliff(t *testing.T) {
	g := loadGolden(t)
	for _, c := range g.Cliff {
		r, err := CliffsDelta(c.X, c.Y, 0.95)
		if err != nil {
			t.Errorf("%s: %v", c.Name, err)
			continue
		}
		check(t, c.Name+" delta", r.Delta, c.Delta, rel)
		check(t, c.Name+" var", r.Var, c.Var, rel)
		check(t, c.Name+" lower", r.Lower, c.Lower, rel)
		check(t, c.Name+" upper", r.Upper, c.Upper, rel)
		a, err := VarghaDelaneyA12(c.X, c.Y)
		if err != nil {
			t.Fatal(err)
		}
		check(t, c.Name+" A12", a.A12, c.A12, rel)
	}
}

func TestOracleSerial(t *testing.T) {
	g := loadGolden(t)
	for _, c := range g.Serial {
		rr, err := RunsTest(c.X)
		if err != nil {
			t.Errorf("%s: %v", c.Name, err)
			continue
		}
		check(t, c.Name+" runs z", rr.Z, c.RunsZ, rel)
		check(t, c.Name+" runs p", rr.P, c.RunsP, rel)
		r, err := ACF(c.X, c.Lags)
		if err != nil {
			t.Fatal(err)
		}
		for k := range r {
			check(t, c.Name+" acf", r[k], c.ACF[k], rel)
		}
		lb, err := LjungBox(c.X, c.Lags)
		if err != nil {
			t.Fatal(err)
		}
		check(t, c.Name+" ljung-box Q", lb.Q, c.LBQ, rel)
		check(t, c.Name+" ljung-box p", lb.P, c.LBP, rel)
	}
}
