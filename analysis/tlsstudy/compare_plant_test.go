package tlsstudy

import (
	"math"
	"strings"
	"testing"
)

// TestPlantIncrease: a planted shift moves the round-level increase, its
// interval and every round by the shift, keeps the standard error, and
// re-tests and re-adjusts the family.
func TestPlantIncrease(t *testing.T) {
	r := committedResults(t)
	_, before, err := paperRole(r, "pq-kem")
	if err != nil {
		t.Fatal(err)
	}
	old := before.Rounds
	oldDiffs := append([]Num(nil), old.DiffsMs...)
	if err := PlantIncrease(r, "pq-kem", 1); err != nil {
		t.Fatal(err)
	}
	_, c, _ := paperRole(r, "pq-kem")
	rc := c.Rounds
	near := func(a, b Num) bool { return math.Abs(float64(a-b)) < 1e-12 }
	if !near(rc.IncreaseMs, old.IncreaseMs+1) || !near(rc.Lower, old.Lower+1) || !near(rc.Upper, old.Upper+1) || !near(rc.SE, old.SE) {
		t.Errorf("increase %v [%v, %v] se %v, want %v [%v, %v] se %v", rc.IncreaseMs, rc.Lower, rc.Upper, rc.SE, old.IncreaseMs+1, old.Lower+1, old.Upper+1, old.SE)
	}
	for i := range oldDiffs {
		if !math.IsNaN(float64(oldDiffs[i])) && !near(rc.DiffsMs[i], oldDiffs[i]+1) {
			t.Errorf("round %d: %v, want %v", i, rc.DiffsMs[i], oldDiffs[i]+1)
		}
	}
	if !(float64(c.PHolm) < 0.05) || rc.SignedRank.N == 0 {
		t.Errorf("after +1 ms in every round p_Holm is %v (signed-rank n %d), want significant", c.PHolm, rc.SignedRank.N)
	}
	for _, tc := range []struct {
		role, want string
		ms         float64
	}{
		{"pq-kem", "finite", math.NaN()},
		{"pq-kem", "finite", math.Inf(1)},
		{"no-such-role", "no comparison of role", 1},
	} {
		if err := PlantIncrease(r, tc.role, tc.ms); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("PlantIncrease(%s, %v): %v, want an error with %q", tc.role, tc.ms, err, tc.want)
		}
	}
	if err := PlantIncrease(&Results{}, "pq-kem", 1); err == nil {
		t.Error("results without a paper family: no error")
	}
}

// TestReplaceRounds: the comparison is derived from the given rounds as
// the analysis derives it.
func TestReplaceRounds(t *testing.T) {
	r := committedResults(t)
	diffs := []float64{0.031, 0.052, 0.064, 0.071, 0.077, 0.079, 0.088, 0.097, 0.112, 0.140}
	if err := ReplaceRounds(r, "pq-kem", 0.92, diffs); err != nil {
		t.Fatal(err)
	}
	_, c, _ := paperRole(r, "pq-kem")
	rc := c.Rounds
	if rc.NEff != 10 || math.Abs(float64(rc.IncreaseMs)-0.078) > 1e-12 || math.Abs(float64(rc.BaselineMs)-0.92) > 1e-12 {
		t.Errorf("n %d, increase %v, baseline %v; want 10, 0.078, 0.92", rc.NEff, rc.IncreaseMs, rc.BaselineMs)
	}
	// Ten positive rounds: the exact two-sided signed-rank p is 2/1024.
	if math.Abs(float64(rc.SignedRank.P)-2.0/1024) > 1e-12 || !(rc.SE > 0) {
		t.Errorf("p %v se %v, want 2/1024 and a positive standard error", rc.SignedRank.P, rc.SE)
	}
	if err := ReplaceRounds(r, "nothing", 1, diffs); err == nil {
		t.Error("an unknown role: no error")
	}
}
