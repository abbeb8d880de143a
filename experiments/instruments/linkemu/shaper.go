package linkemu

import (
	"math/rand/v2"
	"time"
)

// Verdict is what the Shaper decided for one packet.
type Verdict uint8

const (
	Pass      Verdict = iota // forward at the returned due time
	DropLoss                 // random loss
	DropQueue                // the drop-tail queue was full
)

// Shaper is the per-direction link model, free of I/O so that it can be
// tested without privileges and replayed deterministically. Times are
// durations since an arbitrary epoch on a monotonic clock.
//
// For a packet of L bytes arriving at t (in arrival order):
//
//  1. Loss: dropped with probability Loss/100, decided by the loss PCG
//     before the packet enters the queue (as netem does).
//  2. Queue and rate: the serialiser is busy until `busy`. The bytes still
//     waiting are backlog = (busy - t) * Rate / 8 (zero if busy <= t). If
//     backlog + L > Queue the packet is dropped (drop-tail). Otherwise it
//     is serialised from start = max(t, busy) until
//     tx = start + ceil(L * 8 * 1e9 / Rate) ns, and busy = tx.
//  3. Delay: due = tx + Delay + j with j uniform in [-Jitter, +Jitter] from
//     the jitter PCG, then due = max(due, previous due): a packet never
//     leaves before the one ahead of it. When packets arrive closer together
//     than 2*Jitter this pushes delays up, as with netem's rate option.
//
// Loss and jitter use two independent PCG streams seeded from (Seed, dir),
// so the loss pattern does not depend on the jitter setting and vice versa.
type Shaper struct {
	d       Direction
	loss    *rand.Rand
	jitter  *rand.Rand
	lossP   float64
	busy    time.Duration
	lastDue time.Duration
}

// NewShaper returns the model for direction d; dir (0 for A->B, 1 for B->A)
// keeps the two directions' random streams apart under one seed.
func NewShaper(d Direction, seed uint64, dir uint64) *Shaper {
	const golden = 0x9e3779b97f4a7c15 // any odd constant: distinct stream per purpose
	return &Shaper{
		d:      d,
		loss:   rand.New(rand.NewPCG(seed, dir*2+1)),
		jitter: rand.New(rand.NewPCG(seed^golden, dir*2+2)),
		lossP:  d.Loss / 100,
	}
}

// Offer runs the model for a packet of size bytes arriving at now.
// It returns the verdict and, for Pass, the time the packet is due at
// the far side.
func (s *Shaper) Offer(now time.Duration, size int) (Verdict, time.Duration) {
	if s.lossP > 0 && s.loss.Float64() < s.lossP {
		return DropLoss, 0
	}
	tx := now
	if s.d.Rate != Unlimited {
		start := max(now, s.busy)
		if s.busy > now {
			backlog := float64(s.busy-now) * float64(s.d.Rate) / 8e9 // bytes; float: no overflow
			if backlog+float64(size) > float64(s.d.Queue) {
				return DropQueue, 0
			}
		}
		tx = start + SerialisationTime(size, s.d.Rate)
		s.busy = tx
	}
	due := tx + s.d.Delay
	if s.d.Jitter > 0 {
		// uniform integer in [-J, J]
		due += time.Duration(s.jitter.Int64N(2*int64(s.d.Jitter)+1)) - s.d.Jitter
	}
	due = max(due, s.lastDue, now)
	s.lastDue = due
	return Pass, due
}

// SerialisationTime is ceil(size*8*1e9/rate) ns, zero for Unlimited. It
// does not overflow for any size up to MaxMTU (65535*8e9 < 2^63).
func SerialisationTime(size int, rate int64) time.Duration {
	if rate == Unlimited || rate <= 0 {
		return 0
	}
	bits := int64(size) * 8 * int64(time.Second)
	return time.Duration((bits + rate - 1) / rate)
}
