package agreement

import (
	"math"
	"strings"
	"testing"
)

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9*math.Max(1, math.Abs(b)) }

func TestInterval(t *testing.T) {
	z := DefaultRule.Z()
	for _, tc := range []struct {
		name      string
		it        Item
		lo, hi, p float64
		status    Status
		inside    bool
	}{
		// ref 10 ± 1.96 * sqrt(0.3² + 0.4²) = 10 ± 0.98
		{"inside", Item{Kind: Estimate, Ref: V(10, 0.3), New: V(10.5, 0.4)}, 10 - z*0.5, 10 + z*0.5, math.Erfc(1 / math.Sqrt2), Consistent, true},
		// z = 5: p 5.7e-7, rejected even alone
		{"far outside", Item{Kind: Estimate, Ref: V(10, 0.3), New: V(12.5, 0.4)}, 10 - z*0.5, 10 + z*0.5, math.Erfc(5 / math.Sqrt2), Inconsistent, false},
		// z = 2.2: outside the 95 % interval; alone Holm is the item's own p (0.028 < 0.05)
		{"just outside", Item{Kind: Estimate, Ref: V(0, 0.3), New: V(-1.1, 0.4)}, -z * 0.5, z * 0.5, math.Erfc(2.2 / math.Sqrt2), Inconsistent, false},
		{"exact equal", Item{Kind: Exact, Ref: V(4263, 0), New: V(4263, 0)}, 4263, 4263, 1, Consistent, true},
		{"exact within tol", Item{Kind: Exact, Tol: 2, Ref: V(100, 0), New: V(101, 0)}, 98, 102, 1, Consistent, true},
		{"exact differs", Item{Kind: Exact, Ref: V(4263, 0), New: V(4264, 0)}, 4263, 4263, 0, Inconsistent, false},
		// ref 0.5 (se 0.1): direction +; new -0.3 (se 0.1): p = Φ(-3)
		{"direction reversed", Item{Kind: Direction, Ref: V(0.5, 0.1), New: V(-0.3, 0.1)}, 0, math.Inf(1), 0.5 * math.Erfc(3/math.Sqrt2), Inconsistent, false},
		{"direction kept", Item{Kind: Direction, Ref: V(-0.5, 0.1), New: V(-0.01, 0.1)}, math.Inf(-1), 0, 0.5 * math.Erfc(-0.1/math.Sqrt2), Consistent, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rep := Judge(DefaultRule, Study{Name: "s", Items: []Item{tc.it}, HostsMatch: true})
			j := rep.Items[0]
			if !near(j.Lo, tc.lo) && !(math.IsInf(tc.lo, 0) && j.Lo == tc.lo) || !near(j.Hi, tc.hi) && !(math.IsInf(tc.hi, 0) && j.Hi == tc.hi) {
				t.Errorf("interval [%g, %g], want [%g, %g]", j.Lo, j.Hi, tc.lo, tc.hi)
			}
			if !near(j.P, tc.p) {
				t.Errorf("p %g, want %g", j.P, tc.p)
			}
			if j.Status != tc.status || j.Inside != tc.inside {
				t.Errorf("status %v inside %v, want %v %v (%s)", j.Status, j.Inside, tc.status, tc.inside, j.Why)
			}
		})
	}
}

func TestSEFromInterval(t *testing.T) {
	if got := SEFromInterval(1, 1+2*1.959963984540054, 0.95); !near(got, 1) {
		t.Errorf("se %g, want 1", got)
	}
}

