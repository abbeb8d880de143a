package agreement

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// betweenRuns makes k runs of n host-dependent estimate items (and one
// exact item, which must not count): item j has mean m_j in [1, 10] and
// within-run se 2 % of it; each run moves each item by a between-run
// deviation of sd tau·m_j on top of its within-run error.
func betweenRuns(seed uint64, k, n int, tau float64) ([]string, [][]Item) {
	rng := rand.New(rand.NewPCG(seed, 1))
	m := make([]float64, n)
	for j := range m {
		m[j] = 1 + 9*rng.Float64()
	}
	var ids []string
	var runs [][]Item
	for i := range k {
		ids = append(ids, "run"+itoa(i))
		var items []Item
		for j := range n {
			se := 0.02 * m[j]
			est := m[j] * (1 + tau*rng.NormFloat64() + 0.02*rng.NormFloat64())
			items = append(items, Item{Name: "t" + itoa(j), Class: HostDependent, Kind: Estimate, Ref: V(est, se)})
		}
		items = append(items, Item{Name: "bytes", Class: HostIndependent, Kind: Exact, Ref: V(float64(1000+i*50), 0)})
		runs = append(runs, items)
	}
	return ids, runs
}

// TestBetween: a known between-run spread is recovered within tolerance,
// none is found where there is none or the runs are identical, fewer
// than three runs give τ² = 0 with the caveat, and the runs are listed.
func TestBetween(t *testing.T) {
	for _, tc := range []struct {
		name      string
		k         int
		tau       float64
		lo, hi    float64 // bounds of the recovered τ_rel
		identical bool
		caveat    string
	}{
		{"sd 10 % over 5 runs", 5, 0.10, 0.085, 0.115, false, ""},
		{"sd 40 % over 3 runs", 3, 0.40, 0.33, 0.47, false, ""},
		{"no between-run spread", 5, 0, 0, 0.01, false, ""},
		{"identical runs", 4, 0.1, 0, 0, true, ""},
		{"two runs", 2, 0.1, 0, 0, false, "2 run(s)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ids, runs := betweenRuns(11, tc.k, 80, tc.tau)
			if tc.identical {
				for i := range runs {
					runs[i] = runs[0]
				}
			}
			b := Between(ids, runs)
			if tau := math.Sqrt(b.Tau2Rel); tau < tc.lo || tau > tc.hi {
				t.Errorf("τ_rel %.4f, want in [%g, %g] (%s)", tau, tc.lo, tc.hi, b)
			}
			if !strings.Contains(b.Caveat, tc.caveat) || (tc.caveat == "") != (b.Caveat == "") {
				t.Errorf("caveat %q, want %q", b.Caveat, tc.caveat)
			}
			if tc.caveat == "" && (b.Items != 80 || b.DF != 80*(tc.k-1)) {
				t.Errorf("%d items on %d df, want the 80 estimates (the exact item left out)", b.Items, b.DF)
			}
			if !strings.Contains(b.String(), ids[len(ids)-1]) {
				t.Errorf("the runs are not listed: %s", b)
			}
		})
	}
}

// TestBetweenWidensTheInterval: an estimate 3 within-run standard errors
// off is inconsistent without a between-run variance and consistent with
// one of that size; exact and direction items are left alone.
func TestBetweenWidensTheInterval(t *testing.T) {
	items := []Item{
		{Name: "t", Class: HostDependent, Kind: Estimate, Ref: V(10, 0.1), New: V(10.45, 0.1)},
		{Name: "b", Class: HostIndependent, Kind: Exact, Ref: V(5, 0), New: V(5, 0)},
		{Name: "d", Class: HostIndependent, Kind: Direction, Ref: V(10, 0.1), New: V(10.45, 0.1)},
	}
	judge := func(items []Item) Judged {
		return Judge(DefaultRule, Study{Name: "s", Items: items, HostsMatch: true}).Items[0]
	}
	if j := judge(items); j.Status != Inconsistent {
		t.Fatalf("without τ²: %v %s", j.Status, j.Why)
	}
	with := append([]Item(nil), items...)
	BetweenRun{Tau2Rel: 0.03 * 0.03}.Apply(with)
	if math.Abs(with[0].Tau2-0.09) > 1e-12 || with[1].Tau2 != 0 || with[2].Tau2 != 0 {
		t.Fatalf("applied τ²: %g %g %g", with[0].Tau2, with[1].Tau2, with[2].Tau2)
	}
	j := judge(with)
	if want := 1.959963984540054 * math.Sqrt(0.02+2*0.09); j.Status != Consistent || math.Abs(j.Hi-10-want) > 1e-9 {
		t.Errorf("with τ²: %v %s, interval [%g, %g], want ±%g", j.Status, j.Why, j.Lo, j.Hi, want)
	}
}

