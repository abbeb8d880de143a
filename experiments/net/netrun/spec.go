package netrun

import (
	"crypto/tls"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"time"

	"pqrepro/experiments/instruments/handshake"
	"pqrepro/experiments/instruments/linkemu"
	"pqrepro/internal/spec"
	"pqrepro/internal/tcpstack"
)

// Study is the study's short name: data/net/, results/net.json, `mage net:*`.
const Study = "net"

// Orders of the handshakes inside a round.
const (
	Serial      = "serial"      // all of one group's round, then the other's (the paper)
	Interleaved = "interleaved" // groups alternate, pair order from seeds.order
)

// Spec is experiments/net.toml.
type Spec struct {
	Groups    []string                `toml:"groups"`
	CertKey   string                  `toml:"cert_key"`
	CertChain bool                    `toml:"cert_chain"`
	Order     string                  `toml:"order"`
	TimeoutMs float64                 `toml:"timeout_ms"`
	Warmup    int                     `toml:"warmup"`
	Port      int                     `toml:"port"`
	Seeds     Seeds                   `toml:"seeds"`
	SelfTest  SelfTestSpec            `toml:"selftest"`
	Scenarios map[string]ScenarioSpec `toml:"scenarios"`
	Profiles  map[string]ProfileSpec  `toml:"profiles"`
	Runs      spec.Runs               `toml:"runs"`
	// Toolchains are the Go releases that build the endpoint program.
	// The builds of the endpoint program
	// (EndpointDir) run the handshakes, the first the primary one (the
	// analysis uses its rows); empty runs them in process, with the
	// runner's own Go, as before the factor existed. A profile's own
	// toolchains replace these.
	Toolchains []string `toml:"toolchains"`
	// Remote, when its host is set, runs the servers on a second host
	// (remote.go).
	Remote RemoteSpec `toml:"remote"`
	// LateBoundMs is the bound of the late-packet record. Every packet the
	// link emulator writes more than this many milliseconds after its due
	// time is recorded (datasets/netdata late.csv.gz) and the analysis
	// flags the handshakes it touched. 0 records none.
	LateBoundMs float64 `toml:"late_bound_ms"`
}

// Seeds are the run's seeds by purpose; the link seeds are per scenario.
type Seeds struct {
	Certificates uint64 `toml:"certificates"`
	Order        uint64 `toml:"order"`
}

// SelfTestSpec configures the link self-test before each scenario.
type SelfTestSpec struct {
	Probes      int     `toml:"probes"`
	ToleranceMs float64 `toml:"tolerance_ms"`
}

// ScenarioSpec is one emulated network, symmetric in both directions.
type ScenarioSpec struct {
	RTTMs      float64 `toml:"rtt_ms"`    // base RTT; one-way delay = RTT/2
	JitterMs   float64 `toml:"jitter_ms"` // +- uniform, per direction
	LossPct    float64 `toml:"loss_pct"`  // per direction
	Rate       string  `toml:"rate"`      // tc units, per direction
	QueueBytes int     `toml:"queue_bytes"`
	Seed       uint64  `toml:"seed"`
	// Exclusive runs this scenario's series alone: no other series runs
	// while one of them does (see the package doc, "Schedule").
	Exclusive bool `toml:"exclusive"`
}

