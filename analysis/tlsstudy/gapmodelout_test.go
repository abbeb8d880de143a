package tlsstudy

import (
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"pqrepro/analysis/gapmodel"
	"pqrepro/internal/render"
)

// gapModelSynthRows are emulated-path cells made by the model itself
// (c0 2.5 ms, s 1): one round trip per handshake, one more for an HRR
// (ML-KEM configurations under one list, X25519 first) and one more for
// ML-DSA-87 with its CA in the chain; rounds scatter by +-0.1 ms.
func gapModelSynthRows() []gapmodel.Row {
	cpu := map[string]float64{"baseline": 0.3, "pq-sig": 1.6, "pq-kem": 0.35, "hybrid": 3.6}
	rng := rand.New(rand.NewPCG(3, 4))
	var rows []gapmodel.Row
	for _, d := range []float64{0, 0.5, 1, 2} {
		for _, c := range []gapmodel.Combo{{Groups: "per-config", Chain: "leaf"}, {Groups: "per-config", Chain: "leaf+ca"}, {Groups: "x25519-first", Chain: "leaf"}, {Groups: "x25519-first", Chain: "leaf+ca"}} {
			for _, role := range gapmodel.Roles {
				k := 1.0
				if c.Groups == "x25519-first" && (role == "pq-kem" || role == "hybrid") {
					k++
				}
				if c.Chain == "leaf+ca" && role == "pq-sig" {
					k++
				}
				r := gapmodel.Row{OneWayDelayMs: d, RTTMs: 2*d + 0.05, Groups: c.Groups, Chain: c.Chain, Role: role, RoundTrips: k, CPUMs: cpu[role]}
				for range 10 {
					r.RoundThsMs = append(r.RoundThsMs, 2.5+k*r.RTTMs+cpu[role]+0.2*(rng.Float64()-0.5))
				}
				rows = append(rows, r)
			}
		}
	}
	return rows
}

// TestGapModelOutputs: without emulated-path cells every output says
// they were not measured; with them the table, the numbers and the
// figure carry the fit, and a bad row is an error, not an output.
func TestGapModelOutputs(t *testing.T) {
	r := &Results{}
	tab, err := gapModelTable(r)
	if err != nil || !strings.Contains(tab, notMeasured) {
		t.Fatalf("table without cells (err %v):\n%s", err, tab)
	}
	vals := map[string]string{}
	set := func(k, v string) { vals[k] = v }
	if err := gapModelNumbers(r, set); err != nil || vals["GapModelStatus"] != notMeasured || vals["GapModelBoundMs"] != render.Fixed(gapmodel.Registered.BoundMs, 2) {
		t.Fatalf("numbers without cells (err %v): %v", err, vals)
	}
	if _, err := gapModelFigure(r); err != nil {
		t.Fatal(err)
	}

	r.GapModelRows = gapModelSynthRows()
	tab, err = gapModelTable(r)
	if err != nil || strings.Contains(tab, notMeasured) || !strings.Contains(tab, `$\star$`) {
		t.Fatalf("table with cells (err %v):\n%s", err, tab)
	}
	if err := gapModelNumbers(r, set); err != nil || vals["GapModelStatus"] != "measured" || vals["GapModelPass"] != "passes" {
		t.Fatalf("numbers with cells (err %v): %v", err, vals)
	}
	// The prediction passed, so the numbers name the best combination or
	// say that none fits.
	if vals["GapModelBest"] == "---" {
		t.Errorf("no best combination or none: %v", vals)
	}
	fig, err := gapModelFigure(r)
	if err != nil || len(fig.Panels) != 2 {
		t.Fatalf("figure: %v, %d panels (want one per group list)", err, len(fig.Panels))
	}
	if probs := render.CheckFigures([]render.Figure{fig}, 0.3, func(render.Figure) float64 { return 1 }); len(probs) > 0 {
		t.Errorf("figure layout: %v", probs)
	}
	a, err := render.Files([]render.Figure{fig}, time.Unix(0, 0))
	if err != nil {
		t.Fatal(err)
	}
	fig2, _ := gapModelFigure(r)
	b, _ := render.Files([]render.Figure{fig2}, time.Unix(0, 0))
	if string(a[FigureGapModel+".svg"]) != string(b[FigureGapModel+".svg"]) {
		t.Error("the figure is not deterministic")
	}

	r.GapModelRows[5].RoundThsMs = nil
	if _, err := gapModelTable(r); err == nil || !strings.Contains(err.Error(), "no rounds") {
		t.Errorf("a row without rounds: %v", err)
	}
}
