package netrun

import (
	"fmt"
	"io"
	"math"
	"time"

	"pqrepro/experiments/instruments/linkemu"
	"pqrepro/internal/deps"
)

// RTTsPerConnection is the number of round trips one measured connection
// needs at the least, the unit of the theoretical minimum wall time:
//
//  1. TCP three-way handshake (SYN -> SYN-ACK; the ACK travels with the
//     ClientHello),
//  2. TLS 1.3 full handshake (RFC 8446 section 2: ClientHello ->
//     ServerHello..Finished; the client's Finished needs no answer),
//  3. orderly close: the client's close_notify and FIN -> the server's FIN
//     (handshake.Client.Dial waits for it so that every connection in the
//     capture ends the same way).
const RTTsPerConnection = 3

// Model constants of Estimate's expected time, measured on the 2-core
// reference machine.
//
// They were measured with the quick profile (see the package README in the
// report of `go test -run TestRunEndToEnd -v`): CPU and scheduling per
// connection beyond the round trips (two ECDSA P-256 operations, one or two
// key exchanges, Go's TLS state machines, the capture), and the setup of a
// series' link (namespaces, TUN devices, server, capture, joining the
// capture and storing it).
const (
	PerConnectionOverhead = 2 * time.Millisecond
	PerSeriesOverhead     = 500 * time.Millisecond
	// minRTO is Linux's TCP_RTO_MIN (200 ms). A lost data segment costs at
	// least that much more than its RTT; a lost SYN costs TCP_TIMEOUT_INIT (1 s).
	minRTO = 200 * time.Millisecond
	// packetsPerConnection is about how many segments one connection sends
	// each way (SYN, ClientHello/flight, Finished, close_notify, FIN, ACKs).
	packetsPerConnection = 8
)

// Estimation is the time budget of a profile.
type Estimation struct {
	Profile     string
	Handshakes  int // recorded handshake attempts
	Connections int // including warm-up
	Parallel    int // series running at once at most (plan.Parallel)
	// Minimum is the theoretical minimum of serial measurement: the sum
	// over every connection (warm-up included) of RTTsPerConnection x its
	// scenario's RTT. A run's achieved wall time divided by Minimum is the
	// ratio recorded in meta.json (measured.wall_to_theoretical_ratio); with
	// parallel series it is below 1.
	Minimum time.Duration
	// ScheduledMinimum is the least makespan of the schedule. It is reached
	// when every series takes exactly its share of Minimum: the least wall
	// time this schedule can achieve (measured.wall_to_scheduled_min_ratio
	// >= 1).
	ScheduledMinimum time.Duration
	// Work is the sum of the series' expected durations: the expected
	// wall time if they ran one at a time.
	Work time.Duration
	// Expected is the makespan of the schedule with the series' expected
	// durations: the wall time to plan for. A series' expected duration
	// adds to its minimum PerConnectionOverhead per connection, the expected
	// retransmission cost under loss (P(a connection loses a packet) =
	// 1 - (1-loss)^(2 x 8) times TCP_RTO_MIN + RTT), its link's self-test
	// and PerSeriesOverhead.
	Expected time.Duration
	// CriticalPath is the longest series' expected duration: no schedule
	// that keeps series whole can finish sooner.
	CriticalPath time.Duration
	PerScenario  []ScenarioEstimate
	// Series are in record order; Order is the dispatch order (indices).
	Series []SeriesEstimate
	Order  []int
}

// ScenarioEstimate is one scenario's share of an Estimation.
type ScenarioEstimate struct {
	Name              string
	RTT               time.Duration
	Connections       int
	Minimum, Expected time.Duration // sums over the scenario's series
	Exclusive         bool
}

// SeriesEstimate is one series' share and its planned slot in time.
type SeriesEstimate struct {
	Series
	Connections       int
	Minimum, Expected time.Duration
	// Start and End are planned offsets from the start of the run.
	Start, End time.Duration
}

// Estimate returns the theoretical minimum, the expected wall time and
// the schedule of running profile of s.
func Estimate(s *Spec, profile string) (Estimation, error) {
	p, err := s.Plan(profile)
	if err != nil {
		return Estimation{}, err
	}
	e := Estimation{Profile: profile, Handshakes: p.Handshakes(), Parallel: p.Parallel}
	ctl, err := p.ControlSeries()
	if err != nil {
		return Estimation{}, fmt.Errorf("profiles.%s.serial_control: %w", profile, err)
	}
	xfer := p.TransferSeries()
	series := append(append(p.Series(), xfer...), ctl...)
	for _, c := range append(xfer, ctl...) {
		e.Handshakes += c.Handshakes()
	}
	exp := make([]time.Duration, len(series))
	mins := make([]time.Duration, len(series))
	e.PerScenario = make([]ScenarioEstimate, len(p.Scenarios))
	for i, sc := range p.Scenarios {
		e.PerScenario[i] = ScenarioEstimate{Name: sc.Name, RTT: sc.RTT(), Exclusive: p.Exclusive[i]}
	}
	for i, se := range series {
		sc := se.Link
		n := se.Connections(p.Warmup)
		rtt := sc.RTT()
		min := time.Duration(n) * RTTsPerConnection * rtt
		loss := sc.AtoB.Loss / 100
		pLoss := 1 - math.Pow(1-loss, 2*packetsPerConnection)
		retrans := time.Duration(float64(n) * pLoss * float64(minRTO+rtt))
		interval := max(2*time.Millisecond, 2*sc.AtoB.Jitter+time.Millisecond)
		self := time.Duration(s.SelfTest.Probes)*interval + rtt
		if se.Block && se.ResponseBytes > 0 {
			tmin, texp := transferTime(sc, se.ResponseBytes, se.CC)
			min += time.Duration(n) * tmin
			retrans += time.Duration(n) * texp
		}
		x := min + time.Duration(n)*PerConnectionOverhead + retrans + self + PerSeriesOverhead
		mins[i], exp[i] = min, x
		e.Connections += n
		e.Minimum += min
		e.Work += x
		e.CriticalPath = max(e.CriticalPath, x)
		ps := &e.PerScenario[se.Scenario]
		ps.Connections += n
		ps.Minimum += min
		ps.Expected += x
		e.Series = append(e.Series, SeriesEstimate{Series: se, Connections: n, Minimum: min, Expected: x})
	}
	e.Order = dispatchOrder(series, exp, p.Parallel)
	start, end, makespan := schedule(series, e.Order, exp, p.Parallel, p.TransferParallel)
	for i := range e.Series {
		e.Series[i].Start, e.Series[i].End = start[i], end[i]
	}
	e.Expected = makespan
	_, _, e.ScheduledMinimum = schedule(series, e.Order, mins, p.Parallel, p.TransferParallel)
	return e, nil
}

