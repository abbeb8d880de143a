package claims

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"
)

// Alpha is the significance level of the claims that assert significance.
const Alpha = 0.05

// Catalogue is every numeric claim of the three studies, in the order of
// the paper.
func Catalogue() []Claim {
	var c []Claim
	c = append(c, studyA()...)
	c = append(c, studyB()...)
	c = append(c, studyC()...)
	return c
}

// Effect-size thresholds that turn "significant" into a claim a wrong
// result can fail: at n = 1,000 per group any shift is significant.
const (
	// LargeCliffDelta is Romano et al.'s (2006) threshold of a large
	// Cliff's delta, |delta| >= 0.474.
	LargeCliffDelta = 0.474
	// LargeEpsilon2 is the threshold of a large epsilon-squared of a
	// Kruskal-Wallis test, epsilon2 = H/(n-1) >= 0.26 (Mangiafico,
	// "Summary and Analysis of Extension Program Evaluation in R",
	// rcompanion, section "Kruskal-Wallis Test").
	LargeEpsilon2 = 0.26
)

// studyATol is the relative tolerance of Study A's increases. It is the
// largest that keeps the published hybrid's window disjoint from the
// other two configurations': 9.048 x 0.75 = 6.79 ms > 5.072 x 1.25 =
// 6.34 ms, and 228 x 0.75 = 171 % > 128 x 1.25 = 160 %. A wider one would
// accept a hybrid-sized increase as a pq-kem one and so could not tell
// the configurations apart.
const studyATol = 0.25

