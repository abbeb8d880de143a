package netrun

import (
	"crypto/tls"
	"errors"
	"fmt"
	"slices"
	"time"

	"pqrepro/experiments/instruments/linkemu"
)

// Series is the unit the runner schedules, measured serially on a link of
// its own. It is one (scenario, round, group) (with order = "interleaved",
// one (scenario, round) with its groups alternating on that link). Its
// warm-up, its handshakes, its capture and its server belong to it alone.
type Series struct {
	ID        string           // "<scenario>-<round>-<group>"; interleaved: "<scenario>-<round>"; then "-<toolchain>" with endpoint builds
	Scenario  int              // index into Plan.Scenarios
	Round     int              // the round's size
	Groups    []int            // indices into Plan.Groups measured in this series
	Link      linkemu.Scenario // the scenario with the series' own seed (SeriesSeed)
	Offset    int              // index column of the series' first recorded attempt
	Exclusive bool             // runs with no other series at the same time
	// Toolchain is the Go release of the endpoint build that runs the
	// series' handshakes (Plan.Toolchains); InProcess for the runner's.
	Toolchain string
	// Control marks a serial control: a copy of the series ControlOf run
	// again alone after every other series (Plan.ControlSeries); its rows
	// go to control.csv.gz. Its ID is ControlOf + ControlSuffix.
	Control   bool
	ControlOf string
	// Block marks a series of the transfer block (our extension,
	// Plan.TransferSeries): every connection asks for a response of
	// ResponseBytes bytes (0: the controlled block's handshake-only
	// connection, no request); its rows go to transfer.csv.gz.
	Block         bool
	ResponseBytes int
	// CC is the congestion control of every socket of a transfer series
	// (Plan.TransferCC, set per socket by the endpoint); "" leaves the
	// namespace's default.
	CC string
}

// TransferSeries returns the series of the transfer block (our extension,
// issue 34: time to last byte), after the plan's series. They come in
// record order: scenarios, then response sizes, then groups, then
// congestion controls (TransferCC), then toolchains, each of
// TransferRound connections per group that ask for ResponseBytes after
// the handshake. ID: <scenario>-<size>B-<group>[-<cc>]-<toolchain>.
//
// Why a block of its own and not a factor inside the rounds: the rounds'
// handshake-only connections, and the study's claims on them, stay what
// they were (same series, seeds, records.csv.gz). Before issue 41 size 0
// of the factor was the rounds' connection; the controlled block
// (Plan.Controlled) may list size 0 itself, so that every size shares
// the block's conditions. A transfer series' link seed is TransferSeed,
// never a round's, so the block draws its own losses; every congestion
// control and toolchain of a (scenario, size, group) shares it, as the
// toolchains of a round do. Its series are scheduled like the rounds'
// (exclusive where the scenario is, else longest first), before the
// serial controls.
//
// With TransferOrder "interleaved" a series holds every group, measured
// in pairs in a seeded random order (seriesSteps), and its ID drops the
// group: <scenario>-<size>B[-<cc>]-<toolchain>, link seed TransferSeed
// with group 0. With TransferPaddedArm it holds the padded arm too (arm
// index len(Groups)), and seriesSteps' shuffle orders each triple.
func (p Plan) TransferSeries() []Series {
	if len(p.TransferSizes) == 0 || p.TransferRound < 1 {
		return nil
	}
	ccs := p.TransferCC
	if len(ccs) == 0 {
		ccs = []string{""} // the namespace's default, not set
	}
	all := p.arms()
	var out []Series
	for si, sc := range p.Scenarios {
		offset := 0
		excl := si < len(p.Exclusive) && p.Exclusive[si]
		for _, size := range p.TransferSizes {
			add := func(groups []int, group string, g tls.CurveID) {
				ls := sc
				ls.Seed = TransferSeed(sc.Seed, size, g)
				for _, cc := range ccs {
					for _, tc := range p.toolchains() {
						id := fmt.Sprintf("%s-%dB%s", sc.Name, size, group)
						for _, part := range []string{cc, tc} {
							if part != "" {
								id += "-" + part
							}
						}
						s := Series{ID: id, Scenario: si, Round: p.TransferRound, Groups: groups, Link: ls, Offset: offset, Exclusive: excl,
							Toolchain: tc, ResponseBytes: size, Block: true, CC: cc}
						offset += s.Handshakes()
						out = append(out, s)
					}
				}
			}
			if p.TransferOrder == Interleaved {
				add(all, "", 0)
				continue
			}
			for gi, g := range p.Groups {
				add([]int{gi}, "-"+g.String(), g)
			}
		}
	}
	return out
}