// TestHolmFamily: an item at p 0.028 is inconsistent alone but consistent
// among 10 items whose others agree exactly (Holm: 10 p > 0.05).
func TestHolmFamily(t *testing.T) {
	items := []Item{{Name: "x", Kind: Estimate, Ref: V(0, 0.3), New: V(-1.1, 0.4)}}
	for range 9 {
		items = append(items, Item{Name: "y", Kind: Estimate, Ref: V(1, 0.1), New: V(1, 0.1)})
	}
	rep := Judge(DefaultRule, Study{Name: "s", Items: items, HostsMatch: true})
	j := rep.Items[0]
	if j.Status != Consistent || j.Inside || !strings.Contains(j.Why, "not rejected by Holm") {
		t.Errorf("got %v inside %v: %s", j.Status, j.Inside, j.Why)
	}
	if c := rep.Counts(); c.Judged != 10 || c.Consistent != 10 {
		t.Errorf("counts %+v", c)
	}
}

func TestNotJudged(t *testing.T) {
	dep := Item{Name: "t", Class: HostDependent, Kind: Estimate, Ref: V(1, 0.01), New: V(1.5, 0.01)}
	ind := Item{Name: "b", Class: HostIndependent, Kind: Exact, Ref: V(10, 0), New: V(10, 0)}
	for _, tc := range []struct {
		name   string
		s      Study
		reason string
	}{
		{"host differs", Study{Items: []Item{dep}, HostNote: "CPU"}, ReasonHostDiffers},
		{"profile differs", Study{Items: []Item{ind}, RefProfile: "full", NewProfile: "quick", HostsMatch: true}, ReasonProfileDiffers},
		{"not in reference", Study{Items: []Item{{Kind: Exact, Ref: Absent, New: V(1, 0)}}, HostsMatch: true}, ReasonNotInReference},
		{"not in new", Study{Items: []Item{{Kind: Exact, Ref: V(1, 0), New: Absent}}, HostsMatch: true}, ReasonNotInNew},
		{"null", Study{Items: []Item{{Kind: Estimate, Ref: V(math.NaN(), 1), New: V(1, 1)}}, HostsMatch: true}, ReasonNull},
		{"no se", Study{Items: []Item{{Kind: Estimate, Ref: V(1, math.NaN()), New: V(1, 1)}}, HostsMatch: true}, ReasonNoSE},
		{"no direction", Study{Items: []Item{{Kind: Direction, Ref: V(0.1, 0.1), New: V(-1, 0.1)}}, HostsMatch: true}, ReasonNoDirection},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rep := Judge(DefaultRule, tc.s)
			j := rep.Items[0]
			if j.Status != NotJudged || j.Reason != tc.reason || j.Why == "" {
				t.Errorf("got %v %q (%s), want not judged %q", j.Status, j.Reason, j.Why, tc.reason)
			}
			if c := rep.Counts(); c.NotJudged[tc.reason] != 1 || !strings.Contains(c.String(), "1 "+tc.reason) {
				t.Errorf("counts %s", c)
			}
		})
	}
	// On another host the host-independent item is still judged.
	rep := Judge(DefaultRule, Study{Items: []Item{dep, ind}})
	if rep.Items[1].Status != Consistent || !strings.Contains(rep.Items[0].Why, "ratio new/ref 1.5") {
		t.Errorf("%+v", rep.Items)
	}
}

func TestFingerprint(t *testing.T) {
	meta := func(cpu string, mem int) []byte {
		return []byte(`{"host":{"cpu_model":"` + cpu + `","cores":2,"kernel":"Linux 6","arch":"amd64","memory_kb":` + itoa(mem) + `},"go":{"version":"go1.27.3"},"tools":{"node":"v20"}}`)
	}
	a, err := ReadFingerprint(meta("Intel Xeon", 24731708))
	if err != nil {
		t.Fatal(err)
	}
	same, _ := ReadFingerprint(meta("Intel Xeon", 24684084))
	other, _ := ReadFingerprint(meta("AMD EPYC", 24731708))
	if d := a.Differences(same); len(d) != 0 {
		t.Errorf("same machine kind differs: %v", d)
	}
	if d := a.Differences(other); len(d) != 1 || !strings.Contains(d[0], "AMD EPYC") {
		t.Errorf("differences %v", d)
	}
	if _, err := ReadFingerprint([]byte(`{"study":"x"}`)); err == nil {
		t.Error("a meta.json without host read without error")
	}
	if _, err := ReadFingerprint([]byte(`{`)); err == nil {
		t.Error("broken JSON read without error")
	}
}

