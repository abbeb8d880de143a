package agreement

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"

	"pqrepro/analysis/stats"
)

// A Draw makes one pseudo-replicate pair of a study: a pseudo-reference
// and a pseudo-new run of the same items on one host, for Calibrate.
type Draw func(rng *rand.Rand) Study

// Parametric is the parametric draw of a reference run's items (Pseudo):
// every estimate drawn independently from N(ref, se_ref²).
func Parametric(s Study) Draw { return func(rng *rand.Rand) Study { return Pseudo(rng, s) } }

// A Resampler draws one pseudo-run of a study from its reference run's
// own data.
//
// It resamples the run's units (its rounds, series or repetitions,
// resampled the way the study's analysis treats them as independent
// units) and re-derives every item from the resample: the values it
// returns are the study's items' values, in the order of Study.Items.
// Because one resample gives every item, the items' correlation within a
// run is kept, which the parametric draw loses.
type Resampler func(rng *rand.Rand) []Value

// Resampled is the draw whose pseudo-reference and pseudo-new runs are
// two independent resamples of the reference run.
//
// Each item's Ref and New are replaced by the two resamples' values. It
// fails when the resampler does not give one value per item (the
// study's resampler and its items disagree: fix the study's Resample);
// it checks on one resample of its own stream, so that the draws do not
// depend on it.
func Resampled(s Study, r Resampler) (Draw, error) {
	if got := len(r(rand.New(rand.NewPCG(0, CalibrationStream)))); got != len(s.Items) {
		return nil, fmt.Errorf("the %s resampler gives %d values for %d items: it must re-derive every item of the study's CompareItems, in order", s.Name, got, len(s.Items))
	}
	return func(rng *rand.Rand) Study {
		out := s
		out.NewProfile, out.HostsMatch = s.RefProfile, true
		out.Items = make([]Item, len(s.Items))
		a, b := r(rng), r(rng)
		for i, it := range s.Items {
			it.Ref, it.New = a[i], b[i]
			out.Items[i] = it
		}
		return out
	}, nil
}

// DrawNormal is v with its estimate drawn from N(est, se²). That is, a
// study's resampler's fallback for an item its results carry no
// records of (it says so in its method). A value without a positive
// standard error is returned unchanged.
func DrawNormal(rng *rand.Rand, v Value) Value {
	if v.Absent || math.IsNaN(v.Est) || !(v.SE > 0) {
		return v
	}
	v.Est += v.SE * rng.NormFloat64()
	return v
}

// CalibrateDraws runs K pseudo-replicate comparisons and counts those
// with an inconsistent item.
//
// Each draw makes one pair per study, judged as one Holm family over
// every study, as the command judges them. With change set, the change
// is applied at size to every pseudo-new run. The same seed and K give
// the same figures. It stops with ctx's error when ctx ends, so that a
// calibration whose launcher was stopped does not compute on.
func CalibrateDraws(ctx context.Context, rule Rule, draws []Draw, k int, seed uint64, change *Change, size float64) (Calibration, error) {
	rng := rand.New(rand.NewPCG(seed, CalibrationStream))
	c := Calibration{K: k}
	for i := range k {
		if ctx.Err() != nil {
			return Calibration{}, fmt.Errorf("calibration stopped after %d of %d pseudo-replicates: %w", i, k, context.Cause(ctx))
		}
		pairs := make([]Study, len(draws))
		for i, d := range draws {
			pairs[i] = d(rng)
			if change != nil {
				change.Apply(pairs[i].Name, pairs[i].Items, size)
			}
		}
		if Judge(rule, pairs...).Inconsistent() {
			c.Alarms++
		}
	}
	c.Rate = float64(c.Alarms) / float64(k)
	c.Lo, c.Hi = stats.Wilson(c.Alarms, k)
	return c, nil
}

// SmallestDetectedDraws is SmallestDetected over draws; it stops with
// ctx's error when ctx ends.
func SmallestDetectedDraws(ctx context.Context, rule Rule, draws []Draw, k int, seed uint64, change Change) (float64, Calibration, error) {
	for _, size := range Sizes {
		c, err := CalibrateDraws(ctx, rule, draws, k, seed, &change, size)
		if err != nil {
			return math.NaN(), Calibration{}, err
		}
		if c.Rate >= 0.8 {
			return size, c, nil
		}
	}
	return math.NaN(), Calibration{}, nil
}

// RefValues are the items' Ref values, in order: what a study's
// Resampler returns after re-deriving its items from a resampled run
// compared with itself.
func RefValues(items []Item) []Value {
	out := make([]Value, len(items))
	for i, it := range items {
		out[i] = it.Ref
	}
	return out
}
