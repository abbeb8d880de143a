package ttlb

import (
	"fmt"
	"math"
	"strings"

	"pqrepro/analysis/claims"
	"pqrepro/analysis/netstudy"
	"pqrepro/analysis/stats"
	"pqrepro/internal/jsonnum"
)

// Source cites the study whose statements the transfer block judges:
// our extension of Study B (issue 34), not the original's claims.
const Source = "P. Kampanakis and W. Childs-Klein, \"The impact of data-heavy, post-quantum TLS 1.3 on the Time-To-Last-Byte of real-world connections\", IACR ePrint 2024/176 and MADweb 2024 (abstract)"

// Study is the claims' study name for analysis/claims: their results are
// results/net-ttlb.json (ResultsFile), so the engine's messages name that file.
const Study = "net-ttlb"

// Claim is one of Kampanakis and Childs-Klein's statements as our claim
// on Study B's transfer block, as results/net-ttlb.json records it.
//
// These are our extension claims. They are in no study's catalogue of
// the claims stage (netstudy.Claims() is the original's), so the claim
// counts of the paper's abstract do not change, and their verdicts are
// ours alone. They are judged by analysis/claims (Catalogue, judge) with
// its verdict words only. Their setting is not ours: they measured
// ML-KEM with ML-DSA (about 10 kB more in the handshake), on their own
// links; we measure X25519MLKEM768 against X25519 (about 2.3 kB more) on
// Study B's three links. Each rule says which of our scenarios stands
// for theirs and why.
type Claim struct {
	ID       string         `json:"id"`
	Quote    string         `json:"quote"`
	Scenario string         `json:"scenario"` // ours, standing for theirs
	Rule     string         `json:"rule"`
	Ours     string         `json:"ours"`
	Verdict  claims.Verdict `json:"verdict"`
	Reason   string         `json:"reason"`
}

// Sizes the rules read, in bytes.
const (
	kib50  = 51200
	kib200 = 204800
)

// rule is one statement with its rule, before judging.
type rule struct {
	id, scenario, quote, published, measures, agreement, rationale string
	eval                                                           func(t *Results) claims.Outcome
}

