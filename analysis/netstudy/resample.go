package netstudy

import (
	"math/rand/v2"
	"slices"
	"strings"

	"pqrepro/analysis/agreement"
)

// ResampleMethod says in one line how Resampler draws a pseudo-run.
const ResampleMethod = "parametric within the run: the results carry each series' summary and quantiles, not its handshakes, so the circular block bootstrap of the series (inference.go) cannot be redone from them; each comparison's difference is drawn once from N(diff, se²), se from its block-bootstrap interval, and shared by its difference and direction items (the parametric mode draws them apart); failed handshakes drawn at their Poisson se; bytes and attempts exact"

// Resampler draws pseudo-runs of Study B from a reference run's results
// for the calibration (agreement.Resampled). Its results do not carry
// the series' latencies, so it cannot resample them: it draws each
// comparison's difference from N(diff_ms, se²), with se from the
// comparison's block-bootstrap interval (the analysis's own
// dependence-respecting method, done once when the reference was
// analysed), once per comparison so that an effect and its direction
// move together; failed handshakes from N(failed, max(failed, 1)). The
// values come in CompareItems(ref, ref)'s order.
func Resampler(ref *Results) agreement.Resampler {
	return func(rng *rand.Rand) []agreement.Value {
		r := *ref
		r.Comparisons = slices.Clone(ref.Comparisons)
		for i := range r.Comparisons {
			c := &r.Comparisons[i]
			se := agreement.SEFromInterval(float64(c.DiffLowerMs), float64(c.DiffUpperMs), 0.95)
			d := agreement.DrawNormal(rng, agreement.V(float64(c.DiffMs), se))
			c.DiffMs = Num(d.Est)
		}
		items := CompareItems(&r, &r)
		out := agreement.RefValues(items)
		for i, it := range items {
			if strings.HasSuffix(it.Name, " failed handshakes") {
				out[i] = agreement.DrawNormal(rng, it.Ref)
			}
		}
		return out
	}
}
