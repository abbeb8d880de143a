package netrun

import (
	"context"
	"encoding/csv"
	"fmt"
	"io"
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

// Bounds of what a probe may print, checked before a span is believed.
// A broken endpoint build, a clock that jumped or a forged binary must
// not put an impossible host CPU time into meta.json.
const (
	// minProbeSpan: a TLS 1.3 handshake on loopback cannot take under
	// 1 µs. It holds two key-exchange operations, a signature and its
	// verification, each tens of microseconds on any current CPU (the
	// project's host measures about 450 µs in all).
	minProbeSpan = time.Microsecond
	// maxProbeSpan: nor over 10 s. A quartile that high means a quarter
	// of ProbeN handshakes took 10 s or more, 2,500 s in all, twenty
	// times probeTimeout, which ends the probe long before.
	maxProbeSpan = 10 * time.Second
	// probeRefGroup is the group every other group's median is compared
	// with, when the probe measures it.
	probeRefGroup = "X25519"
	// minGroupRatio and maxGroupRatio bound a group's median over
	// probeRefGroup's. The handshakes differ in the key exchange only
	// (same certificate, signature and records), and a hybrid does
	// X25519's key exchange and ML-KEM's: none can take under half of
	// X25519's time (the project's host measured the hybrid at 1.4-1.5
	// times). The dearest group the endpoint offers, CurveP521, is a few
	// times X25519's; 20 times leaves a slow host room and still refuses
	// a span off by orders of magnitude.
	minGroupRatio = 0.5
	maxGroupRatio = 20
	// maxProbeOutput bounds the bytes read from the probe's output (and
	// kept of its error output). It prints about 60 bytes per group and
	// done, so 64 KiB is a thousand times that; a runaway probe is
	// stopped there instead of filling the memory.
	maxProbeOutput = 64 << 10
	// maxQuoted bounds the bytes of a bad output an error quotes: enough
	// to recognise it, short enough for a log line and meta.json's
	// host_probe.errors.
	maxQuoted = 200
)

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

// runProbe runs one endpoint binary's probe and parses its lines. It
// reads at most maxProbeOutput bytes of the output and stops a probe
// that prints more.
func runProbe(ctx context.Context, bin, cert, key, roots string, groups []string) (map[string]netdata.ProbeSpan, error) {
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	args := append(probeArgs(groups), "-cert", cert, "-key", key, "-roots", roots)
	stderr := &headWriter{max: maxProbeOutput}
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Stderr = stderr
	cmd.WaitDelay = time.Second // a child the probe started may hold its output open
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("endpoint probe: %w", err)
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("endpoint probe: %w", err)
	}
	b, rerr := io.ReadAll(io.LimitReader(stdout, maxProbeOutput+1))
	tooLong := len(b) > maxProbeOutput
	if tooLong {
		cancel() // stop it: what follows is not read
	}
	err = cmd.Wait()
	switch {
	case tooLong:
		return nil, fmt.Errorf("endpoint probe printed more than %d bytes (it was stopped), beginning %s: not a probe's output; rebuild the endpoint (go run mage.go net:run builds it)", maxProbeOutput, excerpt(string(b)))
	case err != nil:
		if c := context.Cause(ctx); c != nil {
			err = fmt.Errorf("%w (%v)", err, c)
		}
		return nil, fmt.Errorf("endpoint probe: %w: %s", err, excerpt(strings.TrimSpace(stderr.String())))
	case rerr != nil:
		return nil, fmt.Errorf("endpoint probe: reading its output: %w", rerr)
	}
	return parseProbe(string(b), groups)
}

// A headWriter keeps the first max bytes written to it and counts the
// rest, which it discards without failing the writer.
type headWriter struct {
	b       []byte
	max     int
	dropped int
}

func (w *headWriter) Write(p []byte) (int, error) {
	n := min(len(p), w.max-len(w.b))
	w.b = append(w.b, p[:n]...)
	w.dropped += len(p) - n
	return len(p), nil
}