// Study A: Hara, Kawashima, Saito (IPSJ SIG Technical Report 2026-IOT-73,
// no. 15, abstract and results table). Our stack differs (Go crypto/tls
// on loopback vs OpenSSL 3.5.2 in Docker), so absolute times are not
// expected to agree; every rule is still judged as published, and the
// paper reports what does not agree.
func studyA() []Claim {
	type cfg struct {
		id, role, name string
		ms, pct        float64
	}
	var out []Claim
	for _, k := range []cfg{
		{"A1", "pq-sig", "ML-DSA-87 + X25519", 4.651, 120},
		{"A2", "pq-kem", "Ed25519 + ML-KEM-1024", 5.072, 128},
		{"A3", "hybrid", "Ed25519 + SecP384r1MLKEM1024", 9.048, 228},
	} {
		base := "families.paper.comparisons[role=" + k.role + "]."
		out = append(out,
			Claim{
				ID: k.id + "a", Study: "tls",
				Statement: k.name + " has a significantly and substantially higher median Ths than Ed25519 + X25519",
				Published: "higher, significant (Mann-Whitney U, Holm)",
				Agreement: fmt.Sprintf("median higher, Holm p < %.2f and Cliff's delta >= %.3f", Alpha, LargeCliffDelta),
				Rationale: fmt.Sprintf("at n = 1,000 per group significance alone fails only without any effect; a published increase of %.0f %% is a large effect under any plausible spread, so a small shift fails the rule", k.pct),
				Eval: func(r *Results) Outcome {
					v, err := r.Nums("tls", base+"median_diff_ms", base+"p_holm", base+"cliff_delta.delta")
					if err != nil {
						return unmeasurable(err)
					}
					d, p, delta := v[0], v[1], v[2]
					o := Outcome{Ours: fmt.Sprintf("%+.3f ms, p_Holm %s, delta %.3f", d, pval(p), delta)}
					switch {
					case d > 0 && p < Alpha && delta >= LargeCliffDelta:
						o.Verdict = Reproduced
					case d > 0 && p < Alpha:
						o.Verdict, o.Reason = DirectionOnly, fmt.Sprintf("significant but not a large effect (delta %.3f < %.3f)", delta, LargeCliffDelta)
					case d > 0:
						o.Verdict, o.Reason = DirectionOnly, "higher but not significant"
					default:
						o.Verdict, o.Reason = NotReproduced, "not higher"
					}
					return o
				},
			},
			Claim{
				ID: k.id + "b", Study: "tls",
				Statement: k.name + ": relative increase of the median Ths over the baseline",
				Published: fmt.Sprintf("+%.0f %%", k.pct),
				Agreement: fmt.Sprintf("within ±%.0f %% of the published percentage", 100*studyATol),
				Rationale: "a relative increase cancels a uniformly faster stack; the tolerance keeps the three configurations' windows disjoint (see studyATol)",
				Eval: func(r *Results) Outcome {
					v, err := r.Num("tls", base+"median_diff_pct")
					if err != nil {
						return unmeasurable(err)
					}
					return judgeValue(v, k.pct, studyATol, pct)
				},
			},
			Claim{
				ID: k.id + "c", Study: "tls",
				Statement: k.name + ": absolute increase of the median Ths",
				Published: fmt.Sprintf("+%.3f ms", k.ms),
				Agreement: fmt.Sprintf("within ±%.0f %%", 100*studyATol),
				Rationale: "the same window as the relative increase; absolute times depend on the stack and host, so a faster stack fails it (direction only)",
				Eval: func(r *Results) Outcome {
					v, err := r.Num("tls", base+"median_diff_ms")
					if err != nil {
						return unmeasurable(err)
					}
					return judgeValue(v, k.ms, studyATol, func(x float64) string { return fmt.Sprintf("%+.3f ms", x) })
				},
			},
		)
	}
	out = append(out,
		Claim{
			ID: "A4", Study: "tls",
			Statement:   "baseline (Ed25519 + X25519) median Ths",
			Published:   "about 3.9 ms (implied by the increases)",
			Agreement:   fmt.Sprintf("within ±%.0f %%", 100*studyATol),
			Rationale:   "the paper does not state the baseline: it is 4.651 ms / 120 %, so it carries no measurement beyond A1b and A1c",
			DerivedFrom: []string{"A1b", "A1c"},
			Eval: func(r *Results) Outcome {
				v, err := r.Num("tls", "families.paper.comparisons[role=pq-sig].median_baseline_ms")
				if err != nil {
					return unmeasurable(err)
				}
				o := judgeMagnitude(v, 3.9, studyATol, ms)
				if o.Verdict == NotReproduced {
					o.Reason += "; absolute times depend on the host and the setup (see the gap analysis)"
				}
				return o
			},
		},
		Claim{
			ID: "A5", Study: "tls",
			Statement: "the hybrid has the largest increase of the three",
			Published: "+228 % vs +128 % and +120 %",
			Agreement: "our hybrid increase exceeds both others",
			Rationale: "an ordering of three measured increases; fails when either other configuration costs as much as the hybrid",
			Eval: func(r *Results) Outcome {
				inc := map[string]float64{}
				for _, role := range []string{"pq-sig", "pq-kem", "hybrid"} {
					v, err := r.Num("tls", "families.paper.comparisons[role="+role+"].median_diff_ms")
					if err != nil {
						return unmeasurable(err)
					}
					inc[role] = v
				}
				o := Outcome{Ours: fmt.Sprintf("hybrid %+.3f, pq-kem %+.3f, pq-sig %+.3f ms", inc["hybrid"], inc["pq-kem"], inc["pq-sig"])}
				if inc["hybrid"] > inc["pq-kem"] && inc["hybrid"] > inc["pq-sig"] {
					o.Verdict = Reproduced
				} else {
					o.Verdict, o.Reason = NotReproduced, "the hybrid is not the largest"
				}
				return o
			},
		},
		Claim{
			ID: "A6", Study: "tls",
			Statement: "the PQ key exchange alone costs more than the PQ signature alone",
			Published: "+5.072 ms (ML-KEM-1024) > +4.651 ms (ML-DSA-87)",
			Agreement: "our pq-kem increase exceeds our pq-sig increase",
			Rationale: "an ordering of two measured increases; fails when ML-DSA-87 signing costs more than ML-KEM-1024",
			Eval: func(r *Results) Outcome {
				v, err := r.Nums("tls", "families.paper.comparisons[role=pq-kem].median_diff_ms", "families.paper.comparisons[role=pq-sig].median_diff_ms")
				if err != nil {
					return unmeasurable(err)
				}
				kem, sig := v[0], v[1]
				o := Outcome{Ours: fmt.Sprintf("%+.3f vs %+.3f ms", kem, sig)}
				if kem > sig {
					o.Verdict = Reproduced
				} else {
					o.Verdict, o.Reason = NotReproduced, "ML-DSA-87 signing costs more than ML-KEM-1024 in this stack"
				}
				return o
			},
		},
		Claim{
			ID: "A7", Study: "tls",
			Statement: "Kruskal-Wallis over the four configurations is significant, with a large effect",
			Published: "significant",
			Agreement: fmt.Sprintf("p < %.2f and epsilon2 >= %.2f", Alpha, LargeEpsilon2),
			Rationale: "at n = 4,000 significance alone fails only without any difference; medians apart by 120-228 % make a large epsilon-squared, so mostly overlapping groups fail the rule",
			Eval: func(r *Results) Outcome {
				v, err := r.Nums("tls", "families.paper.kruskal_wallis.p", "families.paper.kruskal_wallis.epsilon2")
				if err != nil {
					return unmeasurable(err)
				}
				p, e2 := v[0], v[1]
				o := Outcome{Ours: fmt.Sprintf("p %s, epsilon2 = %.2f", pval(p), e2)}
				switch {
				case p < Alpha && e2 >= LargeEpsilon2:
					o.Verdict = Reproduced
				case p < Alpha:
					o.Verdict, o.Reason = DirectionOnly, fmt.Sprintf("significant but epsilon2 %.2f < %.2f", e2, LargeEpsilon2)
				default:
					o.Verdict, o.Reason = NotReproduced, "not significant"
				}
				return o
			},
		},
	)
	return out
}

