package tlsgapmodel

import (
	"flag"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"pqrepro/analysis/gapmodel"
	"pqrepro/analysis/tlsstudy"
	"pqrepro/internal/render"
	"pqrepro/internal/render/rendertest"
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
				r := gapmodel.Row{OneWayDelayMs: d, RTTMs: 2*d + 0.05, Groups: c.Groups, Chain: c.Chain, Role: role, RoundTrips: k, CPUMs: cpu[role], SignMs: 0.05}
				if role == "pq-sig" {
					r.SignMs = 1.4
				}
				if k > 1 && role != "pq-sig" {
					r.HRRShare = 1
				}
				for range 10 {
					r.RoundThsMs = append(r.RoundThsMs, 2.5+k*r.RTTMs+cpu[role]+0.2*(rng.Float64()-0.5))
				}
				ths := 2.5 + k*r.RTTMs + cpu[role]
				r.ThsByDefMs = map[string]float64{"ch-cfin@client": ths, "ch-slast@client": ths - r.RTTMs/2, "ch2-cfin@client": ths, "syn-cfin@client": ths + r.RTTMs}
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
	r := &tlsstudy.Results{}
	tab, err := modelsTable(r)
	if err != nil || !strings.Contains(tab, notMeasured) {
		t.Fatalf("table without cells (err %v):\n%s", err, tab)
	}
	vals := map[string]string{}
	set := func(k, v string) { vals[k] = v }
	if err := numbers(r, set); err != nil || vals["GapModelStatus"] != notMeasured || vals["GapModelBoundMs"] != render.Fixed(gapmodel.Registered.BoundMs, 2) {
		t.Fatalf("numbers without cells (err %v): %v", err, vals)
	}
	if _, err := figure(r); err != nil {
		t.Fatal(err)
	}

	r.GapModelRows = gapModelSynthRows()
	r.GapModelMissing = map[string]string{}
	for _, d := range gapmodel.Definitions[4:] {
		r.GapModelMissing[d.Key()] = "the run captured the client's end only"
	}
	tab, err = modelsTable(r)
	if err != nil || strings.Contains(tab, notMeasured) || !strings.Contains(tab, `Second model: $c_0 =`) || !strings.Contains(tab, "per-config, leaf+ca, ML-DSA-87") {
		t.Fatalf("table with cells (err %v):\n%s", err, tab)
	}
	joint, err := jointTable(r)
	if err != nil || strings.Count(joint, `\\`) != 1+4 || !strings.Contains(joint, "at the server's end: not measured (the run captured the client's end only)") {
		t.Fatalf("joint table: want a header and the 4 client-end definitions, and the server's end named as not measured (err %v):\n%s", err, joint)
	}
	all, err := jointAllTable(r)
	if err != nil || strings.Count(all, `\\`) < 4*4 {
		t.Fatalf("joint table, every row (err %v):\n%s", err, all)
	}
	delete(r.GapModelMissing, "syn-cfin@server")
	if _, err := jointTable(r); err == nil || !strings.Contains(err.Error(), "captured at one end only") {
		t.Errorf("a definition no row gives, not listed as missing: err %v", err)
	}
	r.GapModelMissing["syn-cfin@server"] = "no"
	if err := numbers(r, set); err != nil || vals["GapModelStatus"] != "measured" || vals["GapModelPass"] != "passes" {
		t.Fatalf("numbers with cells (err %v): %v", err, vals)
	}
	// The prediction passed, so the numbers name the best combination or
	// say that none fits.
	if vals["GapModelBest"] == "---" {
		t.Errorf("no best combination or none: %v", vals)
	}
	fig, err := figure(r)
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
	fig2, _ := figure(r)
	b, _ := render.Files([]render.Figure{fig2}, time.Unix(0, 0))
	if string(a[Figure+".svg"]) != string(b[Figure+".svg"]) {
		t.Error("the figure is not deterministic")
	}

	r.GapModelRows[5].RoundThsMs = nil
	if _, err := modelsTable(r); err == nil || !strings.Contains(err.Error(), "no rounds") {
		t.Errorf("a row without rounds: %v", err)
	}
}

