package ttlbmechanism_test

import (
	"bytes"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"pqrepro/analysis/ttlbmechanism"
	"pqrepro/datasets/netdata"
	"pqrepro/internal/jsonnum"
)

var groupNames = [2]string{"X25519", "X25519MLKEM768"}

// plant describes planted data: each connection's W from its group, pair
// and a random source, and its P from its group and W.
type plant struct {
	w      func(g, pair int, r *rand.Rand) int
	p      func(g, w int, r *rand.Rand) float64
	thsMs  [2]float64
	pairs  int
	tcs    []string
	ccs    []string
	scs    []string
	size   int
	noAcks bool
}

// rows makes the controlled block's rows of p: per scenario, congestion
// control and toolchain one series of interleaved pairs, each pair's
// order drawn at random, as netrun's seriesSteps measures them.
func (p plant) rows(seed uint64) []netdata.Row {
	r := rand.New(rand.NewPCG(seed, 7))
	var out []netdata.Row
	for _, sc := range p.scs {
		for _, cc := range p.ccs {
			for _, tc := range p.tcs {
				for k := range p.pairs {
					order := []int{0, 1}
					if r.IntN(2) == 1 {
						order = []int{1, 0}
					}
					for j, g := range order {
						w := p.w(g, k, r)
						ths := int64(p.thsMs[g] * 1e6)
						ttlb := ths + int64(p.p(g, w, r)*1e6)
						a := 1 + g
						if p.noAcks {
							a = -1
						}
						out = append(out, netdata.Row{Scenario: sc, Round: p.size, Group: groupNames[g], Seq: k, OK: true,
							Cap: &netdata.Capture{ThsNs: &ths, Complete: true, Group: groupNames[g]}, Toolchain: tc,
							ResponseBytes: p.size, ResponseRead: int64(p.size), Controlled: true, CC: cc, Position: 2*k + j,
							Xfer: &netdata.Transfer{TTLBNs: &ttlb, RespWindow: w, HsAckedSegs: a}})
					}
				}
			}
		}
	}
	return out
}

// base is the planted block: wan and far, 50 KiB, CUBIC and BBR, two
// toolchains, 40 pairs; X25519 mostly starts with W 10, the hybrid
// mostly with 12; P falls 8 ms per segment of W, with 3 ms of noise.
func base() plant {
	return plant{
		w: func(g, _ int, r *rand.Rand) int {
			if g == 1 {
				return []int{10, 12, 12, 12}[r.IntN(4)]
			}
			return []int{10, 10, 10, 11}[r.IntN(4)]
		},
		p:     func(_, w int, r *rand.Rand) float64 { return 200 - 8*float64(w) + 3*r.NormFloat64() },
		thsMs: [2]float64{60, 61},
		pairs: 40, tcs: []string{"go1.24.4", "go1.27.3"}, ccs: []string{"cubic", "bbr"}, scs: []string{"wan", "far"}, size: 51200,
	}
}

var fast = ttlbmechanism.Registration{Model: ttlbmechanism.ModelStandardisedWindow, Fit: ttlbmechanism.FitOtherToolchain, Alpha: 0.05, Resamples: 400, Seed: 41}

