package gapmodel

import (
	"math"
	"math/rand/v2"
	"os"
	"strings"
	"testing"
)

// Synthetic truth: c0 2.5 ms, s 1; one round trip per handshake, one more
// for an HRR (ML-KEM configurations with one list, X25519 first) and one
// more for ML-DSA-87 with a CA in the chain.
const trueC0, trueS = 2.5, 1.0

var (
	synthCPU    = map[string]float64{"baseline": 0.3, "pq-sig": 1.6, "pq-kem": 0.35, "hybrid": 3.6}
	synthCombos = []Combo{{"per-config", "leaf"}, {"x25519-first", "leaf"}, {"x25519-first", "leaf+ca"}}
	synthDelays = []float64{0, 0.5, 1, 2} // one way (ms)
)

func synthK(c Combo, role string) float64 {
	k := 1.0
	if c.Groups == "x25519-first" && (role == "pq-kem" || role == "hybrid") {
		k++
	}
	if c.Chain == "leaf+ca" && role == "pq-sig" {
		k++
	}
	return k
}

// synthRows makes the rows with round noise of +-noise ms, seeded.
func synthRows(rounds int, noise float64) []Row {
	rng := rand.New(rand.NewPCG(1, 2))
	var rows []Row
	for _, d := range synthDelays {
		for _, c := range synthCombos {
			for _, role := range Roles {
				r := Row{OneWayDelayMs: d, RTTMs: 2*d + 0.05, Groups: c.Groups, Chain: c.Chain, Role: role,
					RoundTrips: synthK(c, role), CPUMs: synthCPU[role]}
				if synthK(c, role) > 1 && role != "pq-sig" {
					r.HRRShare = 1
				}
				for range rounds {
					r.RoundThsMs = append(r.RoundThsMs, trueC0+r.RoundTrips*r.RTTMs+trueS*r.CPUMs+noise*(2*rng.Float64()-1))
				}
				rows = append(rows, r)
			}
		}
	}
	return rows
}

// synthPublished is what the model says at RTT 3.4 ms for one list with
// X25519 first and a CA in the chain.
func synthPublished() Published {
	c := Combo{"x25519-first", "leaf+ca"}
	at := func(role string) float64 { return trueC0 + synthK(c, role)*3.4 + trueS*synthCPU[role] }
	return Published{Source: "synthetic", BaselineMs: at("baseline"), IncreaseMs: map[string]float64{
		"pq-sig": at("pq-sig") - at("baseline"), "pq-kem": at("pq-kem") - at("baseline"), "hybrid": at("hybrid") - at("baseline")}}
}

func TestFitRecoversAndExplains(t *testing.T) {
	rows := synthRows(20, 0.1)
	f, err := FitModel(rows, Registered)
	if err != nil {
		t.Fatal(err)
	}
	if !(f.C0.Lower <= trueC0 && trueC0 <= f.C0.Upper) || !(f.S.Lower <= trueS && trueS <= f.S.Upper) {
		t.Errorf("c0 %+v, s %+v: want intervals holding %v and %v", f.C0, f.S, trueC0, trueS)
	}
	if !f.Pass || len(f.Predictions) != 2*len(synthCombos)*len(Roles) {
		t.Fatalf("pass %v with %d predictions, max error %v", f.Pass, len(f.Predictions), f.MaxAbsErrMs)
	}
	if f.FitLevels[0] != 0 || f.FitLevels[1] != 2 || len(f.HeldOut) != 2 {
		t.Errorf("fit levels %v, held out %v: want the lowest and highest fitted", f.FitLevels, f.HeldOut)
	}
	e, err := Explain(f, rows, synthPublished())
	if err != nil {
		t.Fatal(err)
	}
	if e.Best < 0 || e.Combos[e.Best].Combo != (Combo{"x25519-first", "leaf+ca"}) {
		t.Fatalf("best %d: want x25519-first, leaf+ca\n%s", e.Best, Text(f, e))
	}
	b := e.Combos[e.Best]
	if math.Abs(b.RTTMs-3.4) > 0.1 || b.FreeParams != 1 || !b.Explanation || !e.BaselineAccounted {
		t.Errorf("best: RTT %v, %d params, explanation %v, baseline %v; want 3.4 ms, 1, true, true", b.RTTMs, b.FreeParams, b.Explanation, e.BaselineAccounted)
	}
	for _, c := range e.Combos {
		if c.Combo.Groups == "per-config" && c.Fits && c.FreeParams == 1 {
			t.Errorf("per-config fits the HRR-made published numbers with one parameter: %+v", c)
		}
	}
	if a, b := Text(f, e), Text(f, e); a != b || !strings.Contains(a, "(best)") {
		t.Errorf("text not deterministic or without a best:\n%s", a)
	}
	f2, _ := FitModel(synthRows(20, 0.1), Registered)
	if Text(f, e) != Text(f2, e) {
		t.Error("two fits of the same rows differ")
	}
}