func itoa(n int) string {
	s := ""
	for ; n > 0; n /= 10 {
		s = string(rune('0'+n%10)) + s
	}
	return s
}

func TestCompareClaim(t *testing.T) {
	inside := &Judged{Status: Consistent, Inside: true}
	holm := &Judged{Status: Consistent, Inside: false} // outside its own interval, not rejected by Holm
	outside := &Judged{Status: Inconsistent}
	for _, tc := range []struct {
		c      ClaimVerdicts
		match  bool
		status Status
		why    string
	}{
		{ClaimVerdicts{Ref: "reproduced", New: "reproduced", Class: HostDependent}, true, Consistent, "same verdict"},
		{ClaimVerdicts{Ref: "reproduced", New: "not reproduced", Class: HostDependent}, false, NotJudged, ReasonHostDiffers},
		{ClaimVerdicts{Ref: "reproduced", New: "direction only", Class: HostIndependent, Item: inside}, false, Consistent, "verdict at the edge"},
		{ClaimVerdicts{Ref: "reproduced", New: "not reproduced", Class: HostIndependent, Item: holm}, true, Consistent, "not rejected by Holm"},
		{ClaimVerdicts{Ref: "reproduced", New: "direction only", Class: HostIndependent, Item: outside}, true, Inconsistent, "DIFFERS"},
		{ClaimVerdicts{Ref: "reproduced", New: "direction only", Class: HostIndependent}, true, Inconsistent, "DIFFERS"},
	} {
		s, why := CompareClaim(tc.c, tc.match)
		if s != tc.status || !strings.Contains(why, tc.why) {
			t.Errorf("%+v: got %v %q, want %v %q", tc.c, s, why, tc.status, tc.why)
		}
	}
}

// TestCompareClaimAcrossHosts covers a host-independent claim whose
// verdict flips between runs on unlike hosts: judged by its cross-host
// prediction, else by its item (host-independent or judged on its
// host-free scale), else not judged, never DIFFERS by the flip alone.
func TestCompareClaimAcrossHosts(t *testing.T) {
	hostDiffers := &Judged{Status: NotJudged, Reason: ReasonHostDiffers, Why: "the hosts do not match"}
	freeInside := &Judged{Status: Consistent, Inside: true, OnHostFree: true, Item: Item{HostFree: &HostFree{Unit: "fraction of the run's own baseline"}}}
	freeRejected := &Judged{Status: Inconsistent, OnHostFree: true, Why: "p 1e-09, Holm-adjusted 1e-07 < 0.05", Item: Item{HostFree: &HostFree{Unit: "fraction of the run's own baseline"}}}
	inside, outside := &CrossVerdict{Ratio: 1.0, Lo: 0.8, Hi: 1.3, Hosts: 3}, &CrossVerdict{Ratio: 2.0, Lo: 0.8, Hi: 1.3, Hosts: 3}
	flip := func(it *Judged, cv *CrossVerdict) ClaimVerdicts {
		return ClaimVerdicts{Ref: "not reproduced", New: "reproduced", Class: HostIndependent, Item: it, CrossHost: cv}
	}
	for _, tc := range []struct {
		name   string
		c      ClaimVerdicts
		status Status
		why    string
	}{
		{"no item", flip(nil, nil), NotJudged, "names no estimate"},
		{"item not judged, no stand-in", flip(hostDiffers, nil), NotJudged, "could not be judged (the hosts do not match)"},
		{"cross-host inside", flip(hostDiffers, inside), Consistent, "inside the cross-host interval [0.80, 1.30]"},
		{"cross-host outside", flip(hostDiffers, outside), Inconsistent, VerdictDiffers},
		{"cross-host decides before the stand-in", flip(freeRejected, inside), Consistent, VerdictEdge},
		{"host-free inside", flip(freeInside, nil), Consistent, "(as a fraction of the run's own baseline, the hosts differing) is inside"},
		{"host-free rejected", flip(freeRejected, nil), Inconsistent, "VERDICT DIFFERS: the estimate (as a fraction"},
		{"same verdict", ClaimVerdicts{Ref: "reproduced", New: "reproduced", Class: HostIndependent}, Consistent, VerdictSame},
	} {
		s, why := CompareClaim(tc.c, false)
		if s != tc.status || !strings.Contains(why, tc.why) {
			t.Errorf("%s: got %v %q, want %v %q", tc.name, s, why, tc.status, tc.why)
		}
	}
}

