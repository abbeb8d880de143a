package netdata

import (
	"encoding/json"
	"fmt"
	"math"
)

// HostProbe is meta.json's measured.host_probe: the host's CPU time
// inside Ths, measured by the endpoint's probe before and after the
// series (experiments/net/endpoint, `endpoint probe`).
//
// Study B's times are a property of the host as much as of the link; the
// probe measures the host's part in the same run, so that a difference
// measured on one host can be set beside what that host predicts
// (analysis/netstudy, NormalisedDifferences).
type HostProbe struct {
	// Command is the probe's command line, without its file arguments.
	Command string `json:"command"`
	N       int    `json:"n"`      // handshakes per group and toolchain
	Warmup  int    `json:"warmup"` // not recorded, per group
	// Before and After map toolchain -> group -> the span's quantiles;
	// nil when that measurement failed (Errors says why).
	Before map[string]map[string]ProbeSpan `json:"before"`
	After  map[string]map[string]ProbeSpan `json:"after"`
	// Errors maps "before" or "after" to why that measurement is missing.
	Errors map[string]string `json:"errors,omitempty"`
	// Idle maps "before" or "after" to the wait for idle CPUs that
	// preceded the measurement.
	Idle map[string]ProbeIdle `json:"idle,omitempty"`
}

// ProbeIdle is the wait for idle CPUs before a probe (quiet.IdleWait): how
// long it took and the CPUs' busy share in its last window. That share is
// over the idle bound when the wait reached its limit.
type ProbeIdle struct {
	WaitedS float64 `json:"waited_s"`
	Busy    float64 `json:"busy"`
}

// ProbeSpan is one group's probe: quantiles in milliseconds of the span
// from the client's ClientHello write to its Finished write.
type ProbeSpan struct {
	MedianMs float64 `json:"median_ms"`
	P25Ms    float64 `json:"p25_ms"`
	P75Ms    float64 `json:"p75_ms"`
}

// ProbeMeta is the part of meta.json that says how far the run's probe can
// be trusted. It holds the probe itself and whether the servers ran on
// another host (measured.remote_host), where the probe did not run.
type ProbeMeta struct {
	Probe *HostProbe
	// Remote is true when the servers ran on a remote host.
	Remote bool
	// SelfTests maps series to whether its link passed its self-test.
	SelfTests map[string]SelfTest
}

// SelfTest is the part of one series' link self-test the probe's
// prediction rests on.
type SelfTest struct {
	Scenario string `json:"scenario"`
	OK       bool   `json:"ok"`
}

// ParseProbeMeta reads measured.host_probe, measured.remote_host and
// measured.selftest of meta.json (name names it in errors). A run made
// before the probe existed has none: Probe is nil. Times must be
// positive and finite, and a measurement's quantiles ordered.
func ParseProbeMeta(name string, b []byte) (ProbeMeta, error) {
	var m struct {
		Measured struct {
			Probe    *HostProbe          `json:"host_probe"`
			Remote   json.RawMessage     `json:"remote_host"`
			SelfTest map[string]SelfTest `json:"selftest"`
		} `json:"measured"`
	}
	if err := json.Unmarshal(b, &m); err != nil {
		return ProbeMeta{}, fmt.Errorf("%s: %w", name, err)
	}
	out := ProbeMeta{Probe: m.Measured.Probe, SelfTests: m.Measured.SelfTest,
		Remote: len(m.Measured.Remote) > 0 && string(m.Measured.Remote) != "null"}
	if p := out.Probe; p != nil {
		for when, tcs := range map[string]map[string]map[string]ProbeSpan{"before": p.Before, "after": p.After} {
			for tc, groups := range tcs {
				for g, s := range groups {
					ok := func(v float64) bool { return v > 0 && !math.IsInf(v, 0) }
					if !ok(s.MedianMs) || !ok(s.P25Ms) || !ok(s.P75Ms) || s.P25Ms > s.MedianMs || s.MedianMs > s.P75Ms {
						return ProbeMeta{}, fmt.Errorf("%s: measured.host_probe.%s[%q][%q] = %+v: want positive times with p25 <= median <= p75", name, when, tc, g, s)
					}
				}
			}
		}
	}
	return out, nil
}
