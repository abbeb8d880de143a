package tlsstudy

import (
	"math"
	"math/rand/v2"
	"testing"

	"pqrepro/analysis/agreement"
	"pqrepro/analysis/tlscompare"
)

// resampleFixture is a run of 6 rounds: two comparisons of the paper
// family with the same per-round differences (one of them missing round
// 5), and a gap of two cells whose factor change is re-derived.
func resampleFixture() *Results {
	nan := Num(math.NaN())
	d := []Num{1, 2, 3, 4, 5, 6}
	e := []Num{1, 2, 3, 4, 5, nan}
	comp := func(role string, diffs []Num, se Num) Comparison {
		return Comparison{Role: role, Target: role, Rounds: tlscompare.RoundComparison{DiffsMs: diffs, IncreaseMs: 3.5, SE: se}}
	}
	a := Cell{Stack: "go", Path: "loopback", KeyShare: "direct"}
	b := Cell{Stack: "openssl", Path: "loopback", KeyShare: "direct"}
	return &Results{Profile: "quick",
		Families: map[string]*Family{"paper": {Comparisons: []Comparison{comp("x", d, 0.5), comp("y", slicesClone(d), 0.5), comp("z", e, 0.6)}}},
		Gap: &Gap{
			Cells: []CellResult{{Cell: a, Comparisons: []Comparison{comp("x", []Num{1, 1, 1, 1, 1, 1}, 0.1)}}, {Cell: b, Comparisons: []Comparison{comp("x", d, 0.5)}}},
			Factors: []FactorResult{{Factor: "stack", From: "go", To: "openssl",
				Effects: []FactorEffect{{Role: "x", From: a, To: b, ChangeMs: 2.5, Lower: 1, Upper: 4}}}},
		}}
}

func slicesClone(x []Num) []Num { return append([]Num(nil), x...) }

// TestResampler: a pseudo-run has one value per item of CompareItems in
// its order; comparisons with the same per-round differences get the
// same re-derived increase (the same rounds for every item); every
// increase is a median of drawn rounds, the factor change is the two
// cells' re-derived increases apart, standard errors stay the
// reference's, the reference is not modified, and the same seed gives
// the same pseudo-run.
func TestResampler(t *testing.T) {
	ref := resampleFixture()
	items := CompareItems(ref, ref)
	r := Resampler(ref)
	byName := func(v []agreement.Value, name string) agreement.Value {
		for i, it := range items {
			if it.Name == name {
				return v[i]
			}
		}
		t.Fatalf("no item %q", name)
		return agreement.Value{}
	}
	moved := false
	for seed := range uint64(50) {
		v := r(rand.New(rand.NewPCG(seed, 1)))
		if len(v) != len(items) {
			t.Fatalf("%d values for %d items", len(v), len(items))
		}
		x, y, z := byName(v, "paper x vs baseline difference"), byName(v, "paper y vs baseline difference"), byName(v, "paper z vs baseline difference")
		if x != y {
			t.Errorf("seed %d: the same rounds gave %v and %v", seed, x, y)
		}
		if x.SE != 0.5 || z.SE != 0.6 {
			t.Errorf("seed %d: standard errors %g, %g, want the reference's", seed, x.SE, z.SE)
		}
		if x.Est < 1 || x.Est > 6 || 2*x.Est != math.Round(2*x.Est) || math.IsNaN(z.Est) {
			t.Errorf("seed %d: increases %g, %g: not medians of drawn rounds", seed, x.Est, z.Est)
		}
		cell := byName(v, "cell "+ref.Gap.Cells[1].Cell.String()+" x vs baseline difference")
		if ch := byName(v, "factor stack go -> openssl x "+ref.Gap.Cells[0].Cell.String()+" -> "+ref.Gap.Cells[1].Cell.String()+" change direction"); ch.Est != cell.Est-1 {
			t.Errorf("seed %d: factor change %g, want %g - 1", seed, ch.Est, cell.Est)
		}
		moved = moved || x.Est != 3.5
	}
	if !moved {
		t.Error("50 pseudo-runs gave the reference's increase every time")
	}
	if got := ref.Families["paper"].Comparisons[0].Rounds.IncreaseMs; got != 3.5 {
		t.Errorf("the reference was modified: %g", got)
	}
	a, b := r(rand.New(rand.NewPCG(9, 1))), r(rand.New(rand.NewPCG(9, 1)))
	for i := range a {
		if a[i] != b[i] && !(math.IsNaN(a[i].Est) && math.IsNaN(b[i].Est)) {
			t.Errorf("the same seed gave %v and %v for %s", a[i], b[i], items[i].Name)
		}
	}
}