// rules are K1-K4, re-registered before the controlled run (issue 41).
//
// Every interval is the cell's 95 % t interval over its replicates (the
// series pairs: Cell). The convention for an interval against a bound is
// the engine's (netstudy's B3, judgeSmallestScenario): agreement must be
// shown, not merely not excluded, so an interval that straddles the
// bound is not reproduced ("agreement not shown"), as is one on the
// wrong side. A statement that the increase stays below b % is shown
// when the interval's upper end is below b and not below 0: an interval
// wholly below 0 says the hybrid finished sooner, which no larger
// handshake can cause, so the cell measures the design's order or drift
// and cannot stand for the statement (not reproduced, the reason saying
// so with the estimate and the interval). "The slowdown drops as data
// grows" is made testable by what our links can move: the TTLB's
// relative increase must lie below the same block's handshake-only one
// (size 0: the block's own when the run has it, else the rounds'), shown
// by the t interval over the replicates of their paired difference
// (handshake-only minus TTLB, per toolchain) lying above 0. That part
// can fail even where the hybrid adds only about 2.3 kB and the absolute
// bounds (15 %, 10 %) are far above the handshake's own increase.
//
//   - K1, "high-bandwidth, stable": lan (1 Gbit/s, no loss, no jitter).
//     At every size >= 200 KiB the increase stays below 5 %.
//   - K2, "low-bandwidth, stable", 50 KiB or more: wan, the stabler of
//     our two slower links (wan 50 Mbit/s, 0.1 % loss; far 10 Mbit/s,
//     1 %). At every size >= 50 KiB the increase stays below 15 % and
//     lies below the handshake-only increase.
//   - K3, "drops below 10 % as the data grows to 200 KiB": every
//     scenario, at 200 KiB: below 10 % and below the handshake-only
//     increase.
//   - K4, "lossy or volatile conditions could see higher impact": far
//     (1 % loss) at 200 KiB, against lan and wan: the t intervals of the
//     paired differences far - lan and far - wan both lie above 0.
//     Not reproduced when one lies below 0 (refuted) or straddles it.
//
// A cell the run lacks, or one without an interval (fewer than two
// replicates), is not measurable with the reason. A claim is not
// reproduced when any of its parts is; else not measurable when any part
// is; else reproduced.
func rules() []rule {
	return []rule{
		{id: "K1", scenario: "lan",
			quote:     "The time-to-last-byte increase stays below 5% for high-bandwidth, stable networks.",
			published: "below 5 %", measures: "relative TTLB increase, lan, sizes >= 200 KiB",
			agreement: "lan: at every size >= 200 KiB the 95 % t interval over the replicates of the relative TTLB increase has its upper end below 5 % and not below 0",
			rationale: "fails when an interval reaches 5 % (straddling it: agreement not shown) or lies wholly below 0 (the hybrid finished sooner: the design's order or drift, not the hybrid)",
			eval: func(t *Results) claims.Outcome {
				return all(t, sizesFrom(t, "lan", kib200), func(c *Cell) part { return below(c, 5) })
			}},
		{id: "K2", scenario: "wan",
			quote:     "It goes from 32% increase of the handshake time to under 15% increase of the time-to-last-byte when transferring 50KiB of data or more under low-bandwidth, stable network conditions.",
			published: "under 15 % from 50 KiB, down from the handshake's increase", measures: "relative TTLB increase, wan, sizes >= 50 KiB, and its drop from the handshake-only increase",
			agreement: "wan (the stabler of our two slower links): at every size >= 50 KiB the interval's upper end is below 15 % and not below 0, and the interval of the handshake-only increase minus the TTLB increase (paired by toolchain) lies above 0",
			rationale: "fails when an interval reaches 15 % or lies wholly below 0, or when the TTLB's increase is not shown below the handshake-only one: a run can refute the drop even though the hybrid adds only about 2.3 kB",
			eval: func(t *Results) claims.Outcome {
				return all(t, sizesFrom(t, "wan", kib50), func(c *Cell) part { return both(below(c, 15), drop(t, c)) })
			}},
		{id: "K3", scenario: "all",
			quote:     "Even when congestion control affects connection establishment, the additional slowdown drops below 10% as the connection data increases to 200KiB.",
			published: "below 10 % at 200 KiB, dropping as the data grows", measures: "relative TTLB increase at 200 KiB in every scenario, and its drop from the handshake-only increase",
			agreement: "every scenario at 200 KiB: the interval's upper end is below 10 % and not below 0, and the interval of the handshake-only increase minus the TTLB increase lies above 0",
			rationale: "fails in any scenario whose interval reaches 10 % or lies wholly below 0, or whose TTLB increase is not shown below its handshake-only one",
			eval: func(t *Results) claims.Outcome {
				var cells []cellAt
				for _, sc := range t.Scenarios {
					cells = append(cells, cellAt{sc, kib200})
				}
				return all(t, cells, func(c *Cell) part { return both(below(c, 10), drop(t, c)) })
			}},
		{id: "K4", scenario: "far",
			quote:     "We also show that connections under lossy or volatile network conditions could see higher impact from post-quantum handshakes",
			published: "higher impact under loss", measures: "relative TTLB increase at 200 KiB, far against lan and wan",
			agreement: "far (1 % loss) at 200 KiB: the t intervals over the replicates of far's increase minus lan's and minus wan's (paired by toolchain) both lie above 0",
			rationale: "fails when either interval lies below 0 (far's impact is lower) or straddles it (higher impact not shown)",
			eval: func(t *Results) claims.Outcome {
				return all(t, []cellAt{{"far", kib200}}, func(f *Cell) part {
					var ps []part
					for _, sc := range []string{"lan", "wan"} {
						o := t.cell(sc, kib200)
						if o == nil {
							ps = append(ps, part{claims.NotMeasurable, fmt.Sprintf("%s at %s not in the run", sc, sizeLabel(kib200))})
							continue
						}
						ps = append(ps, above(f, o, "far", sc))
					}
					return both(ps...)
				})
			}},
	}
}

// Catalogue is K1-K4 as analysis/claims judges them on results/net-ttlb.json.
//
// It is not part of the claims stage (the original's catalogues only):
// the transfer block's stage evaluates it itself (judge).
func Catalogue() claims.Catalogue {
	var cs []claims.Claim
	for _, r := range rules() {
		eval := r.eval
		cs = append(cs, claims.Claim{ID: r.id, Study: Study,
			Statement: r.quote,
			Quote:     claims.Quote{Text: r.quote, Lang: "en", Where: "the abstract of IACR ePrint 2024/176", Verbatim: true},
			Measures:  r.measures, Published: r.published, Agreement: r.agreement, Rationale: r.rationale, HostDependent: true,
			Eval: claims.On(Study, func(t *Results) claims.Outcome {
				if !t.Measured {
					return claims.Outcome{Ours: "---", Verdict: claims.NotMeasurable, Reason: NotMeasuredPinned}
				}
				return eval(t)
			})})
	}
	return claims.Catalogue{Study: Study, Package: codeDir, Claims: cs,
		Source: claims.Citation{Authors: "P. Kampanakis and W. Childs-Klein",
			Title: "The impact of data-heavy, post-quantum TLS 1.3 on the Time-To-Last-Byte of real-world connections",
			Venue: "IACR ePrint 2024/176; MADweb 2024", Where: "abstract"}}
}