// TransferSeed is the link seed of a transfer series:
//
//	TransferSeed(seed, size, group) = SeriesSeed(mix(seed ^ "ttlb"), size, group)
//
// with "ttlb" the four bytes as a big-endian number, so that no transfer
// series shares a round's loss and jitter draws by accident of its size.
func TransferSeed(seed uint64, size int, group tls.CurveID) uint64 {
	return SeriesSeed(mix64(seed^0x74746c62), size, group)
}

// ControlSuffix ends the ID of a serial control series.
const ControlSuffix = "-alone"

// ControlSeries returns the plan's serial controls, in the order the spec
// lists them. Each is a copy of the named series (same link seed, so the same
// loss and jitter draws for the same packets, same offset) marked Control
// and Exclusive, with ID <id>-alone. An ID that is not one of the plan's
// series, or is listed twice, is an error.
func (p Plan) ControlSeries() ([]Series, error) {
	if len(p.Controls) == 0 {
		return nil, nil
	}
	all := p.Series()
	var out []Series
	var errs []error
	for i, id := range p.Controls {
		if slices.Index(p.Controls, id) != i {
			errs = append(errs, fmt.Errorf("%q listed twice", id))
			continue
		}
		k := slices.IndexFunc(all, func(s Series) bool { return s.ID == id })
		if k < 0 {
			ids := make([]string, len(all))
			for j, s := range all {
				ids[j] = s.ID
			}
			errs = append(errs, fmt.Errorf("%q is not a series of profile %s (have %v)", id, p.Profile, ids))
			continue
		}
		s := all[k]
		s.ID, s.Control, s.ControlOf, s.Exclusive = id+ControlSuffix, true, id, true
		out = append(out, s)
	}
	return out, errors.Join(errs...)
}

// Handshakes is the number of recorded attempts of the series.
func (s Series) Handshakes() int { return s.Round * len(s.Groups) }

// Connections adds the warm-up connections (warmup per group).
func (s Series) Connections(warmup int) int { return (s.Round + warmup) * len(s.Groups) }

// SeriesSeed is the seed of a series' link (loss and jitter generators,
// linkemu.Scenario.Seed) and of its interleaved order:
//
//	SeriesSeed(seed, round, group) = mix(mix(seed ^ round) ^ group)
//
// where seed is the scenario's [scenarios.*] seed, round the round's size,
// group the TLS NamedGroup code point of the series' group (RFC 8446
// section 4.2.7: X25519 = 29, X25519MLKEM768 = 4588) or 0 for an
// interleaved series, and mix is SplitMix64's output function (Steele, Lea
// and Flood, OOPSLA 2014; the finaliser of java.util.SplittableRandom):
//
//	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
//	z = (z ^ z>>27) * 0x94d049bb133111eb
//	z ^ z>>31
//
// It depends only on the spec, never on the schedule, so a series sees
// the same losses and delays (for the same packet sequence) whether it ran
// alone or next to five others, and reordering groups or rounds in the
// spec does not change any series' seed.
func SeriesSeed(seed uint64, round int, group tls.CurveID) uint64 {
	return mix64(mix64(seed^uint64(round)) ^ uint64(group))
}

func mix64(z uint64) uint64 {
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	return z ^ z>>31
}

