package ttlb

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"pqrepro/analysis/claims"
	"pqrepro/analysis/claims/claimstest"
	"pqrepro/analysis/netstudy"
	"pqrepro/datasets/netdata"
	"pqrepro/internal/jsonnum"
)

// ttlbRows makes a transfer block whose hybrid adds add ms to every
// connection's TTLB over a base that grows with the size, n connections
// per series, two toolchains (the second's hybrid adding 10 % more), and
// a size-0 round per toolchain.
func ttlbRows(n int, add float64) (*netstudy.Design, []netdata.Row, []netstudy.Row) {
	d := &netstudy.Design{Scenarios: []netstudy.Scenario{{Name: "wan", RTTms: 31.1}, {Name: "lan", RTTms: 1}, {Name: "far", RTTms: 78.7}},
		Rounds: []int{100}, Groups: []string{"X25519", "X25519MLKEM768"}, Toolchains: []string{"go1.24.4", "go1.27.3"}}
	rng := rand.New(rand.NewPCG(1, 2))
	var xfer []netdata.Row
	var rounds []netstudy.Row
	for ti, tc := range d.Toolchains {
		a := add * (1 + 0.1*float64(ti))
		for _, sc := range d.Scenarios {
			for gi, g := range d.Groups {
				for i := range n {
					ths := sc.RTTms + 1 + float64(gi)*a + rng.Float64()*0.1
					rounds = append(rounds, netstudy.Row{Scenario: sc.Name, Round: 100, Group: g, Seq: i, OK: true, HasThs: true, ThsMs: ths, Toolchain: tc})
				}
				for _, size := range []int{10240, 1048576} {
					for i := range n {
						base := 2*sc.RTTms + float64(size)/1000
						v := int64((base + float64(gi)*a + rng.Float64()*0.1) * 1e6)
						h := int64((sc.RTTms + 1 + float64(gi)*a) * 1e6)
						xfer = append(xfer, netdata.Row{Scenario: sc.Name, Round: n, Group: g, Seq: i, OK: true, Toolchain: tc,
							ResponseBytes: size, ResponseRead: int64(size), Cap: &netdata.Capture{ThsNs: &h, Complete: true},
							Xfer: &netdata.Transfer{TTLBNs: &v, RoundTrips: 2}})
					}
				}
				// One incomplete connection per group, scenario and toolchain.
				xfer = append(xfer, netdata.Row{Scenario: sc.Name, Round: n, Group: g, OK: true, Failure: "response-eof", Toolchain: tc,
					ResponseBytes: 10240, ResponseRead: 5, Xfer: &netdata.Transfer{Incomplete: netdata.IncompleteShort}})
			}
		}
	}
	return d, xfer, rounds
}

// TestPaddedArmIgnored: the padded arm's rows (complete, far slower, and
// incomplete ones) change no byte of the results K1-K4 are judged on.
func TestPaddedArmIgnored(t *testing.T) {
	d, xfer, rounds := ttlbRows(20, 2)
	want, err := Analyze(d, xfer, rounds, netstudy.Params{})
	if err != nil {
		t.Fatal(err)
	}
	with := slices.Clone(xfer)
	for _, r := range xfer {
		if r.Group != "X25519" {
			continue
		}
		r.Group = PaddedArm
		if r.Xfer != nil && r.Xfer.TTLBNs != nil {
			v := *r.Xfer.TTLBNs * 3
			x := *r.Xfer
			x.TTLBNs = &v
			r.Xfer = &x
		}
		with = append(with, r)
	}
	got, err := Analyze(d, with, rounds, netstudy.Params{})
	if err != nil {
		t.Fatal(err)
	}
	a, _ := encode(want)
	b, _ := encode(got)
	if string(a) != string(b) {
		t.Error("the padded arm's rows changed the results")
	}
}