// ProfileSpec selects scenarios and rounds; Warmup, TimeoutMs and Order
// override the top-level values when set.
type ProfileSpec struct {
	Scenarios []string `toml:"scenarios"`
	Rounds    []int    `toml:"rounds"`
	Warmup    *int     `toml:"warmup"`
	TimeoutMs float64  `toml:"timeout_ms"`
	Order     string   `toml:"order"`
	// Toolchains, when set, replace the spec's toolchains.
	Toolchains []string `toml:"toolchains"`
	// ParallelSeries caps how many series run at once. Each runs on its own
	// link; 0 or 1 runs them one after the other (see the package doc).
	ParallelSeries int `toml:"parallel_series"`
	// SerialControl lists series (by Series.ID) that are run a second time
	// after all the others, each alone: the concurrency control. Their
	// handshakes go to control.csv.gz, not records.csv.gz; the analysis
	// compares each one's median with its concurrent run's.
	SerialControl []string `toml:"serial_control"`
	// TransferSizes are the response sizes in bytes of the transfer block
	// (our extension, issue 34: time to last byte): after the handshake
	// the client sends one small request and the server answers with that
	// many bytes. Size 0, the handshake-only connection, is not listed:
	// the rounds above measure it (see Plan.TransferSeries). Empty: no
	// transfer block.
	TransferSizes []int `toml:"transfer_sizes"`
	// TransferRound is the number of recorded connections of each
	// transfer series (scenario x size x group x toolchain).
	TransferRound int `toml:"transfer_round"`
	// TransferParallel caps how many transfer series run at once; 0 is
	// parallel_series. A transfer moves its response through the link's
	// user-space forwarder and capture, so concurrent transfers compete
	// for the cores in a way handshakes do not.
	TransferParallel int `toml:"transfer_parallel"`
	// TransferOrder and TransferCC make the transfer block a controlled
	// one (issue 41; absent, the block is what it was). TransferOrder
	// "interleaved" measures the groups in one series, each pair of
	// connections in a seeded random order (seriesSteps), and lets
	// transfer_sizes list 0, the handshake-only connection, inside the
	// block; "serial" keeps one series per group. TransferCC runs every
	// size under each congestion control listed, set per socket.
	TransferOrder string   `toml:"transfer_order"`
	TransferCC    []string `toml:"transfer_cc"`
	// TransferPaddedArm adds the padded arm to an interleaved transfer
	// block (analysis/ttlb/mechanism2.txt): X25519 whose server staples
	// PadBytes zero bytes, rows with group PaddedArm. TransferPadBytes,
	// when set, must be PadBytes (the registration's pad-bytes); 0
	// takes it.
	TransferPaddedArm bool `toml:"transfer_padded_arm"`
	TransferPadBytes  int  `toml:"transfer_pad_bytes"`
}

// MaxParallelSeries bounds parallel_series: every concurrent series holds a
// link (two namespaces, two TUN devices, four forwarder threads at
// SCHED_FIFO), a capture and a client thread.
const MaxParallelSeries = 32

// Bounds of the spec's numbers, so that a typo cannot make a plan that
// overflows or never ends. TOML reads inf and any int64, and time.Duration
// overflows above about 9.2e12 ms (msDur). A handshake not done in ten
// minutes on an emulated link is lost (the spec uses 10,000 ms); the full
// profile's largest round is 10,000 handshakes, so a million is a hundred
// times that, already days of handshakes.
const (
	MaxTimeoutMs = 600_000
	MaxRounds    = 1_000_000
	MaxWarmup    = 10_000
)

// MaxResponseBytes bounds a transfer_sizes entry: 16 MiB, sixteen times
// the largest size the extension measures (1 MiB). At the far scenario's
// 10 Mbit/s 16 MiB take 13 s to serialise, already beyond a reasonable
// per-connection timeout; a larger value is a typo, not a design.
const MaxResponseBytes = 16 << 20

