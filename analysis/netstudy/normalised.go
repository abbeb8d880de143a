package netstudy

import (
	"fmt"
	"math"
	"slices"

	"pqrepro/datasets/netdata"
)

// ProbeDriftBound is the largest change, in percent, of a predicted
// difference between the run's host probes before and after for which the
// prediction is trusted. It is Study A's bound for its `openssl speed`
// prediction (tlscrosshost.SpeedDriftBound), set before any probe was read.
const ProbeDriftBound = 10.0

// MinPredictedMs is the smallest predicted difference a ratio is formed
// with, Study A's rule (tlscrosshost.MinPredictedMs). Below it the ratio is
// the difference's sampling error divided by a small number.
const MinPredictedMs = 0.2

// A NormalisedDifference is one comparison's latency difference beside
// the host's own prediction of it.
//
// A difference of the two groups' median Ths on one link holds what the
// hybrid adds on the host's CPU and what its larger key shares add on
// the wire; the round trips are the same for both groups (one each, no
// HelloRetryRequest: the endpoint refuses one). So, with no parameter
// fitted to any latency,
//
//	predicted = cpu + bytes,
//	cpu   = probe(target) - probe(baseline), the medians of the host
//	        probe's span, ClientHello to client Finished without a
//	        network (experiments/net/endpoint, probe.go), the mean of the
//	        before and after probes of the run's primary toolchain;
//	bytes = 8 (dC2S + dS2C) / rate, the extra IP bytes of the target's
//	        median connection in each direction serialised at the link's
//	        rate (both flights are on the critical path: the server reads
//	        the whole ClientHello before it answers, the client the whole
//	        server flight before its Finished);
//	ratio = observed / predicted,
//
// is what neither the CPU nor the link explains: per-packet costs of the
// forwarder and the kernel, loss and jitter drawn unequally. It is the
// quantity compared across hosts (analysis/agreement, CrossHost).
type NormalisedDifference struct {
	Scenario string `json:"scenario"`
	Round    int    `json:"round"`
	// ObservedMs and SEMs are the comparison's median difference and its
	// block bootstrap standard error.
	ObservedMs Num `json:"observed_ms"`
	SEMs       Num `json:"se_ms"`
	// CPUMs and BytesMs are the prediction's two terms, PredictedMs their
	// sum; Ratio is ObservedMs / PredictedMs, NaN when not judged.
	CPUMs       Num    `json:"cpu_ms"`
	BytesMs     Num    `json:"bytes_ms"`
	PredictedMs Num    `json:"predicted_ms"`
	Ratio       Num    `json:"ratio"`
	NotJudged   string `json:"not_judged,omitempty"`
	RateBps     int64  `json:"rate_bps"`
	ExtraBytes  Num    `json:"extra_frame_bytes"` // dC2S + dS2C
}

