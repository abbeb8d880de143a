package tlsstudy

import (
	"errors"
	"fmt"
	"math"
	"strings"

	"pqrepro/analysis/agreement"
	"pqrepro/analysis/stats"
	"pqrepro/analysis/tlscompare"
)

// BytesTol is how far a configuration's median TCP payload bytes per
// connection may move between two runs. That is, the certificate chain
// and the key shares are fixed by the configuration, but an ECDSA
// signature's DER encoding varies by a few bytes with the signature's
// value (RFC 8446 section 4.4.3; SEC 1 section 4.1.3).
const BytesTol = 8

// CompareItems lists Study A's items for `mage all`, read from both runs'
// results/tls.json:
//
//   - per comparison of the matrix family, of the paper family and of
//     every cell of the gap analysis: the median difference in ms
//     (host-dependent estimate) and its direction (host-independent):
//     the round-level increase rounds.increase_ms with the standard
//     error rounds.se of its cluster bootstrap over rounds (the fields
//     are read, not recomputed);
//   - per factor change of the gap analysis: its direction, from the
//     interval [lower, upper];
//   - per configuration: the median TCP payload bytes per connection
//     (host-independent, exact within BytesTol).
//
// An item the other run lacks is listed with agreement.Absent, never
// dropped.
func CompareItems(ref, now *Results) []agreement.Item {
	var items []agreement.Item
	for _, fam := range []string{"paper", "matrix"} {
		items = append(items, comparisonItems(fam+" ", familyComparisons(ref, fam), familyComparisons(now, fam))...)
	}
	items = append(items, bytesItems(ref, now)...)
	if ref.Gap != nil || now.Gap != nil {
		rg, ng := ref.Gap, now.Gap
		if rg == nil {
			rg = &Gap{}
		}
		if ng == nil {
			ng = &Gap{}
		}
		items = append(items, gapItems(rg, ng)...)
	}
	return items
}

func familyComparisons(r *Results, fam string) []Comparison {
	if f := r.Families[fam]; f != nil {
		return f.Comparisons
	}
	return nil
}

// key names a comparison within its family: the role in the paper
// family (as the claims name their items), the target elsewhere.
func key(c Comparison) string {
	if c.Role != "" {
		return c.Role
	}
	return c.Target
}

// PaperDifferenceItem names the item of the paper family's increase of a
// role (pq-sig, pq-kem, hybrid) over the baseline. Claims A1a-A3c rest on
// that item, and the cross-host prediction normalises it.
func PaperDifferenceItem(role string) string { return "paper " + role + " vs baseline difference" }

func comparisonItems(prefix string, ref, now []Comparison) []agreement.Item {
	var items []agreement.Item
	agreement.Pairs(ref, now, key, func(name string, r, n *Comparison) {
		rv, nv := diffValue(r), diffValue(n)
		items = append(items,
			agreement.Item{Name: prefix + name + " vs baseline difference", Unit: "ms", Class: agreement.HostDependent, Kind: agreement.Estimate, Ref: rv, New: nv,
				HostFree: hostFree(r, n)},
			agreement.Item{Name: prefix + name + " vs baseline direction", Unit: "ms", Class: agreement.HostIndependent, Kind: agreement.Direction, Ref: rv, New: nv})
	})
	return items
}

// diffValue is a comparison's round-level increase (the median of the
// per-round paired differences, analysis/tlscompare) and its standard error, the
// standard deviation of its cluster-bootstrap replicates over rounds
// (Rounds.SE): the study's own inference. The handshake-level median
// difference and its bootstrap (bootstrap_median_diff_ms) treat the
// serially dependent handshakes as independent and give an interval
// about half as wide; judging a replication by it flags the between-round
// drift that the rounds exist to absorb.
func diffValue(c *Comparison) agreement.Value {
	if c == nil {
		return agreement.Absent
	}
	v := agreement.V(float64(c.Rounds.IncreaseMs), float64(c.Rounds.SE))
	// Its standard error rests on the rounds: NEff - 1 degrees of
	// freedom (agreement.Value.DF), so the comparison refers the
	// difference to Student's t, not the normal.
	if c.Rounds.NEff > 1 {
		v.DF = float64(c.Rounds.NEff - 1)
	}
	return v
}

// hostFree rescales a difference by each run's own baseline (the median
// of the baseline's block medians over the paired rounds, rounds.baseline_ms):
// the increase as a fraction of the baseline, on which a host's overall
// speed cancels (agreement.HostFree). Nil when either run lacks the
// comparison.
func hostFree(r, n *Comparison) *agreement.HostFree {
	if r == nil || n == nil {
		return nil
	}
	return &agreement.HostFree{RefDiv: float64(r.Rounds.BaselineMs), NewDiv: float64(n.Rounds.BaselineMs), Unit: "fraction of the run's own baseline"}
}

func seOf(lo, hi, level Num) float64 {
	l := float64(level)
	if l == 0 || math.IsNaN(l) {
		l = 0.95
	}
	return agreement.SEFromInterval(float64(lo), float64(hi), l)
}