// validTransfer checks a profile's transfer block. Every size must be in
// (0, MaxResponseBytes], ascending, with a round when sizes are listed;
// in a controlled block (transfer_order or transfer_cc set) 0 may come
// first, and the congestion controls must be names, each once. It needs endpoint
// builds (toolchains): the in-process client has no request/response.
// Whether the kernel has the congestion controls is checked before a run
// (checkTransferCC), not here: a spec is read on hosts that run nothing.
func validTransfer(p string, ps ProfileSpec, toolchains []string) []error {
	var errs []error
	ctl := ps.TransferOrder != "" || len(ps.TransferCC) > 0
	for i, n := range ps.TransferSizes {
		switch {
		case n < 0:
			errs = append(errs, fmt.Errorf("profiles.%s.transfer_sizes: %d is negative: a response size is a number of bytes > 0", p, n))
		case n == 0 && ctl && i == 0:
			// the controlled block's handshake-only connection
		case n == 0:
			errs = append(errs, fmt.Errorf("profiles.%s.transfer_sizes: 0 is the handshake-only connection, which the rounds measure already: list only sizes > 0", p))
		case n > MaxResponseBytes:
			errs = append(errs, fmt.Errorf("profiles.%s.transfer_sizes: %d is above the bound of %d bytes (16 MiB)", p, n, MaxResponseBytes))
		case i > 0 && n <= ps.TransferSizes[i-1]:
			errs = append(errs, fmt.Errorf("profiles.%s.transfer_sizes: %d after %d: list the sizes once each, ascending", p, n, ps.TransferSizes[i-1]))
		}
	}
	switch {
	case len(ps.TransferSizes) == 0 && ps.TransferRound != 0:
		errs = append(errs, fmt.Errorf("profiles.%s.transfer_round = %d without transfer_sizes: list the response sizes or remove the round", p, ps.TransferRound))
	case ps.TransferParallel < 0 || ps.TransferParallel > MaxParallelSeries:
		errs = append(errs, fmt.Errorf("profiles.%s.transfer_parallel = %d: must be 0..%d (0: parallel_series)", p, ps.TransferParallel, MaxParallelSeries))
	case len(ps.TransferSizes) > 0 && (ps.TransferRound < 1 || ps.TransferRound > MaxRounds):
		errs = append(errs, fmt.Errorf("profiles.%s.transfer_round = %d: must be 1..%d when transfer_sizes are listed", p, ps.TransferRound, MaxRounds))
	}
	if len(ps.TransferSizes) > 0 && len(toolchains) == 0 {
		errs = append(errs, fmt.Errorf("profiles.%s.transfer_sizes: the transfer block needs endpoint builds (toolchains): the in-process client sends no request", p))
	}
	if ctl && len(ps.TransferSizes) == 0 {
		errs = append(errs, fmt.Errorf("profiles.%s: transfer_order or transfer_cc without transfer_sizes: they control the transfer block, which has no sizes", p))
	}
	if o := ps.TransferOrder; o != "" && o != Serial && o != Interleaved {
		errs = append(errs, fmt.Errorf("profiles.%s.transfer_order = %q: use %q or %q", p, o, Serial, Interleaved))
	}
	if ps.TransferPaddedArm && ps.TransferOrder != Interleaved {
		errs = append(errs, fmt.Errorf("profiles.%s.transfer_padded_arm without transfer_order = %q: the padded arm shares each triple's time order with the other two (analysis/ttlb/mechanism2.txt); set the order or remove the arm", p, Interleaved))
	}
	if ps.TransferPadBytes != 0 && (!ps.TransferPaddedArm || ps.TransferPadBytes != PadBytes) {
		errs = append(errs, fmt.Errorf("profiles.%s.transfer_pad_bytes = %d: the registration's pad is %d bytes (1,120 - 32 - 8, analysis/ttlb/mechanism2.txt), with transfer_padded_arm = true; remove the key or set it to %d", p, ps.TransferPadBytes, PadBytes, PadBytes))
	}
	for i, cc := range ps.TransferCC {
		if err := tcpstack.CheckName(cc); err != nil {
			errs = append(errs, fmt.Errorf("profiles.%s.transfer_cc: %w", p, err))
		} else if slices.Index(ps.TransferCC, cc) != i {
			errs = append(errs, fmt.Errorf("profiles.%s.transfer_cc: %q listed twice", p, cc))
		}
	}
	return errs
}

// validMs checks a millisecond value of the spec: finite, in (0, max],
// or [0, max] when zero is allowed.
func validMs(key string, v float64, zeroOK bool) error {
	lo := "> 0"
	if zeroOK {
		lo = ">= 0"
	}
	if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 || (v == 0 && !zeroOK) || v > MaxTimeoutMs {
		return fmt.Errorf("%s = %v: must be a finite number of milliseconds %s and at most %d (ten minutes)", key, v, lo, MaxTimeoutMs)
	}
	return nil
}

// LoadSpec reads and validates the spec at path.
func LoadSpec(path string) (*Spec, error) {
	var s Spec
	if err := spec.Load(path, &s); err != nil {
		return nil, err
	}
	if err := s.Validate(); err != nil {
		return nil, fmt.Errorf("spec %s: %w", path, err)
	}
	return &s, nil
}