// TestJudgeStandIn: a host-dependent item of runs on unlike hosts is not
// judged, unless it stands in for a flipped claim; it is then judged on
// its host-free scale, inside the one Holm family.
func TestJudgeStandIn(t *testing.T) {
	// The reference: +0.003 ms over 1.20 ms; the new host is 1.5x faster
	// overall: +0.052 ms over 0.80 ms is 6.5 % against 0.25 %.
	base := Item{Name: "kem", Unit: "ms", Class: HostDependent, Kind: Estimate,
		Ref: Value{Est: 0.003, SE: 0.03, DF: 9}, New: Value{Est: 0.052, SE: 0.02, DF: 9},
		HostFree: &HostFree{RefDiv: 1.2, NewDiv: 0.8, Unit: "fraction of the run's own baseline"}}
	other := Item{Name: "bytes", Unit: "bytes", Class: HostIndependent, Kind: Exact, Ref: V(100, 0), New: V(100, 0)}
	judge := func(it Item) Judged {
		return Judge(DefaultRule, Study{Name: "s", Items: []Item{it, other}, RefProfile: "quick", NewProfile: "quick", HostsMatch: false}).Items[0]
	}
	if j := judge(base); j.Status != NotJudged || j.Reason != ReasonHostDiffers {
		t.Errorf("without StandIn: %v %q, want not judged (host differs)", j.Status, j.Reason)
	}
	in := base
	in.StandIn = true
	j := judge(in)
	if j.Status != Consistent || !j.OnHostFree || math.Abs(j.New.Est-0.065) > 1e-12 || math.Abs(j.Ref.Est-0.0025) > 1e-12 {
		t.Errorf("stand-in: %v on host-free %v, ref %v new %v; want consistent on the host-free scale, 0.0025 and 0.065", j.Status, j.OnHostFree, j.Ref.Est, j.New.Est)
	}
	if !strings.Contains(j.Why, "judged as a fraction of the run's own baseline") {
		t.Errorf("stand-in's why %q does not say its scale", j.Why)
	}
	// A truly larger increase: +1.05 ms over 0.80 ms.
	big := in
	big.New = Value{Est: 1.05, SE: 0.02, DF: 9}
	if j := judge(big); j.Status != Inconsistent {
		t.Errorf("a real increase: %v (%s), want inconsistent", j.Status, j.Why)
	}
	// A divisor that is not positive: no host-free scale, not judged.
	bad := in
	bad.HostFree = &HostFree{RefDiv: math.NaN(), NewDiv: 0.8}
	if j := judge(bad); j.Status != NotJudged {
		t.Errorf("NaN divisor: %v, want not judged", j.Status)
	}
}

func calibrationRefs() []Study {
	var items []Item
	for i := range 40 {
		items = append(items, Item{Name: "a " + itoa(i+1), Kind: Estimate, Ref: V(10+float64(i), 0.2)})
		items = append(items, Item{Name: "bytes " + itoa(i+1), Kind: Exact, Ref: V(1000, 0)})
	}
	return []Study{{Name: "s", Items: items, RefProfile: "quick", NewProfile: "quick"}}
}

