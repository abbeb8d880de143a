// Package agreement judges whether a new run of an experiment agrees with
// a reference run of the same experiment at the same profile. It knows no
// study: each study's analysis package lists its items (what to compare,
// how, with which standard errors) and this package judges them.
//
// # The rule
//
// An item is one quantity estimated by both runs, with a standard error
// in each. Its new estimate is consistent with the reference when it lies
// in the prediction interval built from both runs' standard errors,
//
//	ref ± z(1-α/2) · sqrt(se_ref² + se_new² + 2 τ²),
//
// (τ² the between-run variance of a host-dependent estimate, from
// repeated reference runs, 0 when not estimated: BetweenRun) the
// interval in which a replication's estimate falls with probability
// 1-α when both estimate the same quantity (Spence and Stanley 2016,
// "Prediction Interval: What to Expect When You're Expecting ... A
// Replication", PLoS ONE 11(9) e0162874; Patil, Peng and Leek 2016, "What
// Should Researchers Expect When They Replicate Studies?", Perspectives on
// Psychological Science 11(4)). Its p-value is that of
//
//	z = (new - ref) / sqrt(se_ref² + se_new² + 2 τ²),   p = 2 (1 - Φ(|z|)).
//
// With some 80 items a 95 % interval per item alone would call almost
// every faithful replication inconsistent somewhere (1 - 0.95^80 ≈ 98 %).
// The verdict therefore controls the family-wise error rate: an item is
// inconsistent when Holm's step-down procedure (Holm 1979, Scandinavian
// Journal of Statistics 6(2)) rejects it at FamilyAlpha among every judged
// item of the comparison. An item outside its own 95 % interval but not
// rejected by Holm is consistent, and says so.
//
// # Kinds and classes
//
// Estimate items use the interval above. Exact items (counts, bytes that
// must match, a deterministic emulator's cycles) agree when they differ by
// at most Tol, and otherwise are inconsistent whatever the family (p = 0).
// Direction items (the sign of an effect) are judged only when the
// reference's own 95 % interval excludes zero; they are then inconsistent
// when the new run finds the opposite sign, by the one-sided test
// p = Φ(sign(ref) · new / se_new).
//
// Every item has a class. Host-independent quantities (bytes on the wire,
// handshake and failure counts, the emulator's cycles and stack bytes,
// directions and orderings of effects) are judged on any machine.
// Host-dependent ones (absolute and relative times) are judged only when
// the two runs' host fingerprints match; otherwise they are shown with
// their ratio and "host differs".
package agreement

import (
	"fmt"
	"gonum.org/v1/gonum/stat/distuv"
	"math"

	"pqrepro/analysis/stats"
)

// Class says whether a quantity depends on the machine that measured it.
type Class int

const (
	// HostIndependent quantities are judged on any host.
	HostIndependent Class = iota
	// HostDependent quantities (times) are judged only on a matching host.
	HostDependent
)

func (c Class) String() string {
	if c == HostDependent {
		return "host-dependent"
	}
	return "host-independent"
}

// Kind says how an item is compared.
type Kind int

const (
	// Estimate: the new estimate must lie in the prediction interval.
	Estimate Kind = iota
	// Exact: the two values must differ by at most Item.Tol.
	Exact
	// Direction: the new run must not find the reference's effect
	// significantly reversed.
	Direction
)

func (k Kind) String() string {
	return [...]string{"estimate", "exact", "direction"}[k]
}

// A Value is one run's estimate of an item. Est NaN means the run's
// results hold null; SE NaN means they give no standard error.
type Value struct {
	Est, SE float64
	// DF is the degrees of freedom of SE when it comes from few
	// independent units (Study A: the rounds, DF = rounds - 1); 0 means
	// many (the normal distribution).
	DF float64
	// Absent is set when the run's results do not have the item at all.
	Absent bool
}

// V is a present value.
func V(est, se float64) Value { return Value{Est: est, SE: se} }

// Absent is the value of an item a run's results lack.
var Absent = Value{Est: math.NaN(), SE: math.NaN(), Absent: true}