func (w *headWriter) String() string {
	if w.dropped > 0 {
		return string(w.b) + fmt.Sprintf(" ... (%d more bytes)", w.dropped)
	}
	return string(w.b)
}

// excerpt quotes at most maxQuoted bytes of s, saying how long s is when
// it is longer. A bad output thus makes a short error.
func excerpt(s string) string {
	if len(s) <= maxQuoted {
		return strconv.Quote(s)
	}
	return fmt.Sprintf("%q... (%d bytes)", s[:maxQuoted], len(s))
}

// parseProbe reads the probe's output: one probe line per group of
// groups, then done. Each span must lie within minProbeSpan and
// maxProbeSpan, and each group's median within minGroupRatio and
// maxGroupRatio of probeRefGroup's.
func parseProbe(s string, groups []string) (map[string]netdata.ProbeSpan, error) {
	cr := csv.NewReader(strings.NewReader(s))
	cr.FieldsPerRecord = -1
	recs, err := cr.ReadAll()
	if err != nil {
		return nil, fmt.Errorf("endpoint probe output %s: %w", excerpt(s), err)
	}
	if len(recs) != len(groups)+1 || len(recs[len(recs)-1]) != 1 || recs[len(recs)-1][0] != "done" {
		return nil, fmt.Errorf("endpoint probe printed %d lines %s: want one probe line per group (%d) and done", len(recs), excerpt(s), len(groups))
	}
	out := map[string]netdata.ProbeSpan{}
	for i, rec := range recs[:len(groups)] {
		line := excerpt(strings.Join(rec, ","))
		if len(rec) != 6 || rec[0] != "probe" || rec[1] != groups[i] || rec[2] != strconv.Itoa(ProbeN) {
			return nil, fmt.Errorf("endpoint probe line %d %s: want probe,%s,%d,MEDIAN_NS,P25_NS,P75_NS", i+1, line, groups[i], ProbeN)
		}
		var ns [3]float64
		for k, f := range rec[3:] {
			v, err := strconv.ParseInt(f, 10, 64)
			if err != nil || v <= 0 {
				return nil, fmt.Errorf("endpoint probe line %d %s: field %d is not a positive count of nanoseconds", i+1, line, 4+k)
			}
			if d := time.Duration(v); d < minProbeSpan || d > maxProbeSpan {
				return nil, fmt.Errorf("endpoint probe line %d %s: field %d, %v, is %s: no TLS 1.3 handshake on loopback takes under %v or over %v; the endpoint build or the host's clock is broken", i+1, line, 4+k, d, outside(d), minProbeSpan, maxProbeSpan)
			}
			ns[k] = float64(v) / 1e6
		}
		if !(ns[1] <= ns[0] && ns[0] <= ns[2]) {
			return nil, fmt.Errorf("endpoint probe line %d %s: quantiles out of order", i+1, line)
		}
		out[groups[i]] = netdata.ProbeSpan{MedianMs: ns[0], P25Ms: ns[1], P75Ms: ns[2]}
	}
	if ref, ok := out[probeRefGroup]; ok {
		for _, g := range groups {
			if r := out[g].MedianMs / ref.MedianMs; r < minGroupRatio || r > maxGroupRatio {
				return nil, fmt.Errorf("endpoint probe: %s's median is %.2g times %s's: want %g to %g (the handshakes differ in the key exchange only); the endpoint build is broken or measured something else", g, r, probeRefGroup, minGroupRatio, float64(maxGroupRatio))
			}
		}
	}
	return out, nil
}

// outside says on which side of the bounds a span is.
func outside(d time.Duration) string {
	if d < minProbeSpan {
		return "under " + minProbeSpan.String()
	}
	return "over " + maxProbeSpan.String()
}

// probeMeta is measured.host_probe from the before and after
// measurements and their errors. It is nil when the run has no endpoint builds
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

// probe is probeHost after the CPUs are idle (quiet.IdleWait): the
// kernel tears down a series' namespaces for seconds after it ends.
// It logs one line saying what it measured (or why not), and
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
