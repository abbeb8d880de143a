package netstudy

import (
	"fmt"
	"strings"

	"pqrepro/internal/render"
)

// directionPhrase says, in generated words, in how many of the run's
// comparisons the hybrid is slower and larger, naming every exception.
//
// Claim B1 asks for the hybrid's median Ths to be higher in every
// (scenario, round) comparison of the primary toolchain, and B2 the same of
// its bytes; the paper's discussion and conclusion quote this phrase
// instead of a hand-written "in every comparison", which went stale when
// a run had one exception. Each exception is named by scenario and round
// with its difference in ms (target minus baseline median), so a reader
// sees how far from zero it is.
func directionPhrase(cs []Comparison) string {
	n := len(cs)
	if n == 0 {
		return "not compared (the run holds no comparison)"
	}
	var slowerNot, largerNot []string
	for _, c := range cs {
		where := fmt.Sprintf("%s, round %s", render.Escape(c.Scenario), intTeX(c.Round))
		if !c.HigherLatency {
			slowerNot = append(slowerNot, fmt.Sprintf("%s: %s~ms", where, signed(c.DiffMs, 3)))
		}
		if !c.HigherBytes {
			largerNot = append(largerNot, where)
		}
	}
	if len(slowerNot) == 0 && len(largerNot) == 0 {
		return fmt.Sprintf("slower and larger in every one of the %d comparisons", n)
	}
	part := func(word string, not []string) string {
		if len(not) == 0 {
			return fmt.Sprintf("%s in all %d comparisons", word, n)
		}
		return fmt.Sprintf("%s in %d of the %d comparisons (not in %s)", word, n-len(not), n, strings.Join(not, "; "))
	}
	return part("slower", slowerNot) + " and " + part("larger", largerNot)
}
