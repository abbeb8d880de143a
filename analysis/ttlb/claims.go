package ttlb

import (
	"fmt"
	"math"
	"slices"

	"pqrepro/analysis/claims"
)

// Source cites the study whose statements the transfer block judges:
// our extension of Study B (issue 34), not the original's claims.
const Source = "P. Kampanakis and W. Childs-Klein, \"The impact of data-heavy, post-quantum TLS 1.3 on the Time-To-Last-Byte of real-world connections\", IACR ePrint 2024/176 and MADweb 2024 (abstract)"

// Claim is one of Kampanakis and Childs-Klein's statements, taken as a
// claim of ours on Study B's transfer block. It is quoted, with the rule
// that judges it on our results.
//
// These are our extension claims. They are not in netstudy.Claims() (the
// original's catalogue), so the claim counts of the paper's abstract do
// not change, and their verdicts are ours alone: the rules below were
// written and committed before any run with a transfer block existed
// (their commit is their registration; docs/studies.md). Their setting is
// not ours: they measured ML-KEM with ML-DSA (about 10 kB more in the
// handshake), on their own links; we measure X25519MLKEM768 against
// X25519 (about 2.3 kB more) on Study B's three links. Each rule says
// which of our scenarios stands for theirs and why.
type Claim struct {
	ID        string         `json:"id"`
	Quote     string         `json:"quote"`
	Scenario  string         `json:"scenario"` // ours, standing for theirs
	Rule      string         `json:"rule"`
	Verdict   claims.Verdict `json:"verdict"`
	Reason    string         `json:"reason"`
	judgeFunc func(t *Results) claims.Outcome
}

// The extension's verdicts beyond claims.Reproduced and
// claims.NotReproduced, which it shares with the engine.
//
// The engine has neither word: its NotMeasurable reads "not measurable
// here", and it has no inconclusive. Issue 41 reconciles them; until
// then these keep results/net-ttlb.json and the paper as they are.
const (
	Inconclusive claims.Verdict = "inconclusive"
	NotMeasured  claims.Verdict = "not measured"
)

// extClaims are the rules, registered before any run that judges them.
//
//   - K1, "high-bandwidth, stable": our lan (1 Gbit/s, no loss, no
//     jitter). Reproduced when at every listed size of 200 KiB or more the
//     upper end of the 95 % interval of the relative TTLB increase is
//     below 5 %; not reproduced when a point estimate there is 5 % or
//     more; else inconclusive.
//   - K2, "low-bandwidth, stable", 50 KiB or more: none of our links is
//     both (wan has 50 Mbit/s and 0.1 % loss, far 10 Mbit/s and 1 %); wan
//     stands for it as the stabler of the two. Reproduced when at every
//     size of 50 KiB or more the interval's upper end is below 15 % and
//     the relative increase at 50 KiB is below the handshake's relative
//     increase on the same connections; not reproduced when a point
//     estimate there is 15 % or more, or the TTLB increase at 50 KiB is
//     not below the handshake's; else inconclusive.
//   - K3, "the additional slowdown drops below 10 % as the connection
//     data increases to 200KiB": every scenario. Reproduced when at 200
//     KiB the interval's upper end is below 10 % in every scenario; not
//     reproduced when a point estimate at 200 KiB is 10 % or more in one;
//     else inconclusive.
//   - K4, "lossy or volatile network conditions could see higher
//     impact": far (1 % loss) against lan and wan. Reproduced when far's
//     relative increase at 200 KiB exceeds both others' by more than the
//     width of far's interval's lower half (its lower end above both
//     point estimates); not reproduced when far's upper end is below both
//     others' point estimates; else inconclusive.
//
// A rule whose scenario or size the run lacks, or whose cells have no
// interval, is not measured, with the reason.
func extClaims() []Claim {
	return []Claim{
		{ID: "K1", Scenario: "lan",
			Quote:     "The time-to-last-byte increase stays below 5% for high-bandwidth, stable networks.",
			Rule:      "lan: at every size >= 200 KiB the 95 % interval of the relative TTLB increase lies below 5 %",
			judgeFunc: func(t *Results) claims.Outcome { return below(t, "lan", 204800, 5) }},
		{ID: "K2", Scenario: "wan",
			Quote: "It goes from 32% increase of the handshake time to under 15% increase of the time-to-last-byte when transferring 50KiB of data or more under low-bandwidth, stable network conditions.",
			Rule:  "wan (the stabler of our two slower links): at every size >= 50 KiB the interval lies below 15 %, and at 50 KiB the TTLB increase is below the handshake's on the same connections",
			judgeFunc: func(t *Results) claims.Outcome {
				o := below(t, "wan", 51200, 15)
				if o.Verdict == NotMeasured || o.Verdict == claims.NotReproduced {
					return o
				}
				c := t.cell("wan", 51200)
				if c == nil {
					return claims.Outcome{Verdict: NotMeasured, Reason: "wan at 50 KiB not in the run"}
				}
				if !(float64(c.RelPct) < float64(c.HsRelPct)) {
					return claims.Outcome{Verdict: claims.NotReproduced, Reason: fmt.Sprintf("at 50 KiB the TTLB increase %.1f %% is not below the handshake's %.1f %%", float64(c.RelPct), float64(c.HsRelPct))}
				}
				return o
			}},
		{ID: "K3", Scenario: "all",
			Quote: "Even when congestion control affects connection establishment, the additional slowdown drops below 10% as the connection data increases to 200KiB.",
			Rule:  "every scenario: at 200 KiB the interval of the relative TTLB increase lies below 10 %",
			judgeFunc: func(t *Results) claims.Outcome {
				verdict, reasons := claims.Reproduced, ""
				for _, sc := range t.Scenarios {
					o := atSize(t, sc, 204800, 10)
					switch {
					case o.Verdict == NotMeasured || o.Verdict == claims.NotReproduced:
						return claims.Outcome{Verdict: o.Verdict, Reason: sc + ": " + o.Reason}
					case o.Verdict == Inconclusive:
						verdict, reasons = Inconclusive, sc+": "+o.Reason
					}
				}
				if len(t.Scenarios) == 0 {
					return claims.Outcome{Verdict: NotMeasured, Reason: "no scenario"}
				}
				return claims.Outcome{Verdict: verdict, Reason: reasons}
			}},
		{ID: "K4", Scenario: "far",
			Quote: "We also show that connections under lossy or volatile network conditions could see higher impact from post-quantum handshakes",
			Rule:  "far (1 % loss): at 200 KiB the lower end of its interval lies above lan's and wan's relative increases",
			judgeFunc: func(t *Results) claims.Outcome {
				f := t.cell("far", 204800)
				if f == nil || math.IsNaN(float64(f.RelLowerPct)) {
					return claims.Outcome{Verdict: NotMeasured, Reason: "far at 200 KiB: no interval"}
				}
				var others []float64
				for _, sc := range []string{"lan", "wan"} {
					c := t.cell(sc, 204800)
					if c == nil || math.IsNaN(float64(c.RelPct)) {
						return claims.Outcome{Verdict: NotMeasured, Reason: sc + " at 200 KiB not measured"}
					}
					others = append(others, float64(c.RelPct))
				}
				hi := slices.Max(others)
				switch {
				case float64(f.RelLowerPct) > hi:
					return claims.Outcome{Verdict: claims.Reproduced, Reason: fmt.Sprintf("far's interval [%.1f, %.1f] %% lies above %.1f %%", float64(f.RelLowerPct), float64(f.RelUpperPct), hi)}
				case float64(f.RelUpperPct) < slices.Min(others):
					return claims.Outcome{Verdict: claims.NotReproduced, Reason: fmt.Sprintf("far's interval [%.1f, %.1f] %% lies below the others", float64(f.RelLowerPct), float64(f.RelUpperPct))}
				}
				return claims.Outcome{Verdict: Inconclusive, Reason: fmt.Sprintf("far's interval [%.1f, %.1f] %% overlaps %.1f %%", float64(f.RelLowerPct), float64(f.RelUpperPct), hi)}
			}},
	}
}

