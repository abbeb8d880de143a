package ttlb

import (
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"pqrepro/analysis/claims"
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
	tex, err := tables(res)
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

// A run without the transfer block (every pinned run) says so in every
// output, judges no extension claim, and the original's catalogue has
// none of them (its counts are unchanged).
func TestTTLBNotMeasured(t *testing.T) {
	res, err := Analyze(&netstudy.Design{}, nil, nil, netstudy.Params{})
	if err != nil || res.Measured || res.Note != NotMeasuredPinned {
		t.Fatalf("%+v %v", res, err)
	}
	for _, c := range res.Claims {
		if c.Verdict != NotMeasured {
			t.Errorf("%s: %s", c.ID, c.Verdict)
		}
	}
	tex, err := tables(res)
	if err != nil || !strings.Contains(tex, "not measured in the pinned run") || !strings.Contains(tex, `\newcommand{\NetTtlbVerdictKOne}{not measured}`) {
		t.Errorf("tex: %v\n%s", err, tex)
	}
	for _, c := range netstudy.Claims().Claims {
		if strings.HasPrefix(c.ID, "K") {
			t.Errorf("extension claim %s in the original's catalogue", c.ID)
		}
	}
}

// The rules judge: below the bound with its interval is reproduced, a
// point estimate at the bound is not, an interval across it inconclusive.
func TestExtRules(t *testing.T) {
	mk := func(rel, lo, hi float64) *Results {
		c := Cell{Scenario: "lan", SizeBytes: 204800, RelPct: jsonnum.Num(rel), RelLowerPct: jsonnum.Num(lo), RelUpperPct: jsonnum.Num(hi)}
		return &Results{Measured: true, Scenarios: []string{"lan"}, Cells: []Cell{c}}
	}
	for _, tc := range []struct {
		rel, lo, hi float64
		want        claims.Verdict
	}{{2, 1, 3, claims.Reproduced}, {6, 5, 7, claims.NotReproduced}, {4, 3, 6, Inconclusive}, {math.NaN(), math.NaN(), math.NaN(), NotMeasured}} {
		if o := below(mk(tc.rel, tc.lo, tc.hi), "lan", 204800, 5); o.Verdict != tc.want {
			t.Errorf("rel %v [%v, %v]: %s (%s), want %s", tc.rel, tc.lo, tc.hi, o.Verdict, o.Reason, tc.want)
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
	for name, r := range map[string]*Results{"measured": res, "pinned": notMeasured()} {
		figs, err := figures(r, time.Unix(1767225600, 0).UTC())
		if err != nil || len(figs[FigureFile+".pdf"]) == 0 || len(figs[FigureFile+".svg"]) == 0 {
			t.Fatalf("%s: %v", name, err)
		}
		if dir := os.Getenv("PQREPRO_TTLB_FIG"); dir != "" {
			os.WriteFile(filepath.Join(dir, name+".pdf"), figs[FigureFile+".pdf"], 0o644)
		}
	}
}