// NormalisedDifferences returns every comparison of the primary
// toolchain beside the host's prediction from the run's own probe (pm).
// A comparison that cannot be normalised carries the reason in
// NotJudged: no probe in the run, a probe that failed or drifted more
// than ProbeDriftBound, servers on a remote host (the probe measured
// this host only), a link that failed its self-test, a prediction under
// MinPredictedMs.
func NormalisedDifferences(r *Results, pm netdata.ProbeMeta) []NormalisedDifference {
	d := r.Design
	base, target := d.Groups[0], d.Groups[1]
	primary := ""
	if r.Toolchains != nil {
		primary = r.Toolchains.Primary
	}
	cpu, why := probeCPU(pm, primary, base, target)
	if why == "" && pm.Remote {
		why = "the servers ran on a remote host, and the probe measured this one only"
	}
	out := []NormalisedDifference{}
	for _, c := range r.Comparisons {
		n := NormalisedDifference{Scenario: c.Scenario, Round: c.Round, ObservedMs: c.DiffMs, SEMs: c.DiffSEMs,
			CPUMs: Num(math.NaN()), BytesMs: Num(math.NaN()), PredictedMs: Num(math.NaN()), Ratio: Num(math.NaN()), NotJudged: why}
		sc := scenarioOf(d, c.Scenario)
		bs, ts := r.series(c.Scenario, c.Round, base), r.series(c.Scenario, c.Round, target)
		switch {
		case n.NotJudged != "":
		case sc == nil || sc.RateBps <= 0:
			n.NotJudged = fmt.Sprintf("scenario %s has no recorded link rate", c.Scenario)
		case bs == nil || ts == nil:
			n.NotJudged = "a group's series is missing"
		default:
			if bad := failedSelfTests(pm, c.Scenario); len(bad) > 0 {
				n.NotJudged = fmt.Sprintf("the link failed its self-test in %v", bad)
				break
			}
			n.RateBps = sc.RateBps
			extra := float64(ts.FrameC2S-bs.FrameC2S) + float64(ts.FrameS2C-bs.FrameS2C)
			n.ExtraBytes = Num(extra)
			bytesMs := 8 * extra / float64(sc.RateBps) * 1e3
			// The drift bound is on the prediction as a whole: a CPU term
			// that moved 10 % matters less where the bytes dominate.
			p0, p1 := cpu[0]+bytesMs, cpu[1]+bytesMs
			n.CPUMs, n.BytesMs, n.PredictedMs = Num((cpu[0]+cpu[1])/2), Num(bytesMs), Num((p0+p1)/2)
			switch pred := (p0 + p1) / 2; {
			case !(pred >= MinPredictedMs):
				n.NotJudged = fmt.Sprintf("predicted difference %.3f ms is below %.1f ms: a ratio would be noise", pred, MinPredictedMs)
			case 100*math.Abs(p1-p0)/math.Abs(p0) > ProbeDriftBound:
				n.NotJudged = fmt.Sprintf("the predicted difference moved %.1f %% between the before and after probes (%.3f -> %.3f ms; bound %.0f %%)", 100*math.Abs(p1-p0)/math.Abs(p0), p0, p1, ProbeDriftBound)
			case math.IsNaN(float64(n.ObservedMs)) || math.IsInf(float64(n.ObservedMs), 0):
				n.NotJudged = "no median difference"
			default:
				n.Ratio = Num(float64(n.ObservedMs) / pred)
			}
		}
		out = append(out, n)
	}
	return out
}

// probeCPU is the hybrid's CPU time over the baseline's by the before
// and the after probe of toolchain, or why there is none.
func probeCPU(pm netdata.ProbeMeta, toolchain, base, target string) ([2]float64, string) {
	p := pm.Probe
	switch {
	case p == nil:
		return [2]float64{}, "no host probe in this run (meta.json measured.host_probe: runs before the probe existed, or handshakes in process)"
	case toolchain == "":
		return [2]float64{}, "the run names no primary toolchain"
	}
	var cpu [2]float64
	for i, when := range []string{"before", "after"} {
		m := p.Before
		if i == 1 {
			m = p.After
		}
		if m == nil {
			return cpu, fmt.Sprintf("the host probe %s the series failed: %s", when, orNone(p.Errors[when]))
		}
		b, okB := m[toolchain][base]
		t, okT := m[toolchain][target]
		if !okB || !okT {
			return cpu, fmt.Sprintf("the host probe %s the series has no %s %s and %s", when, toolchain, base, target)
		}
		cpu[i] = t.MedianMs - b.MedianMs
	}
	return cpu, ""
}

func orNone(s string) string {
	if s == "" {
		return "no reason recorded"
	}
	return s
}

// failedSelfTests lists the series of scenario whose link failed its
// self-test.
func failedSelfTests(pm netdata.ProbeMeta, scenario string) []string {
	var bad []string
	for id, st := range pm.SelfTests {
		if st.Scenario == scenario && !st.OK {
			bad = append(bad, id)
		}
	}
	slices.Sort(bad)
	return bad
}

func scenarioOf(d Design, name string) *netdata.Scenario {
	for i := range d.Scenarios {
		if d.Scenarios[i].Name == name {
			return &d.Scenarios[i]
		}
	}
	return nil
}
