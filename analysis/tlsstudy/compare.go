package tlsstudy

import (
	"fmt"
	"math"
	"strings"

	"pqrepro/analysis/agreement"
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

func comparisonItems(prefix string, ref, now []Comparison) []agreement.Item {
	var items []agreement.Item
	agreement.Pairs(ref, now, key, func(name string, r, n *Comparison) {
		rv, nv := diffValue(r), diffValue(n)
		items = append(items,
			agreement.Item{Name: prefix + name + " vs baseline difference", Unit: "ms", Class: agreement.HostDependent, Kind: agreement.Estimate, Ref: rv, New: nv},
			agreement.Item{Name: prefix + name + " vs baseline direction", Unit: "ms", Class: agreement.HostIndependent, Kind: agreement.Direction, Ref: rv, New: nv})
	})
	return items
}

// diffValue is a comparison's round-level increase (the median of the
// per-round paired differences, rounds.go) and its standard error, the
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
		name := "paper " + role + " vs baseline difference"
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
