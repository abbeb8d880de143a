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

var armNames = [3]string{"X25519", "X25519MLKEM768", ttlbmechanism.PaddedArm}

// plant describes planted data: each connection's W from its arm and a
// random source, its P from its arm and W, and each arm's size-0 server
// payload bytes.
type plant struct {
	w       func(g int, r *rand.Rand) int
	p       func(g, w int, r *rand.Rand) float64
	payload [3]int64
	thsMs   [3]float64
	triples int
	tcs     []string
	ccs     []string
	scs     []string
	size    int
	noAcks  bool
}

// rows makes the controlled block's rows of p: per scenario, size (0 and
// p.size), congestion control and toolchain one series of interleaved
// triples, each triple's order drawn at random, as netrun's seriesSteps
// measures them.
func (p plant) rows(seed uint64) []netdata.Row {
	r := rand.New(rand.NewPCG(seed, 7))
	var out []netdata.Row
	for _, sc := range p.scs {
		for _, size := range []int{0, p.size} {
			for _, cc := range p.ccs {
				for _, tc := range p.tcs {
					for k := range p.triples {
						order := []int{0, 1, 2}
						r.Shuffle(3, func(i, j int) { order[i], order[j] = order[j], order[i] })
						for j, g := range order {
							ths := int64(p.thsMs[g] * 1e6)
							row := netdata.Row{Scenario: sc, Round: size, Group: armNames[g], Seq: k, OK: true,
								Cap: &netdata.Capture{ThsNs: &ths, Complete: true, Group: "X25519", PayloadBytesS2C: p.payload[g]}, Toolchain: tc,
								ResponseBytes: size, ResponseRead: int64(size), Controlled: true, CC: cc, Position: 3*k + j}
							if size > 0 {
								w := p.w(g, r)
								ttlb := ths + int64(p.p(g, w, r)*1e6)
								a := 1 + min(g, 1)
								if p.noAcks {
									a = -1
								}
								row.Xfer = &netdata.Transfer{TTLBNs: &ttlb, RespWindow: w, HsAckedSegs: a}
							}
							out = append(out, row)
						}
					}
				}
			}
		}
	}
	return out
}

// base is the planted block where the padding carries the whole effect:
// wan and far, 50 KiB, CUBIC and BBR, two toolchains, 40 triples; X25519
// mostly starts with W 10, the hybrid and the padded arm mostly with 12;
// P falls 8 ms per segment of W, with 3 ms of noise; the padded arm's
// server payload is the hybrid's.
func base() plant {
	return plant{
		w: func(g int, r *rand.Rand) int {
			if g > 0 {
				return []int{10, 12, 12, 12}[r.IntN(4)]
			}
			return []int{10, 10, 10, 11}[r.IntN(4)]
		},
		p:       func(_, w int, r *rand.Rand) float64 { return 200 - 8*float64(w) + 3*r.NormFloat64() },
		payload: [3]int64{838, 1926, 1926},
		thsMs:   [3]float64{60, 61, 60},
		triples: 40, tcs: []string{"go1.24.4", "go1.27.3"}, ccs: []string{"cubic", "bbr"}, scs: []string{"wan", "far"}, size: 51200,
	}
}

var fast = ttlbmechanism.Registration{Model: ttlbmechanism.ModelIntervention, Arm: ttlbmechanism.PaddedArm, PadBytes: 1080, Alpha: 0.05, Resamples: 400, Seed: 41}

