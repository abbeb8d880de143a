package linkemu

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"net"
	"slices"
	"time"

	"golang.org/x/sys/unix"
)

// DefaultTolerance is how far the median achieved RTT may be from the
// expected one before a self-test fails. The emulator's own error is about
// +0.1 to +0.3 ms at the median (see BenchmarkDelayAccuracy); 1 ms leaves
// room for a loaded 2-core machine while still catching a wrong delay,
// which in every Study B scenario is several ms or more.
const DefaultTolerance = time.Millisecond

// SelfTestConfig tunes Link.SelfTest; zero fields take defaults.
type SelfTestConfig struct {
	Probes    int           // UDP probes sent A->B and echoed back; default 200
	Interval  time.Duration // between probes; default max(2 ms, 2*max jitter + 1 ms, 4 serialisation times)
	Payload   int           // UDP payload bytes, 20..MTU-28; default 64
	Tolerance time.Duration // allowed |p50 - expected RTT|; default DefaultTolerance
	Port      int           // UDP port of the echo server in B; default 5999
}

// SelfTestReport is what the self-test measured. It is meant for
// meta.json: durations are in milliseconds, quantiles are R type 7
// (linear interpolation, NumPy's default) over the received probes.
type SelfTestReport struct {
	Scenario      string   `json:"scenario"`
	Probes        int      `json:"probes"`
	Received      int      `json:"received"`
	Loss          float64  `json:"loss"`          // measured round-trip loss fraction
	ExpectedLoss  float64  `json:"expected_loss"` // 1 - (1-la)(1-lb)
	IntervalMs    float64  `json:"interval_ms"`
	PayloadBytes  int      `json:"payload_bytes"`
	ExpectedRTTms float64  `json:"expected_rtt_ms"` // delays + serialisation of the probe both ways
	MinMs         float64  `json:"min_ms"`
	P50Ms         float64  `json:"p50_ms"`
	P95Ms         float64  `json:"p95_ms"`
	P99Ms         float64  `json:"p99_ms"`
	MaxMs         float64  `json:"max_ms"`
	MeanMs        float64  `json:"mean_ms"`
	ErrorP50Ms    float64  `json:"error_p50_ms"` // P50 - expected
	ToleranceMs   float64  `json:"tolerance_ms"`
	OK            bool     `json:"ok"`
	Problems      []string `json:"problems,omitempty"`
	Stats         Stats    `json:"forwarder"` // counters after the test, including probes
}

// AccuracyError is returned when a self-test ran but the link does not do
// what the scenario says. A run must not start on such a link.
type AccuracyError struct {
	Report SelfTestReport
}

func (e *AccuracyError) Error() string {
	return fmt.Sprintf("link self-test for %q failed: %s (expected RTT %.3f ms, p50 %.3f ms, tolerance %.3f ms; "+
		"a loaded machine or a wrong scenario; rerun on an idle machine or fix the scenario)",
		e.Report.Scenario, joinProblems(e.Report.Problems), e.Report.ExpectedRTTms, e.Report.P50Ms, e.Report.ToleranceMs)
}

func joinProblems(p []string) string {
	s := ""
	for i, x := range p {
		if i > 0 {
			s += "; "
		}
		s += x
	}
	return s
}

// StartVerified starts a link and self-tests it. When the self-test fails
// (an *AccuracyError or any other error) the link is closed and the error
// returned, so a run never starts on a link that is off.
func StartVerified(ctx context.Context, sc Scenario, opts Options, cfg SelfTestConfig) (*Link, SelfTestReport, error) {
	l, err := StartWith(ctx, sc, opts)
	if err != nil {
		return nil, SelfTestReport{}, err
	}
	rep, err := l.SelfTest(ctx, cfg)
	if err != nil {
		return nil, rep, errors.Join(err, l.Close())
	}
	return l, rep, nil
}

func (c *SelfTestConfig) fill(sc Scenario) error {
	if c.Probes == 0 {
		c.Probes = 200
	}
	if c.Payload == 0 {
		c.Payload = 64
	}
	if c.Tolerance == 0 {
		c.Tolerance = DefaultTolerance
	}
	if c.Port == 0 {
		c.Port = 5999
	}
	if c.Probes < 1 || c.Payload < 20 || c.Payload > sc.mtu()-28 || c.Tolerance < 0 || c.Port < 1 || c.Port > 65535 || c.Interval < 0 {
		return fmt.Errorf("self-test config %+v: want probes >= 1, payload 20..%d, port 1..65535, non-negative interval and tolerance", *c, sc.mtu()-28)
	}
	if c.Interval == 0 {
		size := c.Payload + 28
		ser := max(SerialisationTime(size, sc.AtoB.Rate), SerialisationTime(size, sc.BtoA.Rate))
		c.Interval = max(2*time.Millisecond, 2*max(sc.AtoB.Jitter, sc.BtoA.Jitter)+time.Millisecond, 4*ser)
	}
	return nil
}

