package netdata

import (
	"encoding/json"
	"errors"
	"fmt"

	"pqrepro/internal/tcpstack"
)

// Design is measured.design of the run's meta.json, as far as the analysis
// reads it (the runner, experiments/net/netrun, also records each
// scenario's link seed and description). What was run, in which order.
type Design struct {
	Order     string     `json:"order"`
	Groups    []string   `json:"groups"`
	Rounds    []int      `json:"rounds"`
	CertKey   string     `json:"cert_key"`
	CertChain bool       `json:"cert_chain"`
	Warmup    int        `json:"warmup"`
	TimeoutMs float64    `json:"timeout_ms"`
	Scenarios []Scenario `json:"scenarios"`
	// Toolchains are the Go releases of the run's endpoint builds, the
	// primary first; absent for runs made in process (one toolchain).
	Toolchains []string `json:"toolchains,omitempty"`
}

// Scenario is one emulated network as the run recorded it.
type Scenario struct {
	Name       string  `json:"name"`
	RTTms      float64 `json:"rtt_ms"`
	JitterMs   float64 `json:"jitter_ms"`
	LossPct    float64 `json:"loss_pct"`
	RateBps    int64   `json:"rate_bps"`
	QueueBytes int     `json:"queue_bytes"`
	// Seed is the link emulator's seed for the scenario's random loss
	// and jitter, Link its description (linkemu's String); both are the
	// runner's record, which the analysis passes on without using.
	Seed uint64 `json:"seed"`
	Link string `json:"link"`
}

// Meta is the part of meta.json the analysis reads.
type Meta struct {
	RunID    string `json:"run_id"`
	Profile  string `json:"profile"`
	Measured struct {
		Design *Design `json:"design"`
	} `json:"measured"`
	// TCPStack is measured.tcp_stack (internal/tcpstack.FromMeta): each
	// namespace's TCP stack by side ("a" the client's, "b" the server's;
	// "<series>/<side>" for a series whose stack differed). It is nil for
	// a run recorded before runs began to record it.
	TCPStack map[string]tcpstack.Stack `json:"-"`
}

// ParseMeta parses meta.json (name is used in errors) and checks that its
// measured.design describes a Study B run the analysis can compare. That
// is, two groups, at least one round, and scenarios that are named and
// have an RTT, and a valid measured.tcp_stack where the run is recent
// enough to have one.
func ParseMeta(name string, b []byte) (Meta, error) {
	var m Meta
	if err := json.Unmarshal(b, &m); err != nil {
		return m, fmt.Errorf("%s: %w", name, err)
	}
	d := m.Measured.Design
	if d == nil {
		return m, fmt.Errorf("%s: no measured.design: not a Study B run (written by experiments/net/netrun)", name)
	}
	var errs []error
	if len(d.Groups) != 2 {
		errs = append(errs, fmt.Errorf("design.groups = %v: the study compares exactly two groups (baseline first)", d.Groups))
	}
	if len(d.Rounds) == 0 {
		errs = append(errs, errors.New("design.rounds: none"))
	}
	if len(d.Scenarios) == 0 {
		errs = append(errs, errors.New("design.scenarios: none"))
	}
	for _, s := range d.Scenarios {
		if s.Name == "" || !(s.RTTms >= 0) {
			errs = append(errs, fmt.Errorf("design.scenarios: %+v is incomplete", s))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return m, fmt.Errorf("%s: %w", name, err)
	}
	st, err := tcpstack.FromMeta(name, b)
	if err != nil {
		return m, err
	}
	m.TCPStack = st
	return m, nil
}