// TestCalibrate: at small K the false-alarm rate is near 5 % or below, a
// +50 % change on every "a" item is always detected, and the same seed
// gives the same figures.
func TestCalibrate(t *testing.T) {
	refs := calibrationRefs()
	fa := Calibrate(DefaultRule, refs, 50, 1, nil, 0)
	if fa != Calibrate(DefaultRule, refs, 50, 1, nil, 0) {
		t.Error("the same seed and K gave different rates")
	}
	if fa.Rate > 0.15 {
		t.Errorf("false-alarm rate %s", fa)
	}
	slower := Change{Name: "a slower", Size: 0.5, Apply: func(_ string, items []Item, size float64) bool { return ScaleNew(items, size, "a ") }}
	if pw := Calibrate(DefaultRule, refs, 50, 1, &slower, 0.5); pw.Rate != 1 {
		t.Errorf("power %s", pw)
	}
	size, c := SmallestDetected(DefaultRule, refs, 50, 1, slower)
	if !(size <= 0.05) || c.Rate < 0.8 {
		t.Errorf("smallest detected %g (%s)", size, c)
	}
}

func TestUnreadableResults(t *testing.T) {
	rep := Judge(DefaultRule, Study{Name: "s", Items: []Item{{Name: "results", Error: `unknown field "x"`}, {Name: "b", Kind: Exact, Ref: V(1, 0), New: V(1, 0)}}})
	if j := rep.Items[0]; j.Status != Inconsistent || j.Why != `unknown field "x"` {
		t.Errorf("%+v", j)
	}
	if c := rep.Counts(); c.Inconsistent != 1 || c.Consistent != 1 {
		t.Errorf("%s", c)
	}
}

func FuzzReadFingerprint(f *testing.F) {
	f.Add([]byte(`{"host":{"cpu_model":"x","cores":2,"kernel":"k","arch":"amd64","memory_kb":1},"go":{"version":"go1.27.3"},"tools":{"a":"1"}}`))
	f.Add([]byte(`{"host":{"cpu_model":"x","cores":2,"cpu_flags":{"aes":true,"avx512f":false},"cpu_flags_sha256":"ab"}}`))
	f.Add([]byte(`{"host":null}`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, b []byte) {
		fp, err := ReadFingerprint(b)
		if err != nil {
			return
		}
		if d := fp.Differences(fp); len(d) != 0 {
			t.Errorf("a fingerprint differs from itself: %v", d)
		}
	})
}

// TestZeroSpreadItems: an item without any spread (a deterministic count,
// exact in both runs) has p 1 when equal and 0 when not, and never leaves
// a NaN in the family that would hide another item's inconsistency (as a
// new Study C reference with exactly repeatable cycles once did to Study
// A's planted reversal in the calibration).
func TestZeroSpreadItems(t *testing.T) {
	items := []Item{{Name: "reversed", Kind: Estimate, Ref: V(5, 0.1), New: V(-5, 0.1)}}
	for range 20 {
		items = append(items, Item{Name: "cycles", Kind: Estimate, Ref: V(1000, 0), New: V(1000, 0)})
	}
	items = append(items, Item{Name: "moved", Kind: Estimate, Ref: V(1000, 0), New: V(1001, 0)})
	rep := Judge(DefaultRule, Study{Name: "s", Items: items, HostsMatch: true})
	if j := rep.Items[0]; j.Status != Inconsistent {
		t.Errorf("the reversed item: %v (p %v, Holm %v): %s", j.Status, j.P, j.PHolm, j.Why)
	}
	if j := rep.Items[1]; j.Status != Consistent || j.P != 1 {
		t.Errorf("an equal exact count: %v p %v", j.Status, j.P)
	}
	if j := rep.Items[len(items)-1]; j.Status != Inconsistent || j.P != 0 {
		t.Errorf("a moved exact count: %v p %v", j.Status, j.P)
	}
}
