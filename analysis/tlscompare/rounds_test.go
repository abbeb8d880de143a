package tlscompare

import (
	"math"
	"strings"
	"testing"

	"pqrepro/analysis/stats"
)

func seq(n int, f func(i int) float64) []float64 {
	x := make([]float64, n)
	for i := range x {
		x[i] = f(i)
	}
	return x
}

// TestCompareRoundsByHand: rounds 0..9, baseline 1 + i/10, target the
// baseline + 0.5 + i/100: every difference positive and untied, so the
// exact signed-rank p is 2/2^10, and the increase is the median
// difference, (0.54 + 0.55)/2.
func TestCompareRoundsByHand(t *testing.T) {
	base := seq(10, func(i int) float64 { return 1 + float64(i)/10 })
	tgt := seq(10, func(i int) float64 { return base[i] + 0.5 + float64(i)/100 })
	rc, err := CompareRounds(base, tgt, stats.ClusterConfig{Seed: 1, Stream: 2, Resamples: 500, Level: 0.95})
	if err != nil {
		t.Fatal(err)
	}
	if rc.NEff != 10 || math.Abs(float64(rc.IncreaseMs)-0.545) > 1e-12 || rc.Note != "" {
		t.Errorf("n_eff %d, increase %v, note %q", rc.NEff, rc.IncreaseMs, rc.Note)
	}
	if want := 2 / math.Exp2(10); math.Abs(float64(rc.SignedRank.P)-want) > 1e-15 || rc.SignedRank.Method != "exact" {
		t.Errorf("p %v (%s), want %v exact", rc.SignedRank.P, rc.SignedRank.Method, want)
	}
	if !(rc.Lower >= 0.5 && rc.Upper <= 0.59 && rc.Lower <= rc.IncreaseMs && rc.IncreaseMs <= rc.Upper) {
		t.Errorf("interval [%v, %v] around %v", rc.Lower, rc.Upper, rc.IncreaseMs)
	}
	if bm := float64(rc.BaselineMs); math.Abs(bm-1.45) > 1e-12 || math.Abs(float64(rc.IncreasePct)-100*0.545/1.45) > 1e-9 {
		t.Errorf("baseline %v, pct %v", rc.BaselineMs, rc.IncreasePct)
	}
}

// TestCompareRoundsBadInput: too few rounds, no spread, a missing round
// and a non-finite block median give a null interval and test with the
// reason, or an error, never a silent interval.
func TestCompareRoundsBadInput(t *testing.T) {
	ten := func(v float64) []float64 { return seq(10, func(int) float64 { return v }) }
	withNaN := func(x []float64, i int) []float64 { x = append([]float64(nil), x...); x[i] = math.NaN(); return x }
	ramp := seq(10, func(i int) float64 { return 1 + float64(i)/7 })
	noisy := seq(10, func(i int) float64 { return ramp[i] + 0.3 + 0.05*math.Sin(float64(i)) })
	for _, c := range []struct {
		name     string
		base, tg []float64
		note     string // "" means an interval is expected
		neff     int
	}{
		{"single round", []float64{1}, []float64{2}, "1 paired round(s): the interval and the signed-rank test need at least 6", 1},
		{"five rounds", ramp[:5], noisy[:5], "5 paired round(s)", 5},
		{"all equal", ten(1), ten(1), "every round difference is 0 ms: no spread", 10},
		{"constant shift", ten(1), ten(1.5), "every round difference is 0.5 ms", 10},
		{"target misses a round", ramp, withNaN(noisy, 4), "1 of 10 rounds lack a block of one of the two", 9},
		{"no paired round", []float64{1, math.NaN()}, []float64{math.NaN(), 2}, "no round has a block of both", 0},
		{"complete", ramp, noisy, "", 10},
	} {
		t.Run(c.name, func(t *testing.T) {
			rc, err := CompareRounds(c.base, c.tg, stats.ClusterConfig{Seed: 1, Stream: 1, Resamples: 200, Level: 0.95})
			if err != nil {
				t.Fatal(err)
			}
			if rc.NEff != c.neff || !strings.Contains(rc.Note, c.note) || (c.note == "") != (rc.Note == "") {
				t.Errorf("n_eff %d note %q, want %d and %q", rc.NEff, rc.Note, c.neff, c.note)
			}
			hasCI := !math.IsNaN(float64(rc.Lower)) && !math.IsNaN(float64(rc.Upper))
			hasP := !math.IsNaN(float64(rc.SignedRank.P))
			wantCI := c.note == "" || strings.Contains(c.note, "lack a block")
			if hasCI != wantCI || hasP != wantCI {
				t.Errorf("interval %v, test %v; want both %v", hasCI, hasP, wantCI)
			}
		})
	}
	if _, err := CompareRounds([]float64{1, 2, 3, 4, 5, 6}, []float64{1, 2, math.Inf(1), 4, 5, 6}, stats.ClusterConfig{Seed: 1, Stream: 1, Resamples: 100, Level: 0.95}); err == nil || !strings.Contains(err.Error(), "NaN or Inf") {
		t.Errorf("an infinite block median: err %v, want a non-finite error", err)
	}
}

func TestFriedmanRoundsBadInput(t *testing.T) {
	r := seq(8, func(i int) float64 { return float64(i) })
	f := FriedmanRounds([][]float64{r, r[:3]})
	if f.NEff != 3 || !strings.Contains(f.Note, "3 round(s) with a block of every configuration") || !math.IsNaN(float64(f.P)) {
		t.Errorf("%+v", f)
	}
	same := seq(8, func(int) float64 { return 1 })
	if f := FriedmanRounds([][]float64{same, same}); !strings.Contains(f.Note, "identical") || !math.IsNaN(float64(f.P)) {
		t.Errorf("all tied: %+v", f)
	}
}
