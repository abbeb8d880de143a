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
