package agreement

import (
	"fmt"
	"math"
	"math/rand/v2"
)

// CalibrationStream is the PCG stream of Calibrate's pseudo-replicates
// ("agreemnt" in ASCII), so that they never share draws with a study's
// bootstrap.
const CalibrationStream = 0x6167726565_6d6e74

// A Change is a known difference injected into the new side of every
// pseudo-replicate, to measure the rule's power. Apply changes the new
// values of a study's items (which it matches by name, as its study
// defines them) by size (0.5 is +50 %); it reports whether it touched any
// item of the study.
type Change struct {
	Name  string
	Apply func(study string, items []Item, size float64) bool
	// Size is the size the power goal is stated at (0.5 for +50 %).
	Size float64
}

// A Calibration is what K pseudo-replicate comparisons gave.
type Calibration struct {
	K int
	// Alarms counts the comparisons with at least one inconsistent item
	// (the command's NOT REPRODUCED).
	Alarms int
	// Rate is Alarms / K, with its Wilson 95 % interval.
	Rate, Lo, Hi float64
}

func (c Calibration) String() string {
	return fmt.Sprintf("%d of %d (%.1f %%, Wilson 95 %% [%.1f, %.1f] %%)", c.Alarms, c.K, 100*c.Rate, 100*c.Lo, 100*c.Hi)
}

// Pseudo draws one pseudo-replicate pair of a reference run's items. That
// is, a pseudo-reference and a pseudo-new run, each estimate drawn
// independently from N(ref, se_ref²) (parametric bootstrap at the
// reference's n: its standard errors are those of its profile, from the
// study's dependence-respecting intervals). Exact items and items without
// a standard error keep their value on both sides (the quantity is
// deterministic); a Direction item is drawn like an Estimate. The pair is
// compared by Judge like two real runs on one host.
func Pseudo(rng *rand.Rand, s Study) Study {
	out := s
	out.NewProfile, out.HostsMatch = s.RefProfile, true
	out.Items = make([]Item, len(s.Items))
	for i, it := range s.Items {
		it.New = it.Ref
		if it.Kind != Exact && !it.Ref.Absent && !math.IsNaN(it.Ref.Est) && it.Ref.SE > 0 {
			it.Ref.Est = s.Items[i].Ref.Est + it.Ref.SE*rng.NormFloat64()
			it.New.Est = s.Items[i].Ref.Est + it.Ref.SE*rng.NormFloat64()
		}
		out.Items[i] = it
	}
	return out
}

// Sizes are the change sizes SmallestDetected tries, in order.
var Sizes = []float64{0.01, 0.02, 0.05, 0.1, 0.2, 0.3, 0.5, 1, 2}