// judge evaluates Catalogue on t through analysis/claims. t is encoded as
// results/net-ttlb.json (without claims) and read back strictly, so the
// rules read what the file holds.
func judge(t *Results) ([]Claim, error) {
	t.Claims = []Claim{}
	b, err := encode(t)
	if err != nil {
		return nil, err
	}
	r, err := claims.NewResults(map[string][]byte{Study: b}, nil)
	if err != nil {
		return nil, err
	}
	cat := Catalogue()
	outs := claims.Evaluate(r, cat.Claims)
	if err := r.Err(); err != nil {
		return nil, fmt.Errorf("judge K1-K4: %w; %s does not read back as written: fix the Results type or its encoder", err, ResultsFile)
	}
	out := make([]Claim, len(outs))
	for i, rl := range rules() {
		out[i] = Claim{ID: rl.id, Quote: rl.quote, Scenario: rl.scenario, Rule: rl.agreement,
			Ours: outs[i].Ours, Verdict: outs[i].Verdict, Reason: outs[i].Reason}
	}
	return out, nil
}

// part is one judged piece of a rule: a verdict and why.
type part struct {
	verdict claims.Verdict
	reason  string
}

// cellAt names a cell a rule reads.
type cellAt struct {
	scenario string
	size     int
}

// sizesFrom are sc's cells of at least from bytes, in order.
func sizesFrom(t *Results, sc string, from int) []cellAt {
	var out []cellAt
	for _, c := range t.Cells {
		if c.Scenario == sc && c.SizeBytes >= from {
			out = append(out, cellAt{sc, c.SizeBytes})
		}
	}
	if len(out) == 0 {
		out = append(out, cellAt{sc, from}) // judged as missing
	}
	return out
}

// all judges f on every cell of at and combines the parts' verdicts.
// Not reproduced when one is, else not measurable when one is, else
// reproduced; the reason lists the parts of the verdict, Ours every
// cell's estimate and interval.
func all(t *Results, at []cellAt, f func(c *Cell) part) claims.Outcome {
	var ours []string
	by := map[claims.Verdict][]string{}
	for _, a := range at {
		c := t.cell(a.scenario, a.size)
		where := a.scenario + " " + sizeLabel(a.size)
		if c == nil {
			by[claims.NotMeasurable] = append(by[claims.NotMeasurable], where+": not in the run")
			continue
		}
		ours = append(ours, fmt.Sprintf("%s %s", where, estimate(c.RelPct, c.RelLowerPct, c.RelUpperPct)))
		p := f(c)
		by[p.verdict] = append(by[p.verdict], where+": "+p.reason)
	}
	o := claims.Outcome{Ours: strings.Join(ours, "; ")}
	if o.Ours == "" {
		o.Ours = "---"
	}
	for _, v := range []claims.Verdict{claims.NotReproduced, claims.NotMeasurable, claims.Reproduced} {
		if len(by[v]) > 0 {
			o.Verdict, o.Reason = v, strings.Join(by[v], "; ")
			return o
		}
	}
	return claims.Outcome{Ours: "---", Verdict: claims.NotMeasurable, Reason: "no cell to judge"}
}

// both combines parts of one cell as all combines cells.
func both(ps ...part) part {
	by := map[claims.Verdict][]string{}
	for _, p := range ps {
		by[p.verdict] = append(by[p.verdict], p.reason)
	}
	for _, v := range []claims.Verdict{claims.NotReproduced, claims.NotMeasurable, claims.Reproduced} {
		if len(by[v]) > 0 {
			return part{v, strings.Join(by[v], ", ")}
		}
	}
	return part{claims.NotMeasurable, "nothing judged"}
}

// estimate is "+1.2 % [0.3, 2.1]", or "-3.1 % (no interval)".
func estimate(v, lo, hi jsonnum.Num) string {
	if math.IsNaN(float64(lo)) || math.IsNaN(float64(hi)) {
		return claims.Pct(float64(v)) + " (no interval)"
	}
	return fmt.Sprintf("%s [%.1f, %.1f]", claims.Pct(float64(v)), float64(lo), float64(hi))
}