// TestBaselineNotAccounted: published medians 3 ms below the model's at
// every configuration leave the baseline unexplained or nothing fits;
// either way the output says so.
func TestBaselineNotAccounted(t *testing.T) {
	rows := synthRows(10, 0.05)
	f, err := FitModel(rows, Registered)
	if err != nil {
		t.Fatal(err)
	}
	p := synthPublished()
	p.BaselineMs -= 2.4 // below c0: no RTT >= 0 reaches it
	e, err := Explain(f, rows, p)
	if err != nil {
		t.Fatal(err)
	}
	if e.BaselineAccounted {
		t.Errorf("baseline accounted for: %s", e.BaselineNote)
	}
	if !strings.Contains(e.BaselineNote, "baseline") && !strings.Contains(e.BaselineNote, "does not explain") {
		t.Errorf("note %q", e.BaselineNote)
	}
}

// TestPredictionFailsExplainsNothing: a held-out level 1 ms slower than
// the model fails the registered bound and Explain refuses.
func TestPredictionFailsExplainsNothing(t *testing.T) {
	rows := synthRows(10, 0.05)
	for i := range rows {
		if rows[i].OneWayDelayMs == 1 {
			for j := range rows[i].RoundThsMs {
				rows[i].RoundThsMs[j]++
			}
		}
	}
	f, err := FitModel(rows, Registered)
	if err != nil {
		t.Fatal(err)
	}
	if f.Pass {
		t.Fatalf("passes with a held-out level 1 ms off: max error %v", f.MaxAbsErrMs)
	}
	if _, err := Explain(f, rows, synthPublished()); err == nil || !strings.Contains(err.Error(), "explains nothing") {
		t.Errorf("Explain after a failed prediction: %v", err)
	}
	if !strings.Contains(Text(f, nil), "FAILS") {
		t.Error("text does not say the prediction fails")
	}
}

// TestRegistrationIsUsed: Registered is registration.txt as committed, and
// FitModel judges with its bound: a held-out error just inside passes,
// just outside fails.
func TestRegistrationIsUsed(t *testing.T) {
	b, err := os.ReadFile("registration.txt")
	if err != nil {
		t.Fatal(err)
	}
	reg, err := ParseRegistration(b)
	if err != nil {
		t.Fatal(err)
	}
	if reg != Registered {
		t.Fatalf("Registered %+v, registration.txt %+v", Registered, reg)
	}
	if reg.Split != SplitLowestHighest {
		t.Fatalf("split %q", reg.Split)
	}
	for _, tc := range []struct {
		off  float64
		pass bool
	}{{reg.BoundMs - 0.05, true}, {reg.BoundMs + 0.05, false}} {
		rows := synthRows(5, 0)
		rows[len(synthCombos)*len(Roles)].RoundThsMs = []float64{1, 1, 1, 1, 1} // a held-out row (0.5 ms level)
		r := &rows[len(synthCombos)*len(Roles)]
		v := trueC0 + r.RoundTrips*r.RTTMs + trueS*r.CPUMs - tc.off
		for j := range r.RoundThsMs {
			r.RoundThsMs[j] = v
		}
		f, err := FitModel(rows, reg)
		if err != nil {
			t.Fatal(err)
		}
		if f.Pass != tc.pass {
			t.Errorf("held-out error %.3f ms, bound %.3f: pass %v", tc.off, reg.BoundMs, f.Pass)
		}
	}
}