// Series lists the plan's series in record order: scenarios, then rounds,
// then groups, in the order the spec lists them. records.csv.gz holds
// their rows in this order whatever the schedule.
func (p Plan) Series() []Series {
	var out []Series
	for si, sc := range p.Scenarios {
		offset := 0
		excl := si < len(p.Exclusive) && p.Exclusive[si]
		// One series per toolchain, innermost, with the same link seed:
		// both toolchains see the same loss and jitter draws.
		add := func(round int, groups []int, id string, g tls.CurveID) {
			ls := sc
			ls.Seed = SeriesSeed(sc.Seed, round, g)
			for _, tc := range p.toolchains() {
				s := Series{ID: id, Scenario: si, Round: round, Groups: groups, Link: ls, Offset: offset, Exclusive: excl, Toolchain: tc}
				if tc != InProcess {
					s.ID += "-" + tc
				}
				offset += s.Handshakes()
				out = append(out, s)
			}
		}
		for _, round := range p.Rounds {
			if p.Order == Interleaved {
				all := make([]int, len(p.Groups))
				for i := range all {
					all[i] = i
				}
				add(round, all, fmt.Sprintf("%s-%d", sc.Name, round), 0)
				continue
			}
			for gi, g := range p.Groups {
				add(round, []int{gi}, fmt.Sprintf("%s-%d-%s", sc.Name, round, g), g)
			}
		}
	}
	return out
}

// dispatchOrder is the order in which the runner starts series, with
// their planned start and end. The schedule holds the times given their
// durations: first the exclusive series, one at a time, in record order;
// then the others longest first (LPT list scheduling, Graham 1969: the
// makespan is at most 4/3 - 1/(3m) of the optimum for m slots), each
// started as soon as one of the parallel slots is free; then the transfer
// block (Series.Block, our extension), in the same two parts,
// after every round's series has ended (a barrier: the rounds' series run
// next to the same load as before the block existed); last the serial
// controls (Series.Control, listed after the plan's series), each alone,
// in the spec's order. With one slot the order is the record order
// (scenario by scenario, as the paper ran them, then the transfer block,
// then the controls).
func dispatchOrder(series []Series, dur []time.Duration, parallel int) []int {
	if parallel <= 1 {
		all := make([]int, len(series))
		for i := range all {
			all[i] = i
		}
		return all
	}
	var excl, rest, xExcl, xRest, ctl []int
	for i, s := range series {
		switch {
		case s.Control:
			ctl = append(ctl, i)
		case s.Block && s.Exclusive:
			xExcl = append(xExcl, i)
		case s.Block:
			xRest = append(xRest, i)
		case s.Exclusive:
			excl = append(excl, i)
		default:
			rest = append(rest, i)
		}
	}
	lpt(rest, dur)
	lpt(xRest, dur)
	return slices.Concat(excl, rest, xExcl, xRest, ctl)
}

// lpt sorts idx by duration, longest first, stably (ties keep record
// order), by insertion.
func lpt(idx []int, dur []time.Duration) {
	for i := 1; i < len(idx); i++ {
		for j := i; j > 0 && dur[idx[j]] > dur[idx[j-1]]; j-- {
			idx[j], idx[j-1] = idx[j-1], idx[j]
		}
	}
}

// schedule simulates dispatching order with parallel slots (the transfer
// block on at most xpar of them; 0: all). It returns each series' start
// and end and the makespan.
func schedule(series []Series, order []int, dur []time.Duration, parallel, xpar int) (start, end []time.Duration, makespan time.Duration) {
	start = make([]time.Duration, len(series))
	end = make([]time.Duration, len(series))
	var t time.Duration
	all := make([]time.Duration, max(1, parallel))
	free := all      // the slots in use: all of them, or the transfer block's
	sync := func() { // wait for every slot
		for _, f := range all {
			t = max(t, f)
		}
		for k := range all {
			all[k] = t
		}
	}
	barrier, inBlock := false, false
	for _, i := range order {
		switch x := series[i].Block; {
		case x && !barrier:
			// The transfer block starts when every series before it
			// ended, on at most xpar slots.
			barrier, inBlock = true, true
			sync()
			if xpar > 0 && xpar < len(all) {
				free = all[:xpar]
			}
		case !x && inBlock:
			inBlock = false
			sync()
			free = all
		}
		if series[i].Exclusive {
			// Wait for everything running, then run alone.
			for _, f := range free {
				t = max(t, f)
			}
			start[i], end[i] = t, t+dur[i]
			t = end[i]
			for k := range free {
				free[k] = t
			}
			continue
		}
		k := 0
		for j := range free {
			if free[j] < free[k] {
				k = j
			}
		}
		start[i] = max(free[k], t)
		end[i] = start[i] + dur[i]
		free[k] = end[i]
	}
	for _, e := range end {
		makespan = max(makespan, e)
	}
	return start, end, makespan
}