// The hybrid's increase per scenario and size, relative to a TTLB that
// grows with the size, falls with the size; incomplete connections are
// counted, never timed; the scenarios come by RTT, lan the fastest.
func TestAnalyzeTTLB(t *testing.T) {
	d, xfer, rounds := ttlbRows(40, 2)
	res, err := Analyze(d, xfer, rounds, netstudy.Params{})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Measured || res.Fastest != "lan" || strings.Join(res.Scenarios, ",") != "lan,wan,far" || len(res.Cells) != 9 {
		t.Fatalf("measured %v fastest %q scenarios %v cells %d", res.Measured, res.Fastest, res.Scenarios, len(res.Cells))
	}
	for _, sc := range res.Scenarios {
		var last float64 = math.Inf(1)
		for _, c := range res.Cells {
			if c.Scenario != sc {
				continue
			}
			if math.Abs(float64(c.DiffMs)-2.1) > 0.1 || !(float64(c.RelPct) < last) || c.K != 2 {
				t.Errorf("%s %d: diff %v ms, rel %v %% (previous %v), %d replicates: want about 2.1 ms, falling, 2", sc, c.SizeBytes, c.DiffMs, c.RelPct, last, c.K)
			}
			if math.IsNaN(float64(c.RelLowerPct)) || !(c.RelLowerPct <= c.RelPct && c.RelPct <= c.RelUpperPct) {
				t.Errorf("%s %d: interval [%v, %v] around %v", sc, c.SizeBytes, c.RelLowerPct, c.RelUpperPct, c.RelPct)
			}
			if c.SizeBytes == 10240 && c.Incomplete != 4 {
				t.Errorf("%s: %d incomplete, want 4", sc, c.Incomplete)
			}
			last = float64(c.RelPct)
		}
	}
	// At 1 MiB (base about 1 s) 2 ms is 0.2 %: below 1 % from there on.
	if got := res.Below1["far"]; got != 1048576 {
		t.Errorf("far below 1 %% from %d, want 1048576", got)
	}
	if got := res.Below5["lan"]; got != 1048576 {
		t.Errorf("lan below 5 %% from %d, want 1048576", got)
	}
	if got := res.Below5["far"]; got != 0 {
		t.Errorf("far below 5 %% from %d, want 0 (the handshake already)", got)
	}
	if len(res.Claims) != 4 {
		t.Errorf("%d extension claims", len(res.Claims))
	}
	// The table has a row per cell, eight cells each, and the fastest
	// scenario's handshake increase beside its TTLB increase as macros.
	nums, tab, err := tables(res)
	tex := nums + tab
	if err != nil {
		t.Fatal(err)
	}
	rows := 0
	for _, l := range strings.Split(tex, "\n") {
		if strings.HasSuffix(l, `\\`) && !strings.HasPrefix(l, "scenario") {
			rows++
			if n := strings.Count(l, "&"); n != 9 {
				t.Errorf("row with %d cells: %s", n+1, l)
			}
		}
	}
	if rows != len(res.Cells) {
		t.Errorf("%d table rows, want %d", rows, len(res.Cells))
	}
	for _, m := range []string{`\NetTtlbHsRelPctOneMiB`, `\NetTtlbRelPctLanOneMiB`, `\NetTtlbBelowFiveFar}{0}`, `\NetTtlbStatus}{measured}`} {
		if !strings.Contains(tex, m) {
			t.Errorf("no %s in\n%s", m, tex)
		}
	}
}

