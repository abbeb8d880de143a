package linkemu

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// Unlimited is the Rate of a direction without a rate limit. A Rate of zero
// is an error, not "unlimited", so that a missing value in a spec is caught.
const Unlimited int64 = math.MaxInt64

// Limits checked by Validate. They are sanity bounds, not physics: a delay
// above MaxDelay is almost surely a unit mistake (ms written as s).
const (
	MaxDelay   = 10 * time.Second
	MinMTU     = 576   // RFC 791: every IPv4 host must accept 576-byte datagrams
	MaxMTU     = 65535 // largest IPv4 datagram
	DefaultMTU = 1500  // Ethernet
	MinRate    = 8000  // bit/s; below this one 1500-byte packet takes 1.5 s
	MaxQueue   = 1 << 30
)

// Direction is the behaviour of one direction of the link.
//
// A packet of L bytes (the IP datagram, as read from the TUN device) that
// arrives at time t and is not lost leaves at
//
//	tx  = max(t, busy) + L*8/Rate          (busy: when the previous packet finished)
//	due = max(tx + Delay + U(-Jitter, +Jitter), due of the previous packet)
//
// so packets are never reordered; see Shaper.
type Direction struct {
	Delay  time.Duration `json:"delay_ns"`  // one-way propagation delay, >= 0
	Jitter time.Duration `json:"jitter_ns"` // uniform +-Jitter around Delay, 0 <= Jitter <= Delay
	Loss   float64       `json:"loss_pct"`  // loss probability in percent, 0..100
	Rate   int64         `json:"rate_bps"`  // bit/s, > 0; Unlimited for none
	Queue  int           `json:"queue_bytes"`
	// Queue is the drop-tail limit in bytes of packets waiting for the rate
	// limiter (the one being serialised included). It must hold at least one
	// MTU-sized packet when Rate is limited; it is ignored when Rate is
	// Unlimited, since nothing ever waits.
}

// Scenario is a complete link description. The zero value is invalid; build
// one with Symmetric or fill both directions.
type Scenario struct {
	Name string    `json:"name"`
	AtoB Direction `json:"a_to_b"`
	BtoA Direction `json:"b_to_a"`
	// Seed seeds the loss and jitter generators (PCG, math/rand/v2). The
	// same seed and the same packet sequence give the same losses and delays.
	Seed uint64 `json:"seed"`
	MTU  int    `json:"mtu"` // of both TUN devices; 0 means DefaultMTU
}

// Symmetric returns a scenario with d in both directions.
func Symmetric(name string, d Direction, seed uint64) Scenario {
	return Scenario{Name: name, AtoB: d, BtoA: d, Seed: seed, MTU: DefaultMTU}
}

// RTT is the scenario's base round-trip time: both delays, without jitter
// or serialisation.
func (s Scenario) RTT() time.Duration { return s.AtoB.Delay + s.BtoA.Delay }

func (s Scenario) mtu() int {
	if s.MTU == 0 {
		return DefaultMTU
	}
	return s.MTU
}

// ErrInvalidScenario is wrapped by every error Validate returns.
var ErrInvalidScenario = errors.New("invalid link scenario")

// Validate reports every problem of the scenario at once, before anything
// is created. The error wraps ErrInvalidScenario.
func (s Scenario) Validate() error {
	var errs []error
	mtu := s.mtu()
	if mtu < MinMTU || mtu > MaxMTU {
		errs = append(errs, fmt.Errorf("mtu %d outside [%d, %d]", s.MTU, MinMTU, MaxMTU))
	}
	for _, d := range []struct {
		name string
		d    Direction
	}{{"a_to_b", s.AtoB}, {"b_to_a", s.BtoA}} {
		errs = append(errs, d.d.validate(d.name, mtu)...)
	}
	if len(errs) == 0 {
		return nil
	}
	return fmt.Errorf("%w %q: %w", ErrInvalidScenario, s.Name, errors.Join(errs...))
}

