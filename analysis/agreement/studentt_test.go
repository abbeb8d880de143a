package agreement

import (
	"math"
	"testing"
)

// TestStudentT: an estimate whose standard errors rest on few units is
// judged against Student's t with the Welch-Satterthwaite degrees of
// freedom: a wider interval and a larger p than the normal's, the same
// as the normal when DF is unset, and the normal again with a
// between-run variance.
func TestStudentT(t *testing.T) {
	base := Item{Name: "x", Class: HostIndependent, Kind: Estimate, Ref: V(1, 0.1), New: V(1.25, 0.1)}
	normal := Judge(DefaultRule, Study{Name: "s", Items: []Item{base}, HostsMatch: true}).Items[0]
	few := base
	few.Ref.DF, few.New.DF = 9, 9
	tj := Judge(DefaultRule, Study{Name: "s", Items: []Item{few}, HostsMatch: true}).Items[0]
	if got := predictionDF(few); math.Abs(got-18) > 1e-9 {
		t.Fatalf("df %v, want 18 (equal standard errors: df_r + df_n)", got)
	}
	if !(tj.Hi-tj.Lo > normal.Hi-normal.Lo) || !(tj.P > normal.P) {
		t.Fatalf("t: [%v, %v] p %v; normal: [%v, %v] p %v: want t wider with a larger p", tj.Lo, tj.Hi, tj.P, normal.Lo, normal.Hi, normal.P)
	}
	// z = 0.25 / sqrt(0.02) = 1.768: normal p 0.077, t(18) p 0.094.
	if math.Abs(normal.P-0.0771) > 0.001 || math.Abs(tj.P-0.0940) > 0.001 {
		t.Fatalf("p normal %v, t %v; want 0.0771 and 0.0940", normal.P, tj.P)
	}
	withTau := few
	withTau.Tau2 = 0.01
	if predictionDF(withTau) != 0 {
		t.Fatal("a between-run variance should fall back to the normal")
	}
	one := base
	one.Ref.DF = 9
	if predictionDF(one) != 0 {
		t.Fatal("one run without DF should fall back to the normal")
	}
}
