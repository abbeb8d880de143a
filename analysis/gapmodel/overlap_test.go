package gapmodel

import (
	"math"
	"math/rand/v2"
	"os"
	"strings"
	"testing"
)

// synthSignMs is the leaf key's signing time per role: ML-DSA-87 for
// pq-sig, Ed25519 otherwise (the paper's hybrid is Ed25519-signed).
var synthSignMs = map[string]float64{"baseline": 0.05, "pq-sig": 1.4, "pq-kem": 0.05, "hybrid": 0.05}

// overlapRows makes rows whose truth is the second model: ML-DSA-87 with
// a CA stalls once, and the stall overlaps the signature. offset is added
// to the truth of the cells for which plant returns true.
func overlapRows(rounds int, noise float64, plant func(*Row) bool, offset float64) []Row {
	rng := rand.New(rand.NewPCG(3, 4))
	combos := []Combo{{"per-config", "leaf"}, {"per-config", "leaf+ca"}, {"x25519-first", "leaf"}, {"x25519-first", "leaf+ca"}}
	var rows []Row
	for _, d := range []float64{0, 0.5, 1, 2} {
		for _, c := range combos {
			for _, role := range Roles {
				k := synthK(c, role)
				r := Row{OneWayDelayMs: d, RTTMs: 2*d + 0.05, Groups: c.Groups, Chain: c.Chain, Role: role,
					RoundTrips: k, CPUMs: synthCPU[role], SignMs: synthSignMs[role]}
				if c.Groups == "x25519-first" && (role == "pq-kem" || role == "hybrid") {
					r.HRRShare = 1
				}
				truth := trueC0 + r.pathMs() + trueS*r.CPUMs
				if plant != nil && plant(&r) {
					truth += offset
				}
				for range rounds {
					r.RoundThsMs = append(r.RoundThsMs, truth+noise*(2*rng.Float64()-1))
				}
				rows = append(rows, r)
			}
		}
	}
	return rows
}

func TestOverlapTerm(t *testing.T) {
	for _, tc := range []struct {
		k, h, rtt, sign, want float64
	}{
		{1, 0, 4, 1.4, 0},           // no stall
		{2, 1, 4, 1.4, 0},           // the second round trip is the HRR's
		{2, 0, 4, 1.4, 2.6},         // stall outlasts the signature by 2.6 ms
		{2, 0, 1, 1.4, 0},           // the signature hides the stall
		{3, 0, 4, 1.4, 2.6 + 4},     // a second stall costs a whole RTT
		{3, 1, 0.1, 1.4, 0},         // HRR and one stall hidden
		{1.5, 0, 4, 1.4, 0.5 * 2.6}, // connections disagree: half a stall
		{0, 0, 4, 1.4, 0},           // no round trip counted: no stall
	} {
		r := Row{RoundTrips: tc.k, HRRShare: tc.h, RTTMs: tc.rtt, SignMs: tc.sign}
		if got := r.OverlapMs(); math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("k %v h %v RTT %v sign %v: O = %v, want %v", tc.k, tc.h, tc.rtt, tc.sign, got, tc.want)
		}
	}
}