func (d Direction) validate(name string, mtu int) []error {
	var errs []error
	bad := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf(name+": "+format, args...))
	}
	switch {
	case d.Delay < 0:
		bad("negative delay %v", d.Delay)
	case d.Delay > MaxDelay:
		bad("delay %v above %v (a unit mistake?)", d.Delay, MaxDelay)
	}
	switch {
	case d.Jitter < 0:
		bad("negative jitter %v", d.Jitter)
	case d.Jitter > d.Delay && d.Delay >= 0:
		bad("jitter %v larger than delay %v (the delay would be clipped at 0 and its mean shift; raise the delay or lower the jitter)", d.Jitter, d.Delay)
	}
	switch {
	case math.IsNaN(d.Loss) || math.IsInf(d.Loss, 0):
		bad("loss %v is not a number", d.Loss)
	case d.Loss < 0:
		bad("negative loss %v %%", d.Loss)
	case d.Loss > 100:
		bad("loss %v %% above 100 %% (loss is a percentage, not a fraction?)", d.Loss)
	}
	switch {
	case d.Rate <= 0:
		bad("rate %d bit/s must be > 0 (use linkemu.Unlimited, flag value \"unlimited\", for no limit)", d.Rate)
	case d.Rate < MinRate:
		bad("rate %d bit/s below %d bit/s", d.Rate, MinRate)
	case d.Rate != Unlimited && d.Queue < mtu:
		bad("queue %d bytes cannot hold one %d-byte packet (mtu); give at least %d", d.Queue, mtu, mtu)
	}
	if d.Queue < 0 || d.Queue > MaxQueue {
		bad("queue %d bytes outside [0, %d]", d.Queue, MaxQueue)
	}
	return errs
}

// String describes the scenario in one line, e.g.
// "wan: a->b 25ms±2ms 1%loss 10Mbit/s q=64000B; b->a ...; seed 1".
func (s Scenario) String() string {
	return fmt.Sprintf("%s: a->b %s; b->a %s; seed %d; mtu %d", s.Name, s.AtoB, s.BtoA, s.Seed, s.mtu())
}

func (d Direction) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "delay %v", d.Delay)
	if d.Jitter != 0 {
		fmt.Fprintf(&b, "±%v", d.Jitter)
	}
	fmt.Fprintf(&b, " loss %g%% rate %s", d.Loss, FormatRate(d.Rate))
	if d.Rate != Unlimited {
		fmt.Fprintf(&b, " queue %dB", d.Queue)
	}
	return b.String()
}

// FormatRate writes a rate in bit/s in the form ParseRate reads.
func FormatRate(bps int64) string {
	switch {
	case bps == Unlimited:
		return "unlimited"
	case bps%1e9 == 0 && bps != 0:
		return strconv.FormatInt(bps/1e9, 10) + "gbit"
	case bps%1e6 == 0 && bps != 0:
		return strconv.FormatInt(bps/1e6, 10) + "mbit"
	case bps%1e3 == 0 && bps != 0:
		return strconv.FormatInt(bps/1e3, 10) + "kbit"
	}
	return strconv.FormatInt(bps, 10) + "bit"
}

// ParseRate reads a rate in bit/s. That is, "unlimited", or a decimal number
// with an optional unit bit, kbit, mbit, gbit (SI, powers of 1000, as tc(8)
// uses them; case-insensitive; "bps" is rejected because tc reads it as
// bytes). It rejects values that do not fit in an int64 and negative
// numbers; a zero parses (Validate rejects it, with the reason).
func ParseRate(s string) (int64, error) {
	t := strings.ToLower(strings.TrimSpace(s))
	if t == "unlimited" || t == "inf" {
		return Unlimited, nil
	}
	mult := 1.0
	for _, u := range []struct {
		suffix string
		mult   float64
	}{{"gbit", 1e9}, {"mbit", 1e6}, {"kbit", 1e3}, {"bit", 1}} {
		if strings.HasSuffix(t, u.suffix) {
			t, mult = strings.TrimSpace(strings.TrimSuffix(t, u.suffix)), u.mult
			break
		}
	}
	if t == "" || strings.ContainsAny(t, "_xXpP") { // no Go literal forms
		return 0, fmt.Errorf("parse rate %q: want a number with an optional unit bit, kbit, mbit or gbit, or \"unlimited\"", s)
	}
	v, err := strconv.ParseFloat(t, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, fmt.Errorf("parse rate %q: want a number with an optional unit bit, kbit, mbit or gbit, or \"unlimited\"", s)
	}
	v *= mult
	if v < 0 {
		return 0, fmt.Errorf("parse rate %q: negative", s)
	}
	if v >= math.MaxInt64 {
		return 0, fmt.Errorf("parse rate %q: too large (use \"unlimited\")", s)
	}
	return int64(math.Round(v)), nil
}
