package netrun

import (
	"context"
	"encoding/csv"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"pqrepro/datasets/netdata"
	"pqrepro/internal/quiet"
)

// ProbeN and ProbeWarmup are the probe's handshakes per group and
// toolchain, and its unrecorded warm-up ones. 1,000 handshakes of about
// half a millisecond keep one measurement near 2.5 s with two toolchains
// and two groups. On the project's AMD EPYC host five probes in a row
// gave the hybrid's CPU time over X25519 as 0.221-0.236 ms (Go 1.24.4):
// a spread of a few hundredths of the predicted differences, well under
// the drift bound the analysis applies (netstudy.ProbeDriftBound).
const (
	ProbeN      = 1000
	ProbeWarmup = 20
)

// probeTimeout bounds one probe process: ProbeN handshakes that take
// seconds each mean a host the probe cannot measure.
const probeTimeout = 2 * time.Minute

// probeHost runs every toolchain's endpoint probe on this host (outside
// the links) and returns its spans by toolchain and group.
func (r *runner) probeHost(ctx context.Context) (map[string]map[string]netdata.ProbeSpan, error) {
	out := map[string]map[string]netdata.ProbeSpan{}
	groups := r.plan.groupNames()
	for _, tc := range r.plan.Toolchains {
		ep := r.eps[tc]
		if ep == nil {
			return nil, fmt.Errorf("no endpoint build for %s", tc)
		}
		spans, err := runProbe(ctx, ep.Path, r.pem.cert, r.pem.key, r.pem.roots, groups)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", tc, err)
		}
		out[tc] = spans
	}
	return out, nil
}

// probeArgs is the probe's command line after the binary, without its
// file arguments (meta.json's host_probe.command).
func probeArgs(groups []string) []string {
	return []string{"probe", "-servername", "localhost", "-n", strconv.Itoa(ProbeN), "-warmup", strconv.Itoa(ProbeWarmup), "-groups", strings.Join(groups, ",")}
}

// runProbe runs one endpoint binary's probe and parses its lines.
func runProbe(ctx context.Context, bin, cert, key, roots string, groups []string) (map[string]netdata.ProbeSpan, error) {
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	args := append(probeArgs(groups), "-cert", cert, "-key", key, "-roots", roots)
	var stderr strings.Builder
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Stderr = &stderr
	b, err := cmd.Output()
	if err != nil {
		if c := context.Cause(ctx); c != nil {
			err = fmt.Errorf("%w (%v)", err, c)
		}
		return nil, fmt.Errorf("endpoint probe: %w: %s", err, strings.TrimSpace(stderr.String()))
	}
	return parseProbe(string(b), groups)
}

// parseProbe reads the probe's output: one probe line per group of
// groups, then done.
func parseProbe(s string, groups []string) (map[string]netdata.ProbeSpan, error) {
	cr := csv.NewReader(strings.NewReader(s))
	cr.FieldsPerRecord = -1
	recs, err := cr.ReadAll()
	if err != nil {
		return nil, fmt.Errorf("endpoint probe output: %w", err)
	}
	if len(recs) != len(groups)+1 || len(recs[len(recs)-1]) != 1 || recs[len(recs)-1][0] != "done" {
		return nil, fmt.Errorf("endpoint probe printed %d lines %q: want one probe line per group (%d) and done", len(recs), s, len(groups))
	}
	out := map[string]netdata.ProbeSpan{}
	for i, rec := range recs[:len(groups)] {
		if len(rec) != 6 || rec[0] != "probe" || rec[1] != groups[i] || rec[2] != strconv.Itoa(ProbeN) {
			return nil, fmt.Errorf("endpoint probe line %d %q: want probe,%s,%d,MEDIAN_NS,P25_NS,P75_NS", i+1, rec, groups[i], ProbeN)
		}
		var ns [3]float64
		for k, f := range rec[3:] {
			v, err := strconv.ParseInt(f, 10, 64)
			if err != nil || v <= 0 {
				return nil, fmt.Errorf("endpoint probe line %d %q: field %d is not a positive count of nanoseconds", i+1, rec, 4+k)
			}
			ns[k] = float64(v) / 1e6
		}
		if !(ns[1] <= ns[0] && ns[0] <= ns[2]) {
			return nil, fmt.Errorf("endpoint probe line %d %q: quantiles out of order", i+1, rec)
		}
		out[groups[i]] = netdata.ProbeSpan{MedianMs: ns[0], P25Ms: ns[1], P75Ms: ns[2]}
	}
	return out, nil
}

// probeMeta is measured.host_probe from the before and after
// measurements and their errors; nil when the run has no endpoint builds
// (handshakes in process: nothing to probe).
func (r *runner) probeMeta(before, after map[string]map[string]netdata.ProbeSpan, idleBefore, idleAfter *netdata.ProbeIdle, errBefore, errAfter error) *netdata.HostProbe {
	if len(r.plan.Toolchains) == 0 {
		return nil
	}
	p := &netdata.HostProbe{Command: "endpoint " + strings.Join(probeArgs(r.plan.groupNames()), " "), N: ProbeN, Warmup: ProbeWarmup, Before: before, After: after}
	for when, idle := range map[string]*netdata.ProbeIdle{"before": idleBefore, "after": idleAfter} {
		if idle != nil {
			if p.Idle == nil {
				p.Idle = map[string]netdata.ProbeIdle{}
			}
			p.Idle[when] = *idle
		}
	}
	for when, err := range map[string]error{"before": errBefore, "after": errAfter} {
		if err != nil {
			if p.Errors == nil {
				p.Errors = map[string]string{}
			}
			p.Errors[when] = err.Error()
		}
	}
	return p
}

// probe is probeHost after the CPUs are idle (quiet.IdleWait: the
// kernel tears down a series' namespaces for seconds after it ends),
// with one line on the log saying what it measured (or why not), and
// how long it waited. A failed probe does not stop the run: its
// handshakes are measured all the same, and the analysis says why their
// times cannot be set beside the host's prediction.
func (r *runner) probe(ctx context.Context, when string) (map[string]map[string]netdata.ProbeSpan, *netdata.ProbeIdle, error) {
	if len(r.plan.Toolchains) == 0 {
		return nil, nil, nil
	}
	waited, busy, err := quiet.IdleWait{}.Wait(ctx)
	if err != nil {
		fmt.Fprintf(r.cfg.Log, "net:run: WARNING: host probe %s the series not made: %v\n", when, err)
		return nil, nil, fmt.Errorf("waiting for idle CPUs: %w", err)
	}
	idle := netdata.ProbeIdle{WaitedS: waited.Seconds(), Busy: busy}
	t0 := time.Now()
	spans, err := r.probeHost(ctx)
	if err != nil {
		fmt.Fprintf(r.cfg.Log, "net:run: WARNING: host probe %s the series failed, the run goes on without it: %v\n", when, err)
		return nil, &idle, err
	}
	var parts []string
	for _, tc := range r.plan.Toolchains {
		var gs []string
		for _, g := range r.plan.Groups {
			gs = append(gs, fmt.Sprintf("%s %.3f ms", g, spans[tc][g.String()].MedianMs))
		}
		parts = append(parts, tc+": "+strings.Join(gs, ", "))
	}
	fmt.Fprintf(r.cfg.Log, "net:run: host probe %s the series (after %v waiting for idle CPUs, %.0f %% busy; %d handshakes per group, %v): %s\n",
		when, waited.Round(100*time.Millisecond), 100*busy, ProbeN, time.Since(t0).Round(100*time.Millisecond), strings.Join(parts, "; "))
	return spans, &idle, nil
}
