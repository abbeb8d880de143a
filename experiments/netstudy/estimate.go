package netstudy

import (
	"fmt"
	"math"
	"time"

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
// reference machine with the quick profile (see the package README in the
// report of `go test -run TestRunEndToEnd -v`): CPU and scheduling per
// connection beyond the round trips (two ECDSA P-256 operations, one or two
// key exchanges, Go's TLS state machines, the capture), and the setup of a
// scenario (namespaces, TUN devices, servers, capture).
const (
	PerConnectionOverhead = 2 * time.Millisecond
	PerScenarioOverhead   = 500 * time.Millisecond
	// minRTO is Linux's TCP_RTO_MIN (200 ms): a lost data segment costs at
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
	// Minimum is the theoretical minimum wall time: the sum over every
	// connection (warm-up included) of RTTsPerConnection x its scenario's
	// RTT. A run's achieved wall time divided by Minimum is the efficiency
	// ratio recorded in meta.json (measured.wall_to_theoretical_ratio).
	Minimum time.Duration
	// Expected adds the model overheads: PerConnectionOverhead per
	// connection, the expected retransmission cost under loss
	// (P(a connection loses a packet) = 1 - (1-loss)^(2 x 8) times
	// TCP_RTO_MIN + RTT), the self-tests and PerScenarioOverhead.
	Expected    time.Duration
	PerScenario []ScenarioEstimate
}

// ScenarioEstimate is one scenario's share of an Estimation.
type ScenarioEstimate struct {
	Name              string
	RTT               time.Duration
	Connections       int
	Minimum, Expected time.Duration
}

// Estimate returns the theoretical minimum and the expected wall time of
// running profile of s.
func Estimate(s *Spec, profile string) (Estimation, error) {
	p, err := s.Plan(profile)
	if err != nil {
		return Estimation{}, err
	}
	e := Estimation{Profile: profile, Handshakes: p.Handshakes()}
	perSeries := p.Warmup
	for _, r := range p.Rounds {
		perSeries += r
	}
	for _, sc := range p.Scenarios {
		n := len(p.Groups) * (perSeries + p.Warmup*(len(p.Rounds)-1))
		rtt := sc.RTT()
		min := time.Duration(n) * RTTsPerConnection * rtt
		loss := sc.AtoB.Loss / 100
		pLoss := 1 - math.Pow(1-loss, 2*packetsPerConnection)
		retrans := time.Duration(float64(n) * pLoss * float64(minRTO+rtt))
		interval := max(2*time.Millisecond, 2*sc.AtoB.Jitter+time.Millisecond)
		self := time.Duration(s.SelfTest.Probes)*interval + rtt
		exp := min + time.Duration(n)*PerConnectionOverhead + retrans + self + PerScenarioOverhead
		e.Connections += n
		e.Minimum += min
		e.Expected += exp
		e.PerScenario = append(e.PerScenario, ScenarioEstimate{Name: sc.Name, RTT: rtt, Connections: n, Minimum: min, Expected: exp})
	}
	return e, nil
}

// String is the plan line printed before a run.
func (e Estimation) String() string {
	return fmt.Sprintf("%d handshakes (%d connections with warm-up) in %d scenarios: theoretical minimum %v, expected about %v",
		e.Handshakes, e.Connections, len(e.PerScenario), e.Minimum.Round(time.Second), e.Expected.Round(time.Second))
}

// Requirements lists what the experiment needs installed: nothing outside
// Go. The link emulator, the TLS endpoints and the capture are pure Go;
// what the run needs from the machine is root (or CAP_NET_ADMIN,
// CAP_NET_RAW and CAP_SYS_ADMIN) and /dev/net/tun, which Run checks and
// explains before creating anything.
func Requirements(root string) []deps.Requirement { return nil }
