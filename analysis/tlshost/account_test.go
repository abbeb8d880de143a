package tlshost

import (
	"math"
	"strings"
	"testing"

	"pqrepro/datasets/tlsdata"
)

// TestNewAccount: without host_crypto the account is a note and no
// cells; with it, each cell's observed hybrid minus ML-KEM-1024 is the
// median over the rounds both have (NaN rounds left out), its ratio to
// 3 (direct) or 4 (HRR) P-384 operations, and Go's cells are marked as
// outside the model.
func TestNewAccount(t *testing.T) {
	rs := Resampling{Seed: 1, Resamples: 200, Level: 0.95, MinRounds: 6}
	if a := NewAccount(nil, nil, rs); a.Note == "" || len(a.Cells) != 0 {
		t.Fatalf("no host_crypto: %+v, want a note and no cells", a)
	}
	hc := &CryptoMeta{Before: &Speed{MsPerOp: map[string]float64{"ecdh-p384": 0.1}}, After: &Speed{MsPerOp: map[string]float64{"ecdh-p384": 0.3}}}
	nan := math.NaN()
	kem := []float64{1, 1, 1, 1, 1, 1, 1, nan}
	hyb := []float64{1.8, 1.8, 1.9, 1.8, 1.7, 1.8, 1.8, 5}
	cells := []CellIncreases{
		{Cell: tlsdata.Cell{Stack: tlsdata.StackOpenSSL, Path: "bridge", KeyShare: tlsdata.KeyShareDirect}, HybridDiffsMs: hyb, KemDiffsMs: kem, KemIncreaseMs: 1},
		{Cell: tlsdata.Cell{Stack: tlsdata.StackGo, Path: "loopback", KeyShare: tlsdata.KeyShareHRR}, HybridDiffsMs: hyb, KemDiffsMs: kem, KemIncreaseMs: 1},
	}
	a := NewAccount(hc, cells, rs)
	if a.Note != "" || len(a.Cells) != 2 || math.Abs(float64(a.P384Ms)-0.2) > 1e-12 || math.Abs(float64(a.P384DriftPct)-200) > 1e-9 {
		t.Fatalf("account %+v", a)
	}
	d, h := a.Cells[0], a.Cells[1]
	if !d.Applies || d.P384Ops != 3 || d.NEff != 7 || math.Abs(float64(d.ObservedMs)-0.8) > 1e-9 || math.Abs(float64(d.Ratio)-0.8/0.6) > 1e-9 {
		t.Errorf("direct cell %+v", d)
	}
	if math.IsNaN(float64(d.Lower)) || !(d.Lower <= d.ObservedMs && d.ObservedMs <= d.Upper) {
		t.Errorf("direct cell interval [%v, %v] around %v", d.Lower, d.Upper, d.ObservedMs)
	}
	if h.Applies || h.P384Ops != 4 || !strings.Contains(h.Note, "Go's") {
		t.Errorf("Go HRR cell %+v, want 4 operations and not applying", h)
	}
}