// SelfTest measures the link as it is. That is, Probes UDP datagrams go
// from A to an echo server in B and back, Interval apart (far enough that
// the no-reordering rule never delays a probe, so the expected median is
// the configured one). The RTT of a probe is the kernel receive timestamp
// (SO_TIMESTAMPNS) of its echo minus its send time minus the time it spent
// in the echo server (from the server's own kernel receive timestamp to its
// reply), so that a slow echo goroutine on a busy machine is not blamed on
// the link. The test fails with an *AccuracyError when
//
//   - no probe came back,
//   - |p50 - expected| > Tolerance, where expected = delay(a->b) +
//     delay(b->a) + serialisation of the probe in both directions,
//   - the fastest probe beat the physically possible minimum
//     (expected - jitter(a->b) - jitter(b->a) - Tolerance), or
//   - the number lost is further than 4.5 binomial standard deviations
//     (plus one probe) from Probes * expected loss.
//
// The probes go through the link's loss and jitter generators, so they
// advance them like any other traffic; counters in Stats include them.
func (l *Link) SelfTest(ctx context.Context, cfg SelfTestConfig) (SelfTestReport, error) {
	sc := l.sc
	if err := cfg.fill(sc); err != nil {
		return SelfTestReport{}, err
	}
	size := cfg.Payload + 28
	expected := sc.RTT() + SerialisationTime(size, sc.AtoB.Rate) + SerialisationTime(size, sc.BtoA.Rate)
	la, lb := sc.AtoB.Loss/100, sc.BtoA.Loss/100
	rep := SelfTestReport{
		Scenario: sc.Name, Probes: cfg.Probes, PayloadBytes: cfg.Payload,
		ExpectedLoss:  1 - (1-la)*(1-lb),
		IntervalMs:    ms(cfg.Interval),
		ExpectedRTTms: ms(expected),
		ToleranceMs:   ms(cfg.Tolerance),
	}
	bAddr := &net.UDPAddr{IP: l.Endpoint(B).Addr.AsSlice(), Port: cfg.Port}
	var srv, cli *net.UDPConn
	if err := l.RunIn(B, func() (err error) { srv, err = net.ListenUDP("udp4", bAddr); return err }); err != nil {
		return rep, fmt.Errorf("self-test echo server: %w", err)
	}
	defer srv.Close()
	if err := l.RunIn(A, func() (err error) { cli, err = net.DialUDP("udp4", nil, bAddr); return err }); err != nil {
		return rep, fmt.Errorf("self-test client: %w", err)
	}
	defer cli.Close()
	if err := EnableRxTimestamps(cli); err != nil {
		return rep, err
	}
	if err := EnableRxTimestamps(srv); err != nil {
		return rep, err
	}
	go func() { // echo server: returns how long the probe sat in it
		buf, oob := make([]byte, 65536), make([]byte, 128)
		for {
			n, from, rx, err := ReadWithTimestamp(srv, buf, oob)
			if err != nil {
				return
			}
			if n >= 20 {
				binary.BigEndian.PutUint64(buf[12:20], uint64(time.Since(rx)))
			}
			srv.WriteToUDP(buf[:n], from)
		}
	}()

	rtts := make([]time.Duration, cfg.Probes)
	seen := make([]bool, cfg.Probes)
	recvDone := make(chan int, 1)
	go func() {
		buf, oob := make([]byte, 65536), make([]byte, 128)
		got := 0
		for got < cfg.Probes {
			n, _, rx, err := ReadWithTimestamp(cli, buf, oob)
			if err != nil {
				break // deadline or closed
			}
			if n < 20 {
				continue
			}
			seq := binary.BigEndian.Uint32(buf[0:4])
			sent := int64(binary.BigEndian.Uint64(buf[4:12]))
			inServer := int64(binary.BigEndian.Uint64(buf[12:20]))
			if int(seq) >= cfg.Probes || seen[seq] {
				continue
			}
			seen[seq] = true
			rtts[seq] = time.Duration(rx.UnixNano() - sent - inServer)
			got++
		}
		recvDone <- got
	}()
	msg := make([]byte, cfg.Payload)
	start := time.Now()
	for i := range cfg.Probes {
		if d := time.Until(start.Add(time.Duration(i) * cfg.Interval)); d > 0 {
			select {
			case <-time.After(d):
			case <-ctx.Done():
				cli.Close()
				<-recvDone
				return rep, fmt.Errorf("self-test interrupted: %w", context.Cause(ctx))
			case <-l.Done():
				cli.Close()
				<-recvDone
				return rep, fmt.Errorf("self-test: link stopped: %w", l.Err())
			}
		}
		binary.BigEndian.PutUint32(msg[0:4], uint32(i))
		binary.BigEndian.PutUint64(msg[12:20], 0)
		binary.BigEndian.PutUint64(msg[4:12], uint64(time.Now().UnixNano()))
		if _, err := cli.Write(msg); err != nil {
			cli.Close()
			<-recvDone
			return rep, fmt.Errorf("self-test send probe %d: %w", i, err)
		}
	}
	wait := expected + 2*(sc.AtoB.Jitter+sc.BtoA.Jitter) + 500*time.Millisecond
	cli.SetReadDeadline(time.Now().Add(wait))
	var got int
	select {
	case got = <-recvDone:
	case <-ctx.Done():
		cli.Close()
		<-recvDone
		return rep, fmt.Errorf("self-test interrupted: %w", context.Cause(ctx))
	}
	if err := l.Err(); err != nil {
		return rep, fmt.Errorf("self-test: link stopped: %w", err)
	}
	var xs []float64
	for i, ok := range seen {
		if ok {
			xs = append(xs, ms(rtts[i]))
		}
	}
	rep.Received = got
	rep.Loss = 1 - float64(got)/float64(cfg.Probes)
	rep.Stats = l.Stats()
	if got == 0 {
		rep.Problems = append(rep.Problems, "no probe came back")
		return rep, &AccuracyError{Report: rep}
	}
	slices.Sort(xs)
	sum := 0.0
	for _, x := range xs {
		sum += x
	}
	rep.MinMs, rep.MaxMs, rep.MeanMs = xs[0], xs[len(xs)-1], sum/float64(len(xs))
	rep.P50Ms, rep.P95Ms, rep.P99Ms = Quantile7(xs, 0.50), Quantile7(xs, 0.95), Quantile7(xs, 0.99)
	rep.ErrorP50Ms = rep.P50Ms - rep.ExpectedRTTms
	if math.Abs(rep.ErrorP50Ms) > rep.ToleranceMs {
		rep.Problems = append(rep.Problems, fmt.Sprintf("median RTT off by %+.3f ms", rep.ErrorP50Ms))
	}
	if floor := ms(expected - sc.AtoB.Jitter - sc.BtoA.Jitter - cfg.Tolerance); rep.MinMs < floor {
		rep.Problems = append(rep.Problems, fmt.Sprintf("fastest probe %.3f ms beat the minimum possible %.3f ms (traffic bypassing the emulator?)", rep.MinMs, floor))
	}
	n, q := float64(cfg.Probes), rep.ExpectedLoss
	lost := n - float64(got)
	if band := 4.5*math.Sqrt(n*q*(1-q)) + 1; math.Abs(lost-n*q) > band {
		rep.Problems = append(rep.Problems, fmt.Sprintf("lost %v of %v probes, expected %.1f ± %.1f", lost, n, n*q, band))
	}
	rep.OK = len(rep.Problems) == 0
	if !rep.OK {
		return rep, &AccuracyError{Report: rep}
	}
	return rep, nil
}

