package claims

import "fmt"

// Study C: ML-KEM and ML-DSA on the RP2040. Our board is rp2040js, which
// models the core cycle-accurately for this code but has no flash cache
// or bus contention (our images run from SRAM), so times are expected
// within ±15 %; the ML-DSA signing times depend on rejection sampling
// (the number of iterations varies per message), so their means get
// ±25 % and their 99th percentiles, estimated from 100 signatures, ±40 %.
func studyC() []Claim {
	pub := func(key string) string { return "published[key=" + key + "].ours" }
	value := func(id, statement, published, key string, paper, tol float64, format func(float64) string, magnitude bool) Claim {
		return Claim{
			ID: id, Study: "pico", Statement: statement, Published: published,
			Agreement: fmt.Sprintf("within ±%.0f %%", 100*tol),
			Eval: func(r *Results) Outcome {
				v, err := r.Num("pico", pub(key))
				if err != nil {
					return unmeasurable(err)
				}
				if magnitude {
					return judgeMagnitude(v, paper, tol, format)
				}
				return judgeValue(v, paper, tol, format)
			},
		}
	}
	kb := func(x float64) string { return fmt.Sprintf("%.1f KB", x) }
	mj := func(x float64) string { return fmt.Sprintf("%.2f mJ", x) }
	return []Claim{
		value("C1", "ML-KEM-512 full exchange (keygen + encaps + decaps)", "35.7 ms", "mlkem512_exchange_ms", 35.7, 0.15, ms1, true),
		value("C2", "ML-KEM-1024 full exchange", "85.7 ms", "mlkem1024_exchange_ms", 85.7, 0.15, ms1, true),
		value("C3", "ECDH P-256 full exchange", "617.0 ms", "ecdh_exchange_ms", 617.0, 0.15, ms1, true),
		{
			ID: "C4", Study: "pico", Statement: "ML-KEM-512 is faster than ECDH P-256 for a full exchange",
			Published: "about 17x", Agreement: "speed-up within ±25 %; faster at all: direction only",
			Eval: func(r *Results) Outcome {
				v, err := r.Num("pico", pub("mlkem512_vs_ecdh_speedup"))
				if err != nil {
					return unmeasurable(err)
				}
				o := Outcome{Ours: times(v)}
				switch {
				case within(v, 17, 0.25):
					o.Verdict = Reproduced
				case v > 1:
					o.Verdict, o.Reason = DirectionOnly, fmt.Sprintf("faster, outside the 25 %% tolerance (ours/published = %.2f)", v/17)
				default:
					o.Verdict, o.Reason = NotReproduced, "not faster"
				}
				return o
			},
		},
		value("C5", "energy of the ML-KEM-512 exchange (79.2 mW model)", "2.83 mJ", "mlkem512_exchange_mj", 2.83, 0.15, mj, true),
		value("C6", "energy of the ECDH P-256 exchange", "48.9 mJ", "ecdh_exchange_mj", 48.9, 0.15, mj, true),
		{
			ID: "C7", Study: "pico", Statement: "ML-KEM-512 saves energy against ECDH P-256",
			Published: "94 % less", Agreement: "within ±5 percentage points; any saving: direction only",
			Eval: func(r *Results) Outcome {
				v, err := r.Num("pico", pub("mlkem512_vs_ecdh_energy_saving"))
				if err != nil {
					return unmeasurable(err)
				}
				o := Outcome{Ours: pct0(v)}
				switch {
				case v >= 89 && v <= 99:
					o.Verdict = Reproduced
				case v > 0:
					o.Verdict, o.Reason = DirectionOnly, "outside 89-99 %"
				default:
					o.Verdict, o.Reason = NotReproduced, "no saving"
				}
				return o
			},
		},
		value("C8", "ML-DSA-44 signing time, mean of the repetitions", "158.9 ms", "mldsa44_sign_mean_ms", 158.9, 0.25, ms1, true),
		value("C9", "ML-DSA-44 signing time, 99th percentile", "489.9 ms", "mldsa44_sign_p99_ms", 489.9, 0.40, ms1, true),
		value("C10", "ML-DSA-87 signing time, mean", "355.2 ms", "mldsa87_sign_mean_ms", 355.2, 0.25, ms1, true),
		value("C11", "ML-DSA-87 signing time, 99th percentile", "1,125 ms", "mldsa87_sign_p99_ms", 1125, 0.40, ms1, true),
		{
			ID: "C12", Study: "pico", Statement: "ML-DSA signing time varies strongly (rejection sampling)",
			Published: "coefficient of variation 66-73 %", Agreement: "our CVs within 56-83 % (±10 points); all above 30 %: direction only",
			Eval: func(r *Results) Outcome {
				v, err := r.Nums("pico", pub("mldsa_sign_cv_min"), pub("mldsa_sign_cv_max"))
				if err != nil {
					return unmeasurable(err)
				}
				return judgeRange(v[0], v[1], 56, 83, 30, fmt.Sprintf("%.1f-%.1f %%", v[0], v[1]),
					"high but outside 56-83 %", "not highly variable")
			},
		},
		{
			ID: "C13", Study: "pico", Statement: "an ML-DSA-44 sign + verify cycle uses less energy than ECDSA P-256",
			Published: "less energy", Agreement: "our energy ratio ML-DSA-44 / ECDSA P-256 below 1",
			Eval: func(r *Results) Outcome {
				v, err := r.Num("pico", "sign_verify_energy_vs_ecdsa.ml-dsa-44")
				if err != nil {
					return unmeasurable(err)
				}
				o := Outcome{Ours: fmt.Sprintf("ratio %.2f", v), Verdict: Reproduced}
				if !(v < 1) {
					o.Verdict, o.Reason = NotReproduced, "ML-DSA-44 uses more"
				}
				return o
			},
		},
		value("C14", "peak stack of ML-KEM-1024 decapsulation", "about 20 KB", "mlkem1024_decaps_stack_kb", 20, 0.10, kb, true),
		value("C15", "peak stack of ML-DSA-87 signing", "119.6 KB", "mldsa87_sign_stack_kb", 119.6, 0.05, kb, true),
		value("C16", "ML-DSA-87 signing stack as a share of the 264 KB SRAM", "about 45 %", "mldsa87_sign_stack_sram_pct", 45, 0.10, pct0, true),
		{
			ID: "C17", Study: "pico", Statement: "the same C code on a Cortex-M4 (pqm4) is only modestly faster than on the M0+",
			Published: "1.8-1.9x", Agreement: "our cycle ratios M0+/M4 within 1.5-2.3; all above 1: direction only",
			Eval: func(r *Results) Outcome {
				v, err := r.Nums("pico", pub("m4_speedup_min"), pub("m4_speedup_max"))
				if err != nil {
					return unmeasurable(err)
				}
				return judgeRange(v[0], v[1], 1.5, 2.3, 1, fmt.Sprintf("%.2f-%.2fx", v[0], v[1]),
					"the ratios spread beyond 1.5-2.3x", "the M4 is not faster")
			},
		},
	}
}
