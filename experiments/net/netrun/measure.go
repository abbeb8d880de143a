package netrun

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"pqrepro/datasets/netdata"
	"pqrepro/experiments/instruments/handshake"
)

// step is one connection of a series: a warm-up (not recorded) or the
// recorded attempt seq of the group of index gi.
type step struct {
	gi, seq int
	warm    bool
}

// seriesSteps lists a series' connections in the order they are made.
// Serial: per group (spec order) its warm-ups, then its round recorded
// attempts. Interleaved: every group's warm-ups, then round rounds of one
// attempt per group in an order shuffled per round by PCG(orderSeed,
// linkSeed), so that it too is independent of the schedule.
func seriesSteps(order string, groups []int, round, warmup int, orderSeed, linkSeed uint64) []step {
	var steps []step
	warm := func(gi int) {
		for range warmup {
			steps = append(steps, step{gi: gi, warm: true})
		}
	}
	switch order {
	case Serial:
		for _, gi := range groups {
			warm(gi)
			for seq := range round {
				steps = append(steps, step{gi: gi, seq: seq})
			}
		}
	case Interleaved:
		for _, gi := range groups {
			warm(gi)
		}
		rng := rand.New(rand.NewPCG(orderSeed, linkSeed))
		order := slices.Clone(groups)
		for seq := range round {
			rng.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
			for _, gi := range order {
				steps = append(steps, step{gi: gi, seq: seq})
			}
		}
	}
	return steps
}

// measure makes the steps' connections one after the other, recording
// the attempts (not the warm-ups) in sr.rows; the first error ends it.
func (sr *seriesRun) measure(steps []step) error {
	for _, st := range steps {
		row, err := sr.attempt(st.gi)
		if err != nil {
			return err
		}
		if st.warm {
			continue
		}
		// Position is the attempt's place in the series' time order (the
		// controlled block's position column).
		row.Seq, row.Index, row.Position = st.seq, sr.s.Offset+len(sr.rows), len(sr.rows)
		sr.rows = append(sr.rows, row)
		done := sr.r.progress(sr.idx)
		if sr.r.cfg.afterAttempt != nil {
			sr.r.cfg.afterAttempt(done, sr.link, func(e error) { sr.kill(e) })
		}
	}
	return nil
}

// attempt makes one connection to the server of group gi and returns its
// row. An error ends the series (the series was stopped, a server saw a
// connection that is not what the configuration says, or the handshake
// failed for a reason a lossy link does not explain).
func (sr *seriesRun) attempt(gi int) (netdata.Row, error) {
	r, s := sr.r, sr.s
	if err := context.Cause(sr.ctx); err != nil && sr.ctx.Err() != nil {
		return netdata.Row{}, err
	}
	var cr handshake.ClientRecord
	var resp response
	var derr error
	r.quiet.RLock()
	t0 := time.Now()
	if sr.epCli != nil {
		g := r.plan.armGroup(gi).String()
		if testHookDialGroup != nil {
			g = testHookDialGroup(g)
		}
		size := -1 // the handshake-only connection (the rounds', or size 0 of the controlled block)
		if s.ResponseBytes > 0 {
			size = s.ResponseBytes
		}
		cr, resp, derr = sr.epCli.dial(sr.ctx, sr.port(gi), g, size)
	} else {
		sr.th.Do(func() { cr, derr = sr.clients[gi].Dial(sr.ctx, sr.port(gi)) })
	}
	r.quiet.RUnlock()
	row := netdata.Row{Series: s.ID, Scenario: s.Link.Name, Round: s.Round, Group: r.plan.armName(gi), StartNs: t0.UnixNano(), Client: cr.Local, Server: sr.port(gi), ClientNs: cr.DurationNs, Toolchain: sr.toolchain}
	if s.Block {
		row.ResponseBytes, row.ResponseRead, row.ClientTTLBNs = s.ResponseBytes, resp.read, resp.ttlbNs
		row.Controlled, row.CC = r.plan.Controlled(), resp.cc
	}
	if sr.ctx.Err() != nil {
		return row, context.Cause(sr.ctx)
	}
	if s.CC != "" && (derr == nil || resp.cc != "") && resp.cc != s.CC {
		return row, fmt.Errorf("connection %s/%d ran under congestion control %q, want %q (set per socket by the endpoint's -cc; not a network failure: fix the configuration)", row.Group, len(sr.rows)+1, resp.cc, s.CC)
	}
	if err := sr.slog.err(); err != nil {
		return row, err
	}
	if err := judgeAttempt(&row, cr, derr, len(sr.rows)+1); err != nil {
		return row, err
	}
	if row.Client != "" {
		r.rem.await(sr.slog, row.Client, 2*time.Second)
		row.ServerNs = sr.slog.take(row.Client, t0)
	}
	return row, nil
}

// judgeAttempt sets row.OK and row.Failure from the client's record and
// dial error. No error is a success; a network failure (classify) is a
// failure of that class, or a success whose close failed ("close-<class>")
// when the handshake completed; any other error is returned, naming the
// group and the attempt n: it is a configuration error, not a sample.
func judgeAttempt(row *netdata.Row, cr handshake.ClientRecord, derr error, n int) error {
	row.OK = derr == nil
	if derr == nil {
		return nil
	}
	class := classify(derr)
	var ee *endpointError
	switch {
	case errors.As(derr, &ee) && strings.HasPrefix(ee.class, "response-"):
		// The handshake completed, the transfer block's response did not:
		// an incomplete transfer row, never a time to last byte.
		row.OK, row.Failure = true, ee.class
	case class == "":
		return fmt.Errorf("handshake %s/%d: %w (not a network failure: fix the configuration)", row.Group, n, derr)
	case cr.DurationNs > 0:
		row.OK, row.Failure = true, "close-"+class // handshake done, the close timed out
	default:
		row.Failure = class
	}
	return nil
}
