package agreement

import (
	"context"
	"strings"
)

// Helpers of the tests: the parametric calibration, the relative-scale
// between-run estimate and a scaling Change, which the pipeline does not
// use (it calibrates with each study's own resampler).

// Calibrate runs K pseudo-replicate comparisons of the reference runs'
// items (Pseudo; one Holm family over every study, as the command judges
// them) and counts those with an inconsistent item. With change nil it
// measures the false-alarm rate; with a change applied at size to every
// pseudo-new run, the power to detect it. The same seed and K give the
// same figures.
func Calibrate(rule Rule, refs []Study, k int, seed uint64, change *Change, size float64) Calibration {
	c, err := CalibrateDraws(context.Background(), rule, parametricDraws(refs), k, seed, change, size)
	if err != nil {
		panic(err) // a background context never ends
	}
	return c
}

func parametricDraws(refs []Study) []Draw {
	d := make([]Draw, len(refs))
	for i, s := range refs {
		d[i] = Parametric(s)
	}
	return d
}

// SmallestDetected is the smallest of Sizes at which the change is
// detected in at least 80 % of K pseudo-replicates, and its power. NaN
// when none is.
func SmallestDetected(rule Rule, refs []Study, k int, seed uint64, change Change) (float64, Calibration) {
	size, c, err := SmallestDetectedDraws(context.Background(), rule, parametricDraws(refs), k, seed, change)
	if err != nil {
		panic(err) // a background context never ends
	}
	return size, c
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

// Between is BetweenScaled on the Relative scale.
func Between(ids []string, runs [][]Item) BetweenRun { return BetweenScaled(ids, runs, Relative) }