// TestGapModelOutcome: a failed held-out test names the worst cell and
// explains nothing; a passed one names the best combination or none.
func TestGapModelOutcome(t *testing.T) {
	row := &gapmodel.Row{Groups: "x25519-first", Chain: "leaf+ca", Role: "pq-sig", OneWayDelayMs: 1, RTTMs: 2.083, RoundTrips: 2}
	reg := gapmodel.Registered
	failed := &gapmodel.Fit{Reg: reg, Pass: false, Predictions: []gapmodel.Prediction{
		{Row: row, ObservedMs: 6.45, PredictedMs: 7.97, ErrorMs: 1.52},
		{Row: &gapmodel.Row{Groups: "per-config", Chain: "leaf", Role: "baseline"}, ErrorMs: -0.1},
	}}
	if got := outcome(failed, nil); !strings.Contains(got, "explains none of the published numbers") ||
		!strings.Contains(got, "x25519-first/leaf+ca/pq-sig at 1 ms one way (RTT 2.083~ms, 2.0 measured round trips: predicted 7.97~ms, observed 6.45~ms)") {
		t.Errorf("failed: %q", got)
	}
	passed := &gapmodel.Fit{Reg: reg, Pass: true}
	if got := outcome(passed, &gapmodel.Explanation{Best: -1}); !strings.Contains(got, "no combination") {
		t.Errorf("passed, none fits: %q", got)
	}
	e := &gapmodel.Explanation{Best: 0, Combos: []gapmodel.ComboFit{{Combo: gapmodel.Combo{Groups: "x25519-first", Chain: "leaf"}, RTTMs: 3.9, CPUFactor: 1, RMSMs: 0.4}}}
	if got := outcome(passed, e); !strings.Contains(got, "the best combination is x25519-first, leaf, with a path RTT of 3.90~ms") {
		t.Errorf("passed, best: %q", got)
	}
}

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// TestTableGolden: the table of a run without emulated-path cells (the
// test run of analysis/tlsstudy's golden files) is testdata/tls-gapmodel.tex.
func TestTableGolden(t *testing.T) {
	got, err := modelsTable(&tlsstudy.Results{})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join("testdata", filepath.Base(Table))
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("the table differs from %s (run go test -update after checking why)", path)
	}
}

// TestFigureLayout renders the figure of the committed results and of
// analysis/tlsstudy's test results and fails on overlapping or clipped
// text and on data that fill too little of the page.
func TestFigureLayout(t *testing.T) {
	rendertest.CheckLayouts(t, []string{filepath.Join("..", "..", "results", "tls.json"), filepath.Join("..", "tlsstudy", "testdata", "tls.json")},
		func(b []byte) ([]render.Figure, error) {
			r, err := tlsstudy.DecodeResults("tls.json", b)
			if err != nil {
				return nil, err
			}
			return figures(r)
		})
}

// TestMissPattern: the misses are named by kind and by sign.
func TestMissPattern(t *testing.T) {
	stall := &gapmodel.Row{RoundTrips: 2}
	hrr := &gapmodel.Row{RoundTrips: 2, HRRShare: 1}
	plain := &gapmodel.Row{RoundTrips: 1}
	f := &gapmodel.OverlapFit{Misses: 3, Predictions: []gapmodel.OverlapPrediction{
		{Row: stall, ErrorMs: 0.9}, {Row: stall, Pass: true}, {Row: hrr, ErrorMs: -0.4}, {Row: hrr, ErrorMs: -0.5}, {Row: plain, Pass: true},
	}}
	want := "1 of the 2 cells with a window stall (predicted too long); 2 of the 2 cells with a HelloRetryRequest and no stall (all predicted too short)"
	if got := missPattern(f); got != want {
		t.Errorf("got %q\nwant %q", got, want)
	}
	if got := missPattern(&gapmodel.OverlapFit{}); got != "every held-out cell is within its bound" {
		t.Errorf("no miss: %q", got)
	}
}