// below judges "the relative increase lies below bound % at every size
// >= from" in scenario sc.
func below(t *Results, sc string, from int, bound float64) claims.Outcome {
	verdict, reason, n := claims.Reproduced, "", 0
	for _, c := range t.Cells {
		if c.Scenario != sc || c.SizeBytes < from {
			continue
		}
		n++
		o := atSize(t, sc, c.SizeBytes, bound)
		switch o.Verdict {
		case NotMeasured, claims.NotReproduced:
			return o
		case Inconclusive:
			verdict, reason = o.Verdict, o.Reason
		}
	}
	if n == 0 {
		return claims.Outcome{Verdict: NotMeasured, Reason: fmt.Sprintf("%s has no size >= %d bytes", sc, from)}
	}
	if verdict == claims.Reproduced {
		reason = fmt.Sprintf("%d sizes >= %d bytes, each interval below %g %%", n, from, bound)
	}
	return claims.Outcome{Verdict: verdict, Reason: reason}
}

// atSize judges "the relative increase lies below bound %" in one cell.
func atSize(t *Results, sc string, size int, bound float64) claims.Outcome {
	c := t.cell(sc, size)
	switch {
	case c == nil:
		return claims.Outcome{Verdict: NotMeasured, Reason: fmt.Sprintf("%s at %d bytes not in the run", sc, size)}
	case math.IsNaN(float64(c.RelUpperPct)):
		return claims.Outcome{Verdict: NotMeasured, Reason: fmt.Sprintf("%s at %d bytes: no interval (%s)", sc, size, c.Note)}
	case float64(c.RelPct) >= bound:
		return claims.Outcome{Verdict: claims.NotReproduced, Reason: fmt.Sprintf("%s at %d bytes: %.1f %% >= %g %%", sc, size, float64(c.RelPct), bound)}
	case float64(c.RelUpperPct) >= bound:
		return claims.Outcome{Verdict: Inconclusive, Reason: fmt.Sprintf("%s at %d bytes: %.1f %%, interval up to %.1f %%", sc, size, float64(c.RelPct), float64(c.RelUpperPct))}
	}
	return claims.Outcome{Verdict: claims.Reproduced, Reason: ""}
}

// judgeExt judges every extension claim on t; a run without the transfer
// block judges none (not measured).
func judgeExt(t *Results) []Claim {
	out := extClaims()
	for i := range out {
		c := &out[i]
		if !t.Measured {
			c.Verdict, c.Reason = NotMeasured, NotMeasuredPinned
			continue
		}
		o := c.judgeFunc(t)
		c.Verdict, c.Reason = o.Verdict, o.Reason
	}
	return out
}