// The cell's interval is the t interval over its replicates, here two
// toolchains of +2 % and +4 %: mean 3, s = sqrt(2), s/sqrt(2) = 1, and
// t_{0.975, 1} = 12.7062, so [3 - 12.7062, 3 + 12.7062]; the differences
// 0.2 and 0.4 ms give 0.3 -+ 1.27062 ms. Three connections per series
// are too few for the block bootstrap: no within-series interval, so no
// agreement check, each with its note. One replicate gives no interval,
// and says why.
func TestReplicateInterval(t *testing.T) {
	rep := func(tc string, hyb float64) *series {
		return &series{toolchain: tc, tt: [2][]float64{{10, 10, 10}, {hyb, hyb, hyb}}, hs: [2][]float64{{5, 5, 5}, {6, 6, 6}}}
	}
	var c Cell
	fillCell(&c, []*series{rep("b", 10.4), rep("a", 10.2)}, "a", netstudy.Params{}.WithDefaults())
	near := func(got jsonnum.Num, want float64) bool { return math.Abs(float64(got)-want) < 1e-3 }
	if c.K != 2 || !near(c.RelPct, 3) || !near(c.RelLowerPct, 3-12.7062) || !near(c.RelUpperPct, 3+12.7062) {
		t.Errorf("k %d, %v [%v, %v], want 2, 3 [%v, %v]", c.K, c.RelPct, c.RelLowerPct, c.RelUpperPct, 3-12.7062, 3+12.7062)
	}
	if !near(c.DiffMs, 0.3) || !near(c.DiffLowerMs, 0.3-1.27062) || !near(c.DiffUpperMs, 0.3+1.27062) || !near(c.HsRelPct, 20) {
		t.Errorf("diff %v [%v, %v], handshake %v %%", c.DiffMs, c.DiffLowerMs, c.DiffUpperMs, c.HsRelPct)
	}
	if c.Replicates[0].Toolchain != "a" || !near(c.Replicates[0].RelPct, 2) || !near(c.Replicates[1].RelPct, 4) {
		t.Errorf("replicates %+v", c.Replicates)
	}
	if c.Agree != "" || !strings.Contains(c.Note, "no within-series interval") {
		t.Errorf("agree %q, note %q", c.Agree, c.Note)
	}
	var one Cell
	fillCell(&one, []*series{rep("a", 10.2)}, "a", netstudy.Params{}.WithDefaults())
	if one.K != 1 || !near(one.RelPct, 2) || !math.IsNaN(float64(one.RelLowerPct)) || !strings.Contains(one.Note, "one replicate (a): no interval, which needs two or more series pairs") {
		t.Errorf("one replicate: k %d, %v [%v, %v], note %q", one.K, one.RelPct, one.RelLowerPct, one.RelUpperPct, one.Note)
	}
	var none Cell
	fillCell(&none, nil, "a", netstudy.Params{}.WithDefaults())
	if none.K != 0 || !math.IsNaN(float64(none.RelPct)) || none.Note != "no series in the run" {
		t.Errorf("no replicate: %+v", none)
	}
}

// The agreement check: each replicate's estimate inside every other's
// within-series interval.
func TestAgree(t *testing.T) {
	r := func(v, lo, hi float64) Replicate {
		return Replicate{RelPct: jsonnum.Num(v), WithinLowerPct: jsonnum.Num(lo), WithinUpperPct: jsonnum.Num(hi)}
	}
	for _, tc := range []struct {
		reps []Replicate
		want string
	}{
		{[]Replicate{r(2, 1, 3), r(2.5, 1.5, 3.5)}, "yes"},
		{[]Replicate{r(2, 1.9, 2.1), r(2.5, 1.5, 3.5)}, "no"},
		{[]Replicate{r(2, 1, 3)}, ""},
		{[]Replicate{r(2, 1, 3), r(2.5, math.NaN(), math.NaN())}, ""},
	} {
		if got := agree(tc.reps); got != tc.want {
			t.Errorf("%+v: %q, want %q", tc.reps, got, tc.want)
		}
	}
}

// A run without the transfer block says so in every output, and judges
// no extension claim (not measurable, with the reason); the original's
// catalogue has none of them (its counts are unchanged).
func TestTTLBNotMeasured(t *testing.T) {
	res, err := Analyze(&netstudy.Design{}, nil, nil, netstudy.Params{})
	if err != nil || res.Measured || res.Note != NotMeasuredPinned {
		t.Fatalf("%+v %v", res, err)
	}
	for _, c := range res.Claims {
		if c.Verdict != claims.NotMeasurable || c.Reason != NotMeasuredPinned {
			t.Errorf("%s: %s (%s)", c.ID, c.Verdict, c.Reason)
		}
	}
	nums, tab, err := tables(res)
	tex := nums + tab
	if err != nil || !strings.Contains(tex, "not measured in the pinned run") || !strings.Contains(tex, `\newcommand{\NetTtlbVerdictKOne}{not measurable here}`) {
		t.Errorf("tex: %v\n%s", err, tex)
	}
	for _, c := range netstudy.Claims().Claims {
		if strings.HasPrefix(c.ID, "K") {
			t.Errorf("extension claim %s in the original's catalogue", c.ID)
		}
	}
}

// TestCatalogue: K1-K4 have the form every catalogue of the engine has.
func TestCatalogue(t *testing.T) { claimstest.CheckCatalogue(t, Catalogue(), "K") }