// Validate reports every problem of the spec at once.
func (s *Spec) Validate() error {
	var errs []error
	if len(s.Groups) == 0 {
		errs = append(errs, errors.New("groups: none listed"))
	}
	seen := map[tls.CurveID]bool{}
	for _, g := range s.Groups {
		id, err := handshake.ParseGroup(g)
		if err != nil {
			errs = append(errs, fmt.Errorf("groups: %w", err))
			continue
		}
		if seen[id] {
			errs = append(errs, fmt.Errorf("groups: %s listed twice", g))
		}
		seen[id] = true
	}
	if _, err := handshake.ParseCertKey(s.CertKey); err != nil {
		errs = append(errs, fmt.Errorf("cert_key: %w", err))
	}
	if s.Order != Serial && s.Order != Interleaved {
		errs = append(errs, fmt.Errorf("order = %q: use %q or %q", s.Order, Serial, Interleaved))
	}
	if err := validMs("timeout_ms", s.TimeoutMs, false); err != nil {
		errs = append(errs, err)
	}
	if s.Warmup < 0 || s.Warmup > MaxWarmup {
		errs = append(errs, fmt.Errorf("warmup = %d: must be 0..%d", s.Warmup, MaxWarmup))
	}
	if s.Port < 1 || s.Port+len(s.Groups) > 65535 {
		errs = append(errs, fmt.Errorf("port = %d: must be 1..%d", s.Port, 65535-len(s.Groups)))
	}
	if s.SelfTest.Probes < 10 {
		errs = append(errs, fmt.Errorf("selftest.probes = %d: at least 10", s.SelfTest.Probes))
	}
	if err := validMs("selftest.tolerance_ms", s.SelfTest.ToleranceMs, false); err != nil {
		errs = append(errs, err)
	}
	for _, name := range slices.Sorted(maps.Keys(s.Scenarios)) {
		if _, err := s.Link(name); err != nil {
			errs = append(errs, err)
		}
	}
	if len(s.Profiles) == 0 {
		errs = append(errs, errors.New("profiles: none defined"))
	}
	if err := validMs("late_bound_ms", s.LateBoundMs, true); err != nil {
		errs = append(errs, fmt.Errorf("%w (0 records no late packets)", err))
	}
	errs = append(errs, validToolchains("toolchains", s.Toolchains))
	for _, p := range slices.Sorted(maps.Keys(s.Profiles)) {
		ps := s.Profiles[p]
		errs = append(errs, validToolchains("profiles."+p+".toolchains", ps.Toolchains))
		if len(ps.Scenarios) == 0 {
			errs = append(errs, fmt.Errorf("profiles.%s.scenarios: none listed", p))
		}
		for i, n := range ps.Scenarios {
			if _, ok := s.Scenarios[n]; !ok {
				errs = append(errs, fmt.Errorf("profiles.%s.scenarios: %q is not a [scenarios.*] table", p, n))
			}
			if slices.Index(ps.Scenarios, n) != i {
				errs = append(errs, fmt.Errorf("profiles.%s.scenarios: %q listed twice", p, n))
			}
		}
		if len(ps.Rounds) == 0 {
			errs = append(errs, fmt.Errorf("profiles.%s.rounds: none listed", p))
		}
		for i, r := range ps.Rounds {
			if r < 1 || r > MaxRounds {
				errs = append(errs, fmt.Errorf("profiles.%s.rounds: %d must be 1..%d", p, r, MaxRounds))
			}
			if slices.Index(ps.Rounds, r) != i {
				errs = append(errs, fmt.Errorf("profiles.%s.rounds: %d listed twice (rounds are identified by their size)", p, r))
			}
		}
		if ps.Warmup != nil && (*ps.Warmup < 0 || *ps.Warmup > MaxWarmup) {
			errs = append(errs, fmt.Errorf("profiles.%s.warmup = %d: must be 0..%d", p, *ps.Warmup, MaxWarmup))
		}
		// 0 (unset) takes the top-level timeout_ms.
		if err := validMs("profiles."+p+".timeout_ms", ps.TimeoutMs, true); err != nil {
			errs = append(errs, err)
		}
		if ps.ParallelSeries < 0 || ps.ParallelSeries > MaxParallelSeries {
			errs = append(errs, fmt.Errorf("profiles.%s.parallel_series = %d: must be 0..%d (0 and 1 run the series one at a time)", p, ps.ParallelSeries, MaxParallelSeries))
		}
		if ps.Order != "" && ps.Order != Serial && ps.Order != Interleaved {
			errs = append(errs, fmt.Errorf("profiles.%s.order = %q: use %q or %q", p, ps.Order, Serial, Interleaved))
		}
		tcs := s.Toolchains
		if len(ps.Toolchains) > 0 {
			tcs = ps.Toolchains
		}
		errs = append(errs, validTransfer(p, ps, tcs)...)
		if len(ps.SerialControl) > 0 {
			if plan, err := s.Plan(p); err == nil {
				if _, err := plan.ControlSeries(); err != nil {
					errs = append(errs, fmt.Errorf("profiles.%s.serial_control: %w", p, err))
				}
			}
		}
	}
	if err := s.Remote.Validate(); err != nil {
		errs = append(errs, err)
	}
	for _, p := range slices.Sorted(maps.Keys(s.Profiles)) {
		if s.Remote.Host != "" && len(s.Profiles[p].TransferCC) > 0 {
			errs = append(errs, fmt.Errorf("profiles.%s.transfer_cc with a [remote] host: the remote servers' sockets cannot be set; run the congestion-control factor on one host", p))
		}
		if s.Remote.Host != "" && s.Profiles[p].TransferPaddedArm {
			errs = append(errs, fmt.Errorf("profiles.%s.transfer_padded_arm with a [remote] host: the remote servers have no padded listener; run the padded arm on one host", p))
		}
		if s.Profiles[p].TransferPaddedArm && (!slices.Contains(s.Groups, tls.X25519.String()) || !slices.Contains(s.Groups, tls.X25519MLKEM768.String())) {
			errs = append(errs, fmt.Errorf("profiles.%s.transfer_padded_arm: groups %v lack X25519 or X25519MLKEM768, the two the padded arm is measured between; list both", p, s.Groups))
		}
		if s.Profiles[p].TransferPaddedArm && s.Port+len(s.Groups)+1 > 65535 {
			errs = append(errs, fmt.Errorf("port = %d: the padded arm of profiles.%s listens on port + %d, above 65535; lower the port", s.Port, p, len(s.Groups)))
		}
	}
	return errors.Join(errs...)
}

