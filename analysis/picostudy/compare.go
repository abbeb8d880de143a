package picostudy

import (
	"maps"
	"math"
	"slices"
	"strings"

	"pqrepro/analysis/agreement"
)

// CyclesTol is how far, relative, an operation's mean cycle count may
// move between two runs. The emulator is deterministic and the firmware's
// randombytes is seeded (experiments/pico.toml), so the same seed gives
// the same keys, messages and rejection-sampling paths; the tolerance
// only absorbs the results' rounding to jsonnum.Digits digits.
const CyclesTol = 1e-6

// CompareItems lists Study C's items for `mage all`, read from both runs'
// results/pico.json, per scheme and operation:
//
//   - its mean cycles (exact within CyclesTol) and peak stack bytes
//     (exact): the emulator's, host-independent;
//   - its mean time in ms, an estimate with se = sd / sqrt(n) over the
//     operation's repetitions (independent repetitions of one operation
//     on seeded inputs) and n - 1 degrees of freedom; host-independent on the emulator (its ms are its
//     cycles at the clock), host-dependent on a board.
//
// An item the other run lacks is listed with agreement.Absent.
func CompareItems(ref, now *Results) []agreement.Item {
	class := agreement.HostIndependent
	if !ref.Emulated || !now.Emulated {
		class = agreement.HostDependent
	}
	type op struct {
		name string
		op   *Op
	}
	ops := func(r *Results) []op {
		var out []op
		for _, s := range slices.Sorted(maps.Keys(r.Schemes)) {
			for _, o := range slices.Sorted(maps.Keys(r.Schemes[s].Ops)) {
				out = append(out, op{s + " " + o, r.Schemes[s].Ops[o]})
			}
		}
		return out
	}
	var items []agreement.Item
	agreement.Pairs(ops(ref), ops(now), func(o op) string { return o.name }, func(name string, r, n *op) {
		get := func(o *op, f func(*Op) agreement.Value) agreement.Value {
			if o == nil || o.op == nil {
				return agreement.Absent
			}
			return f(o.op)
		}
		cycles := func(o *Op) agreement.Value { return agreement.V(orNaN(o.MeanCycles), 0) }
		stack := func(o *Op) agreement.Value { return agreement.V(float64(o.PeakStackBytes), 0) }
		mean := func(o *Op) agreement.Value {
			se := math.NaN()
			if o.SDMs != nil && o.N > 0 {
				se = *o.SDMs / math.Sqrt(float64(o.N))
			}
			v := agreement.V(orNaN(o.MeanMs), se)
			// sd / sqrt(n) from n independent repetitions has n - 1
			// degrees of freedom: the comparison refers z to Student's t
			// (Welch-Satterthwaite over both runs), not to the normal,
			// which at the quick profile's few signatures per scheme
			// called one resampled pair in nine inconsistent.
			if o.N > 1 {
				v.DF = float64(o.N - 1)
			}
			return v
		}
		rc := get(r, cycles)
		items = append(items,
			agreement.Item{Name: name + " mean cycles", Class: agreement.HostIndependent, Kind: agreement.Exact, Tol: CyclesTol * math.Abs(rc.Est), Ref: rc, New: get(n, cycles)},
			agreement.Item{Name: name + " peak stack bytes", Unit: "bytes", Class: agreement.HostIndependent, Kind: agreement.Exact, Ref: get(r, stack), New: get(n, stack)},
			agreement.Item{Name: name + " mean time", Unit: "ms", Class: class, Kind: agreement.Estimate, Ref: get(r, mean), New: get(n, mean)})
	})
	return items
}

func orNaN(p *float64) float64 {
	if p == nil {
		return math.NaN()
	}
	return *p
}

// CalibrationChanges are the known changes the calibration injects into
// Study C's pseudo-replicates. That is, ML-DSA signing slower by size
// (+20 % at the goal), in its cycles and its time.
func CalibrationChanges() []agreement.Change {
	return []agreement.Change{{Name: "ML-DSA signing slower (Study C)", Size: 0.2,
		Apply: func(study string, items []agreement.Item, size float64) bool {
			if study != "pico" {
				return false
			}
			hit := false
			for i := range items {
				n := items[i].Name
				if strings.HasPrefix(n, "ml-dsa-") && strings.Contains(n, " sign ") && !strings.Contains(n, "stack") {
					items[i].New.Est *= 1 + size
					hit = true
				}
			}
			return hit
		}}}
}