// TestStallShape: the stall's observed cost per level is set against the
// second model's term, and the reading follows the sides found.
func TestStallShape(t *testing.T) {
	f := &gapmodel.OverlapFit{C0: gapmodel.Interval{Est: 1}, S: gapmodel.Interval{Est: 1}}
	row := func(d, rtt, ths float64) gapmodel.Row {
		return gapmodel.Row{OneWayDelayMs: d, RTTMs: rtt, RoundTrips: 2, SignMs: 1, CPUMs: 0.5, RoundThsMs: []float64{ths, ths}}
	}
	// Ths = 1 + RTT + 0.5 + cost: costs 0.2 (term 0), 0.5 (term 1), 2 (term 2).
	rows := []gapmodel.Row{row(0, 0.5, 1+0.5+0.5+0.2), row(1, 2, 1+2+0.5+0.5), row(2, 3, 1+3+0.5+2)}
	got := stallShape(rows, f)
	for _, want := range []string{"a stall cost 0.20, 0.50, 2.00~ms", "= 0.00, 1.00, 2.00~ms", "more than the term at 0.50~ms; less at 2.00~ms; the term within 0.05~ms at 3.00~ms", "overlaps more than the signature", "outlasts the round trip"} {
		if !strings.Contains(got, want) {
			t.Errorf("%q\nwant it to contain %q", got, want)
		}
	}
	if got := stallShape(rows[2:], f); strings.Contains(got, "reading") {
		t.Errorf("no side but the term: %q", got)
	}
	if got := stallShape(nil, f); got != "no cell stalled" {
		t.Errorf("no stall: %q", got)
	}
}

// TestAtEdge: a fitted RTT on the measured range's edge is marked.
func TestAtEdge(t *testing.T) {
	r := gapmodel.JointRow{MinRTTMs: 0.17, MaxRTTMs: 4.15}
	for _, tc := range []struct {
		rtt  float64
		want bool
	}{{0.17, true}, {4.15, true}, {4.149, false}, {2, false}, {0.171, false}} {
		if got := atEdge(r, tc.rtt); got != tc.want {
			t.Errorf("RTT %v: at the edge %v, want %v", tc.rtt, got, tc.want)
		}
	}
	if got := edgeNote(r, 4.15); !strings.Contains(got, "the largest RTT") {
		t.Errorf("edgeNote(4.15) = %q", got)
	}
	if got := edgeNote(r, 0.17) + edgeNote(r, 2); !strings.Contains(got, "the smallest RTT") || strings.Count(got, "RTT") != 1 {
		t.Errorf("edgeNote(0.17) + edgeNote(2) = %q", got)
	}
	if got := edged(r, 4.15); !strings.Contains(got, `\dagger`) {
		t.Errorf("edged(4.15) = %q: want the dagger", got)
	}
}

// TestKemReach: the RTT at which ML-KEM-1024's increase equals the
// published one, inside the measured range or extrapolated, and a curve
// that never rises to it.
func TestKemReach(t *testing.T) {
	c := gapmodel.Combo{Groups: "x25519-first", Chain: "leaf"}
	mk := func(slope float64) []gapmodel.Row {
		var rows []gapmodel.Row
		for _, rtt := range []float64{0, 2, 4} {
			base := 1 + rtt
			rows = append(rows,
				gapmodel.Row{OneWayDelayMs: rtt / 2, RTTMs: rtt, Groups: c.Groups, Chain: c.Chain, Role: "baseline", RoundThsMs: []float64{base}},
				gapmodel.Row{OneWayDelayMs: rtt / 2, RTTMs: rtt, Groups: c.Groups, Chain: c.Chain, Role: "pq-kem", RoundThsMs: []float64{base + 0.1 + slope*rtt}})
		}
		return rows
	}
	// 0.1 + 2 RTT = 5.072 at RTT 2.486: inside; baseline 3.486.
	if got := kemReach(mk(2), c); !strings.Contains(got, "about 2.49~ms (within the RTTs we measured), where our baseline would be 3.49~ms") {
		t.Errorf("inside: %q", got)
	}
	// 0.1 + 1 RTT = 5.072 at RTT 4.972: beyond 4, extrapolated.
	if got := kemReach(mk(1), c); !strings.Contains(got, "about 4.97~ms (beyond our largest, 4.00~ms: extrapolated") {
		t.Errorf("extrapolated: %q", got)
	}
	if got := kemReach(mk(-0.1), c); !strings.Contains(got, "does not grow") {
		t.Errorf("falling: %q", got)
	}
	if got := kemReach(nil, c); got != "not measured in this run" {
		t.Errorf("no rows: %q", got)
	}
}

func TestShareWords(t *testing.T) {
	for _, tc := range []struct {
		k, n int
		want string
	}{{6, 6, "all of them"}, {0, 6, "none of them"}, {5, 8, "5 of them"}, {0, 0, "none of them"}} {
		if got := shareWords(tc.k, tc.n); got != tc.want {
			t.Errorf("shareWords(%d, %d) = %q, want %q", tc.k, tc.n, got, tc.want)
		}
	}
}
