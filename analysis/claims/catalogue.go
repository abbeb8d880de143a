package claims

import (
	"fmt"
	"math"
)

// Alpha is the significance level of the claims that assert significance.
const Alpha = 0.05

// Catalogue is every numeric claim of SEEDS.md, in the order of the paper.
func Catalogue() []Claim {
	var c []Claim
	c = append(c, studyA()...)
	c = append(c, studyB()...)
	c = append(c, studyC()...)
	return c
}

// Study A: Hara, Kawashima, Saito (IPSJ 2026). Our stack differs (Go
// crypto/tls on loopback vs OpenSSL 3.5.2 in Docker), so absolute times
// are not expected to agree; relative increases and their significance
// are the comparable quantities. Tolerance for increases: ±50 % of the
// published value.
func studyA() []Claim {
	const tol = 0.5
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
				Statement: k.name + " has a significantly higher median Ths than Ed25519 + X25519",
				Published: "higher, significant (Mann-Whitney U, Holm)",
				Agreement: fmt.Sprintf("median higher and Holm-adjusted p < %.2f", Alpha),
				Eval: func(r *Results) Outcome {
					d, err := r.Num("tls", base+"median_diff_ms")
					if err != nil {
						return unmeasurable(err)
					}
					p, err := r.Num("tls", base+"p_holm")
					if err != nil {
						return unmeasurable(err)
					}
					o := Outcome{Ours: fmt.Sprintf("%+.3f ms, p_Holm %s", d, pval(p))}
					switch {
					case d > 0 && p < Alpha:
						o.Verdict = Reproduced
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
				Agreement: "within ±50 % of the published percentage",
				Eval: func(r *Results) Outcome {
					v, err := r.Num("tls", base+"median_diff_pct")
					if err != nil {
						return unmeasurable(err)
					}
					return judgeValue(v, k.pct, tol, pct)
				},
			},
			Claim{
				ID: k.id + "c", Study: "tls",
				Statement: k.name + ": absolute increase of the median Ths",
				Published: fmt.Sprintf("+%.3f ms", k.ms),
				Agreement: "within ±50 % (absolute times depend on the stack and host; see A4)",
				Eval: func(r *Results) Outcome {
					v, err := r.Num("tls", base+"median_diff_ms")
					if err != nil {
						return unmeasurable(err)
					}
					return judgeValue(v, k.ms, tol, func(x float64) string { return fmt.Sprintf("%+.3f ms", x) })
				},
			},
		)
	}
	out = append(out,
		Claim{
			ID: "A4", Study: "tls",
			Statement: "baseline (Ed25519 + X25519) median Ths",
			Published: "about 3.9 ms (implied by the increases)",
			Agreement: "within ±50 %",
			Eval: func(r *Results) Outcome {
				v, err := r.Num("tls", "families.paper.comparisons[role=pq-sig].median_baseline_ms")
				if err != nil {
					return unmeasurable(err)
				}
				o := judgeMagnitude(v, 3.9, tol, ms)
				if o.Verdict == NotReproduced {
					o.Reason += "; Go on loopback vs OpenSSL in Docker Compose"
				}
				return o
			},
		},
		Claim{
			ID: "A5", Study: "tls",
			Statement: "the hybrid has the largest increase of the three",
			Published: "+228 % vs +128 % and +120 %",
			Agreement: "our hybrid increase exceeds both others",
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
					o.Verdict, o.Reason = NotReproduced, "ML-DSA-87 signing costs more than ML-KEM-1024 in Go"
				}
				return o
			},
		},
		Claim{
			ID: "A7", Study: "tls",
			Statement: "Kruskal-Wallis over the four configurations is significant",
			Published: "significant",
			Agreement: fmt.Sprintf("p < %.2f", Alpha),
			Eval: func(r *Results) Outcome {
				v, err := r.Nums("tls", "families.paper.kruskal_wallis.p", "families.paper.kruskal_wallis.epsilon2")
				if err != nil {
					return unmeasurable(err)
				}
				p, e2 := v[0], v[1]
				o := Outcome{Ours: fmt.Sprintf("p %s, epsilon2 = %.2f", pval(p), e2), Verdict: Reproduced}
				if !(p < Alpha) {
					o.Verdict, o.Reason = NotReproduced, "not significant"
				}
				return o
			},
		},
	)
	return out
}

// Study B: Marques and Zavan (2026). Tolerance ±50 % for the ms and %
// figures, whose scenarios the paper does not publish (ours are chosen
// and stated in experiments/net.toml); ±15 percentage points for the
// volume growth, which depends on the certificate and the byte basis.
// Claims about the 10,000 round can be reproduced only by a run that has
// it (the full profile): on another round the best verdict is direction
// only.
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
			Statement: "the hybrid sends more bytes per connection in every comparison",
			Published: "higher volume in all nine comparisons",
			Agreement: "higher in all of our comparisons",
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
			Statement: "largest median latency difference in the 10,000 round",
			Published: "2.168 ms",
			Agreement: "within ±50 %",
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
			Statement: "relative latency increase in the fastest scenario",
			Published: "+46.98 %",
			Agreement: "within ±50 %",
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
			Statement: "relative latency increase in the slowest scenario",
			Published: "+2.54 %",
			Agreement: "within ±50 %",
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
			Statement: "the relative increase falls from the fastest to the slowest scenario",
			Published: "46.98 % to 2.54 %",
			Agreement: "ours is larger in the fastest scenario than in the slowest",
			Eval: func(r *Results) Outcome {
				v, err := r.Nums("net", "reproduced.rel_increase_fastest_pct", "reproduced.rel_increase_slowest_pct")
				if err != nil {
					return unmeasurable(err)
				}
				f, s := v[0], v[1]
				o := Outcome{Ours: fmt.Sprintf("%+.1f %% to %+.1f %%", f, s), Verdict: Reproduced}
				if !(f > s) {
					o.Verdict, o.Reason = NotReproduced, "does not fall"
				}
				return roundOK(r, o)
			},
		},
		{
			ID: "B8", Study: "net",
			Statement: "growth of the bytes per connection (frame bytes)",
			Published: "about +100 % to +115 %",
			Agreement: "our smallest and largest growth within 85-130 % (±15 points)",
			Eval: func(r *Results) Outcome {
				v, err := r.Nums("net", "reproduced.frame_growth_min_pct", "reproduced.frame_growth_max_pct")
				if err != nil {
					return unmeasurable(err)
				}
				return judgeRange(v[0], v[1], 85, 130, 0, fmt.Sprintf("+%.1f %% to +%.1f %%", v[0], v[1]),
					"outside 85-130 % (the certificate and the byte basis differ)", "no growth")
			},
		},
	}
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