func analyze(t *testing.T, rows []netdata.Row, reg ttlbmechanism.Registration) *ttlbmechanism.Results {
	t.Helper()
	r, err := ttlbmechanism.Analyze(rows, reg)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestPlanted: planted blocks where the padding carries the whole effect
// (every cell's error within its bound, the share about 1), where it
// carries none (the padded arm is as slow as X25519: fails), where the
// pad check fails (the padded arm's payload is X25519's: moot), and an
// order effect (no arm differs: moot).
func TestPlanted(t *testing.T) {
	sameW := func(int, *rand.Rand) int { return 11 }
	for _, tc := range []struct {
		name                string
		plant               func(p *plant)
		pad, order, verdict string
	}{
		{"padding carries all", func(*plant) {}, ttlbmechanism.PadWorked, ttlbmechanism.OrderHolds, ttlbmechanism.InterventionPasses},
		{"padding carries none", func(p *plant) {
			p.w = func(g int, r *rand.Rand) int {
				if g == 1 {
					return []int{10, 12, 12, 12}[r.IntN(4)]
				}
				return []int{10, 10, 10, 11}[r.IntN(4)]
			}
		}, ttlbmechanism.PadWorked, ttlbmechanism.OrderHolds, ttlbmechanism.InterventionFails},
		{"pad check fails", func(p *plant) { p.payload[2] = 838 + 500 }, ttlbmechanism.PadFailed, ttlbmechanism.OrderHolds, ttlbmechanism.InterventionPadFailed},
		{"order effect", func(p *plant) { p.w = sameW }, ttlbmechanism.PadWorked, ttlbmechanism.OrderEffect, ttlbmechanism.InterventionMoot},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := base()
			tc.plant(&p)
			r := analyze(t, p.rows(1), fast)
			if !r.Measured || r.Connections != 2*2*2*40*3 { // scenarios x ccs x toolchains x triples x 3
				t.Errorf("measured %v with %d connections, want 960", r.Measured, r.Connections)
			}
			if r.PadCheck.Verdict != tc.pad || len(r.PadCheck.Series) != 2*2*2 {
				t.Errorf("pad check %q over %d series (%s), want %q over 8", r.PadCheck.Verdict, len(r.PadCheck.Series), r.PadCheck.Reason, tc.pad)
			}
			if r.Order.Verdict != tc.order {
				t.Errorf("order verdict %q, want %q (%+v)", r.Order.Verdict, tc.order, r.Order.Roles)
			}
			if len(r.CCs) != 2 {
				t.Fatalf("%d congestion controls, want 2", len(r.CCs))
			}
			for _, cc := range r.CCs {
				if cc.Verdict != tc.verdict || cc.Cells != 2 {
					t.Errorf("%s: %q over %d cells (misses %v), want %q over 2", cc.CC, cc.Verdict, cc.Cells, cc.Misses, tc.verdict)
				}
			}
			wantCause := ttlbmechanism.CauseDescriptive
			if tc.verdict == ttlbmechanism.InterventionPadFailed || tc.verdict == ttlbmechanism.InterventionMoot {
				wantCause = tc.verdict
			}
			if r.Cause != wantCause {
				t.Errorf("prediction 3 %q, want %q", r.Cause, wantCause)
			}
			for _, c := range r.Cells {
				if !c.Tested || !(float64(c.BoundMs) > 0) || len(c.Series) != 2 {
					t.Errorf("%s: tested %v (%s), bound %v, %d series", c.Label(), c.Tested, c.Reason, c.BoundMs, len(c.Series))
				}
				switch tc.name {
				case "padding carries all":
					// About 1, within its noise (dP about -10 ms, SE about 1.5).
					if sh := float64(c.Share); !(math.Abs(sh-1) < 0.5 && float64(c.ShareLower) < sh && sh < float64(c.ShareUpper)) {
						t.Errorf("%s: share %v [%v, %v], want about 1 inside its interval", c.Label(), c.Share, c.ShareLower, c.ShareUpper)
					}
					if !(float64(c.DWHybrid) > 1 && float64(c.DWPadded) > 1 && math.Abs(float64(c.DAHybrid)-1) < 1e-12 && math.Abs(float64(c.DAPadded)-1) < 1e-12) {
						t.Errorf("%s: dW %v %v, dA %v %v; want dW > 1 and dA 1 for both arms", c.Label(), c.DWHybrid, c.DWPadded, c.DAHybrid, c.DAPadded)
					}
				case "padding carries none":
					if !math.IsNaN(float64(c.Share)) || !(float64(c.ErrorMs) > 8) {
						t.Errorf("%s: a failing cell with share %v, error %v; want no share and e about +13 ms", c.Label(), c.Share, c.ErrorMs)
					}
				}
			}
		})
	}
}