func analyze(t *testing.T, rows []netdata.Row, reg ttlbmechanism.Registration) *ttlbmechanism.Results {
	t.Helper()
	r, err := ttlbmechanism.Analyze(rows, reg)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestPlanted: planted blocks where the mechanism is true (P depends on W
// alone, the hybrid starts with larger W: every cell's error within its
// bound), false (the hybrid is 10 ms faster at equal W: the prediction,
// about 0, misses), and an order effect (no group differs: prediction 1
// says so and prediction 2 is moot).
func TestPlanted(t *testing.T) {
	sameW := func(_, pair int, _ *rand.Rand) int { return 10 + pair%3 }
	for _, tc := range []struct {
		name   string
		plant  func(p *plant)
		order  string
		window string
	}{
		{"mechanism true", func(*plant) {}, ttlbmechanism.OrderHolds, ttlbmechanism.WindowPasses},
		{"faster at equal W", func(p *plant) {
			p.w = sameW
			p.p = func(g, w int, r *rand.Rand) float64 { return 200 - 8*float64(w) - 10*float64(g) + 3*r.NormFloat64() }
		}, ttlbmechanism.OrderHolds, ttlbmechanism.WindowFails},
		{"order effect", func(p *plant) {
			p.w = sameW
		}, ttlbmechanism.OrderEffect, ttlbmechanism.WindowMoot},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := base()
			tc.plant(&p)
			r := analyze(t, p.rows(1), fast)
			if !r.Measured || r.Connections != 2*2*2*40*2 { // scenarios x ccs x toolchains x pairs x 2
				t.Errorf("measured %v with %d connections, want 640", r.Measured, r.Connections)
			}
			if r.Order.Verdict != tc.order {
				t.Errorf("order verdict %q, want %q (%+v)", r.Order.Verdict, tc.order, r.Order.Roles)
			}
			if len(r.CCs) != 2 {
				t.Fatalf("%d congestion controls, want 2", len(r.CCs))
			}
			for _, cc := range r.CCs {
				if cc.Verdict != tc.window || cc.Cells != 2 {
					t.Errorf("%s: %q over %d cells (misses %v), want %q over 2", cc.CC, cc.Verdict, cc.Cells, cc.Misses, tc.window)
				}
			}
			for _, c := range r.Cells {
				if !c.Predictable || !(float64(c.BoundMs) > 0) || len(c.Series) != 2 {
					t.Errorf("%s: predictable %v (%s), bound %v, %d series", c.Label(), c.Predictable, c.Reason, c.BoundMs, len(c.Series))
				}
				if tc.window == ttlbmechanism.WindowPasses && !(float64(c.DW) > 1 && math.Abs(float64(c.DA)-1) < 1e-12) {
					t.Errorf("%s: dW %v, dA %v; want dW > 1 (planted about 1.6) and dA 1", c.Label(), c.DW, c.DA)
				}
			}
		})
	}
}

// TestPlantedNearest: when a W of one toolchain's series is absent from
// the other's, the prediction takes the nearest w there and lists it.
func TestPlantedNearest(t *testing.T) {
	p := base()
	p.tcs, p.ccs, p.scs = []string{"go1.24.4"}, []string{"cubic"}, []string{"wan"}
	rows := p.rows(2)
	q := p
	q.tcs = []string{"go1.27.3"}
	q.w = func(g, pair int, r *rand.Rand) int { // never 11
		if g == 1 {
			return 12
		}
		return 10
	}
	rows = append(rows, q.rows(3)...)
	r := analyze(t, rows, fast)
	c := r.Cells[0]
	if !c.Predictable || len(c.Series[0].Nearest) != 1 || c.Series[0].Nearest[0] != 11 || len(c.Series[1].Nearest) != 0 {
		t.Errorf("nearest w: %+v (predictable %v, %s); want [11] for go1.24.4, none for go1.27.3", c.Series, c.Predictable, c.Reason)
	}
}