// studyBCalibration says how experiments/net.toml chose the scenarios
// from the published values: the fastest scenario's RTT from 0.742 ms /
// 46.98 % (a baseline near 1.6 ms), the slowest's from 2.168 ms / 2.54 %
// (near 85 ms), and its 10 Mbit/s rate so that the hybrid's extra key
// share bytes take about the largest published difference.
const studyBCalibration = "experiments/net.toml chose the scenario's RTT or rate from this published value"

// Study B: Marques and Zavan (2026, results section and abstract).
// Tolerance ±50 % for the one latency figure whose condition was not
// tuned to it; the claims whose conditions were chosen from the published
// values are shown as not assessable. Claims about the 10,000 round can be
// reproduced only by a run that has it (the full profile): on another
// round the best verdict is direction only.
func studyB() []Claim {
	const tol = 0.5
	roundOK := func(r *Results, o Outcome) Outcome {
		round, err := r.Num("net", "reproduced.round")
		if err != nil {
			return unmeasurable(err)
		}
		if round != 10000 && o.Verdict == Reproduced {
			o.Verdict = DirectionOnly
			o.Reason = fmt.Sprintf("the run's largest round is %.0f, not 10,000 (quick profile)", round)
		}
		return o
	}
	num := func(r *Results, path string) (float64, error) { return r.Num("net", "reproduced."+path) }
	return []Claim{
		{
			ID: "B1", Study: "net",
			Statement: "X25519MLKEM768 has a higher median handshake latency than X25519 in every comparison",
			Published: "higher in all nine comparisons",
			Agreement: "higher in all of our comparisons (nine in the full profile)",
			Rationale: "fails when the hybrid's median is not above X25519's in any one scenario and round",
			Eval: func(r *Results) Outcome {
				v, err := r.Nums("net", "reproduced.comparisons", "reproduced.target_higher_latency")
				if err != nil {
					return unmeasurable(err)
				}
				n, h := v[0], v[1]
				o := Outcome{Ours: fmt.Sprintf("higher in %.0f of %.0f", h, n)}
				switch {
				case h == n && n == 9:
					o.Verdict = Reproduced
				case h == n:
					o.Verdict, o.Reason = DirectionOnly, fmt.Sprintf("%.0f comparisons, not nine (quick profile)", n)
				case h > n/2:
					o.Verdict, o.Reason = DirectionOnly, "not in every comparison"
				default:
					o.Verdict, o.Reason = NotReproduced, "not higher in most comparisons"
				}
				return o
			},
		},
		{
			ID: "B2", Study: "net",
			Statement:   "the hybrid sends more bytes per connection in every comparison",
			Published:   "higher volume in all nine comparisons",
			Agreement:   "higher in all of our comparisons",
			Rationale:   "a growth above zero in every comparison, which B8 measures: the key shares alone are 2,304 bytes larger",
			DerivedFrom: []string{"B8"},
			Eval: func(r *Results) Outcome {
				v, err := r.Nums("net", "reproduced.comparisons", "reproduced.target_higher_bytes")
				if err != nil {
					return unmeasurable(err)
				}
				n, h := v[0], v[1]
				o := Outcome{Ours: fmt.Sprintf("higher in %.0f of %.0f", h, n), Verdict: Reproduced}
				if h != n {
					o.Verdict, o.Reason = NotReproduced, "not in every comparison"
				}
				return o
			},
		},
		{
			ID: "B3", Study: "net",
			Statement: "smallest median latency difference in the 10,000 round",
			Published: "0.742 ms",
			Agreement: "within ±50 %",
			Rationale: "in the fastest scenario the difference is mostly the hybrid's CPU time, which depends on the host's CPU (the paper does not name it); a difference under 0.37 ms or over 1.11 ms fails",
			Eval: func(r *Results) Outcome {
				v, err := num(r, "diff_ms_min")
				if err != nil {
					return unmeasurable(err)
				}
				return roundOK(r, judgeValue(v, 0.742, tol, ms))
			},
		},
		{
			ID: "B4", Study: "net",
			Statement:  "largest median latency difference in the 10,000 round",
			Published:  "2.168 ms",
			Agreement:  "within ±50 %",
			Rationale:  "the slowest scenario's 10 Mbit/s rate was chosen so that the extra bytes take about this long",
			Calibrated: studyBCalibration + " (10 Mbit/s: the extra key shares take about 1.8 ms)",
			Eval: func(r *Results) Outcome {
				v, err := num(r, "diff_ms_max")
				if err != nil {
					return unmeasurable(err)
				}
				return roundOK(r, judgeValue(v, 2.168, tol, ms))
			},
		},
		{
			ID: "B5", Study: "net",
			Statement:  "relative latency increase in the fastest scenario",
			Published:  "+46.98 %",
			Agreement:  "within ±50 %",
			Rationale:  "the denominator is the fastest scenario's baseline, whose RTT was chosen from this value",
			Calibrated: studyBCalibration + " (fastest RTT from 0.742 ms / 46.98 %)",
			Eval: func(r *Results) Outcome {
				v, err := num(r, "rel_increase_fastest_pct")
				if err != nil {
					return unmeasurable(err)
				}
				return roundOK(r, judgeValue(v, 46.98, tol, pct))
			},
		},
		{
			ID: "B6", Study: "net",
			Statement:  "relative latency increase in the slowest scenario",
			Published:  "+2.54 %",
			Agreement:  "within ±50 %",
			Rationale:  "the denominator is the slowest scenario's baseline, whose RTT was chosen from this value",
			Calibrated: studyBCalibration + " (slowest RTT from 2.168 ms / 2.54 %)",
			Eval: func(r *Results) Outcome {
				v, err := num(r, "rel_increase_slowest_pct")
				if err != nil {
					return unmeasurable(err)
				}
				return roundOK(r, judgeValue(v, 2.54, tol, pct))
			},
		},
		{
			ID: "B7", Study: "net",
			Statement: "the relative increase falls as the scenario gets slower",
			Published: "46.98 % (fastest) to 2.54 % (slowest)",
			Agreement: "strictly falling over our scenarios ordered by RTT in the largest round; fastest above slowest only: direction only",
			Rationale: "a fixed CPU cost over a growing RTT falls monotonically; a scenario that breaks the order (loss or rate effects larger than the RTT's) fails the rule",
			Eval: func(r *Results) Outcome {
				return roundOK(r, judgeFalling(r))
			},
		},
		{
			ID: "B8", Study: "net",
			Statement: "growth of the bytes per connection (captured IP bytes)",
			Published: "about +100 % to +115 %",
			Agreement: "our smallest and largest growth within 95-120 % (±5 points for 'about'); any growth: direction only",
			Rationale: "byte counts are deterministic for a certificate and a group, so no statistical tolerance applies; the basis (captured bytes, not TCP payload) is fixed before the run; the certificate is our choice and moves the denominator, which a value outside the window shows",
			Eval: func(r *Results) Outcome {
				v, err := r.Nums("net", "reproduced.frame_growth_min_pct", "reproduced.frame_growth_max_pct")
				if err != nil {
					return unmeasurable(err)
				}
				return judgeRange(v[0], v[1], 95, 120, 0, fmt.Sprintf("+%.1f %% to +%.1f %%", v[0], v[1]),
					"outside 95-120 % (the certificate and the byte basis differ)", "no growth")
			},
		},
	}
}

