package agreement

import (
	"fmt"
	"math"
	"strings"
)

// MinBetweenRuns is the fewest runs from which Between estimates a
// between-run variance. With two runs the moment estimate rests on one
// difference per item and is as likely to be 0 as to be large.
const MinBetweenRuns = 3

// BetweenRun is the between-run variance of a study's host-dependent
// estimates, from repeated runs of one profile on one host. What moves
// an estimate from run to run beyond its within-run standard error (the
// machine's state between runs: another speed of the virtual CPU, its
// neighbours, its caches). No within-run standard error contains it, so
// an interval built from within-run errors alone calls such a move
// inconsistent.
//
// It is a relative variance τ²_rel: an item of magnitude |m| has
// between-run variance τ²_rel · m² (a run slower by some per cent moves
// every time of an item by that share of it, the log scale's
// delta-method equivalent, which keeps items of opposite sign and near
// zero usable). It is estimated by the method of moments of DerSimonian
// and Laird (1986, "Meta-analysis in clinical trials", Controlled
// Clinical Trials 7(3)) with one τ² common to the study's items: per item
// j observed in K_j runs, with y_ij = est_ij / |m_j| (m_j the item's
// mean over the runs), s_ij = se_ij / |m_j|, w_ij = 1 / s_ij²,
//
//	Q_j = Σ_i w_ij (y_ij - ȳ_j)²,   ȳ_j = Σ_i w_ij y_ij / Σ_i w_ij,
//	C_j = Σ_i w_ij - Σ_i w_ij² / Σ_i w_ij,
//	τ²_rel = max(0, (Σ_j Q_j - Σ_j (K_j - 1)) / Σ_j C_j),
//
// the sum of the items' DerSimonian-Laird moment equations E[Q_j] =
// (K_j - 1) + τ² C_j. The prediction interval for a new run then is
// ref ± z · sqrt(se_ref² + se_new² + 2 τ²) (a random-effects prediction:
// Higgins, Thompson and Spiegelhalter 2009, "A re-evaluation of
// random-effects meta-analysis", JRSS A 172(1)): both the reference and
// the new run carry one between-run deviation each.
//
// One τ² common to the items averages over them, and an item whose own
// runs disagree far more than the others' is then judged as if they did
// not: on an Intel Xeon host six quick runs of Study A gave Go's ML-DSA-87
// increase 0.66-1.17 ms (within-run standard errors 0.05-0.12 ms) while
// the common τ_rel over 64 items was 4.6 %, and an unchanged tree's
// quick said NOT REPRODUCED on that one item. So each item also gets its
// own DerSimonian-Laird estimate from its K_j runs, in its unit squared,
//
//	τ²_j = max(0, (Q_j - (K_j - 1)) / C_j) · m_j²,
//
// and its prediction uses the larger of the two: max(τ²_j, the common
// τ² of its scale). With K_j = 3 an item's own estimate rests on 2
// degrees of freedom and is noisy; taking the larger never narrows an
// interval below the common estimate's (no item is judged more strictly
// for having its own), and costs power only on items whose repeated runs
// disagree, which is where a difference means least.
//
// A study whose deviations do not scale with its items uses the
// Absolute scale instead (BetweenScaled): m_j = 1, and τ² is in the
// items' unit squared, common to every item whatever its size.
type BetweenRun struct {
	// Runs are the IDs of the runs the estimate used.
	Runs []string
	// Scale says how the deviations scale with the items: Relative
	// (Tau2Rel) or Absolute (Tau2Abs, in Unit squared).
	Scale BetweenScale
	// Tau2Rel is τ²_rel (0 when not estimated, or on the Absolute
	// scale).
	Tau2Rel float64
	// Tau2Abs is τ² on the Absolute scale, in Unit squared (0 when not
	// estimated, or on the Relative scale).
	Tau2Abs float64
	Unit    string
	// Items is the number of items that entered it, Q and DF the summed
	// Q_j and K_j - 1.
	Items int
	Q     float64
	DF    int
	// PerItem is each item's own τ²_j, in its unit squared, by name (the
	// items whose runs give a positive estimate); Apply takes the larger
	// of it and the common τ².
	PerItem map[string]float64
	// Raised counts the items whose own τ²_j exceeds the common τ² at
	// their size: Apply widens their intervals beyond the common one.
	Raised int
	// Caveat, when set, says why τ² is taken as 0 (fewer than
	// MinBetweenRuns runs): the intervals hold within-run error only.
	Caveat string
}

// BetweenScale says how a study's between-run deviations scale with its
// items.
type BetweenScale int

const (
	// Relative deviations are a share of each item (τ²_j = τ²_rel m_j²).
	// Study A uses it: its times move together when the virtual CPU
	// is slower or faster in one run than in another.
	Relative BetweenScale = iota
	// Absolute deviations are one size for every item (τ²_j = τ²). Study
	// B, whose compared medians each come from a series on a link of its
	// own, so that the difference of two series carries the difference
	// of their links' RTT offsets (the self-tests' errors, +0.3 to +0.8
	// ms at 1 ms RTT within one run on one host), whatever the size of
	// the difference itself.
	Absolute
)

func (s BetweenScale) String() string {
	if s == Absolute {
		return "absolute"
	}
	return "relative"
}

