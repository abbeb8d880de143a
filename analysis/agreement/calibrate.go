package agreement

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
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

// Calibrate runs K pseudo-replicate comparisons of the reference runs'
// items (Pseudo; one Holm family over every study, as the command judges
// them) and counts those with an inconsistent item. With change nil it
// measures the false-alarm rate; with a change applied at size to every
// pseudo-new run, the power to detect it. The same seed and K give the
// same figures.
func Calibrate(rule Rule, refs []Study, k int, seed uint64, change *Change, size float64) Calibration {
	return CalibrateDraws(rule, parametricDraws(refs), k, seed, change, size)
}

func parametricDraws(refs []Study) []Draw {
	d := make([]Draw, len(refs))
	for i, s := range refs {
		d[i] = Parametric(s)
	}
	return d
}

// Sizes are the change sizes SmallestDetected tries, in order.
var Sizes = []float64{0.01, 0.02, 0.05, 0.1, 0.2, 0.3, 0.5, 1, 2}

// SmallestDetected is the smallest of Sizes at which the change is
// detected in at least 80 % of K pseudo-replicates, and its power. NaN
// when none is.
func SmallestDetected(rule Rule, refs []Study, k int, seed uint64, change Change) (float64, Calibration) {
	return SmallestDetectedDraws(rule, parametricDraws(refs), k, seed, change)
}

// ScaleNew multiplies the new estimate of every item whose name contains
// one of the substrings by 1+size. That is, a Change's usual Apply for
// "this quantity is size slower".
func ScaleNew(items []Item, size float64, substrings ...string) bool {
	hit := false
	for i := range items {
		for _, s := range substrings {
			if strings.Contains(items[i].Name, s) {
				items[i].New.Est *= 1 + size
				hit = true
				break
			}
		}
	}
	return hit
}
