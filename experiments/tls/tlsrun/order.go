package tlsrun

import (
	"fmt"
	"math/rand/v2"
	"slices"
)

// A Step is one connection of the run.
type Step struct {
	Config int  // index into Spec.Units(profile)
	Round  int  // 0-based round of blocks
	Warmup bool // discarded: made to warm the configuration's code paths up
	// Index counts the configuration's measured connections (0-based) for
	// a measured step, and its warm-up connections for a warm-up step.
	Index int
}

// Plan is the order of every connection of the run, as a pure function of
// the spec, the profile and Seeds.Order.
//
// Design: blocks, shuffled per round. The n measured connections of every
// configuration are cut into ceil(n/block) blocks of `block` connections
// (the last one shorter). In round r each configuration runs its r-th
// block, the configurations in an order drawn afresh for that round; each
// block starts with `warmup` connections that are recorded but flagged
// and discarded by the analysis. So
//
//	connections = configs x (rounds x warmup + n),  rounds = ceil(n / block).
//
// A profile with other_cells_n gives the configurations outside the
// primary cell ([paper.cell]) that many measured connections, cut into
// blocks of ceil(other_cells_n / rounds) so that they too run in every
// round (unitN); a configuration whose connections are used up sits the
// last rounds out. Without other_cells_n the plan is as above.
//
// Why blocks rather than one connection per configuration in turn: the
// paper ran each configuration's connections back to back, so its Ths is
// a steady-state time with that configuration's code and keys hot in the
// caches and branch predictors; a block keeps that state, and its warm-ups
// absorb the switch from the previous configuration (cold caches, the
// idle server goroutine). Why rounds: slow drift of the machine (thermal
// state, frequency, other load, the page cache of the growing capture)
// then hits every configuration in every round, and the shuffle stops a
// fixed neighbour from always preceding a configuration. One server per
// configuration stays up for the whole run, so a block switch costs no
// listen or certificate generation.
//
// The shuffle is Fisher-Yates (Knuth, TAOCP vol. 2, 3.4.2, Algorithm P),
// j uniform in [0, i] by rejection sampling on PCG-DXSM 64-bit outputs
// (math/rand/v2 PCG seeded with (Seeds.Order, orderStream)), so
// the order depends only on the PCG stream, which Go documents, and not on
// the library's Shuffle or IntN algorithms, which it may change.
func Plan(s *Spec, profile string) ([]Step, error) {
	p, err := s.Profile(profile)
	if err != nil {
		return nil, err
	}
	units := s.Units(profile)
	nc := len(units)
	if nc == 0 {
		return nil, fmt.Errorf("plan: the spec has no configurations")
	}
	primary := s.PrimaryCell(profile)
	if p.OtherCellsN > 0 && !slices.ContainsFunc(units, func(c Config) bool { return cellOf(c) == primary }) {
		return nil, fmt.Errorf("plan: profile %s sets other_cells_n but runs nothing in the primary cell %s ([paper.cell]): add its path to the profile or fix the cell", profile, primary)
	}
	rounds := (p.N + p.Block - 1) / p.Block
	rng := rand.NewPCG(s.Seeds.Order, orderStream)
	steps := make([]Step, 0, nc*(rounds*p.Warmup+p.N))
	perm := make([]int, nc)
	for r := 0; r < rounds; r++ {
		for i := range perm {
			perm[i] = i
		}
		shuffle(rng, perm)
		for _, c := range perm {
			n, block := unitN(p, primary, units[c])
			m := min(block, n-r*block)
			if m <= 0 {
				continue
			}
			for w := 0; w < p.Warmup; w++ {
				steps = append(steps, Step{Config: c, Round: r, Warmup: true, Index: r*p.Warmup + w})
			}
			for k := 0; k < m; k++ {
				steps = append(steps, Step{Config: c, Round: r, Index: r*block + k})
			}
		}
	}
	return steps, nil
}

// orderStream is the PCG's second seed word: "tlsmatri" in ASCII.
const orderStream = 0x746c736d61747269

// shuffle permutes a in place with Fisher-Yates.
func shuffle(rng *rand.PCG, a []int) {
	for i := len(a) - 1; i > 0; i-- {
		j := uniform(rng, uint64(i)+1)
		a[i], a[j] = a[j], a[i]
	}
}

// uniform returns a uniform integer in [0, n) by rejection: draws at or
// above the largest multiple of n that fits in 2^64 are redrawn.
func uniform(rng *rand.PCG, n uint64) int {
	limit := -n % n // 2^64 mod n
	for {
		v := rng.Uint64()
		if v >= limit { // v in [limit, 2^64): 2^64-limit values, a multiple of n
			return int(v % n)
		}
	}
}