// Link returns the emulator scenario of the named [scenarios.*] table.
func (s *Spec) Link(name string) (linkemu.Scenario, error) {
	sc, ok := s.Scenarios[name]
	if !ok {
		return linkemu.Scenario{}, fmt.Errorf("scenario %q is not defined in [scenarios]", name)
	}
	rate, err := linkemu.ParseRate(sc.Rate)
	if err != nil {
		return linkemu.Scenario{}, fmt.Errorf("scenarios.%s.rate: %w", name, err)
	}
	if math.IsNaN(sc.RTTMs) || math.IsNaN(sc.JitterMs) {
		return linkemu.Scenario{}, fmt.Errorf("scenarios.%s: NaN delay", name)
	}
	d := linkemu.Direction{
		Delay:  msDur(sc.RTTMs / 2),
		Jitter: msDur(sc.JitterMs),
		Loss:   sc.LossPct,
		Rate:   rate,
		Queue:  sc.QueueBytes,
	}
	ls := linkemu.Symmetric(name, d, sc.Seed)
	if err := ls.Validate(); err != nil {
		return linkemu.Scenario{}, fmt.Errorf("scenarios.%s: %w", name, err)
	}
	return ls, nil
}

// Plan is what one profile runs, resolved from the spec.
type Plan struct {
	Profile   string
	Groups    []tls.CurveID
	CertKey   handshake.CertKey
	Scenarios []linkemu.Scenario
	Rounds    []int
	Warmup    int
	Timeout   time.Duration
	Order     string
	// Exclusive[i] says Scenarios[i]'s series run alone.
	Exclusive []bool
	// Parallel is the most series running at once (>= 1).
	Parallel int
	// Toolchains whose endpoint builds run the handshakes, the primary
	// first; empty: in process (InProcess).
	Toolchains []string
	// LateBound: packets written later than this past their due time are
	// recorded (linkemu.Options.LateBound); 0 records none.
	LateBound time.Duration
	// Controls are the IDs of the series run again, alone, after all the
	// others (profiles.*.serial_control; see ControlSeries).
	Controls []string
	// TransferSizes and TransferRound are the transfer block (our
	// extension; profiles.*.transfer_sizes, TransferSeries).
	TransferSizes []int
	TransferRound int
	// TransferParallel is the most transfer series running at once
	// (1 <= TransferParallel <= Parallel).
	TransferParallel int
	// TransferOrder and TransferCC control the transfer block
	// (profiles.*.transfer_order, transfer_cc); both empty: the block as
	// it was before issue 41 (Controlled).
	TransferOrder string
	TransferCC    []string
	// TransferPaddedArm adds the padded arm (arm index len(Groups),
	// PaddedArm) to every transfer series, its server stapling
	// TransferPadBytes (= PadBytes) zero bytes.
	TransferPaddedArm bool
	TransferPadBytes  int
}

