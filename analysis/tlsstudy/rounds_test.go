package tlsstudy

import (
	"math"
	"strings"
	"testing"

	"pqrepro/internal/repro"
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
	rc, err := compareRounds(base, tgt, 1, 2, 500)
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
			rc, err := compareRounds(c.base, c.tg, 1, 1, 200)
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
	if _, err := compareRounds([]float64{1, 2, 3, 4, 5, 6}, []float64{1, 2, math.Inf(1), 4, 5, 6}, 1, 1, 100); err == nil || !strings.Contains(err.Error(), "NaN or Inf") {
		t.Errorf("an infinite block median: err %v, want a non-finite error", err)
	}
}

func TestFriedmanRoundsBadInput(t *testing.T) {
	r := seq(8, func(i int) float64 { return float64(i) })
	f := friedmanRounds([][]float64{r, r[:3]})
	if f.NEff != 3 || !strings.Contains(f.Note, "3 round(s) with a block of every configuration") || !math.IsNaN(float64(f.P)) {
		t.Errorf("%+v", f)
	}
	same := seq(8, func(int) float64 { return 1 })
	if f := friedmanRounds([][]float64{same, same}); !strings.Contains(f.Note, "identical") || !math.IsNaN(float64(f.P)) {
		t.Errorf("all tied: %+v", f)
	}
}

// TestAnalyzeOneRound: a dataset with a single round (each configuration
// one block) has estimates but no round-level interval or test, and the
// tables say "---" with the reason.
func TestAnalyzeOneRound(t *testing.T) {
	recs := tinyRecords(map[string][]float64{
		"ed25519/X25519":             {1, 2, 3},
		"mldsa87/X25519":             {4, 5, 6},
		"ed25519/MLKEM1024":          {1.5, 2.5, 3.5},
		"ed25519/SecP384r1MLKEM1024": {7, 8, 9},
	})
	res, err := Analyze(recs, DefaultParams("quick"), Input{Path: "p", SHA256: repro.HashBytes(nil)})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range res.Families["paper"].Comparisons {
		if c.Rounds.NEff != 1 || !math.IsNaN(float64(c.PHolm)) || !math.IsNaN(float64(c.Rounds.Lower)) || !strings.Contains(c.Rounds.Note, "need at least 6") {
			t.Errorf("%s: %+v, p_holm %v", c.Target, c.Rounds, c.PHolm)
		}
	}
	if c := res.Families["paper"].Comparisons[0]; float64(c.Rounds.IncreaseMs) != 3 {
		t.Errorf("one round: increase %v, want the difference of the block medians, 3", c.Rounds.IncreaseMs)
	}
	files, err := Tables(res)
	if err != nil {
		t.Fatal(err)
	}
	paper := string(files[TablePaper])
	for _, want := range []string{"``---'': ", "1 paired round(s): the interval and the signed-rank test need at least 6"} {
		if !strings.Contains(paper, want) {
			t.Errorf("paper table lacks %q:\n%s", want, paper)
		}
	}
	if _, err := figureList(res, nil); err != nil {
		t.Fatalf("figures of a one-round run: %v", err)
	}
	b, err := MarshalResults(res)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := DecodeResults("tls.json", b); err != nil {
		t.Fatalf("the results of a one-round run do not read back: %v", err)
	}
}