func bytesItems(ref, now *Results) []agreement.Item {
	var items []agreement.Item
	agreement.Pairs(ref.Configs, now.Configs, func(c ConfigResult) string { return c.Config }, func(name string, r, n *ConfigResult) {
		v := func(c *ConfigResult) agreement.Value {
			if c == nil {
				return agreement.Absent
			}
			return agreement.V(float64(c.Bytes.TCPPayload.Total), 0)
		}
		items = append(items, agreement.Item{Name: name + " TCP payload bytes", Unit: "bytes", Class: agreement.HostIndependent, Kind: agreement.Exact, Tol: BytesTol, Ref: v(r), New: v(n)})
	})
	return items
}

func gapItems(ref, now *Gap) []agreement.Item {
	var items []agreement.Item
	agreement.Pairs(ref.Cells, now.Cells, func(c CellResult) string { return c.Cell.String() }, func(name string, r, n *CellResult) {
		var rc, nc []Comparison
		if r != nil {
			rc = r.Comparisons
		}
		if n != nil {
			nc = n.Comparisons
		}
		items = append(items, comparisonItems("cell "+name+" ", rc, nc)...)
	})
	agreement.Pairs(ref.Factors, now.Factors, func(f FactorResult) string { return f.Factor + " " + f.From + " -> " + f.To }, func(name string, r, n *FactorResult) {
		var re, ne []FactorEffect
		if r != nil {
			re = r.Effects
		}
		if n != nil {
			ne = n.Effects
		}
		agreement.Pairs(re, ne, func(e FactorEffect) string { return fmt.Sprintf("%s %s -> %s", e.Role, e.From, e.To) }, func(en string, r, n *FactorEffect) {
			v := func(e *FactorEffect) agreement.Value {
				if e == nil {
					return agreement.Absent
				}
				return agreement.V(float64(e.ChangeMs), seOf(e.Lower, e.Upper, 0.95))
			}
			items = append(items, agreement.Item{Name: "factor " + name + " " + en + " change direction", Unit: "ms", Class: agreement.HostIndependent, Kind: agreement.Direction, Ref: v(r), New: v(n)})
		})
	})
	return items
}

// CalibrationChanges are the known changes the calibration injects into
// Study A's pseudo-replicates. That is, every ML-KEM-1024 handshake
// slower by size (+50 % at the goal), which moves every difference of a
// target using ML-KEM-1024 by size times its median; and each of two
// effects a claim rests on reversed, ML-DSA-87's and the hybrid's increase
// in the paper family: the difference d becomes d (1 - 2 size), so that
// size 1 is -d (fully reversed) and 0.5 no effect at all. (Reversing an
// effect near zero, as the matrix family's first comparison is, would
// test nothing: its reversal is detected as often as a false alarm.)
func CalibrationChanges(ref *Results) []agreement.Change {
	// The item names' prefixes of every comparison whose target uses
	// ML-KEM-1024, with the target's median.
	medians := map[string]float64{}
	add := func(prefix string, cs []Comparison) {
		for _, c := range cs {
			if strings.Contains(strings.ToUpper(c.Target), "MLKEM1024") {
				medians[prefix+key(c)+" vs baseline"] = float64(c.MedianTargetMs)
			}
		}
	}
	for _, fam := range []string{"paper", "matrix"} {
		add(fam+" ", familyComparisons(ref, fam))
	}
	if ref.Gap != nil {
		for _, cell := range ref.Gap.Cells {
			add("cell "+cell.Cell.String()+" ", cell.Comparisons)
		}
	}
	slower := func(study string, items []agreement.Item, size float64) bool {
		if study != "tls" {
			return false
		}
		hit := false
		for i := range items {
			name, _, ok := strings.Cut(items[i].Name, " difference")
			if !ok {
				name, _, ok = strings.Cut(items[i].Name, " direction")
			}
			if m, known := medians[name]; ok && known {
				items[i].New.Est += size * m
				hit = true
			}
		}
		return hit
	}
	// reverse turns the paper family's increase of one role around: its
	// difference d becomes d (1 - 2 size), and the direction item after it
	// follows.
	reverse := func(role string) func(string, []agreement.Item, float64) bool {
		name := PaperDifferenceItem(role)
		return func(study string, items []agreement.Item, size float64) bool {
			if study != "tls" {
				return false
			}
			for i := range items {
				if items[i].Name == name {
					items[i].New.Est *= 1 - 2*size // size 1: -d; 0.5: no effect
					if i+1 < len(items) && items[i+1].Kind == agreement.Direction {
						items[i+1].New.Est = items[i].New.Est
					}
					return true
				}
			}
			return false
		}
	}
	return []agreement.Change{
		{Name: "every ML-KEM-1024 handshake slower (Study A)", Size: 0.5, Apply: slower},
		{Name: "ML-DSA-87's increase reversed (Study A, claims A1a-A1c; 100 % = fully reversed)", Size: 1, Apply: reverse("pq-sig")},
		{Name: "the hybrid's increase reversed (Study A, claims A3a-A3c; 100 % = fully reversed)", Size: 1, Apply: reverse("hybrid")},
	}
}