// Controlled reports whether the transfer block is the controlled one of
// issue 41. Its rows carry the congestion control and their position
// (netdata.ControlledColumns), and size 0 may be one of its sizes.
func (p Plan) Controlled() bool { return p.TransferOrder != "" || len(p.TransferCC) > 0 }

// transferOrder is the order of the handshakes inside a transfer series:
// TransferOrder, or the rounds' order when it is not set.
func (p Plan) transferOrder() string {
	if p.TransferOrder != "" {
		return p.TransferOrder
	}
	return p.Order
}

// groupNames are the plan's groups by their IANA names, in order.
func (p Plan) groupNames() []string {
	out := make([]string, len(p.Groups))
	for i, g := range p.Groups {
		out[i] = g.String()
	}
	return out
}

// InProcess is the toolchain of a series whose handshakes run inside the
// runner: the runner's own Go, runtime.Version(). They run in
// experiments/instruments/handshake rather than in an endpoint build.
const InProcess = ""

// toolchains returns the plan's toolchains, [InProcess] when none.
func (p Plan) toolchains() []string {
	if len(p.Toolchains) == 0 {
		return []string{InProcess}
	}
	return p.Toolchains
}

func validToolchains(where string, ts []string) error {
	var errs []error
	for i, t := range ts {
		if !toolchainRE.MatchString(t) {
			errs = append(errs, fmt.Errorf("%s: %q is not a Go release (want e.g. go1.24.4)", where, t))
		}
		if slices.Index(ts, t) != i {
			errs = append(errs, fmt.Errorf("%s: %q listed twice", where, t))
		}
	}
	return errors.Join(errs...)
}

// Handshakes is the number of recorded handshake attempts of the plan:
// scenarios x groups x sum(rounds).
func (p Plan) Handshakes() int {
	sum := 0
	for _, r := range p.Rounds {
		sum += r
	}
	return len(p.Scenarios) * len(p.Groups) * sum * len(p.toolchains())
}

// Plan resolves a profile.
func (s *Spec) Plan(profile string) (Plan, error) {
	ps, ok := s.Profiles[profile]
	if !ok {
		return Plan{}, fmt.Errorf("profile %q is not defined in [profiles] (have %v)", profile, slices.Sorted(maps.Keys(s.Profiles)))
	}
	p := Plan{Profile: profile, Rounds: slices.Clone(ps.Rounds), Warmup: s.Warmup, Order: s.Order, Timeout: msDur(s.TimeoutMs)}
	if ps.Warmup != nil {
		p.Warmup = *ps.Warmup
	}
	if ps.TimeoutMs > 0 {
		p.Timeout = msDur(ps.TimeoutMs)
	}
	if ps.Order != "" {
		p.Order = ps.Order
	}
	p.Parallel = max(1, ps.ParallelSeries)
	p.LateBound = msDur(s.LateBoundMs)
	p.Controls = slices.Clone(ps.SerialControl)
	p.TransferSizes, p.TransferRound = slices.Clone(ps.TransferSizes), ps.TransferRound
	p.TransferParallel = p.Parallel
	if ps.TransferParallel > 0 {
		p.TransferParallel = min(ps.TransferParallel, p.Parallel)
	}
	p.TransferOrder, p.TransferCC = ps.TransferOrder, slices.Clone(ps.TransferCC)
	if ps.TransferPaddedArm {
		p.TransferPaddedArm, p.TransferPadBytes = true, PadBytes
	}
	p.Toolchains = slices.Clone(s.Toolchains)
	if len(ps.Toolchains) > 0 {
		p.Toolchains = slices.Clone(ps.Toolchains)
	}
	for _, g := range s.Groups {
		id, err := handshake.ParseGroup(g)
		if err != nil {
			return Plan{}, err
		}
		p.Groups = append(p.Groups, id)
	}
	k, err := handshake.ParseCertKey(s.CertKey)
	if err != nil {
		return Plan{}, err
	}
	p.CertKey = k
	for _, n := range ps.Scenarios {
		ls, err := s.Link(n)
		if err != nil {
			return Plan{}, err
		}
		p.Scenarios = append(p.Scenarios, ls)
		p.Exclusive = append(p.Exclusive, s.Scenarios[n].Exclusive)
	}
	return p, nil
}

func msDur(ms float64) time.Duration { return time.Duration(math.Round(ms * 1e6)) }