func TestFitOverlapRecoversAndPasses(t *testing.T) {
	rows := overlapRows(20, 0.1, nil, 0)
	f, err := FitOverlap(rows, Registered2)
	if err != nil {
		t.Fatal(err)
	}
	if !(f.C0.Lower <= trueC0 && trueC0 <= f.C0.Upper) || !(f.S.Lower <= trueS && trueS <= f.S.Upper) {
		t.Errorf("c0 %+v, s %+v: want intervals holding %v and %v", f.C0, f.S, trueC0, trueS)
	}
	if !f.Pass || f.Misses != 0 || len(f.Predictions) != 2*4*len(Roles) {
		t.Fatalf("pass %v, %d misses of %d, max |e|/bound %v", f.Pass, f.Misses, len(f.Predictions), f.MaxErrOverBound)
	}
	// Bonferroni over 32 held-out cells at alpha 0.05.
	if math.Abs(f.Z-3.1628) > 1e-3 {
		t.Errorf("z = %v, want Phi^-1(1 - 0.05/64) = 3.1628", f.Z)
	}
	for _, p := range f.Predictions {
		if !(p.SEMs > 0) || !(p.BoundMs >= f.Z*p.SEMs) {
			t.Fatalf("%s: SE %v, bound %v: want a positive SE and bound >= z SE", p.Row.Label(), p.SEMs, p.BoundMs)
		}
	}
	// x25519-first and per-config run the identical handshake for the
	// baseline and ML-DSA-87 (no HRR): 2 chains x 2 roles x 2 fit levels.
	if f.Pairs != 8 {
		t.Errorf("%d identical-handshake pairs, want 8", f.Pairs)
	}
	// The same rows under the first model, whose stall costs a whole
	// RTT: it misses the ML-DSA-87 leaf+CA cells by the signing time.
	f1, err := FitModel(rows, Registered)
	if err != nil {
		t.Fatal(err)
	}
	if f1.Pass {
		t.Errorf("the first model passes on overlap data (max error %v): the test cannot tell the models apart", f1.MaxAbsErrMs)
	}
}

func TestFitOverlapFailsOnAWrongTerm(t *testing.T) {
	// A term the model lacks: +1.5 ms in the held-out ML-DSA-87 leaf+CA
	// cells only.
	plant := func(r *Row) bool { return r.Role == "pq-sig" && r.Chain == "leaf+ca" && r.OneWayDelayMs == 1 }
	f, err := FitOverlap(overlapRows(20, 0.1, plant, 1.5), Registered2)
	if err != nil {
		t.Fatal(err)
	}
	if f.Pass || f.Misses != 2 {
		t.Errorf("pass %v with %d misses: want the 2 planted cells to miss", f.Pass, f.Misses)
	}
}

func TestTauFromIdenticalHandshakes(t *testing.T) {
	// x25519-first cells carry +0.8 ms of their own: pairs see it, and
	// the bound widens by it.
	plant := func(r *Row) bool { return r.Groups == "x25519-first" }
	f, err := FitOverlap(overlapRows(20, 0.05, plant, 0.8), Registered2)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(f.TauMs-0.8/math.Sqrt2) > 0.05 {
		t.Errorf("tau %v ms, want about 0.8/sqrt(2) = 0.566 (a pair's difference d has d^2/2 = tau^2)", f.TauMs)
	}
	g, _ := FitOverlap(overlapRows(20, 0.05, nil, 0), Registered2)
	if g.TauMs > 0.02 {
		t.Errorf("tau %v ms without a cell offset: want about 0", g.TauMs)
	}
}

func TestFitOverlapBadInput(t *testing.T) {
	rows := overlapRows(10, 0.1, nil, 0)
	noSign := append([]Row(nil), rows...)
	for i := range noSign {
		noSign[i].SignMs = 0
	}
	if _, err := FitOverlap(noSign, Registered2); err == nil || !strings.Contains(err.Error(), "signing time") {
		t.Errorf("stalls without a signing time: err %v", err)
	}
	var two []Row
	for _, r := range rows {
		if r.OneWayDelayMs != 0.5 && r.OneWayDelayMs != 1 {
			two = append(two, r)
		}
	}
	if _, err := FitOverlap(two, Registered2); err == nil || !strings.Contains(err.Error(), "at least 3") {
		t.Errorf("two levels: err %v", err)
	}
	one := overlapRows(1, 0.1, nil, 0)
	if _, err := FitOverlap(one, Registered2); err == nil || !strings.Contains(err.Error(), "2 rounds") {
		t.Errorf("one round: err %v", err)
	}
}

func TestFitOverlapDeterministic(t *testing.T) {
	a, _ := FitOverlap(overlapRows(12, 0.2, nil, 0), Registered2)
	b, _ := FitOverlap(overlapRows(12, 0.2, nil, 0), Registered2)
	if a.C0 != b.C0 || a.TauMs != b.TauMs || a.Predictions[5].BoundMs != b.Predictions[5].BoundMs {
		t.Error("two fits of the same rows differ")
	}
}