// An Item is one compared quantity.
type Item struct {
	Name  string // unique within a study, e.g. "lan round 20 difference"
	Unit  string // "ms", "bytes", "", ...
	Class Class
	Kind  Kind
	Ref   Value
	New   Value
	// Tol is an Exact item's allowed absolute difference.
	Tol float64
	// Tau2 is a host-dependent Estimate item's between-run variance (in
	// its unit squared; BetweenRun.Apply sets it, 0 when not estimated):
	// its interval is ref ± z · sqrt(se_ref² + se_new² + 2 Tau2).
	Tau2 float64
	// Error, when set, says why the study's results could not be read
	// into items at all (a field renamed, a file not the study's): the
	// item stands for the whole study and is inconsistent.
	Error string
	// HostFree is a host-dependent item on a scale where a host's overall
	// speed cancels, or nil when the study gives none. It is judged only
	// when StandIn is set (JudgeFlips' callers set it).
	HostFree *HostFree
	// StandIn asks Judge to judge a host-dependent item of runs on
	// unlike hosts on its HostFree scale, inside the family, instead of
	// leaving it not judged. The caller sets it only for the item of a
	// host-independent claim whose verdict changed (StandInsFor).
	StandIn bool
}

// HostFree is an item rescaled by a quantity each run measured on its own
// host: Ref.Est / RefDiv against New.Est / NewDiv.
//
// For an increase over a baseline the divisors are each run's own
// baseline, so a host that is uniformly k times faster leaves the value
// unchanged: 0.078 ms over a 1.20 ms baseline is 6.5 % on any host that
// runs the whole handshake at one speed. A host on which one primitive
// alone is faster is not cancelled; the cross-host prediction (CrossHost)
// is the model for that, and is preferred where it exists.
type HostFree struct {
	RefDiv, NewDiv float64
	// Unit names the rescaled unit, e.g. "fraction of the run's baseline".
	Unit string
}

// values returns the item's rescaled reference and new values, or false
// when a divisor is not a positive finite number.
func (h *HostFree) values(it Item) (Value, Value, bool) {
	ok := func(d float64) bool { return d > 0 && !math.IsInf(d, 0) }
	if h == nil || !ok(h.RefDiv) || !ok(h.NewDiv) {
		return Value{}, Value{}, false
	}
	scale := func(v Value, d float64) Value {
		return Value{Est: v.Est / d, SE: v.SE / d, DF: v.DF, Absent: v.Absent}
	}
	return scale(it.Ref, h.RefDiv), scale(it.New, h.NewDiv), true
}

// SEFromInterval is the standard error implied by a symmetric normal
// interval [lo, hi] at level.
//
// For example, 0.95 gives se = (hi - lo) / (2 · 1.96). The studies'
// results give 95 % intervals; the studies read those fields (whatever
// resampling made them) rather than recompute them.
func SEFromInterval(lo, hi, level float64) float64 {
	return (hi - lo) / (2 * zQuantile(1-(1-level)/2))
}

// Status is an item's verdict.
type Status int

const (
	Consistent Status = iota
	Inconsistent
	NotJudged
)

func (s Status) String() string {
	return [...]string{"consistent", "INCONSISTENT", "not judged"}[s]
}

// The reasons an item is not judged (Judged.Reason when Status is
// NotJudged); the overall line counts items by them.
const (
	ReasonHostDiffers    = "host differs"
	ReasonProfileDiffers = "profile differs"
	ReasonNotInReference = "not in the reference run"
	ReasonNotInNew       = "not in the new run"
	ReasonNull           = "null"
	ReasonNoSE           = "no standard error"
	ReasonNoDirection    = "no direction in the reference"
)

// Judged is an item with its verdict.
type Judged struct {
	Item
	Study string
	// Lo and Hi bound the prediction interval at Rule.Level (for Exact
	// items ref ± Tol); NaN when not computable.
	Lo, Hi float64
	// P is the item's p-value (NaN when not judged), PHolm after Holm's
	// adjustment over the comparison's judged items.
	P, PHolm float64
	// Inside reports whether the new estimate is inside [Lo, Hi].
	Inside bool
	Status Status
	// Reason is one of the Reason constants when not judged.
	Reason string
	// Why says in words how the verdict was reached.
	Why string
	// OnHostFree reports that a host-dependent item of runs on unlike
	// hosts was judged on its HostFree scale (Item.StandIn): Ref, New,
	// Lo and Hi are then in HostFree.Unit.
	OnHostFree bool
}

// Ratio is new / ref (NaN when either is missing or ref is 0).
func (j Judged) Ratio() float64 {
	if j.Ref.Est == 0 {
		return math.NaN()
	}
	return j.New.Est / j.Ref.Est
}

// Rule is how items are judged.
type Rule struct {
	// Level of the per-item prediction interval (default 0.95).
	Level float64
	// FamilyAlpha is the family-wise error rate Holm controls (default
	// 0.05).
	FamilyAlpha float64
}

// DefaultRule is a 95 % interval per item and a 5 % family-wise rate.
var DefaultRule = Rule{Level: 0.95, FamilyAlpha: 0.05}

func (r Rule) withDefaults() Rule {
	if r.Level == 0 {
		r.Level = DefaultRule.Level
	}
	if r.FamilyAlpha == 0 {
		r.FamilyAlpha = DefaultRule.FamilyAlpha
	}
	return r
}

// Z is the normal quantile of the interval: 1.96 at 95 %.
func (r Rule) Z() float64 { return zQuantile(1 - (1-r.withDefaults().Level)/2) }

// A Study is one study's items with what the two runs say about
// themselves.
type Study struct {
	Name  string
	Items []Item
	// RefProfile and NewProfile are the runs' profiles; items of runs of
	// different profiles are not judged.
	RefProfile, NewProfile string
	// HostsMatch says whether the runs' host fingerprints match
	// (Fingerprint.Differences is empty); HostNote says how they differ.
	HostsMatch bool
	HostNote   string
}

// A Report is the verdict of a comparison of every study.
type Report struct {
	Rule  Rule
	Items []Judged
}

// Judge judges every item of every study, with one Holm family over all
// judged items.
func Judge(rule Rule, studies ...Study) *Report {
	rule = rule.withDefaults()
	rep := &Report{Rule: rule}
	for _, s := range studies {
		for _, it := range s.Items {
			rep.Items = append(rep.Items, judgeOne(rule, s, it))
		}
	}
	rep.applyHolm()
	return rep
}

// judgeOne computes an item's interval and p-value, or why it is not
// judged.
func judgeOne(rule Rule, s Study, it Item) Judged {
	j := Judged{Item: it, Study: s.Name, Lo: math.NaN(), Hi: math.NaN(), P: math.NaN(), PHolm: math.NaN(), Status: NotJudged}
	notJudged := func(reason, why string) Judged {
		j.Reason, j.Why = reason, why
		return j
	}
	switch {
	case it.Error != "":
		j.Status, j.P, j.Why = Inconsistent, 0, it.Error
		return j
	case s.RefProfile != s.NewProfile:
		return notJudged(ReasonProfileDiffers, fmt.Sprintf("the new run is of the %s profile, the reference of the %s profile: never compared across profiles", s.NewProfile, s.RefProfile))
	case it.Ref.Absent:
		return notJudged(ReasonNotInReference, "the reference run's results have no such item")
	case it.New.Absent:
		return notJudged(ReasonNotInNew, "the new run's results have no such item")
	case math.IsNaN(it.Ref.Est) || math.IsNaN(it.New.Est):
		return notJudged(ReasonNull, "null in the "+which(math.IsNaN(it.Ref.Est), math.IsNaN(it.New.Est))+" results")
	}
	z := rule.Z()
	switch it.Kind {
	case Exact:
		j.Lo, j.Hi = it.Ref.Est-it.Tol, it.Ref.Est+it.Tol
	case Estimate, Direction:
		if math.IsNaN(it.Ref.SE) || math.IsNaN(it.New.SE) {
			return notJudged(ReasonNoSE, "no standard error in the "+which(math.IsNaN(it.Ref.SE), math.IsNaN(it.New.SE))+" results")
		}
		s := predictionSE(it)
		q := z
		if df := predictionDF(it); df > 0 {
			q = distuv.StudentsT{Mu: 0, Sigma: 1, Nu: df}.Quantile(1 - (1-rule.Level)/2)
		}
		j.Lo, j.Hi = it.Ref.Est-q*s, it.Ref.Est+q*s
	}
	j.Inside = it.New.Est >= j.Lo && it.New.Est <= j.Hi
	if it.Class == HostDependent && !s.HostsMatch && it.StandIn {
		if ref, now, ok := it.HostFree.values(it); ok {
			return judgeHostFree(rule, s, it, ref, now)
		}
	}
	if it.Class == HostDependent && !s.HostsMatch {
		note := "the hosts do not match"
		if s.HostNote != "" {
			note += " (" + s.HostNote + ")"
		}
		return notJudged(ReasonHostDiffers, fmt.Sprintf("%s: a time is a property of its host; ratio new/ref %.3g", note, j.Ratio()))
	}
	switch it.Kind {
	case Exact:
		j.P = 1
		if !j.Inside {
			j.P = 0
		}
	case Estimate:
		// Without any spread (a deterministic count, exact in both runs)
		// the estimates either agree or differ for sure: p is 1 or 0, never
		// the 0/0 that would poison the whole family's Holm ordering.
		if predictionSE(it) == 0 {
			j.P = 0
			if it.New.Est == it.Ref.Est {
				j.P = 1
			}
			break
		}
		t := (it.New.Est - it.Ref.Est) / predictionSE(it)
		j.P = twoSided(t)
		if df := predictionDF(it); df > 0 {
			j.P = 2 * distuv.StudentsT{Mu: 0, Sigma: 1, Nu: df}.Survival(math.Abs(t))
		}
	case Direction:
		if it.Ref.SE > 0 && math.Abs(it.Ref.Est/it.Ref.SE) <= z || it.Ref.Est == 0 {
			return notJudged(ReasonNoDirection, "the reference run's 95 % interval includes zero: no direction to reproduce")
		}
		j.P = oneSidedOpposite(it.Ref.Est, it.New.Est, it.New.SE)
		// A direction item's interval is the reference's side of zero.
		if it.Ref.Est > 0 {
			j.Lo, j.Hi = 0, math.Inf(1)
		} else {
			j.Lo, j.Hi = math.Inf(-1), 0
		}
		j.Inside = math.Signbit(it.New.Est) == math.Signbit(it.Ref.Est) || it.New.Est == 0
	}
	j.Status = Consistent
	return j
}

// judgeHostFree judges a stand-in item on its host-free values as a
// host-independent estimate, in the same family as every other item. Its
// between-run variance, measured in the item's unit on one host, is
// carried to the reference's scale (Tau2 / RefDiv²).
func judgeHostFree(rule Rule, s Study, it Item, ref, now Value) Judged {
	free := it
	free.Ref, free.New, free.Class, free.Kind = ref, now, HostIndependent, Estimate
	free.Unit = it.HostFree.Unit
	free.Tau2 = it.Tau2 / (it.HostFree.RefDiv * it.HostFree.RefDiv)
	free.StandIn, free.HostFree = false, nil
	s.HostsMatch = true
	j := judgeOne(rule, s, free)
	j.Item.StandIn, j.Item.HostFree, j.Item.Class = true, it.HostFree, it.Class
	j.OnHostFree = true
	return j
}

// predictionSE is the standard deviation of new - ref: sqrt(se_ref² +
// se_new²), plus 2 τ² for an Estimate item with a between-run variance
// (one between-run deviation in each run).
func predictionSE(it Item) float64 {
	v := it.Ref.SE*it.Ref.SE + it.New.SE*it.New.SE
	if it.Kind == Estimate && it.Tau2 > 0 {
		v += 2 * it.Tau2
	}
	return math.Sqrt(v)
}

// predictionDF is the Welch-Satterthwaite degrees of freedom of new -
// ref when both standard errors come from few units (Value.DF > 0):
//
//	df = (s_r² + s_n²)² / (s_r⁴/df_r + s_n⁴/df_n)
//
// (Satterthwaite 1946, Biometrics Bulletin 2(6); Welch 1947, Biometrika
// 34). The statistic (new - ref)/predictionSE is then referred to
// Student's t with df, not to the normal: with 10 rounds a standard error
// is itself uncertain and the normal's tails are too thin (the
// calibration by resampling the rounds measured 7 % false alarms at the
// quick profile with the normal). Zero, the normal, when either run has
// no DF or a between-run variance is added (whose own uncertainty is not
// modelled here).
func predictionDF(it Item) float64 {
	if it.Ref.DF <= 0 || it.New.DF <= 0 || it.Tau2 > 0 {
		return 0
	}
	a, b := it.Ref.SE*it.Ref.SE, it.New.SE*it.New.SE
	if a+b == 0 {
		return 0
	}
	return (a + b) * (a + b) / (a*a/it.Ref.DF + b*b/it.New.DF)
}

func which(ref, now bool) string {
	switch {
	case ref && now:
		return "reference and the new run's"
	case ref:
		return "reference run's"
	}
	return "new run's"
}

// applyHolm sets PHolm over the judged items and marks the rejected ones
// inconsistent.
func (r *Report) applyHolm() {
	var idx []int
	var ps []float64
	for i, j := range r.Items {
		if j.Status != NotJudged && j.Error == "" {
			idx = append(idx, i)
			ps = append(ps, j.P)
		}
	}
	adj := stats.Holm(ps)
	for k, i := range idx {
		j := &r.Items[i]
		j.PHolm = adj[k]
		switch {
		case j.Kind == Exact && j.Inside:
			j.Why = fmt.Sprintf("equal within %g", j.Tol)
		case j.Kind == Exact:
			j.Status, j.Why = Inconsistent, fmt.Sprintf("differs by %g, more than %g", math.Abs(j.New.Est-j.Ref.Est), j.Tol)
		case j.PHolm < r.Rule.FamilyAlpha:
			j.Status = Inconsistent
			j.Why = fmt.Sprintf("p %.2g, Holm-adjusted %.2g < %g", j.P, j.PHolm, r.Rule.FamilyAlpha)
			if j.Kind == Direction {
				j.Why = "the effect is significantly reversed: " + j.Why
			}
		case j.Inside:
			j.Why = "inside the interval"
		default:
			j.Why = fmt.Sprintf("outside the per-item interval (p %.2g) but not rejected by Holm over %d items (adjusted %.2g)", j.P, len(idx), j.PHolm)
		}
		if j.OnHostFree {
			j.Why = "judged as a " + j.HostFree.Unit + " (the hosts differ; a claim resting on it changed its verdict): " + j.Why
		}
	}
}

// twoSided is 2 (1 - Φ(|z|)).
func twoSided(z float64) float64 { return math.Erfc(math.Abs(z) / math.Sqrt2) }

// oneSidedOpposite is the p-value of the new estimate under the
// hypothesis that the effect keeps the reference's sign: Φ(sign(ref) ·
// new / se_new). With se_new 0 it is 0 for an opposite sign, else 1.
func oneSidedOpposite(ref, now, se float64) float64 {
	sgn := 1.0
	if ref < 0 {
		sgn = -1
	}
	if se == 0 {
		if sgn*now < 0 {
			return 0
		}
		return 1
	}
	return 0.5 * math.Erfc(-sgn*now/se/math.Sqrt2)
}

// zQuantile is Φ⁻¹(p).
func zQuantile(p float64) float64 { return math.Sqrt2 * math.Erfinv(2*p-1) }

// Pairs matches a study's reference and new elements by key and calls f
// for each.
//
// It calls f in ref's order then for the elements only now has, with nil
// for the side that lacks one: a study's items list what either run has,
// so that nothing is skipped silently.
func Pairs[T any](ref, now []T, key func(T) string, f func(name string, r, n *T)) {
	seen := map[string]bool{}
	for i := range ref {
		k := key(ref[i])
		seen[k] = true
		var n *T
		for j := range now {
			if key(now[j]) == k {
				n = &now[j]
				break
			}
		}
		f(k, &ref[i], n)
	}
	for j := range now {
		if k := key(now[j]); !seen[k] {
			f(k, nil, &now[j])
		}
	}
}