// PlantIncrease makes one role's configuration truly slower by ms in every
// round of the paper family, re-deriving what its claims and items read.
//
// Each paired round difference d_r becomes d_r + ms; the round-level
// increase, its percentile interval and the baseline's share follow (a
// shift moves a median and a percentile by the shift, and the bootstrap's
// standard error not at all); the signed-rank test is recomputed on the
// shifted differences and Holm and Bonferroni over the family's tests
// again. The handshake-level columns (medians, Mann-Whitney, Cliff's
// delta) are descriptive and left as they are. It is the known change
// against which the calibration of claim flips measures its power
// (pipeline/flipcal.go), and the "truly larger" run of the regression
// test of a flip across hosts.
func PlantIncrease(r *Results, role string, ms float64) error {
	if math.IsNaN(ms) || math.IsInf(ms, 0) {
		return fmt.Errorf("plant an increase of %v ms: want a finite number", ms)
	}
	f, c, err := paperRole(r, role)
	if err != nil {
		return fmt.Errorf("plant an increase in %s: %w", role, err)
	}
	rc := &c.Rounds
	var d []float64
	for i, x := range rc.DiffsMs {
		if !math.IsNaN(float64(x)) {
			rc.DiffsMs[i] = x + Num(ms)
			d = append(d, float64(x)+ms)
		}
	}
	if len(d) == 0 {
		return fmt.Errorf("plant an increase in %s: no round has a paired difference", role)
	}
	rc.IncreaseMs += Num(ms)
	rc.Lower += Num(ms)
	rc.Upper += Num(ms)
	if rc.BaselineMs > 0 {
		rc.IncreasePct = 100 * rc.IncreaseMs / rc.BaselineMs
	}
	c.MedianDiffMs += Num(ms)
	c.MedianTargetMs += Num(ms)
	if err := rederive(f, c, d); err != nil {
		return fmt.Errorf("plant an increase in %s: %w", role, err)
	}
	return nil
}

// ReplaceRounds gives one role's paper comparison the per-round
// differences diffs over a baseline of baselineMs in every round. It
// derives its round-level comparison as the analysis does (the median,
// the cluster bootstrap over rounds with Params' seed, the signed-rank
// test) and Holm over the family. It builds the runs of a test from a
// run's published figures, as the regression test of a flip across hosts
// does.
func ReplaceRounds(r *Results, role string, baselineMs float64, diffs []float64) error {
	f, c, err := paperRole(r, role)
	if err != nil {
		return fmt.Errorf("replace the rounds of %s: %w", role, err)
	}
	base, target := make([]float64, len(diffs)), make([]float64, len(diffs))
	for i, d := range diffs {
		base[i], target[i] = baselineMs, baselineMs+d
	}
	rc, err := tlscompare.CompareRounds(base, target, stats.ClusterConfig{Seed: DefaultParams(r.Profile).BootstrapSeed, Resamples: DefaultResamples, Level: Level})
	if err != nil {
		return fmt.Errorf("replace the rounds of %s: %w", role, err)
	}
	c.Rounds = rc
	return holmOver(f)
}

// rederive re-tests a comparison's shifted differences d and adjusts the
// family again.
func rederive(f *Family, c *Comparison, d []float64) error {
	rc := &c.Rounds
	sr, err := stats.WilcoxonSignedRank(d)
	switch {
	case errors.Is(err, stats.ErrAllZero):
		rc.SignedRank = tlscompare.SignedRank{WPlus: Num(math.NaN()), Z: Num(math.NaN()), P: Num(math.NaN())}
	case err != nil:
		return fmt.Errorf("signed-rank: %w", err)
	default:
		rc.SignedRank = tlscompare.SignedRank{N: sr.N, WPlus: Num(sr.WPlus), Z: Num(sr.Z), P: Num(sr.P), Method: string(sr.Method)}
	}
	return holmOver(f)
}

// holmOver adjusts the family's round-level signed-rank p-values again,
// as the analysis does (holmFinite).
func holmOver(f *Family) error {
	ps := make([]float64, len(f.Comparisons))
	for i := range f.Comparisons {
		ps[i] = float64(f.Comparisons[i].Rounds.SignedRank.P)
	}
	holm, bonf := tlscompare.HolmFinite(ps)
	for i := range f.Comparisons {
		f.Comparisons[i].PHolm, f.Comparisons[i].PBonferroni = Num(holm[i]), Num(bonf[i])
	}
	return nil
}

// paperRole is the paper family and its comparison of role.
func paperRole(r *Results, role string) (*Family, *Comparison, error) {
	f, err := paperFamily(r)
	if err != nil {
		return nil, nil, err
	}
	for i := range f.Comparisons {
		if f.Comparisons[i].Role == role {
			return f, &f.Comparisons[i], nil
		}
	}
	return nil, nil, fmt.Errorf("the paper family has no comparison of role %q", role)
}