// below judges "the relative increase stays below bound %" on one cell
// (see rules).
func below(c *Cell, bound float64) part {
	v, lo, hi := float64(c.RelPct), float64(c.RelLowerPct), float64(c.RelUpperPct)
	iv := fmt.Sprintf("interval [%.1f, %.1f] %%", lo, hi)
	switch {
	case math.IsNaN(lo) || math.IsNaN(hi):
		return part{claims.NotMeasurable, fmt.Sprintf("%s, no interval (%s)", claims.Pct(v), c.Note)}
	case hi < 0:
		return part{claims.NotReproduced, fmt.Sprintf("the hybrid finished sooner: %s, %s lies below 0 (no handshake speeds a transfer: the design's order or drift, not the hybrid)", claims.Pct(v), iv)}
	case lo >= bound:
		return part{claims.NotReproduced, fmt.Sprintf("%s, %s lies at or above %g %%", claims.Pct(v), iv, bound)}
	case hi >= bound:
		return part{claims.NotReproduced, fmt.Sprintf("%s, %s straddles %g %%: agreement not shown", claims.Pct(v), iv, bound)}
	case v < 0:
		return part{claims.Reproduced, fmt.Sprintf("the hybrid finished sooner: %s, %s, below %g %%", claims.Pct(v), iv, bound)}
	}
	return part{claims.Reproduced, fmt.Sprintf("%s, %s below %g %%", claims.Pct(v), iv, bound)}
}

// drop judges "the TTLB's relative increase lies below the handshake-only
// one" on cell c against its scenario's size-0 cell. It needs the t
// interval over the replicates of their paired difference (size 0 minus
// c) above 0.
func drop(t *Results, c *Cell) part {
	h := t.cell(c.Scenario, 0)
	if h == nil {
		return part{claims.NotMeasurable, "no handshake-only cell (size 0) in the run"}
	}
	d, why := paired(h, c)
	return differenceAbove(d, why, fmt.Sprintf("handshake-only %s minus TTLB %s", claims.Pct(float64(h.RelPct)), claims.Pct(float64(c.RelPct))), "below the handshake-only increase")
}

// above judges "a's relative increase lies above b's" (cells of one
// size): the t interval of the paired difference a - b above 0.
func above(a, b *Cell, an, bn string) part {
	d, why := paired(a, b)
	return differenceAbove(d, why, fmt.Sprintf("%s %s minus %s %s", an, claims.Pct(float64(a.RelPct)), bn, claims.Pct(float64(b.RelPct))), "above "+bn+"'s")
}

// paired are the differences minuend - subtrahend of the replicates'
// relative increases, paired by toolchain and congestion control. A
// replicate without a congestion control pairs with its toolchain's; the
// string says why when fewer than two pairs have both.
func paired(minuend, subtrahend *Cell) ([]float64, string) {
	var d []float64
	for _, s := range subtrahend.Replicates {
		for _, m := range minuend.Replicates {
			if m.Toolchain != s.Toolchain || (m.CC != s.CC && m.CC != "" && s.CC != "") {
				continue
			}
			if !math.IsNaN(float64(m.RelPct)) && !math.IsNaN(float64(s.RelPct)) {
				d = append(d, float64(m.RelPct)-float64(s.RelPct))
			}
			break
		}
	}
	if len(d) < 2 {
		return d, fmt.Sprintf("%d replicate pairs: no interval, which needs two or more", len(d))
	}
	return d, ""
}

// differenceAbove judges paired differences d: their t interval over
// the pairs above 0 is reproduced, below 0 or across it not reproduced.
func differenceAbove(d []float64, why, what, claim string) part {
	if why != "" {
		return part{claims.NotMeasurable, what + ": " + why}
	}
	iv, err := stats.BetweenSeriesInterval(d, nanSE(len(d)), netstudy.Level)
	if err != nil {
		return part{claims.NotMeasurable, fmt.Sprintf("%s: no interval over %d pairs: %v", what, len(d), err)}
	}
	s := fmt.Sprintf("%s = %.1f points, interval [%.1f, %.1f]", what, iv.Mean, iv.Lower, iv.Upper)
	switch {
	case iv.Lower > 0:
		return part{claims.Reproduced, s + ", " + claim}
	case iv.Upper < 0:
		return part{claims.NotReproduced, s + ": not " + claim + ", the opposite"}
	}
	return part{claims.NotReproduced, s + " straddles 0: " + claim + " not shown"}
}