// judgeFalling is B7's rule over the comparisons of the largest round:
// the relative increase strictly falls with the scenario's RTT.
func judgeFalling(r *Results) Outcome {
	v, err := r.Get("net", "comparisons")
	if err != nil {
		return unmeasurable(err)
	}
	list, _ := v.([]any)
	type point struct{ rtt, pct float64 }
	var pts []point
	maxRound := math.Inf(-1)
	for _, el := range list {
		m, _ := el.(map[string]any)
		if round, ok := m["round"].(float64); ok && round > maxRound {
			maxRound = round
		}
	}
	for _, el := range list {
		m, _ := el.(map[string]any)
		round, _ := m["round"].(float64)
		rtt, ok1 := m["rtt_ms"].(float64)
		p, ok2 := m["diff_pct"].(float64)
		if round != maxRound {
			continue
		}
		if !ok1 || !ok2 {
			return unmeasurable(fmt.Errorf("results/net.json: a comparison of round %.0f lacks rtt_ms or diff_pct", round))
		}
		pts = append(pts, point{rtt, p})
	}
	if len(pts) < 2 {
		return unmeasurable(fmt.Errorf("results/net.json has %d scenarios in its largest round; the rule needs two or more", len(pts)))
	}
	slices.SortFunc(pts, func(a, b point) int { return cmp.Compare(a.rtt, b.rtt) })
	parts := make([]string, len(pts))
	falling := true
	for i, p := range pts {
		parts[i] = fmt.Sprintf("%+.1f %%", p.pct)
		if i > 0 && !(p.pct < pts[i-1].pct) {
			falling = false
		}
	}
	o := Outcome{Ours: strings.Join(parts, " -> ")}
	switch first, last := pts[0].pct, pts[len(pts)-1].pct; {
	case falling:
		o.Verdict = Reproduced
	case first > last:
		o.Verdict, o.Reason = DirectionOnly, "fastest above slowest, but not falling at every step"
	default:
		o.Verdict, o.Reason = NotReproduced, "does not fall"
	}
	return o
}

// pval formats a p-value; values below the smallest normal double are
// shown as a bound (the normal approximation underflows for large n).
func pval(p float64) string {
	if p < 1e-300 {
		return "< 1e-300"
	}
	return fmt.Sprintf("= %.2g", p)
}

// finite reports whether x is a usable number.
func finite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }
