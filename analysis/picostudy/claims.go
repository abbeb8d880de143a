package picostudy

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"pqrepro/analysis/claims"
)

// Claims are Study C's claims (Source; the values are published), in
// the order of the paper, with the rules that judge them on
// results/pico.json. Our board is rp2040js, which models the core
// cycle-accurately for this code but has no flash cache or bus contention
// (our images run from SRAM), so times are expected within ±15 %; the
// ML-DSA signing times depend on rejection sampling (the number of
// iterations varies per message), so their means get ±25 % and their
// 99th percentiles, estimated from 100 signatures, ±40 %.
func Claims() claims.Catalogue {
	return claims.Catalogue{Study: "pico", Package: "analysis/picostudy", Source: Source, Claims: studyCClaims()}
}

// paper is the published value of a key of published; an unknown key is
// a bug of this file (TestClaimsReadPublishedValues).
func paper(key string) float64 {
	v, ok := publishedValue(key)
	if !ok {
		panic("pico: no published value " + key)
	}
	return v
}

// number is the number in a claim's published text ("about 20 KB",
// "1,125 ms").
var number = regexp.MustCompile(`[0-9][0-9,]*(\.[0-9]+)?`)

// ours is our counterpart of a published value, as results/pico.json
// records it under "published", or the error that names what is missing.
func ours(r *Results, key string) (float64, error) {
	path := "published[key=" + key + "].ours"
	for _, p := range r.Published {
		if p.Key != key {
			continue
		}
		if p.Ours == nil {
			return 0, claims.Missing("pico", path, "the value is null (not computable from this dataset)")
		}
		return *p.Ours, nil
	}
	return 0, claims.Missing("pico", path, "no element with key="+key)
}

// oursAll is ours of several keys, or the first error.
func oursAll(r *Results, keys ...string) ([]float64, error) {
	out := make([]float64, len(keys))
	for i, k := range keys {
		v, err := ours(r, k)
		if err != nil {
			return nil, err
		}
		out[i] = v
	}
	return out, nil
}

// on is a rule over results/pico.json.
func on(rule func(r *Results) claims.Outcome) func(*claims.Results) claims.Outcome {
	return claims.On("pico", rule)
}