// TestBetweenAbsolute: deviations of one size on items of every size
// (a link's RTT offset in every difference) are recovered on the
// Absolute scale, also for items near zero, where the Relative scale
// gives them almost no width; Apply and String use the scale.
func TestBetweenAbsolute(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 1))
	const tau, runsN, itemsN = 0.3, 5, 40 // ms
	var ids []string
	var runs [][]Item
	for i := range runsN {
		ids = append(ids, "run"+itoa(i))
		var items []Item
		for j := range itemsN {
			m := 0.05 + 0.5*float64(j) // 0.05 .. 19.55 ms
			items = append(items, Item{Name: "d" + itoa(j), Unit: "ms", Class: HostDependent, Kind: Estimate, Ref: V(m+tau*rng.NormFloat64()+0.05*rng.NormFloat64(), 0.05)})
		}
		runs = append(runs, items)
	}
	b := BetweenScaled(ids, runs, Absolute)
	if got := math.Sqrt(b.Tau2Abs); got < 0.24 || got > 0.36 || b.Tau2Rel != 0 || b.Unit != "ms" {
		t.Errorf("absolute τ %.3f ms (rel %.3g, unit %q), want about %.1f", got, b.Tau2Rel, b.Unit, tau)
	}
	if !strings.Contains(b.String(), "absolute: between-run sd 0.") || !strings.Contains(b.String(), "ms²") {
		t.Errorf("String: %s", b)
	}
	near0 := []Item{{Name: "d0", Class: HostDependent, Kind: Estimate, Ref: V(0.05, 0.05)}}
	b.Apply(near0)
	if near0[0].Tau2 != b.Tau2Abs {
		t.Errorf("Apply on the absolute scale: Tau2 %g, want %g", near0[0].Tau2, b.Tau2Abs)
	}
	rel := Between(ids, runs)
	rel.Apply(near0)
	if near0[0].Tau2 >= b.Tau2Abs/10 {
		t.Errorf("the relative scale gives an item near zero τ² %g: this test does not tell the scales apart", near0[0].Tau2)
	}
}

// TestBetweenItemOfItsOwn: one item whose runs disagree far beyond the
// common τ² (as Go's ML-DSA-87 increase did over six quick runs on one
// host: 0.66-1.17 ms, within-run se 0.05-0.12, common τ_rel 4.6 %) keeps
// its own τ²; the others keep the common one; and a new run that the
// common τ² alone would call inconsistent on that item is consistent.
func TestBetweenItemOfItsOwn(t *testing.T) {
	ids, runs := betweenRuns(7, 3, 60, 0.02)
	wild := []float64{0.78, 1.04, 1.32} // ms, se 0.1: Q_j = 14.0 on 2 df
	for i := range runs {
		runs[i] = append(runs[i], Item{Name: "go pq-sig", Unit: "ms", Class: HostDependent, Kind: Estimate, Ref: V(wild[i], 0.1)})
	}
	b := Between(ids, runs)
	own, ok := b.PerItem["go pq-sig"]
	mean := (0.78 + 1.04 + 1.32) / 3
	if !ok || b.Raised < 1 || own <= b.Tau2Rel*mean*mean {
		t.Fatalf("the wild item's own τ² %g (ok %v, raised %d), common at its size %g: want its own, larger", own, ok, b.Raised, b.Tau2Rel*mean*mean)
	}
	// By hand: w = 100 each, ȳ = 1.0467, Q = 100·Σ(y-ȳ)² = 14.58, C = 300 - 30000/300 = 200.
	if want := (14.58 - 2) / 200; math.Abs(own-want) > 0.001 {
		t.Errorf("own τ² %.4f, want %.4f ms²", own, want)
	}
	if !strings.Contains(b.String(), "items with a larger τ² of their own") {
		t.Errorf("String does not say how many items keep their own τ²: %s", b)
	}
	items := []Item{
		{Name: "go pq-sig", Unit: "ms", Class: HostDependent, Kind: Estimate, Ref: V(1.32, 0.12), New: V(0.67, 0.054)},
		{Name: "t0", Class: HostDependent, Kind: Estimate, Ref: runs[2][0].Ref, New: runs[2][0].Ref},
	}
	judge := func(items []Item) Judged {
		return Judge(DefaultRule, Study{Name: "s", Items: items, HostsMatch: true}).Items[0]
	}
	common := append([]Item(nil), items...)
	BetweenRun{Tau2Rel: b.Tau2Rel}.Apply(common)
	if j := judge(common); j.Status != Inconsistent {
		t.Fatalf("with the common τ² alone the wild item is %v (%s): this test does not show the difference", j.Status, j.Why)
	}
	b.Apply(items)
	if items[0].Tau2 != own || items[1].Tau2 != math.Max(b.Tau2Rel*items[1].Ref.Est*items[1].Ref.Est, b.PerItem["t0"]) {
		t.Errorf("applied τ²: %g and %g", items[0].Tau2, items[1].Tau2)
	}
	if j := judge(items); j.Status != Consistent {
		t.Errorf("with its own τ² the wild item is %v: %s", j.Status, j.Why)
	}
}