// TestBadInput: a cell with one toolchain's series cannot be tested,
// with the reason, and its congestion control is not judged; a triple
// that is not one connection of each arm says the block was not
// interleaved with the arm; rows without a time to last byte or W are
// counted by reason, and those kept without A; a run without controlled
// rows, or without the padded arm, is not measured. None is an error.
func TestBadInput(t *testing.T) {
	p := base()
	p.tcs, p.ccs = []string{"go1.27.3"}, []string{"cubic"}
	r := analyze(t, p.rows(4), fast)
	for _, c := range r.Cells {
		if c.Tested || !strings.Contains(c.Reason, "1 toolchains' series (go1.27.3)") {
			t.Errorf("%s: tested %v, reason %q", c.Label(), c.Tested, c.Reason)
		}
		if math.IsNaN(float64(c.TTLBDiffMs)) || math.IsNaN(float64(c.TTLBUpperMs)) {
			t.Errorf("%s: prediction 1 needs no second toolchain, got %v [%v, %v]", c.Label(), c.TTLBDiffMs, c.TTLBLowerMs, c.TTLBUpperMs)
		}
	}
	if r.CCs[0].Verdict != ttlbmechanism.InterventionNotJudged || len(r.CCs[0].Skipped) != 2 {
		t.Errorf("congestion control %+v, want not judged with 2 cells skipped", r.CCs[0])
	}

	p = base()
	p.ccs, p.scs = []string{"cubic"}, []string{"wan"}
	rows := p.rows(5)
	var resp []int // indices of the rows with a response
	for i, x := range rows {
		if x.ResponseBytes > 0 {
			resp = append(resp, i)
		}
	}
	rows[resp[1]].Group = rows[resp[0]].Group // triple 0 of the first series holds one arm twice
	rows[resp[3]].Xfer = &netdata.Transfer{Incomplete: netdata.IncompleteNoEnd, RespWindow: -1, HsAckedSegs: -1}
	rows[resp[4]].Xfer.RespWindow = -1
	rows[resp[5]].Cap = nil
	rows[resp[6]].Xfer = nil
	rows[resp[7]].CC = ""
	rows[resp[8]].Group = "CurveP256"
	r = analyze(t, rows, fast)
	c := r.Cells[0]
	if c.Tested || !strings.Contains(c.Reason, "positions 0 to 2 are not one connection of each arm") {
		t.Errorf("a broken triple: tested %v, reason %q", c.Tested, c.Reason)
	}
	want := map[string]int{netdata.IncompleteNoEnd: 1, ttlbmechanism.ExcludedNoWindow: 1, ttlbmechanism.ExcludedNoThs: 1,
		netdata.IncompleteNoCapture: 1, ttlbmechanism.ExcludedUnknownCC: 1, ttlbmechanism.ExcludedOtherGroup: 1}
	for k, n := range want {
		if r.Excluded[k] != n {
			t.Errorf("excluded %v, want %s: %d", r.Excluded, k, n)
		}
	}

	p = base()
	p.ccs, p.scs, p.tcs, p.noAcks = []string{"cubic"}, []string{"wan"}, []string{"go1.27.3"}, true
	r = analyze(t, p.rows(6), fast)
	if r.Connections != 120 || r.Excluded[ttlbmechanism.KeptNoAckedSegs] != 120 || !math.IsNaN(float64(r.Cells[0].DAHybrid)) || math.IsNaN(float64(r.Cells[0].DWPadded)) {
		t.Errorf("without A: %d kept, %v, dA %v, dW %v; want 120 kept without A, dA undefined, dW defined", r.Connections, r.Excluded, r.Cells[0].DAHybrid, r.Cells[0].DWPadded)
	}

	// No size-0 rows: the padding cannot be shown to have worked.
	p = base()
	var noZero []netdata.Row
	for _, x := range p.rows(7) {
		if x.ResponseBytes > 0 {
			noZero = append(noZero, x)
		}
	}
	if r = analyze(t, noZero, fast); r.PadCheck.Verdict != ttlbmechanism.PadFailed || r.CCs[0].Verdict != ttlbmechanism.InterventionPadFailed {
		t.Errorf("without size 0: pad check %q, verdict %q", r.PadCheck.Verdict, r.CCs[0].Verdict)
	}

	r = analyze(t, []netdata.Row{{Scenario: "wan", Round: 1, Group: "X25519", OK: true}}, fast)
	if r.Measured || r.Note != ttlbmechanism.NotMeasured || r.Order.Verdict != ttlbmechanism.NotMeasured || r.PadCheck.Verdict != ttlbmechanism.NotMeasured {
		t.Errorf("a run without the block: measured %v, note %q, order %q, pad %q", r.Measured, r.Note, r.Order.Verdict, r.PadCheck.Verdict)
	}
	var twoArms []netdata.Row
	for _, x := range base().rows(8) {
		if x.Group != ttlbmechanism.PaddedArm {
			twoArms = append(twoArms, x)
		}
	}
	if r = analyze(t, twoArms, fast); r.Measured || r.Note != ttlbmechanism.NotMeasuredNoArm {
		t.Errorf("a block without the arm: measured %v, note %q", r.Measured, r.Note)
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