// TestBadInput: a cell with one toolchain's series is not predictable,
// with the reason, and its congestion control not judged; a pair that is
// not one connection of each group says the block was not interleaved;
// rows without a time to last byte or W are counted by reason, and those
// kept without A; a run
// without controlled rows is not measured. None is an error.
func TestBadInput(t *testing.T) {
	p := base()
	p.tcs, p.ccs = []string{"go1.27.3"}, []string{"cubic"}
	r := analyze(t, p.rows(4), fast)
	for _, c := range r.Cells {
		if c.Predictable || !strings.Contains(c.Reason, "one toolchain's series only (go1.27.3)") {
			t.Errorf("%s: predictable %v, reason %q", c.Label(), c.Predictable, c.Reason)
		}
		if math.IsNaN(float64(c.TTLBDiffMs)) || math.IsNaN(float64(c.TTLBUpperMs)) {
			t.Errorf("%s: prediction 1 needs no second toolchain, got %v [%v, %v]", c.Label(), c.TTLBDiffMs, c.TTLBLowerMs, c.TTLBUpperMs)
		}
	}
	if r.CCs[0].Verdict != ttlbmechanism.WindowNotJudged || len(r.CCs[0].Skipped) != 2 {
		t.Errorf("congestion control %+v, want not judged with 2 cells skipped", r.CCs[0])
	}

	p = base()
	p.ccs, p.scs = []string{"cubic"}, []string{"wan"}
	rows := p.rows(5)
	rows[1].Group = rows[0].Group // pair 0 of the first series holds one group twice
	rows[2].Xfer = &netdata.Transfer{Incomplete: netdata.IncompleteNoEnd, RespWindow: -1, HsAckedSegs: -1}
	rows[3].Xfer.RespWindow = -1
	rows[4].Cap = nil
	rows[5].Xfer = nil
	rows[6].CC = ""
	r = analyze(t, rows, fast)
	c := r.Cells[0]
	if c.Predictable || !strings.Contains(c.Reason, "positions 0 and 1 are not one connection of each group") {
		t.Errorf("a broken pair: predictable %v, reason %q", c.Predictable, c.Reason)
	}
	want := map[string]int{netdata.IncompleteNoEnd: 1, ttlbmechanism.ExcludedNoWindow: 1, ttlbmechanism.ExcludedNoThs: 1,
		netdata.IncompleteNoCapture: 1, ttlbmechanism.ExcludedUnknownCC: 1}
	for k, n := range want {
		if r.Excluded[k] != n {
			t.Errorf("excluded %v, want %s: %d", r.Excluded, k, n)
		}
	}

	p = base()
	p.ccs, p.scs, p.tcs, p.noAcks = []string{"cubic"}, []string{"wan"}, []string{"go1.27.3"}, true
	r = analyze(t, p.rows(6), fast)
	if r.Connections != 80 || r.Excluded[ttlbmechanism.KeptNoAckedSegs] != 80 || !math.IsNaN(float64(r.Cells[0].DA)) || math.IsNaN(float64(r.Cells[0].DW)) {
		t.Errorf("without A: %d kept, %v, dA %v, dW %v; want 80 kept without A, dA undefined, dW defined", r.Connections, r.Excluded, r.Cells[0].DA, r.Cells[0].DW)
	}

	r = analyze(t, []netdata.Row{{Scenario: "wan", Round: 1, Group: "X25519", OK: true}}, fast)
	if r.Measured || r.Note != ttlbmechanism.NotMeasured || r.Order.Verdict != ttlbmechanism.NotMeasured {
		t.Errorf("a run without the block: measured %v, note %q, order %q", r.Measured, r.Note, r.Order.Verdict)
	}
	if _, err := ttlbmechanism.Analyze(nil, ttlbmechanism.Registration{}); err == nil {
		t.Error("a zero registration was accepted")
	}
}

// TestDeterministic: two runs on the same rows give the same bytes, and
// the bytes read back.
func TestDeterministic(t *testing.T) {
	p := base()
	var out [2][]byte
	for i := range out {
		b, err := jsonnum.Marshal(analyze(t, p.rows(6), ttlbmechanism.Registered))
		if err != nil {
			t.Fatal(err)
		}
		out[i] = b
	}
	if !bytes.Equal(out[0], out[1]) {
		t.Fatal("two runs on the same rows gave different results")
	}
	if _, err := ttlbmechanism.DecodeResults(ttlbmechanism.ResultsFile, out[0]); err != nil {
		t.Errorf("the results do not read back: %v", err)
	}
}