func ms(d time.Duration) float64 { return float64(d) / 1e6 }

// Quantile7 is the R type 7 quantile of sorted xs. That is, h =
// (n-1)p, x[floor h] + (h - floor h)(x[floor h + 1] - x[floor h]).
func Quantile7(sorted []float64, p float64) float64 {
	if len(sorted) == 0 {
		return math.NaN()
	}
	h := float64(len(sorted)-1) * p
	lo := int(math.Floor(h))
	if lo >= len(sorted)-1 {
		return sorted[len(sorted)-1]
	}
	return sorted[lo] + (h-float64(lo))*(sorted[lo+1]-sorted[lo])
}

// EnableRxTimestamps asks the kernel to stamp received datagrams
// (SO_TIMESTAMPNS, CLOCK_REALTIME at reception); ReadWithTimestamp reads them.
func EnableRxTimestamps(c *net.UDPConn) error {
	rc, err := c.SyscallConn()
	if err != nil {
		return fmt.Errorf("enable rx timestamps: %w", err)
	}
	var serr error
	if err := rc.Control(func(fd uintptr) {
		serr = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_TIMESTAMPNS, 1)
	}); err != nil {
		return fmt.Errorf("enable rx timestamps: %w", err)
	}
	if serr != nil {
		return fmt.Errorf("setsockopt SO_TIMESTAMPNS: %w", serr)
	}
	return nil
}

// ReadWithTimestamp reads one datagram and its kernel receive time; when
// the kernel gave none (timestamps not enabled) it uses time.Now.
func ReadWithTimestamp(c *net.UDPConn, buf, oob []byte) (int, *net.UDPAddr, time.Time, error) {
	n, oobn, _, from, err := c.ReadMsgUDP(buf, oob)
	if err != nil {
		return 0, nil, time.Time{}, err
	}
	if ts, ok := parseTimestamp(oob[:oobn]); ok {
		return n, from, ts, nil
	}
	return n, from, time.Now(), nil
}

func parseTimestamp(oob []byte) (time.Time, bool) {
	msgs, err := unix.ParseSocketControlMessage(oob)
	if err != nil {
		return time.Time{}, false
	}
	for _, m := range msgs {
		if m.Header.Level == unix.SOL_SOCKET && m.Header.Type == unix.SCM_TIMESTAMPNS && len(m.Data) >= 16 {
			sec := int64(binary.NativeEndian.Uint64(m.Data[0:8]))
			nsec := int64(binary.NativeEndian.Uint64(m.Data[8:16]))
			return time.Unix(sec, nsec), true
		}
	}
	return time.Time{}, false
}
