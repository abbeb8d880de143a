package netstudy

import (
	"fmt"
	"math"

	"pqrepro/analysis/agreement"
)

// BytesTol is how far a comparison's median TCP payload bytes per
// connection may move between two runs. The key shares and the
// certificate are fixed by the configuration; an ECDSA signature's DER
// encoding varies by a few bytes (SEC 1 section 4.1.3).
const BytesTol = 8

// CompareItems lists Study B's items for `mage all`, read from both runs'
// results/net.json:
//
//   - per comparison (scenario, round): the median latency difference in
//     ms (host-dependent estimate) and its direction (host-independent),
//     with se = (hi - lo) / (2 · 1.96) from the comparison's 95 % interval
//     [diff_lower_ms, diff_upper_ms] (read as the results give it, by
//     whatever resampling of the series made it); the median TCP payload
//     bytes per connection of both groups (host-independent, exact within
//     BytesTol);
//   - per series (scenario, round, group): its attempts (exact: the
//     design fixes them) and its failed handshakes (host-independent, a
//     count under the link's seeded loss: se = sqrt(max(failed, 1)),
//     the Poisson approximation).
//
// An item the other run lacks is listed with agreement.Absent.
func CompareItems(ref, now *Results) []agreement.Item {
	var items []agreement.Item
	key := func(c Comparison) string { return fmt.Sprintf("%s round %d", c.Scenario, c.Round) }
	agreement.Pairs(ref.Comparisons, now.Comparisons, key, func(name string, r, n *Comparison) {
		diff := func(c *Comparison) agreement.Value {
			if c == nil {
				return agreement.Absent
			}
			return agreement.V(float64(c.DiffMs), agreement.SEFromInterval(float64(c.DiffLowerMs), float64(c.DiffUpperMs), 0.95))
		}
		bytes := func(c *Comparison, target bool) agreement.Value {
			switch {
			case c == nil:
				return agreement.Absent
			case target:
				return agreement.V(float64(c.TargetPayload), 0)
			}
			return agreement.V(float64(c.BasePayload), 0)
		}
		items = append(items,
			agreement.Item{Name: name + " difference", Unit: "ms", Class: agreement.HostDependent, Kind: agreement.Estimate, Ref: diff(r), New: diff(n)},
			agreement.Item{Name: name + " direction", Unit: "ms", Class: agreement.HostIndependent, Kind: agreement.Direction, Ref: diff(r), New: diff(n)},
			agreement.Item{Name: name + " X25519 payload bytes", Unit: "bytes", Class: agreement.HostIndependent, Kind: agreement.Exact, Tol: BytesTol, Ref: bytes(r, false), New: bytes(n, false)},
			agreement.Item{Name: name + " hybrid payload bytes", Unit: "bytes", Class: agreement.HostIndependent, Kind: agreement.Exact, Tol: BytesTol, Ref: bytes(r, true), New: bytes(n, true)})
	})
	skey := func(s Series) string { return fmt.Sprintf("%s round %d %s", s.Scenario, s.Round, s.Group) }
	agreement.Pairs(ref.Series, now.Series, skey, func(name string, r, n *Series) {
		count := func(s *Series, failed bool) agreement.Value {
			switch {
			case s == nil:
				return agreement.Absent
			case failed:
				return agreement.V(float64(s.Failed), math.Sqrt(math.Max(float64(s.Failed), 1)))
			}
			return agreement.V(float64(s.Attempts), 0)
		}
		items = append(items,
			agreement.Item{Name: "series " + name + " attempts", Class: agreement.HostIndependent, Kind: agreement.Exact, Ref: count(r, false), New: count(n, false)},
			agreement.Item{Name: "series " + name + " failed handshakes", Class: agreement.HostIndependent, Kind: agreement.Estimate, Ref: count(r, true), New: count(n, true)})
	})
	return items
}
