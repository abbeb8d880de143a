package stats

import (
	"encoding/json"
	"errors"
	"math"
	"os"
	"strings"
	"testing"
)

// goldenRounds mirrors testdata/golden_rounds.json (testdata/oracle_rounds.py).
type goldenRounds struct {
	Wilcoxon []struct {
		Name   string
		D      []float64
		Method string
		W, P   float64
	}
	Friedman []struct {
		Name   string
		Blocks [][]float64
		Q, P   float64
	}
}

func loadGoldenRounds(t *testing.T) goldenRounds {
	t.Helper()
	b, err := os.ReadFile("testdata/golden_rounds.json")
	if err != nil {
		t.Fatal(err)
	}
	var g goldenRounds
	if err := json.Unmarshal(b, &g); err != nil {
		t.Fatal(err)
	}
	if len(g.Wilcoxon) == 0 || len(g.Friedman) == 0 {
		t.Fatal("golden_rounds.json has no cases")
	}
	return g
}

func relClose(got, want, tol float64) bool {
	return math.Abs(got-want) <= tol*math.Max(1e-300, math.Abs(want))
}

func TestOracleWilcoxonSignedRank(t *testing.T) {
	for _, c := range loadGoldenRounds(t).Wilcoxon {
		t.Run(c.Name, func(t *testing.T) {
			r, err := WilcoxonSignedRank(c.D)
			if err != nil {
				t.Fatal(err)
			}
			want := SignedRankExact
			if c.Method == "approx" {
				want = SignedRankNormal
			}
			if r.Method != want {
				t.Errorf("method %s, SciPy used %s", r.Method, c.Method)
			}
			if !relClose(r.W, c.W, 1e-12) || !relClose(r.P, c.P, 1e-9) {
				t.Errorf("W = %v, p = %v; SciPy W = %v, p = %v", r.W, r.P, c.W, c.P)
			}
		})
	}
}

func TestOracleFriedman(t *testing.T) {
	for _, c := range loadGoldenRounds(t).Friedman {
		t.Run(c.Name, func(t *testing.T) {
			r, err := Friedman(c.Blocks)
			if err != nil {
				t.Fatal(err)
			}
			if !relClose(r.Q, c.Q, 1e-9) || !relClose(r.P, c.P, 1e-9) {
				t.Errorf("Q = %v, p = %v; SciPy Q = %v, p = %v", r.Q, r.P, c.Q, c.P)
			}
			if r.Blocks != len(c.Blocks) || r.DF != len(c.Blocks[0])-1 {
				t.Errorf("blocks %d df %d", r.Blocks, r.DF)
			}
		})
	}
}

func TestSignedRankSmallest(t *testing.T) {
	// All n differences positive: the smallest exact two-sided p, 2/2^n.
	for _, n := range []int{1, 5, 6, 20} {
		d := make([]float64, n)
		for i := range d {
			d[i] = float64(i + 1)
		}
		r, err := WilcoxonSignedRank(d)
		if err != nil {
			t.Fatal(err)
		}
		if want := math.Min(1, 2/math.Exp2(float64(n))); !relClose(r.P, want, 1e-12) || r.N != n {
			t.Errorf("n=%d: p = %v, want %v", n, r.P, want)
		}
	}
}

func TestSignedRankBadInput(t *testing.T) {
	for _, c := range []struct {
		name string
		d    []float64
		want error
	}{
		{"empty", nil, ErrEmpty},
		{"NaN", []float64{1, math.NaN()}, ErrNonFinite},
		{"Inf", []float64{1, math.Inf(1)}, ErrNonFinite},
		{"all zero", []float64{0, 0, 0}, ErrAllZero},
	} {
		if _, err := WilcoxonSignedRank(c.d); !errors.Is(err, c.want) {
			t.Errorf("%s: err %v, want %v", c.name, err, c.want)
		}
	}
}

func TestFriedmanBadInput(t *testing.T) {
	for _, c := range []struct {
		name   string
		blocks [][]float64
		want   string
	}{
		{"one block", [][]float64{{1, 2, 3}}, "at least 2 blocks"},
		{"one treatment", [][]float64{{1}, {2}}, "at least 2 treatments"},
		{"ragged", [][]float64{{1, 2, 3}, {1, 2}}, "every block needs"},
		{"NaN", [][]float64{{1, 2}, {math.NaN(), 1}}, "NaN or Inf"},
		{"all tied", [][]float64{{1, 1}, {2, 2}}, "identical"},
	} {
		if _, err := Friedman(c.blocks); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err %v, want %q", c.name, err, c.want)
		}
	}
}

func TestClusterBootstrap(t *testing.T) {
	d := []float64{0.5, 0.7, 0.2, 0.9, 0.4, 0.6, 0.8, 0.3, 0.55, 0.65}
	stat := func(idx []int) float64 { return MedianAt(d, idx) }
	cfg := ClusterConfig{Seed: 1, Stream: ClusterStream, Resamples: 999, Level: 0.95}
	a, err := ClusterBootstrap(len(d), stat, cfg)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := ClusterBootstrap(len(d), stat, cfg)
	if a != b {
		t.Errorf("not deterministic: %+v vs %+v", a, b)
	}
	if a.Estimate != 0.575 || !(a.Lower < a.Estimate && a.Estimate < a.Upper) || a.Lower < 0.2 || a.Upper > 0.9 {
		t.Errorf("%+v", a)
	}
	for _, c := range []struct {
		name string
		n    int
		cfg  ClusterConfig
		stat func([]int) float64
		want string
	}{
		{"one cluster", 1, cfg, stat, "at least 2 clusters"},
		{"one resample", 10, ClusterConfig{Resamples: 1, Level: 0.95}, stat, "at least 2 resamples"},
		{"bad level", 10, ClusterConfig{Resamples: 10, Level: 1}, stat, "outside (0, 1)"},
		{"NaN statistic", 10, cfg, func([]int) float64 { return math.NaN() }, "is NaN"},
	} {
		if _, err := ClusterBootstrap(c.n, c.stat, c.cfg); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err %v, want %q", c.name, err, c.want)
		}
	}
}

func TestMedianOfDifferences(t *testing.T) {
	m, d, err := MedianOfDifferences([]float64{1, 2, 3}, []float64{2, 2, 5})
	if err != nil || m != 1 || len(d) != 3 || d[2] != 2 {
		t.Errorf("%v %v %v", m, d, err)
	}
	if _, _, err := MedianOfDifferences([]float64{1}, []float64{1, 2}); err == nil {
		t.Error("no error for unequal lengths")
	}
	if _, _, err := MedianOfDifferences([]float64{math.Inf(-1)}, []float64{1}); !errors.Is(err, ErrNonFinite) {
		t.Errorf("err %v", err)
	}
}