func TestRegistration2IsUsed(t *testing.T) {
	b, err := os.ReadFile("registration2.txt")
	if err != nil {
		t.Fatal(err)
	}
	r, err := ParseRegistration2(b)
	if err != nil {
		t.Fatal(err)
	}
	if r != Registered2 || r.Model != ModelOverlap || r.Alpha != 0.05 || r.Resamples != 2000 || r.Seed != 42 || r.JointStepMs != 0.001 || r.JointTargetPct != 10 {
		t.Errorf("Registered2 %+v does not hold the file's values", Registered2)
	}
	rows := overlapRows(10, 0.1, nil, 0)
	loose := Registered2
	loose.Alpha = 0.5
	f, _ := FitOverlap(rows, Registered2)
	g, _ := FitOverlap(rows, loose)
	if !(g.Z < f.Z) {
		t.Errorf("alpha 0.5 gives z %v, the registered alpha %v: the fit ignores the registration", g.Z, f.Z)
	}
}

func TestParseRegistration2Errors(t *testing.T) {
	good := "model: overlap\nsplit: lowest-and-highest\nalpha: 0.05\nresamples: 10\nseed: 1\njoint-step-ms: 0.01\njoint-target-pct: 10\n"
	if _, err := ParseRegistration2([]byte(good)); err != nil {
		t.Fatal(err)
	}
	for name, tc := range map[string]struct{ text, want string }{
		"unknown key":    {good + "bound-ms: 0.75\n", `line 8: unknown key "bound-ms"`},
		"twice":          {good + "seed: 2\n", "line 8: seed given twice"},
		"missing":        {strings.Replace(good, "seed: 1\n", "", 1), `no "seed" line`},
		"alpha 1":        {strings.Replace(good, "alpha: 0.05", "alpha: 1", 1), "line 3 (alpha)"},
		"negative step":  {strings.Replace(good, "joint-step-ms: 0.01", "joint-step-ms: -1", 1), "line 6 (joint-step-ms)"},
		"zero target":    {strings.Replace(good, "joint-target-pct: 10", "joint-target-pct: 0", 1), "positive"},
		"other model":    {strings.Replace(good, "model: overlap", "model: full-rtt", 1), "one model"},
		"one resample":   {strings.Replace(good, "resamples: 10", "resamples: 1", 1), "at least 2"},
		"seed not a num": {strings.Replace(good, "seed: 1", "seed: x", 1), "line 5 (seed)"},
	} {
		_, err := ParseRegistration2([]byte(tc.text))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err %v, want it to say %q", name, err, tc.want)
		}
	}
	// Prose: indented lines and a space before the colon are not keys.
	prose := good + "  alpha: 0.9\nThe alpha: is prose\n"
	if r, err := ParseRegistration2([]byte(prose)); err != nil || r.Alpha != 0.05 {
		t.Errorf("prose lines read as keys: %+v, %v", r, err)
	}
}

func FuzzParseRegistration2(f *testing.F) {
	b, _ := os.ReadFile("registration2.txt")
	f.Add(b)
	f.Add([]byte("model: overlap\nalpha: 0.5\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := ParseRegistration2(b)
		if err != nil {
			return
		}
		if !(r.Alpha > 0 && r.Alpha < 1) || r.Resamples < 2 || !(r.JointStepMs > 0) || !(r.JointTargetPct > 0) || r.Model != ModelOverlap {
			t.Errorf("accepted %+v", r)
		}
	})
}

func TestPredictedAt(t *testing.T) {
	f := &OverlapFit{C0: Interval{Est: 1}, S: Interval{Est: 2}}
	r := Row{RoundTrips: 2, SignMs: 1.5, CPUMs: 0.5}
	for _, tc := range []struct{ rtt, want float64 }{{1, 1 + 1 + 0 + 1}, {4, 1 + 4 + 2.5 + 1}} {
		if got := f.PredictedAt(r, tc.rtt); math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("RTT %v: %v, want %v", tc.rtt, got, tc.want)
		}
	}
}