// BetweenScaled estimates the between-run variance from repeated runs on
// one scale.
//
// Runs holds one list of items per run, as the study lists them for a run
// compared with itself: each item's Ref is that run's value; ids name the
// runs. Only host-dependent Estimate items with a finite estimate and a
// positive standard error enter, matched by name, each in at least two runs.
func BetweenScaled(ids []string, runs [][]Item, scale BetweenScale) BetweenRun {
	b := BetweenRun{Runs: ids, Scale: scale}
	if len(runs) < MinBetweenRuns {
		b.Caveat = fmt.Sprintf("between-run variance not estimated: %d run(s) of this profile, spec and host whose quiet check passed, at least %d needed; τ² = 0, so the intervals hold within-run error only", len(runs), MinBetweenRuns)
		return b
	}
	byName := map[string][]Value{}
	var order []string
	for _, items := range runs {
		for _, it := range items {
			v := it.Ref
			if it.Class != HostDependent || it.Kind != Estimate || v.Absent || math.IsNaN(v.Est) || math.IsInf(v.Est, 0) || !(v.SE > 0) {
				continue
			}
			if _, ok := byName[it.Name]; !ok {
				order = append(order, it.Name)
			}
			if b.Unit == "" {
				b.Unit = it.Unit
			}
			byName[it.Name] = append(byName[it.Name], v)
		}
	}
	var q, c float64
	var owns []float64
	for _, name := range order {
		vs := byName[name]
		if len(vs) < 2 {
			continue
		}
		var m float64
		for _, v := range vs {
			m += v.Est
		}
		m = math.Abs(m / float64(len(vs)))
		if scale == Absolute {
			m = 1
		}
		if m == 0 {
			continue
		}
		var sw, sw2, swy float64
		w := make([]float64, len(vs))
		for i, v := range vs {
			s := v.SE / m
			w[i] = 1 / (s * s)
			sw, sw2, swy = sw+w[i], sw2+w[i]*w[i], swy+w[i]*v.Est/m
		}
		mean := swy / sw
		var qj float64
		for i, v := range vs {
			d := v.Est/m - mean
			qj += w[i] * d * d
		}
		cj := sw - sw2/sw
		q += qj
		c += cj
		b.DF += len(vs) - 1
		b.Items++
		// The item's own estimate on the scale's units (relative or
		// absolute), comparable with the common τ² as it is.
		if own := (qj - float64(len(vs)-1)) / cj; len(vs) >= MinBetweenRuns && cj > 0 && own > 0 {
			if b.PerItem == nil {
				b.PerItem = map[string]float64{}
			}
			b.PerItem[name] = own * m * m
			owns = append(owns, own)
		}
	}
	b.Q = q
	if b.Items == 0 || c <= 0 {
		b.Caveat = "between-run variance not estimated: no host-dependent estimate with a standard error in two or more of the runs; τ² = 0"
		return b
	}
	tau2 := math.Max(0, (q-float64(b.DF))/c)
	if scale == Absolute {
		b.Tau2Abs = tau2
	} else {
		b.Tau2Rel = tau2
	}
	for _, own := range owns {
		if own > tau2 {
			b.Raised++
		}
	}
	return b
}

// common is the common τ² at an item of size m, in its unit squared.
func (b BetweenRun) common(m float64) float64 {
	if b.Scale == Absolute {
		return b.Tau2Abs
	}
	return b.Tau2Rel * m * m
}

// Apply sets the between-run variance of every host-dependent Estimate
// item, in the item's unit squared. That is, the larger of the common τ²
// (τ²_rel · ref² on the Relative scale, τ² on the Absolute one) and the
// item's own τ²_j.
func (b BetweenRun) Apply(items []Item) {
	if b.Caveat != "" {
		return
	}
	for i := range items {
		if items[i].Class == HostDependent && items[i].Kind == Estimate && !math.IsNaN(items[i].Ref.Est) {
			items[i].Tau2 = math.Max(b.common(items[i].Ref.Est), b.PerItem[items[i].Name])
		}
	}
}

// String is one line for SUMMARY.txt and the calibration's report.
func (b BetweenRun) String() string {
	runs := "none"
	if len(b.Runs) > 0 {
		runs = strings.Join(b.Runs, ", ")
	}
	switch {
	case b.Caveat != "":
		return fmt.Sprintf("%s (runs: %s)", b.Caveat, runs)
	case len(b.Runs) == 0:
		return "between-run variance not estimated (no runs examined); τ² = 0, so the intervals hold within-run error only"
	}
	if b.Scale == Absolute {
		return fmt.Sprintf("between-run variance τ² = %.3g %s² (absolute: between-run sd %.3f %s on every estimate; DerSimonian-Laird over %d items, Q %.1f on %d df; %s) from %d runs: %s; intervals ref ± 1.96 sqrt(se_ref² + se_new² + 2 τ²)",
			b.Tau2Abs, b.Unit, math.Sqrt(b.Tau2Abs), b.Unit, b.Items, b.Q, b.DF, b.raisedText(), len(b.Runs), runs)
	}
	return fmt.Sprintf("between-run variance τ²_rel = %.3g (between-run sd %.1f %% of each time; DerSimonian-Laird over %d items, Q %.1f on %d df; %s) from %d runs: %s; intervals ref ± 1.96 sqrt(se_ref² + se_new² + 2 τ²)",
		b.Tau2Rel, 100*math.Sqrt(b.Tau2Rel), b.Items, b.Q, b.DF, b.raisedText(), len(b.Runs), runs)
}

func (b BetweenRun) raisedText() string {
	return fmt.Sprintf("%d of the items with a larger τ² of their own, which they keep", b.Raised)
}