func studyCClaims() []claims.Claim {
	value := func(id, statement, published, key string, tol float64, format func(float64) string) claims.Claim {
		want := paper(key)
		if n, err := strconv.ParseFloat(strings.ReplaceAll(number.FindString(published), ",", ""), 64); err != nil || n != want {
			panic(fmt.Sprintf("pico: claim %s states %q, but the published value %s is %g", id, published, key, want))
		}
		return claims.Claim{
			ID: id, Study: "pico", Statement: statement, Published: published,
			Agreement: fmt.Sprintf("within ±%.0f %%", 100*tol),
			Rationale: fmt.Sprintf("a value outside %s to %s fails", format(want*(1-tol)), format(want*(1+tol))),
			Eval: on(func(r *Results) claims.Outcome {
				v, err := ours(r, key)
				if err != nil {
					return claims.Unmeasurable(err)
				}
				return claims.JudgeMagnitude(v, want, tol, format)
			}),
		}
	}
	derived := func(c claims.Claim, from string, why string) claims.Claim {
		c.DerivedFrom = []string{from}
		c.Rationale = why
		return c
	}
	kb := func(x float64) string { return fmt.Sprintf("%.1f KB", x) }
	mj := func(x float64) string { return fmt.Sprintf("%.2f mJ", x) }
	speedup := paper("mlkem512_vs_ecdh_speedup")
	saving := paper("mlkem512_vs_ecdh_energy_saving")
	return []claims.Claim{
		value("C1", "ML-KEM-512 full exchange (keygen + encaps + decaps)", "35.7 ms", "mlkem512_exchange_ms", 0.15, claims.Ms1),
		value("C2", "ML-KEM-1024 full exchange", "85.7 ms", "mlkem1024_exchange_ms", 0.15, claims.Ms1),
		value("C3", "ECDH P-256 full exchange", "617.0 ms", "ecdh_exchange_ms", 0.15, claims.Ms1),
		{
			ID: "C4", Study: "pico", Statement: "ML-KEM-512 is faster than ECDH P-256 for a full exchange",
			Published: "about 17x", Agreement: "speed-up within ±25 %; faster at all: direction only",
			Rationale: fmt.Sprintf("a ratio of two measured times, each with its own tolerance; under %.2fx or over %.2fx fails", speedup*0.75, speedup*1.25),
			Eval: on(func(r *Results) claims.Outcome {
				v, err := ours(r, "mlkem512_vs_ecdh_speedup")
				if err != nil {
					return claims.Unmeasurable(err)
				}
				o := claims.Outcome{Ours: claims.Times(v)}
				switch {
				case claims.Within(v, speedup, 0.25):
					o.Verdict = claims.Reproduced
				case v > 1:
					o.Verdict, o.Reason = claims.DirectionOnly, fmt.Sprintf("faster, outside the 25 %% tolerance (ours/published = %.2f)", v/speedup)
				default:
					o.Verdict, o.Reason = claims.NotReproduced, "not faster"
				}
				return o
			}),
		},
		derived(value("C5", "energy of the ML-KEM-512 exchange (79.2 mW model)", "2.83 mJ", "mlkem512_exchange_mj", 0.15, mj),
			"C1", "the energy model is time x 79.2 mW, a constant: C1's time again"),
		derived(value("C6", "energy of the ECDH P-256 exchange", "48.9 mJ", "ecdh_exchange_mj", 0.15, mj),
			"C3", "the energy model is time x 79.2 mW, a constant: C3's time again"),
		{
			ID: "C7", Study: "pico", Statement: "ML-KEM-512 saves energy against ECDH P-256",
			Published: "94 % less", Agreement: "within ±5 percentage points; any saving: direction only",
			Rationale:   "with a constant power model the saving is 1 - 1/speed-up, C4's measurement again",
			DerivedFrom: []string{"C4"},
			Eval: on(func(r *Results) claims.Outcome {
				v, err := ours(r, "mlkem512_vs_ecdh_energy_saving")
				if err != nil {
					return claims.Unmeasurable(err)
				}
				o := claims.Outcome{Ours: claims.Pct0(v)}
				switch {
				case v >= saving-5 && v <= saving+5:
					o.Verdict = claims.Reproduced
				case v > 0:
					o.Verdict, o.Reason = claims.DirectionOnly, fmt.Sprintf("outside %.0f-%.0f %%", saving-5, saving+5)
				default:
					o.Verdict, o.Reason = claims.NotReproduced, "no saving"
				}
				return o
			}),
		},
		value("C8", "ML-DSA-44 signing time, mean of the repetitions", "158.9 ms", "mldsa44_sign_mean_ms", 0.25, claims.Ms1),
		value("C9", "ML-DSA-44 signing time, 99th percentile", "489.9 ms", "mldsa44_sign_p99_ms", 0.40, claims.Ms1),
		value("C10", "ML-DSA-87 signing time, mean", "355.2 ms", "mldsa87_sign_mean_ms", 0.25, claims.Ms1),
		value("C11", "ML-DSA-87 signing time, 99th percentile", "1,125 ms", "mldsa87_sign_p99_ms", 0.40, claims.Ms1),
		{
			ID: "C12", Study: "pico", Statement: "ML-DSA signing time varies strongly (rejection sampling)",
			Published: "coefficient of variation 66-73 %", Agreement: "our CVs within 56-83 % (±10 points); all above 30 %: direction only",
			Rationale: "the CV of 100 signatures has a sampling error of several points; a deterministic signer (CV near 0) fails",
			Eval: on(func(r *Results) claims.Outcome {
				v, err := oursAll(r, "mldsa_sign_cv_min", "mldsa_sign_cv_max")
				if err != nil {
					return claims.Unmeasurable(err)
				}
				lo, hi := paper("mldsa_sign_cv_min")-10, paper("mldsa_sign_cv_max")+10
				return claims.JudgeRange(v[0], v[1], lo, hi, 30, fmt.Sprintf("%.1f-%.1f %%", v[0], v[1]),
					fmt.Sprintf("high but outside %.0f-%.0f %%", lo, hi), "not highly variable")
			}),
		},
		{
			ID: "C13", Study: "pico", Statement: "an ML-DSA-44 signing cycle uses less energy than ECDSA P-256 (read as sign + verify; sign alone shown beside)",
			Published: "less energy", Agreement: "our energy ratio ML-DSA-44 / ECDSA P-256 for sign + verify below 1",
			Rationale: "the paper's 'signing cycle' is read as sign + verify, the cycle a protocol runs; on signing alone the ratio is above 1, which the table shows beside it so the reading can be checked",
			Eval: on(func(r *Results) claims.Outcome {
				ratio, ok := r.SignVerifyVsECDSA["ml-dsa-44"]
				if !ok {
					return claims.Unmeasurable(claims.Missing("pico", "sign_verify_energy_vs_ecdsa.ml-dsa-44", "no key ml-dsa-44"))
				}
				dsa, err := signEnergy(r, "ml-dsa-44")
				if err != nil {
					return claims.Unmeasurable(err)
				}
				ecdsa, err := signEnergy(r, "ecdsa-p256")
				if err != nil {
					return claims.Unmeasurable(err)
				}
				o := claims.Outcome{Ours: fmt.Sprintf("ratio %.2f (sign alone %.2f)", ratio, dsa/ecdsa), Verdict: claims.Reproduced}
				if !(ratio < 1) {
					o.Verdict, o.Reason = claims.NotReproduced, "ML-DSA-44 uses more"
				}
				return o
			}),
		},
		value("C14", "peak stack of ML-KEM-1024 decapsulation", "about 20 KB", "mlkem1024_decaps_stack_kb", 0.10, kb),
		value("C15", "peak stack of ML-DSA-87 signing", "119.6 KB", "mldsa87_sign_stack_kb", 0.05, kb),
		derived(value("C16", "ML-DSA-87 signing stack as a share of the 264 KB SRAM", "about 45 %", "mldsa87_sign_stack_sram_pct", 0.10, claims.Pct0),
			"C15", "C15's stack depth over the constant 264 KB"),
		{
			ID: "C17", Study: "pico", Statement: "the same C code on a Cortex-M4 (pqm4) is only modestly faster than on the M0+",
			Published: "1.8-1.9x", Agreement: "our cycle ratios M0+/M4 within 1.5-2.3; all within 1-3: direction only",
			Rationale: "'only 1.8-1.9x' says the M4's advantage is small: a ratio above 3 (over 1.5 times the published upper bound) contradicts it and fails",
			Eval: on(func(r *Results) claims.Outcome {
				v, err := oursAll(r, "m4_speedup_min", "m4_speedup_max")
				if err != nil {
					return claims.Unmeasurable(err)
				}
				o := claims.JudgeRange(v[0], v[1], 1.5, 2.3, 1, fmt.Sprintf("%.2f-%.2fx", v[0], v[1]),
					"the ratios spread beyond 1.5-2.3x", "the M4 is not faster")
				if o.Verdict == claims.DirectionOnly && v[1] > 3 {
					o.Verdict, o.Reason = claims.NotReproduced, "the M4 is more than 3x faster for some operation: not a modest advantage"
				}
				return o
			}),
		},
	}
}

// signEnergy is the mean energy of one signature of a scheme.
func signEnergy(r *Results, scheme string) (float64, error) {
	path := "schemes." + scheme + ".ops.sign.energy_mj"
	s := r.Schemes[scheme]
	if s == nil || s.Ops["sign"] == nil {
		return 0, claims.Missing("pico", path, "no "+scheme+" sign operation")
	}
	if s.Ops["sign"].EnergyMJ == nil {
		return 0, claims.Missing("pico", path, "the value is null (not computable from this dataset)")
	}
	return *s.Ops["sign"].EnergyMJ, nil
}
