package stats

import (
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// Published worked examples, checked by hand against the sources.
func TestPublishedExamples(t *testing.T) {
	// SciPy 1.10 scipy.stats.mstats.kruskal docstring (batteries).
	k, err := KruskalWallis([]float64{6.3, 5.4, 5.7, 5.2, 5.0}, []float64{6.9, 7.0, 6.1, 7.9}, []float64{7.2, 6.9, 6.1, 6.5})
	if err != nil {
		t.Fatal(err)
	}
	check(t, "kruskal H", k.H, 7.113812154696133, 1e-12)
	check(t, "kruskal p", k.P, 0.028526948491942164, 1e-10)
	// effsize's recorded output for its documented example:
	// delta -0.25 (small), 95% CI [-0.7265846, 0.3890062].
	treatment := []float64{10, 10, 20, 20, 20, 30, 30, 30, 40, 50}
	control := []float64{10, 20, 30, 40, 40, 50}
	c, err := CliffsDelta(control, treatment, 0.95)
	if err != nil {
		t.Fatal(err)
	}
	if c.Delta != -0.25 || c.Magnitude != Small {
		t.Errorf("delta = %v %s, want -0.25 small", c.Delta, c.Magnitude)
	}
	check(t, "cliff lower", c.Lower, -0.7265846, 1e-7)
	check(t, "cliff upper", c.Upper, 0.3890062, 1e-7)
	// SciPy mannwhitneyu docstring: males vs females, U1 = 17, exact
	// two-sided p = 0.1111.
	m, err := MannWhitneyU([]float64{19, 22, 16, 29, 24}, []float64{20, 11, 17, 12})
	if err != nil {
		t.Fatal(err)
	}
	if m.U != 17 || m.Method != MWUExact {
		t.Errorf("U = %v (%s), want 17 exact", m.U, m.Method)
	}
	check(t, "mwu p", m.P, 1.0/9, 1e-12)
}

func randSample(r *rand.Rand, n int, loc float64, ties bool) []float64 {
	x := make([]float64, n)
	for i := range x {
		if ties {
			x[i] = loc + float64(r.IntN(7))
		} else {
			x[i] = loc + r.ExpFloat64()
		}
	}
	return x
}

// Properties that must hold for any data.
func TestProperties(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for trial := range 200 {
		n1, n2 := 1+r.IntN(40), 1+r.IntN(40)
		ties := trial%2 == 0
		x, y := randSample(r, n1, 0, ties), randSample(r, n2, 0.5, ties)
		mw, err := MannWhitneyU(x, y)
		if err != nil {
			t.Fatal(err)
		}
		if mw.U+mw.UY != float64(n1*n2) {
			t.Fatalf("U_A + U_B = %v, want %d", mw.U+mw.UY, n1*n2)
		}
		if !(mw.P >= 0 && mw.P <= 1) {
			t.Fatalf("p = %v", mw.P)
		}
		cd, _ := CliffsDelta(x, y, 0.95)
		a, _ := VarghaDelaneyA12(x, y)
		if !near(a.A12, (cd.Delta+1)/2, 1e-12) {
			t.Fatalf("A12 %v != (delta+1)/2 = %v", a.A12, (cd.Delta+1)/2)
		}
		// A12 is U_B/(mn): the Mann-Whitney U of Y.
		if !near(a.A12, mw.UY/float64(n1*n2), 1e-12) {
			t.Fatalf("A12 %v != U_B/mn %v", a.A12, mw.UY/float64(n1*n2))
		}
		if n1 > 1 && n2 > 1 && !(cd.Lower <= cd.Delta+1e-12 && cd.Delta <= cd.Upper+1e-12 && cd.Lower >= -1 && cd.Upper <= 1) {
			t.Fatalf("CI [%v, %v] does not hold delta %v in [-1, 1]", cd.Lower, cd.Upper, cd.Delta)
		}
		// Brute force over all pairs.
		var gt, lt int
		diffs := make([]float64, 0, n1*n2)
		for _, xv := range x {
			for _, yv := range y {
				if yv > xv {
					gt++
				} else if yv < xv {
					lt++
				}
				diffs = append(diffs, yv-xv)
			}
		}
		if want := float64(gt-lt) / float64(n1*n2); !near(cd.Delta, want, 1e-12) {
			t.Fatalf("delta %v, brute force %v", cd.Delta, want)
		}
		hl, err := HodgesLehmann(x, y, 0.95)
		if err != nil {
			t.Fatal(err)
		}
		slices.Sort(diffs)
		want := diffs[len(diffs)/2]
		if len(diffs)%2 == 0 {
			want = (diffs[len(diffs)/2-1] + want) / 2
		}
		if hl.Shift != want || hl.Lower > hl.Shift || hl.Upper < hl.Shift {
			t.Fatalf("HL %v [%v, %v], brute-force median %v", hl.Shift, hl.Lower, hl.Upper, want)
		}
		// Shifting both samples by c changes no rank statistic and moves
		// the shift estimates by nothing.
		const c = 1000.0
		xs, ys := addConst(x, c), addConst(y, c)
		mw2, _ := MannWhitneyU(xs, ys)
		cd2, _ := CliffsDelta(xs, ys, 0.95)
		hl2, _ := HodgesLehmann(xs, ys, 0.95)
		if mw2.U != mw.U || mw2.P != mw.P || cd2.Delta != cd.Delta {
			t.Fatalf("shift changed rank statistics: U %v->%v p %v->%v delta %v->%v", mw.U, mw2.U, mw.P, mw2.P, cd.Delta, cd2.Delta)
		}
		if math.Abs(hl2.Shift-hl.Shift) > 1e-9 {
			t.Fatalf("shift of both samples moved HL: %v -> %v", hl.Shift, hl2.Shift)
		}
		// Swapping the samples negates delta and swaps U.
		sw, _ := MannWhitneyU(y, x)
		if sw.U != mw.UY || sw.P != mw.P {
			t.Fatalf("swap: U %v p %v, want %v %v", sw.U, sw.P, mw.UY, mw.P)
		}
	}
}

func addConst(x []float64, c float64) []float64 {
	out := make([]float64, len(x))
	for i, v := range x {
		out[i] = v + c
	}
	return out
}

// The two ways of computing the exact U distribution agree, and each sums
// to C(m+n, m).
func TestUCountsMethods(t *testing.T) {
	for _, mn := range [][2]int{{1, 1}, {3, 5}, {8, 8}, {8, 60}, {5, 200}, {2, 1000}} {
		m, n := mn[0], mn[1]
		rec := uCountsRecurrence(m, n, m*n)
		c := make([]float64, m*n+1)
		c[0] = 1
		for i := 1; i <= m; i++ { // product form, forced
			for u := i; u <= m*n; u++ {
				c[u] += c[u-i]
			}
			for u := m * n; u >= n+i; u-- {
				c[u] -= c[u-n-i]
			}
		}
		var sum float64
		for u := range rec {
			if !near(c[u], rec[u], 1e-12) {
				t.Fatalf("m=%d n=%d u=%d: product %v, recurrence %v", m, n, u, c[u], rec[u])
			}
			sum += rec[u]
		}
		if !near(sum, binom(m+n, m), 1e-12) {
			t.Fatalf("m=%d n=%d: counts sum to %v, want C(m+n,m) = %v", m, n, sum, binom(m+n, m))
		}
	}
}

func TestEdgeCases(t *testing.T) {
	// n = 1 on both sides: exact, p = 1.
	m, err := MannWhitneyU([]float64{1}, []float64{2})
	if err != nil || m.P != 1 || m.U != 0 {
		t.Errorf("n=1: %+v %v", m, err)
	}
	// All equal: asymptotic with zero variance, p = 1 as SciPy.
	eq := []float64{4, 4, 4, 4}
	m, err = MannWhitneyU(eq, eq[:3])
	if err != nil || m.P != 1 || m.Method != MWUAsymptotic {
		t.Errorf("all equal: %+v %v", m, err)
	}
	c, _ := CliffsDelta(eq, eq, 0.95)
	if c.Delta != 0 || c.Lower != 0 || c.Upper != 0 || c.Magnitude != Negligible {
		t.Errorf("all equal cliff: %+v", c)
	}
	a, _ := VarghaDelaneyA12(eq, eq)
	if a.A12 != 0.5 || a.Magnitude != Negligible {
		t.Errorf("all equal A12: %+v", a)
	}
	if _, err := KruskalWallis(eq, eq, eq); !errors.Is(err, ErrAllTied) {
		t.Errorf("kruskal all equal: %v, want ErrAllTied", err)
	}
	if _, err := RunsTest(eq); !errors.Is(err, ErrOneClass) {
		t.Errorf("runs all equal: %v, want ErrOneClass", err)
	}
	if _, err := ACF(eq, 1); !errors.Is(err, ErrAllTied) {
		t.Errorf("acf constant: %v", err)
	}
	// n = 1 Cliff: interval undefined.
	c, _ = CliffsDelta([]float64{1}, []float64{2, 3}, 0.95)
	if c.Delta != 1 || !math.IsNaN(c.Lower) {
		t.Errorf("n=1 cliff: %+v", c)
	}
	hl, _ := HodgesLehmann([]float64{1}, []float64{3}, 0.95)
	if hl.Shift != 2 || hl.Lower != 2 || hl.Upper != 2 {
		t.Errorf("n=1 HL: %+v", hl)
	}
	s, _ := Describe([]float64{5})
	if s.Median != 5 || s.P99 != 5 || !math.IsNaN(s.SD) {
		t.Errorf("n=1 describe: %+v", s)
	}
	// Bad input.
	for name, f := range map[string]func() error{
		"empty":  func() error { _, err := MannWhitneyU(nil, []float64{1}); return err },
		"nan":    func() error { _, err := Describe([]float64{1, math.NaN()}); return err },
		"inf":    func() error { _, err := CliffsDelta([]float64{math.Inf(1)}, []float64{1}, 0.95); return err },
		"level":  func() error { _, err := HodgesLehmann([]float64{1}, []float64{1}, 1.5); return err },
		"lags":   func() error { _, err := LjungBox([]float64{1, 2, 3}, 3); return err },
		"groups": func() error { _, err := KruskalWallis([]float64{1}); return err },
		"samples": func() error {
			_, err := BootstrapMedianDiff([]float64{1}, []float64{2}, BootstrapConfig{Seed: 1})
			return err
		},
	} {
		if f() == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

func TestMagnitudes(t *testing.T) {
	for _, c := range []struct {
		d    float64
		want Magnitude
	}{{0, Negligible}, {0.146, Negligible}, {-0.147, Small}, {0.3299, Small}, {0.33, Medium}, {-0.474, Large}, {1, Large}} {
		if got := CliffMagnitude(c.d); got != c.want {
			t.Errorf("CliffMagnitude(%v) = %s, want %s", c.d, got, c.want)
		}
	}
	for _, c := range []struct {
		a    float64
		want Magnitude
	}{{0.5, Negligible}, {0.559, Negligible}, {0.56, Small}, {0.36, Medium}, {0.64, Medium}, {0.71, Large}, {0.2, Large}} {
		if got := A12Magnitude(c.a); got != c.want {
			t.Errorf("A12Magnitude(%v) = %s, want %s", c.a, got, c.want)
		}
	}
}

func TestBootstrapDeterministic(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	x, y := randSample(r, 200, 0, false), randSample(r, 150, 1, false)
	cfg := BootstrapConfig{Seed: 42, Resamples: 500, Level: 0.95}
	a, err := BootstrapMedianDiff(x, y, cfg)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := BootstrapMedianDiff(x, y, cfg)
	if a != b {
		t.Fatalf("same seed, different result: %+v vs %+v", a, b)
	}
	if a.Seed != 42 || !(a.Lower <= a.Estimate && a.Estimate <= a.Upper) {
		t.Fatalf("bad interval: %+v", a)
	}
	cfg.Seed = 43
	c, _ := BootstrapMedianDiff(x, y, cfg)
	if c.Lower == a.Lower && c.Upper == a.Upper {
		t.Fatalf("seed does not matter: %+v", c)
	}
}

func TestHolmOrder(t *testing.T) {
	got := Holm([]float64{0.04, 0.01, 0.03})
	want := []float64{0.06, 0.03, 0.06}
	for i := range want {
		if !near(got[i], want[i], 1e-12) {
			t.Fatalf("Holm = %v, want %v", got, want)
		}
	}
}

func TestHodgesLehmannLarge(t *testing.T) {
	// 3000 x 2000 = 6e6 differences: compare a few order statistics with
	// a brute-force sort.
	r := rand.New(rand.NewPCG(5, 6))
	x, y := randSample(r, 3000, 0, false), randSample(r, 2000, 0.3, false)
	d := newDiffMatrix(x, y)
	all := bruteDiffs(x, y)
	for _, k := range []int64{1, 2, 1000, 3_000_000, 3_000_001, 5_999_999, 6_000_000} {
		if got := d.kth(k); got != all[k-1] {
			t.Fatalf("kth(%d) = %v, want %v", k, got, all[k-1])
		}
	}
}

// bruteDiffs returns every y_j - x_i, sorted: the O(mn log mn) reference
// for the selection in diffMatrix.
func bruteDiffs(x, y []float64) []float64 {
	all := make([]float64, 0, len(x)*len(y))
	for _, xv := range x {
		for _, yv := range y {
			all = append(all, yv-xv)
		}
	}
	slices.Sort(all)
	return all
}

// TestDiffMatrixKthBruteForce selects every rank of small random
// matrices, with and without ties, and with tiny pivot samples so that
// the pivot rounds (not only the direct selection at the end) run, and
// requires exactly the brute-force order statistic.
func TestDiffMatrixKthBruteForce(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for trial := range 300 {
		m, n := 1+r.IntN(30), 1+r.IntN(30)
		var x, y []float64
		switch trial % 3 {
		case 0: // continuous
			x, y = randSample(r, m, 0, false), randSample(r, n, 0.4, false)
		case 1: // few distinct values: many equal differences
			x, y = randSample(r, m, 0, true), randSample(r, n, 1, true)
		default: // one value everywhere
			x, y = slices.Repeat([]float64{2}, m), slices.Repeat([]float64{2}, n)
		}
		all := bruteDiffs(x, y)
		d := newDiffMatrix(x, y)
		d.sampleSize, d.finishAt = 1+r.IntN(12), int64(1+r.IntN(8))
		for k := int64(1); k <= int64(len(all)); k++ {
			if got := d.kth(k); got != all[k-1] {
				t.Fatalf("trial %d (%dx%d, s=%d): kth(%d) = %v, brute force %v", trial, m, n, d.sampleSize, k, got, all[k-1])
			}
			if k < int64(len(all)) {
				if got := d.next(k, all[k-1]); got != all[k] {
					t.Fatalf("trial %d: next(%d) = %v, brute force %v", trial, k, got, all[k])
				}
			}
		}
	}
}

// TestHodgesLehmannBruteForce compares the whole estimate and interval
// with a brute-force version that sorts all mn differences, on random
// samples large enough for the default pivot rounds, with ties.
func TestHodgesLehmannBruteForce(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	for trial := range 12 {
		m, n := 50+r.IntN(400), 50+r.IntN(400)
		ties := trial%2 == 0
		x, y := randSample(r, m, 0, ties), randSample(r, n, 0.7, ties)
		got, err := HodgesLehmann(x, y, 0.95)
		if err != nil {
			t.Fatal(err)
		}
		all := bruteDiffs(x, y)
		mn := len(all)
		want := all[mn/2]
		if mn%2 == 0 {
			want = (all[mn/2-1] + all[mn/2]) / 2
		}
		// k from the same normal approximation (both samples >= 50).
		_, tx := pooledRanks(x)
		_, ty := pooledRanks(y)
		N, fmn := float64(m+n), float64(mn)
		s := math.Sqrt(fmn / 12 * ((N + 1) - (tx+ty)/(N*(N-1))))
		k := int(math.Max(1, math.Ceil(fmn/2-0.5-1.959963984540054*s)))
		if got.Shift != want || got.Lower != all[k-1] || got.Upper != all[mn-k] || got.Method != HLAsymptotic {
			t.Fatalf("trial %d (%dx%d ties=%v): %+v, brute force %v [%v, %v]", trial, m, n, ties, got, want, all[k-1], all[mn-k])
		}
	}
}

func TestTieTermSorted(t *testing.T) {
	for _, x := range [][]float64{{1}, {1, 1}, {1, 2, 2, 3, 3, 3}, {5, 5, 5, 5, 1, 1}, {}} {
		_, want := pooledRanks(x)
		asc := sortedCopy(x)
		desc := slices.Clone(asc)
		slices.Reverse(desc)
		if a, d := tieTermSorted(asc), tieTermSorted(desc); a != want || d != want {
			t.Errorf("%v: tie term %v (ascending) %v (descending), want %v", x, a, d, want)
		}
	}
}

// TestBootstrapValuesUnchanged pins ResampleValues (the zero Method) to
// the numbers it gave before the order-statistics method existed: the
// studies' recorded bootstrap intervals depend on them.
func TestBootstrapValuesUnchanged(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	x, y := randSample(r, 200, 0, false), randSample(r, 151, 1, true)
	for _, m := range []BootstrapMethod{"", ResampleValues} {
		a, err := BootstrapMedianDiff(x, y, BootstrapConfig{Seed: 42, Resamples: 500, Level: 0.95, Method: m})
		if err != nil {
			t.Fatal(err)
		}
		if a.Estimate != 3.2668409749543397 || a.Lower != 3.0776077157444077 || a.Upper != 4.27511946170857 || a.Method != ResampleValues {
			t.Errorf("method %q: %+v, want the recorded 3.2668409749543397 [3.0776077157444077, 4.27511946170857] values", m, a)
		}
	}
}

// TestResampleMedianExactDistribution enumerates all n^n equally likely
// resamples of small samples to get the exact bootstrap distribution of
// the median, and requires the order-statistics draws to match it: every
// value's frequency within 5 standard errors, and the mean of the draws
// within 5 standard errors of the exact mean.
func TestResampleMedianExactDistribution(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	const draws = 200_000
	for n := 1; n <= 6; n++ {
		// Powers of two: every median (one value or the mean of two) is
		// distinct, so each outcome is one key.
		s := make([]float64, n)
		for i := range s {
			s[i] = float64(int(1) << i)
		}
		exact := map[float64]float64{}
		idx := make([]int, n)
		b := make([]float64, n)
		total := math.Pow(float64(n), float64(n))
		for {
			for i, j := range idx {
				b[i] = s[j]
			}
			exact[medianInPlace(b)] += 1 / total
			i := 0
			for i < n && idx[i] == n-1 {
				idx[i] = 0
				i++
			}
			if i == n {
				break
			}
			idx[i]++
		}
		count := map[float64]int{}
		for range draws {
			count[resampleMedian(s, rng)]++
		}
		var mean, meanGot, variance float64
		for v, p := range exact {
			mean += v * p
			variance += v * v * p
		}
		variance -= mean * mean
		for v, c := range count {
			if _, ok := exact[v]; !ok {
				t.Fatalf("n=%d: drew median %v, which no resample has", n, v)
			}
			meanGot += v * float64(c) / draws
		}
		for v, p := range exact {
			got := float64(count[v]) / draws
			if se := math.Sqrt(p * (1 - p) / draws); math.Abs(got-p) > 5*se+1e-9 {
				t.Errorf("n=%d: P(median = %v) = %.5f, exact %.5f (se %.5f)", n, v, got, p, se)
			}
		}
		if se := math.Sqrt(variance / draws); math.Abs(meanGot-mean) > 5*se+1e-9 {
			t.Errorf("n=%d: mean resample median %v, exact %v (se %v)", n, meanGot, mean, se)
		}
	}
}

// TestBootstrapMethodsAgree: on the same data both methods estimate the
// same interval; with 20,000 resamples the Monte Carlo error of each
// limit is far below the tolerance used.
func TestBootstrapMethodsAgree(t *testing.T) {
	r := rand.New(rand.NewPCG(23, 24))
	for _, n := range []int{7, 40, 301} {
		x, y := randSample(r, n, 0, false), randSample(r, n+1, 1, n == 40)
		cfg := BootstrapConfig{Seed: 5, Resamples: 20_000, Level: 0.9}
		v, err := BootstrapMedianDiff(x, y, cfg)
		if err != nil {
			t.Fatal(err)
		}
		cfg.Method = ResampleOrderStats
		o, err := BootstrapMedianDiff(x, y, cfg)
		if err != nil {
			t.Fatal(err)
		}
		if o.Estimate != v.Estimate || o.Method != ResampleOrderStats {
			t.Fatalf("n=%d: estimate %v (%s) vs %v", n, o.Estimate, o.Method, v.Estimate)
		}
		width := v.Upper - v.Lower
		if math.Abs(o.Lower-v.Lower) > 0.1*width || math.Abs(o.Upper-v.Upper) > 0.1*width {
			t.Errorf("n=%d: order statistics [%v, %v], values [%v, %v]", n, o.Lower, o.Upper, v.Lower, v.Upper)
		}
	}
	if _, err := BootstrapMedianDiff([]float64{1}, []float64{2}, BootstrapConfig{Resamples: 1, Level: 0.5, Method: "jackknife"}); err == nil {
		t.Error("unknown method: no error")
	}
}

// TestSerialMinimumN: below each statistic's minimum n the functions say
// ErrTooFew instead of returning p = 0 from a zero variance; at the
// minimum they return finite values.
func TestSerialMinimumN(t *testing.T) {
	for _, x := range [][]float64{{1}, {1, 2}} {
		if _, err := RunsTest(x); !errors.Is(err, ErrTooFew) {
			t.Errorf("runs test of %v: %v, want ErrTooFew", x, err)
		}
	}
	if r, err := RunsTest([]float64{1, 3, 2}); err != nil || math.IsInf(r.Z, 0) || !(r.P > 0 && r.P <= 1) {
		t.Errorf("runs test at n = RunsMinN: %+v %v", r, err)
	}
	for k := 1; k <= 3; k++ {
		x := []float64{4, 1, 3, 2, 5}[:ACFMinN(k)]
		if _, err := ACF(x[:len(x)-1], k); !errors.Is(err, ErrTooFew) {
			t.Errorf("acf lag %d of %d values: %v, want ErrTooFew", k, len(x)-1, err)
		}
		if _, err := LjungBox(x[:len(x)-1], k); !errors.Is(err, ErrTooFew) {
			t.Errorf("ljung-box lag %d of %d values: %v, want ErrTooFew", k, len(x)-1, err)
		}
		if lb, err := LjungBox(x, k); err != nil || !(lb.P > 0 && lb.P <= 1) {
			t.Errorf("ljung-box lag %d at its minimum n: %+v %v", k, lb, err)
		}
	}
}

// FuzzHodgesLehmann decodes two small samples from the input (one byte a
// value, so ties are common; the first byte splits them) and requires the
// selection to agree with brute force on the estimate, the interval
// limits' ranks and every order statistic, with a tiny pivot sample so
// that the pivot rounds run.
func FuzzHodgesLehmann(f *testing.F) {
	f.Add([]byte{3, 1, 2, 3, 4, 5, 6})
	f.Add([]byte{1, 7, 7, 7, 7})
	f.Add([]byte{5, 0, 255, 128, 128, 1, 2, 3, 250, 9, 9, 9})
	f.Fuzz(func(t *testing.T, in []byte) {
		if len(in) < 3 || len(in) > 80 {
			return
		}
		split := 1 + int(in[0])%(len(in)-2)
		var x, y []float64
		for i, b := range in[1:] {
			v := float64(int(b)-128) / 4
			if i < split {
				x = append(x, v)
			} else {
				y = append(y, v)
			}
		}
		all := bruteDiffs(x, y)
		d := newDiffMatrix(x, y)
		d.sampleSize, d.finishAt = 1+int(in[len(in)-1])%9, 1+int64(in[0])%5
		for k := int64(1); k <= int64(len(all)); k++ {
			if got := d.kth(k); got != all[k-1] {
				t.Fatalf("x %v y %v: kth(%d) = %v, brute force %v", x, y, k, got, all[k-1])
			}
		}
		hl, err := HodgesLehmann(x, y, 0.95)
		if err != nil {
			t.Fatal(err)
		}
		mn := len(all)
		want := all[mn/2]
		if mn%2 == 0 {
			want = (all[mn/2-1] + want) / 2
		}
		if hl.Shift != want || !slices.Contains(all, hl.Lower) || !slices.Contains(all, hl.Upper) || hl.Lower > hl.Shift || hl.Upper < hl.Shift {
			t.Fatalf("x %v y %v: %+v, brute-force median %v", x, y, hl, want)
		}
	})
}

// bootstrapValuesReference is ResampleValues as first written: copy the
// drawn values and take the medians by selection.
func bootstrapValuesReference(x, y []float64, cfg BootstrapConfig) (lo, hi float64) {
	rng := rand.New(rand.NewPCG(cfg.Seed, BootstrapStream))
	bx, by := make([]float64, len(x)), make([]float64, len(y))
	diffs := make([]float64, cfg.Resamples)
	for b := range diffs {
		for i := range bx {
			bx[i] = x[rng.IntN(len(x))]
		}
		for i := range by {
			by[i] = y[rng.IntN(len(y))]
		}
		diffs[b] = medianInPlace(by) - medianInPlace(bx)
	}
	slices.Sort(diffs)
	return QuantileSorted(diffs, (1-cfg.Level)/2), QuantileSorted(diffs, (1+cfg.Level)/2)
}

// TestBootstrapValuesRankDomain: counting draws by rank gives bit for bit
// the interval of copying the values and selecting, for odd and even
// sizes, with and without ties.
func TestBootstrapValuesRankDomain(t *testing.T) {
	r := rand.New(rand.NewPCG(25, 26))
	for trial := range 60 {
		x, y := randSample(r, 1+r.IntN(60), 0, trial%2 == 0), randSample(r, 1+r.IntN(60), 0.3, trial%3 == 0)
		cfg := BootstrapConfig{Seed: uint64(trial), Resamples: 1 + r.IntN(300), Level: 0.9}
		got, err := BootstrapMedianDiff(x, y, cfg)
		if err != nil {
			t.Fatal(err)
		}
		lo, hi := bootstrapValuesReference(x, y, cfg)
		if got.Lower != lo || got.Upper != hi {
			t.Fatalf("trial %d (%d, %d values): [%v, %v], reference [%v, %v]", trial, len(x), len(y), got.Lower, got.Upper, lo, hi)
		}
	}
}