// String is the plan line printed before a run.
func (e Estimation) String() string {
	return fmt.Sprintf("%d handshakes (%d connections with warm-up) in %d scenarios, %d series, up to %d at once: theoretical minimum %v serial, %v as scheduled; expected about %v (serial work %v, longest series %v)",
		e.Handshakes, e.Connections, len(e.PerScenario), len(e.Series), e.Parallel,
		e.Minimum.Round(time.Second), e.ScheduledMinimum.Round(time.Second), e.Expected.Round(time.Second),
		e.Work.Round(time.Second), e.CriticalPath.Round(time.Second))
}

// WritePlan prints the schedule, one line per series in dispatch order:
// its planned start and end, expected duration and theoretical minimum.
func (e Estimation) WritePlan(w io.Writer) {
	for _, i := range e.Order {
		s := e.Series[i]
		excl := ""
		if s.Exclusive {
			excl = ", alone"
		}
		fmt.Fprintf(w, "  %-28s %6d connections  %8v .. %8v  (expected %v, minimum %v%s)\n",
			s.ID, s.Connections, s.Start.Round(time.Second), s.End.Round(time.Second),
			s.Expected.Round(time.Second), s.Minimum.Round(time.Second), excl)
	}
}

// Constants of the transfer block's model (transferTime): TCP's initial
// window (RFC 6928: 10 segments) and a segment's payload on a 1500-byte
// MTU with timestamps.
const (
	initialWindow = 10
	mss           = 1448
)

// transferTime is what one transfer connection (our extension) adds to
// the RTTsPerConnection of a handshake-only one, at the least and in
// expectation. At the least: the request's round trip, the slow-start
// round trips until the window covers the response or the path's
// bandwidth-delay product (the window starts at initialWindow segments
// and doubles each round trip), and the response's serialisation at the
// link's rate. Expected: under loss the response moves at the rate of
// Mathis et al. (CCR 27(3), 1997), MSS/RTT x 1.22/sqrt(p), when that is
// below the link's, and every lost segment of the response costs one
// more round trip (fast retransmit) on average. Under BBR (cc "bbr") the
// Mathis term is left out: BBR paces at its estimate of the bottleneck
// bandwidth and does not cut it on random loss of a few percent (Cardwell
// et al., ACM Queue 14(5), 2016; Linux's tcp_bbr.c); the previous full run
// (20261206T173741Z, BBR) took 1.55 s a far 1 MiB connection; this model
// gives 2.0 s under BBR and 5.8 s with the Mathis term. It is a model for
// planning, not a measurement.
func transferTime(sc linkemu.Scenario, size int, cc string) (minimum, extra time.Duration) {
	rtt := sc.RTT()
	rate := float64(sc.BtoA.Rate)
	if rate <= 0 || sc.BtoA.Rate == linkemu.Unlimited {
		rate = 1e10
	}
	bdp := rate / 8 * rtt.Seconds()
	rounds := 0
	for w := float64(initialWindow * mss); w < float64(size) && w < bdp; w *= 2 {
		rounds++
	}
	ser := time.Duration(float64(size) * 8 / rate * 1e9)
	minimum = time.Duration(1+rounds)*rtt + ser
	if loss := sc.BtoA.Loss / 100; loss > 0 && rtt > 0 {
		mathis := mss * 8 / rtt.Seconds() * 1.22 / math.Sqrt(loss)
		if mathis < rate && cc != "bbr" {
			extra += time.Duration(float64(size)*8/mathis*1e9) - ser
		}
		segs := float64(size) / mss
		extra += time.Duration(segs * loss * float64(rtt))
	}
	return minimum, extra
}

// Requirements lists what the experiment needs installed: nothing outside
// Go. The link emulator, the TLS endpoints and the capture are pure Go;
// what the run needs from the machine is root (or CAP_NET_ADMIN,
// CAP_NET_RAW and CAP_SYS_ADMIN) and /dev/net/tun, which Run checks and
// explains before creating anything.
func Requirements(root string) []deps.Requirement { return nil }