// cellSpec is a synthetic cell: one replicate per relative increase, its
// series three connections of 100 ms (X25519) and 100 (1 + rel/100) ms.
type cellSpec struct {
	sc   string
	size int
	rels []float64
}

// synth makes the results of synthetic cells, judged through the engine.
func synth(t *testing.T, specs ...cellSpec) *Results {
	t.Helper()
	r := &Results{Measured: true, Scenarios: []string{}, Cells: []Cell{}, Below5: map[string]int{}, Below1: map[string]int{}}
	for _, sp := range specs {
		if !slices.Contains(r.Scenarios, sp.sc) {
			r.Scenarios = append(r.Scenarios, sp.sc)
		}
		var reps []*series
		for i, rel := range sp.rels {
			h := 100 * (1 + rel/100)
			reps = append(reps, &series{toolchain: fmt.Sprintf("go1.%d", 24+i), tt: [2][]float64{{100, 100, 100}, {h, h, h}}})
		}
		c := Cell{Scenario: sp.sc, SizeBytes: sp.size}
		fillCell(&c, reps, "go1.24", netstudy.Params{}.WithDefaults())
		r.Cells = append(r.Cells, c)
	}
	cs, err := judge(r)
	if err != nil {
		t.Fatal(err)
	}
	r.Claims = cs
	return r
}

// TestRules: each claim comes out reproduced on rows that show it, and
// not reproduced on rows that refute it (an interval past the bound,
// straddling it, wholly below 0, or the drop or the order reversed);
// a cell with one replicate or none is not measurable; a negative
// increase is named as the hybrid finishing sooner.
func TestRules(t *testing.T) {
	const k10, k200, m1 = 10240, kib200, 1048576
	lan0, wan0, far0 := cellSpec{"lan", 0, []float64{40, 41}}, cellSpec{"wan", 0, []float64{2.0, 2.1}}, cellSpec{"far", 0, []float64{2.5, 2.6}}
	for _, tc := range []struct {
		name, id string
		cells    []cellSpec
		want     claims.Verdict
		reason   string
	}{
		{"K1 shown", "K1", []cellSpec{lan0, {"lan", k200, []float64{1.0, 1.1}}, {"lan", m1, []float64{0.5, 0.6}}}, claims.Reproduced, "interval [0.4, 1.7] % below 5 %"},
		{"K1 at the bound", "K1", []cellSpec{lan0, {"lan", k200, []float64{6.0, 6.1}}}, claims.NotReproduced, "lies at or above 5 %"},
		{"K1 straddles", "K1", []cellSpec{lan0, {"lan", k200, []float64{3, 4}}, {"lan", m1, []float64{0.5, 0.6}}}, claims.NotReproduced, "straddles 5 %: agreement not shown"},
		{"K1 sooner", "K1", []cellSpec{lan0, {"lan", k200, []float64{-3.0, -3.1}}}, claims.NotReproduced, "the hybrid finished sooner: -3.0 %, interval [-3.7, -2.4] % lies below 0"},
		{"K1 sooner, inside", "K1", []cellSpec{lan0, {"lan", k200, []float64{-0.2, 0.1}}}, claims.Reproduced, "the hybrid finished sooner: -0.1 %, interval [-2.0, 1.9] %, below 5 %"},
		{"K1 one replicate", "K1", []cellSpec{lan0, {"lan", k200, []float64{1.0}}}, claims.NotMeasurable, "one replicate (go1.24): no interval"},
		{"K1 no size", "K1", []cellSpec{lan0, {"lan", k10, []float64{1.0, 1.1}}}, claims.NotMeasurable, "lan 200 KiB: not in the run"},
		{"K2 shown", "K2", []cellSpec{wan0, {"wan", kib50, []float64{1.0, 1.15}}, {"wan", k200, []float64{0.5, 0.62}}}, claims.Reproduced, "below the handshake-only increase"},
		{"K2 no drop", "K2", []cellSpec{wan0, {"wan", kib50, []float64{2.5, 2.62}}}, claims.NotReproduced, "not below the handshake-only increase, the opposite"},
		{"K2 drop not shown", "K2", []cellSpec{wan0, {"wan", kib50, []float64{1.0, 3.0}}}, claims.NotReproduced, "straddles 0: below the handshake-only increase not shown"},
		{"K2 at 15 %", "K2", []cellSpec{{"wan", 0, []float64{30, 31}}, {"wan", kib50, []float64{16, 16.1}}}, claims.NotReproduced, "lies at or above 15 %"},
		{"K2 no size 0", "K2", []cellSpec{{"wan", kib50, []float64{1.0, 1.15}}}, claims.NotMeasurable, "no handshake-only cell"},
		{"K3 shown", "K3", []cellSpec{lan0, wan0, far0, {"lan", k200, []float64{1.0, 1.1}}, {"wan", k200, []float64{0.5, 0.62}}, {"far", k200, []float64{0.5, 0.55}}}, claims.Reproduced, "far 200 KiB"},
		{"K3 far at 10 %", "K3", []cellSpec{lan0, wan0, far0, {"lan", k200, []float64{1.0, 1.1}}, {"wan", k200, []float64{0.5, 0.62}}, {"far", k200, []float64{12, 12.1}}}, claims.NotReproduced, "far 200 KiB: +12.1 %, interval [11.4, 12.7] % lies at or above 10 %"},
		{"K3 sooner", "K3", []cellSpec{lan0, wan0, far0, {"lan", k200, []float64{1.0, 1.1}}, {"wan", k200, []float64{-3.3, -3.4}}, {"far", k200, []float64{0.5, 0.55}}}, claims.NotReproduced, "wan 200 KiB: the hybrid finished sooner"},
		{"K4 shown", "K4", []cellSpec{{"lan", k200, []float64{1, 1.05}}, {"wan", k200, []float64{0.5, 0.52}}, {"far", k200, []float64{3, 3.1}}}, claims.Reproduced, "far +3.0 % minus lan +1.0 % = 2.0 points"},
		{"K4 lower", "K4", []cellSpec{{"lan", k200, []float64{1, 1.1}}, {"wan", k200, []float64{0.1, 0.12}}, {"far", k200, []float64{0.2, 0.25}}}, claims.NotReproduced, "not above lan's, the opposite"},
		{"K4 not shown", "K4", []cellSpec{{"lan", k200, []float64{1, 1.05}}, {"wan", k200, []float64{0.5, 0.52}}, {"far", k200, []float64{1, 5}}}, claims.NotReproduced, "straddles 0: above lan's not shown"},
		{"K4 no wan", "K4", []cellSpec{{"lan", k200, []float64{1, 1.05}}, {"far", k200, []float64{3, 3.1}}}, claims.NotMeasurable, "wan at 200 KiB not in the run"},
	} {
		r := synth(t, tc.cells...)
		var got *Claim
		for i := range r.Claims {
			if r.Claims[i].ID == tc.id {
				got = &r.Claims[i]
			}
		}
		if got == nil || got.Verdict != tc.want || !strings.Contains(got.Reason, tc.reason) {
			t.Errorf("%s: %+v, want %s with %q", tc.name, got, tc.want, tc.reason)
		}
	}
}

// The figure renders for a measured block and for a run without one
// (PQREPRO_TTLB_FIG=<dir> writes them there to look at).
func TestTTLBFigure(t *testing.T) {
	d, xfer, rounds := ttlbRows(40, 2)
	res, err := Analyze(d, xfer, rounds, netstudy.Params{})
	if err != nil {
		t.Fatal(err)
	}
	none, err := notMeasured()
	if err != nil {
		t.Fatal(err)
	}
	for name, r := range map[string]*Results{"measured": res, "pinned": none} {
		figs, err := figures(r, time.Unix(1767225600, 0).UTC())
		if err != nil || len(figs[Figure+".pdf"]) == 0 || len(figs[Figure+".svg"]) == 0 {
			t.Fatalf("%s: %v", name, err)
		}
		if dir := os.Getenv("PQREPRO_TTLB_FIG"); dir != "" {
			os.WriteFile(filepath.Join(dir, name+".pdf"), figs[Figure+".pdf"], 0o644)
		}
	}
}

// withCC is rows duplicated under two congestion controls, the hybrid's
// TTLB under bbr extra ms longer; rows without a TTLB stay incomplete.
func withCC(xfer []netdata.Row, extra float64) []netdata.Row {
	var out []netdata.Row
	for _, cc := range []string{"cubic", "bbr"} {
		for _, r := range xfer {
			r.CC = cc
			if cc == "bbr" && r.Group == "X25519MLKEM768" && r.Xfer != nil && r.Xfer.TTLBNs != nil {
				v := *r.Xfer.TTLBNs + int64(extra*1e6)
				x := *r.Xfer
				x.TTLBNs = &v
				r.Xfer = &x
			}
			out = append(out, r)
		}
	}
	return out
}

// TestByCC: a run with congestion controls keeps its claims' cells
// pooled over toolchain and control, and splits them by control in
// ByCC, each with its toolchains as replicates, its own incomplete
// count and its own difference; the table has a macro per control and
// the figure a line per scenario and control.
func TestByCC(t *testing.T) {
	d, xfer, rounds := ttlbRows(20, 2)
	res, err := Analyze(d, withCC(xfer, 5), rounds, netstudy.Params{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.ByCC) != 3*2*2 {
		t.Fatalf("%d cells by control, want 12 (3 scenarios x 2 sizes x 2 controls; size 0 came from the rounds)", len(res.ByCC))
	}
	if got := res.ccs(); !slices.Equal(got, []string{"bbr", "cubic"}) {
		t.Errorf("controls %v", got)
	}
	for _, c := range res.ByCC {
		if c.K != 2 || len(c.Replicates) != 2 || c.Replicates[0].CC != c.CC || c.Replicates[1].CC != c.CC {
			t.Errorf("%s %d %s: k %d, replicates %+v", c.Scenario, c.SizeBytes, c.CC, c.K, c.Replicates)
		}
		if want := map[int]int{10240: 4, 1048576: 0}[c.SizeBytes]; c.Incomplete != want {
			t.Errorf("%s %d %s: %d incomplete, want %d", c.Scenario, c.SizeBytes, c.CC, c.Incomplete, want)
		}
		pooled := res.cell(c.Scenario, c.SizeBytes)
		if pooled.K != 4 || pooled.Incomplete != 2*map[int]int{10240: 4, 1048576: 0}[c.SizeBytes] {
			t.Errorf("pooled %s %d: k %d, %d incomplete", c.Scenario, c.SizeBytes, pooled.K, pooled.Incomplete)
		}
	}
	for _, sc := range res.Scenarios {
		for _, size := range []int{10240, 1048576} {
			b, c := res.ccCell(sc, size, "bbr"), res.ccCell(sc, size, "cubic")
			if got := float64(b.DiffMs - c.DiffMs); math.Abs(got-5) > 0.2 {
				t.Errorf("%s %d: bbr's difference exceeds cubic's by %.3f ms, want 5", sc, size, got)
			}
			if p := res.cell(sc, size); math.Abs(float64(p.DiffMs)-float64(b.DiffMs+c.DiffMs)/2) > 1e-9 {
				t.Errorf("%s %d: pooled %v is not the mean of the controls' %v and %v", sc, size, p.DiffMs, b.DiffMs, c.DiffMs)
			}
		}
	}
	nums, tab, err := tables(res)
	tex := nums + tab
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range []string{`\newcommand{\NetTtlbRelPctWanOneMiBBbr}`, `\newcommand{\NetTtlbDiffMsFarOneZeroKiBCubic}`} {
		if !strings.Contains(tex, m) {
			t.Errorf("the table lacks %s", m)
		}
	}
	figs, err := figures(res, time.Unix(1767225600, 0).UTC())
	if err != nil {
		t.Fatal(err)
	}
	svg := string(figs[Figure+".svg"])
	for _, name := range []string{"lan, BBR", "wan, CUBIC", "far, BBR"} {
		if !strings.Contains(svg, name) {
			t.Errorf("the figure's key lacks %q", name)
		}
	}
	if dir := os.Getenv("PQREPRO_TTLB_FIG"); dir != "" {
		os.WriteFile(filepath.Join(dir, "bycc.pdf"), figs[Figure+".pdf"], 0o644)
	}
}

// A run without congestion controls has no cells by control, and its
// figure draws one line per scenario.
func TestByCCNone(t *testing.T) {
	d, xfer, rounds := ttlbRows(20, 2)
	res, err := Analyze(d, xfer, rounds, netstudy.Params{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.ByCC) != 0 || res.ByCC == nil {
		t.Errorf("by control: %v, want an empty list", res.ByCC)
	}
}
