package stats

import (
	"encoding/json"
	"os"
	"testing"
)

// TestOracleRanks compares Ranks, and ACF and LjungBox on the ranks, with
// SciPy's rankdata and statsmodels' acf and acorr_ljungbox
// (testdata/oracle_ranks.py, testdata/ranks_golden.json) on heavy-tailed
// dependent series, where the raw ACF misses the dependence.
func TestOracleRanks(t *testing.T) {
	b, err := os.ReadFile("testdata/ranks_golden.json")
	if err != nil {
		t.Fatal(err)
	}
	var g struct {
		SerialRanks []struct {
			Name    string
			X       []float64
			Lags    int
			Ranks   []float64
			RankACF []float64 `json:"rank_acf"`
			RankLBQ float64   `json:"rank_lb_q"`
			RankLBP float64   `json:"rank_lb_p"`
			RawACF  []float64 `json:"raw_acf"`
		} `json:"serial_ranks"`
	}
	if err := json.Unmarshal(b, &g); err != nil {
		t.Fatal(err)
	}
	if len(g.SerialRanks) == 0 {
		t.Fatal("no cases")
	}
	const rel = 1e-9
	for _, c := range g.SerialRanks {
		r := Ranks(c.X)
		for i := range r {
			check(t, c.Name+" rank", r[i], c.Ranks[i], 0)
		}
		ra, err := ACF(r, c.Lags)
		if err != nil {
			t.Fatalf("%s: %v", c.Name, err)
		}
		for k := range ra {
			check(t, c.Name+" rank acf", ra[k], c.RankACF[k], rel)
		}
		lb, err := LjungBox(r, c.Lags)
		if err != nil {
			t.Fatalf("%s: %v", c.Name, err)
		}
		check(t, c.Name+" rank ljung-box Q", lb.Q, c.RankLBQ, rel)
		check(t, c.Name+" rank ljung-box p", lb.P, c.RankLBP, rel)
		xa, _ := ACF(c.X, c.Lags)
		for k := range xa {
			check(t, c.Name+" raw acf", xa[k], c.RawACF[k], rel)
		}
	}
}
