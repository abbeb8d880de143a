package agreement

import (
	"math"
	"strings"
	"testing"
)

func hv(host string, ratios ...float64) []HostValue {
	var out []HostValue
	for i, r := range ratios {
		out = append(out, HostValue{Host: host, Run: host + string(rune('a'+i)), Ratio: r})
	}
	return out
}

func cat(vs ...[]HostValue) []HostValue {
	var out []HostValue
	for _, v := range vs {
		out = append(out, v...)
	}
	return out
}

// TestFitCrossHostByHand: two hosts, two runs each, checked against the
// formulas computed by hand.
func TestFitCrossHostByHand(t *testing.T) {
	e := math.Exp
	c, err := FitCrossHost(cat(hv("A", e(0.1), e(0.3)), hv("B", e(0.5), e(0.7))), 0.95)
	if err != nil {
		t.Fatal(err)
	}
	// Host means 0.2 and 0.6; sigma^2 = (0.01+0.01+0.01+0.01)/2 = 0.02;
	// s^2(means) = 0.08; tau^2 = 0.08 - 0.02 x (1/2+1/2)/2 = 0.07;
	// half = t(0.975, 1) sqrt(0.07 + 0.02 + 0.04) = 12.7062 x 0.36056.
	half := 12.706204736174694 * math.Sqrt(0.13)
	for _, tc := range []struct {
		name      string
		got, want float64
	}{
		{"mu", c.Mu, 0.4}, {"sigma2", c.Sigma2, 0.02}, {"tau2", c.Tau2, 0.07},
		{"lo", math.Log(c.Lo), 0.4 - half}, {"hi", math.Log(c.Hi), 0.4 + half},
	} {
		if math.Abs(tc.got-tc.want) > 1e-9 {
			t.Errorf("%s = %.12g, want %.12g", tc.name, tc.got, tc.want)
		}
	}
	if c.Hosts != 2 || c.Runs != 4 {
		t.Errorf("hosts %d runs %d, want 2 and 4", c.Hosts, c.Runs)
	}
}

func TestFitCrossHostBadInput(t *testing.T) {
	for _, tc := range []struct {
		name string
		v    []HostValue
		want string
	}{
		{"one host", hv("A", 1, 1.1, 1.2), "1 host(s)"},
		{"no values", nil, "0 host(s)"},
		{"zero ratio", cat(hv("A", 1), hv("B", 0)), "not a positive finite"},
		{"negative ratio", cat(hv("A", 1), hv("B", -1)), "not a positive finite"},
		{"NaN", cat(hv("A", 1), hv("B", math.NaN())), "not a positive finite"},
		{"Inf", cat(hv("A", 1), hv("B", math.Inf(1))), "not a positive finite"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := FitCrossHost(tc.v, 0.95); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err %v, want %q", err, tc.want)
			}
		})
	}
}

// TestHoldOutHosts: hosts that agree raise no alarm and a large enough
// injected slowdown is seen; a host far from the others is an alarm;
// with two hosts no host has two others, which is said, not judged.
func TestHoldOutHosts(t *testing.T) {
	agree := cat(hv("A", 1.10, 1.12, 1.08), hv("B", 1.11, 1.09, 1.13), hv("C", 1.12, 1.10, 1.09), hv("D", 1.09, 1.11, 1.10))
	h := HoldOutHosts(agree, 0.95, 0.2)
	if h.Judged != 12 || h.Alarms != 0 || h.Detected != 12 {
		t.Errorf("agreeing hosts: %+v, want 12 judged, 0 alarms, 12 detected", h)
	}
	far := cat(agree[:9], hv("D", 2.0, 2.1, 1.9))
	h = HoldOutHosts(far, 0.95, 0.2)
	if h.Alarms < 3 {
		t.Errorf("a host at twice the others: %d alarms, want its 3 runs at least (%s)", h.Alarms, h)
	}
	two := cat(hv("A", 1.1), hv("B", 1.2))
	h = HoldOutHosts(two, 0.95, 0.2)
	if h.Judged != 0 || len(h.NotHeldOut) != 2 || !strings.Contains(h.String(), "not calibrated") || h.Err() != nil {
		t.Errorf("two hosts: %+v %q, want none judged, both said", h, h)
	}
}