func TestBadInput(t *testing.T) {
	for _, tc := range []struct {
		name, want string
		edit       func([]Row) []Row
	}{
		{"no rows", "no rows", func([]Row) []Row { return nil }},
		{"two levels", "at least 3", func(rs []Row) []Row {
			var out []Row
			for _, r := range rs {
				if r.OneWayDelayMs <= 0.5 {
					out = append(out, r)
				}
			}
			return out
		}},
		{"no rounds", "no rounds", func(rs []Row) []Row { rs[3].RoundThsMs = nil; return rs }},
		{"uneven rounds", "same in every row", func(rs []Row) []Row { rs[3].RoundThsMs = rs[3].RoundThsMs[1:]; return rs }},
		{"NaN RTT", "RTT is NaN", func(rs []Row) []Row { rs[2].RTTMs = math.NaN(); return rs }},
		{"NaN round", "round 1", func(rs []Row) []Row { rs[2].RoundThsMs[1] = math.NaN(); return rs }},
		{"unknown role", "not one of", func(rs []Row) []Row { rs[0].Role = "pq"; return rs }},
		{"mixed HRR", "HRR share 0.5", func(rs []Row) []Row { rs[2].HRRShare = 0.5; return rs }},
		{"one CPU", "cannot be fitted", func(rs []Row) []Row {
			for i := range rs {
				rs[i].CPUMs = 1
			}
			return rs
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := FitModel(tc.edit(synthRows(4, 0.05)), Registered)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
	rows := synthRows(4, 0.05)
	f, err := FitModel(rows, Registered)
	if err != nil {
		t.Fatal(err)
	}
	var noHybrid []Row
	for _, r := range rows {
		if r.Role != "hybrid" {
			noHybrid = append(noHybrid, r)
		}
	}
	if _, err := Explain(f, noHybrid, synthPublished()); err == nil || !strings.Contains(err.Error(), "[hybrid]") {
		t.Errorf("Explain without hybrid cells: %v", err)
	}
	p := synthPublished()
	delete(p.IncreaseMs, "pq-kem")
	if _, err := Explain(f, rows, p); err == nil || !strings.Contains(err.Error(), "pq-kem") {
		t.Errorf("Explain without a published pq-kem: %v", err)
	}
}

// TestNoExplanationWithAsManyParameters: two free parameters for two
// numbers fit exactly and are refused as an explanation.
func TestNoExplanationWithAsManyParameters(t *testing.T) {
	f := &Fit{Reg: Registered, C0: Interval{Est: 2}, S: Interval{Est: 1}, Pass: true}
	cf := ComboFit{K: []float64{1, 2}, CPU: []float64{0.3, 3}}
	solve(&cf, f, []float64{5, 9}, 2)
	if !cf.Fits || cf.Explanation {
		t.Errorf("fits %v, explanation %v (residuals %v): want a fit that is no explanation", cf.Fits, cf.Explanation, cf.ResidualMs)
	}
}

func TestParseRegistrationErrors(t *testing.T) {
	good := "split: lowest-and-highest\nbound-ms: 0.75\nexplain-bound-ms: 1\nlevel: 0.95\nresamples: 100\nseed: 1\n"
	if _, err := ParseRegistration([]byte(good)); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ in, want string }{
		{strings.Replace(good, "bound-ms: 0.75\n", "", 1), `no "bound-ms"`},
		{good + "seed: 2\n", "twice"},
		{strings.Replace(good, "0.75", "-1", 1), "positive"},
		{strings.Replace(good, "0.95", "1.5", 1), "(0, 1)"},
		{strings.Replace(good, "lowest-and-highest", "random", 1), "one split"},
		{strings.Replace(good, "resamples: 100", "resamples: 1", 1), "at least 2"},
		{strings.Replace(good, "bound-ms: 0.75", "bound-ms: NaN", 1), "positive"},
	} {
		if _, err := ParseRegistration([]byte(tc.in)); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: error %v, want %q", tc.in, err, tc.want)
		}
	}
}

func FuzzParseRegistration(f *testing.F) {
	f.Add(registrationText)
	f.Add([]byte("split: x\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := ParseRegistration(b)
		if err != nil {
			return
		}
		if !(r.BoundMs > 0) || !(r.ExplainBoundMs > 0) || !(r.Level > 0 && r.Level < 1) || r.Resamples < 2 || r.Split != SplitLowestHighest {
			t.Errorf("accepted %+v", r)
		}
	})
}

// TestCPUFactorOnlyWhenNeeded: published medians made at RTT 2 ms with a
// CPU 1.5 times slower are met by the path alone within the registered
// bound, so no CPU factor is solved; with a CPU 3 times slower they are
// not, and the joint fit finds both, two free parameters for four
// numbers.
func TestCPUFactorOnlyWhenNeeded(t *testing.T) {
	rows := synthRows(10, 0.05)
	f, err := FitModel(rows, Registered)
	if err != nil {
		t.Fatal(err)
	}
	c := Combo{"x25519-first", "leaf+ca"}
	for _, tc := range []struct {
		slow      float64
		params    int
		wantSlow  float64
		tolerance float64
	}{{1.5, 1, 1, 0}, {3, 2, 3, 0.1}} {
		at := func(role string) float64 { return trueC0 + synthK(c, role)*2 + tc.slow*trueS*synthCPU[role] }
		pub := Published{BaselineMs: at("baseline"), IncreaseMs: map[string]float64{
			"pq-sig": at("pq-sig") - at("baseline"), "pq-kem": at("pq-kem") - at("baseline"), "hybrid": at("hybrid") - at("baseline")}}
		e, err := Explain(f, rows, pub)
		if err != nil {
			t.Fatal(err)
		}
		if e.Best < 0 {
			t.Fatalf("CPU %vx slower: nothing fits:\n%s", tc.slow, Text(f, e))
		}
		b := e.Combos[e.Best]
		if b.Combo != c || b.FreeParams != tc.params || math.Abs(b.CPUFactor-tc.wantSlow) > tc.tolerance {
			t.Errorf("CPU %vx slower: best %s, %d params, CPU factor %.3f, RTT %.3f; want %s, %d, %v", tc.slow, b.Combo, b.FreeParams, b.CPUFactor, b.RTTMs, c, tc.params, tc.wantSlow)
		}
		if tc.params == 2 && math.Abs(b.RTTMs-2) > 0.1 {
			t.Errorf("CPU %vx slower: RTT %.3f, want 2", tc.slow, b.RTTMs)
		}
	}
}
