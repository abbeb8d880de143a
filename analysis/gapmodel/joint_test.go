package gapmodel

import (
	"math"
	"strings"
	"testing"
)

// jointRows gives every row of overlapRows two definitions: ours (the
// rows' truth) and a start 0.5 RTT later.
func jointRows() []Row {
	rows := overlapRows(4, 0, nil, 0)
	for i := range rows {
		r := &rows[i]
		ths := trueC0 + r.pathMs() + trueS*r.CPUMs
		r.ThsByDefMs = map[string]float64{"ch-cfin@client": ths, "syn-cfin@client": ths + r.RTTMs}
	}
	return rows
}

// publishedAt is what x25519-first, leaf+ca predicts at RTT R by the
// rows' truth, computed by linear interpolation as JointFit does.
func publishedAt(rows []Row, def string, R float64) Published {
	at := func(role string) float64 {
		var lo, hi *Row
		for i := range rows {
			r := &rows[i]
			if r.Groups != "x25519-first" || r.Chain != "leaf+ca" || r.Role != role {
				continue
			}
			if r.RTTMs <= R && (lo == nil || r.RTTMs > lo.RTTMs) {
				lo = r
			}
			if r.RTTMs >= R && (hi == nil || r.RTTMs < hi.RTTMs) {
				hi = r
			}
		}
		a, b := lo.ThsByDefMs[def], hi.ThsByDefMs[def]
		if hi.RTTMs == lo.RTTMs {
			return a
		}
		return a + (b-a)*(R-lo.RTTMs)/(hi.RTTMs-lo.RTTMs)
	}
	p := Published{Source: "synthetic", BaselineMs: at("baseline"), IncreaseMs: map[string]float64{}}
	for _, role := range Roles[1:] {
		p.IncreaseMs[role] = at(role) - p.BaselineMs
	}
	return p
}

func TestJointFitFindsTheRTT(t *testing.T) {
	rows := jointRows()
	pub := publishedAt(rows, "ch-cfin@client", 3.2)
	got, err := JointFit(rows, []string{"ch-cfin@client", "syn-cfin@client"}, pub, Registered2)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2*4 {
		t.Fatalf("%d rows, want 2 definitions x 4 combinations", len(got))
	}
	var best *JointRow
	for i := range got {
		r := &got[i]
		if r.Definition.Key() == "ch-cfin@client" && r.Combo == (Combo{"x25519-first", "leaf+ca"}) {
			best = r
		}
		if r.MinRTTMs != 0.05 || r.MaxRTTMs != 4.05 {
			t.Errorf("%s %s: grid %v to %v, want the measured RTTs 0.05 to 4.05", r.Definition.Key(), r.Combo, r.MinRTTMs, r.MaxRTTMs)
		}
	}
	if best == nil || math.Abs(best.RTTMs-3.2) > 0.001 || best.WorstPct > 0.05 || !best.Reaches {
		t.Fatalf("x25519-first, leaf+ca by ours: %+v; want RTT 3.2 and no error", best)
	}
	if math.Abs(best.IncRTTMs-3.2) > 0.001 || math.Abs(best.BaselineOffsetMs) > 0.01 {
		t.Errorf("increases alone: RTT %v, baseline offset %v: want 3.2 and 0", best.IncRTTMs, best.BaselineOffsetMs)
	}
	// SYN to Finished adds one RTT to every configuration: the increases
	// fit at the same RTT, and the baseline is then one RTT too long.
	for _, r := range got {
		if r.Definition.Key() == "syn-cfin@client" && r.Combo == best.Combo {
			if math.Abs(r.IncRTTMs-3.2) > 0.002 || math.Abs(r.BaselineOffsetMs-r.IncRTTMs) > 0.01 {
				t.Errorf("syn-cfin: increases at RTT %v, baseline offset %v: want 3.2 and one RTT", r.IncRTTMs, r.BaselineOffsetMs)
			}
		}
	}
}

func TestJointFitTarget(t *testing.T) {
	rows := jointRows()
	pub := publishedAt(rows, "ch-cfin@client", 3.2)
	pub.IncreaseMs["pq-kem"] += pub.BaselineMs // no RTT fits this within 10 %
	got, err := JointFit(rows, []string{"ch-cfin@client"}, pub, Registered2)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range got {
		if r.Reaches {
			t.Errorf("%s reaches with worst %v %%: the published ML-KEM median is out of reach", r.Combo, r.WorstPct)
		}
		if !(r.WorstPct > Registered2.JointTargetPct) || len(r.ErrPct) != 4 {
			t.Errorf("%s: worst %v, errors %v", r.Combo, r.WorstPct, r.ErrPct)
		}
	}
}

func TestJointFitBadInput(t *testing.T) {
	rows := jointRows()
	pub := publishedAt(rows, "ch-cfin@client", 1)
	if _, err := JointFit(rows, []string{"ch-cfin@server"}, pub, Registered2); err == nil || !strings.Contains(err.Error(), "captured at one end only") || !strings.Contains(err.Error(), "per-config/leaf/baseline at 0 ms") {
		t.Errorf("a definition the captures lack: err %v; want it to name the cell and the cause", err)
	}
	if _, err := JointFit(rows, []string{"ths@moon"}, pub, Registered2); err == nil || !strings.Contains(err.Error(), "not registered") {
		t.Errorf("unknown definition: err %v", err)
	}
	delete(rows[7].ThsByDefMs, "syn-cfin@client")
	if _, err := JointFit(rows, []string{"syn-cfin@client"}, pub, Registered2); err == nil || !strings.Contains(err.Error(), rows[7].Label()) {
		t.Errorf("one record without its SYN: err %v; want the cell named", err)
	}
	var one []Row
	for _, r := range jointRows() {
		if r.OneWayDelayMs == 0 {
			one = append(one, r)
		}
	}
	if _, err := JointFit(one, []string{"ch-cfin@client"}, pub, Registered2); err == nil || !strings.Contains(err.Error(), "interpolation needs two") {
		t.Errorf("one level: err %v", err)
	}
	bad := pub
	bad.BaselineMs = 0
	if _, err := JointFit(jointRows(), []string{"ch-cfin@client"}, bad, Registered2); err == nil {
		t.Error("a zero published baseline was accepted")
	}
}

func TestDefinitions(t *testing.T) {
	if len(Definitions) != 8 || Definitions[0].Key() != "ch-cfin@client" || Definitions[4].Key() != "ch-cfin@server" {
		t.Errorf("definitions %v: want the registered four at each end, ours first", defKeys())
	}
}
