package picostudy

import "pqrepro/analysis/claims"

// PaperTitle is the reproduced paper.
const PaperTitle = "Benchmarking NIST-Standardised ML-KEM and ML-DSA on ARM Cortex-M0+: Performance, Memory, and Energy on the RP2040"

// Source is the paper Study C reproduces, where its published values
// (published) come from. This project has read a third-party technical
// summary of the preprint, written in Japanese, not the preprint itself;
// its statements appear here in our English rendering; no
// version, page or table of the preprint is cited. (The summary's lay
// paragraph says signing takes about a second, which its technical
// numbers contradict; the claims judge the technical numbers.)
var Source = claims.Citation{
	Authors: "Rojin Chhetri",
	Title:   PaperTitle,
	Venue:   "arXiv:2603.19340 [cs.CR], 2026",
	Where:   "a third-party technical summary of the preprint, in Japanese (its statements in our English rendering), not the preprint itself: exchange times and modelled energy, ML-DSA signing mean, p99 and coefficient of variation, peak stack, Cortex-M4 ratio",
}

// summary is where Study C's quotes were read.
const summary = "third-party summary, in Japanese"

// quote is a statement of the summary, rendered by this project (the
// summary's words were not recorded verbatim).
func quote(text string) claims.Quote { return claims.Quote{Text: text, Lang: "en", Where: summary} }

// published is the one copy of what the paper reports (Source), with how
// to find our counterpart in Results: the claims (claims.go) judge these
// values, and the analysis writes them beside ours into
// results/pico.json ("published"). "About" values (about 17x, about
// 20 KB) are taken at face value. KB is 1024 bytes: 119.6 KB is "about
// 45 %" of the 264 KB SRAM only with that unit.
type publishedSpec struct {
	key, quantity, unit string
	paper               float64
	ours                func(r *Results) (float64, bool)
}

var published = []publishedSpec{
	{"mlkem512_exchange_ms", "ML-KEM-512 full exchange (keygen+encaps+decaps)", "ms", 35.7, exchangeMs("ml-kem-512")},
	{"mlkem1024_exchange_ms", "ML-KEM-1024 full exchange", "ms", 85.7, exchangeMs("ml-kem-1024")},
	{"ecdh_exchange_ms", "ECDH P-256 full exchange", "ms", 617.0, exchangeMs("ecdh-p256")},
	{"mlkem512_vs_ecdh_speedup", "ECDH P-256 / ML-KEM-512 exchange time", "x", 17, func(r *Results) (float64, bool) {
		v, ok := r.Versus["ml-kem-512"]
		if !ok {
			return 0, false
		}
		return v.Speedup, true
	}},
	{"mlkem512_exchange_mj", "ML-KEM-512 exchange energy", "mJ", 2.83, exchangeMJ("ml-kem-512")},
	{"ecdh_exchange_mj", "ECDH P-256 exchange energy", "mJ", 48.9, exchangeMJ("ecdh-p256")},
	{"mlkem512_vs_ecdh_energy_saving", "ML-KEM-512 energy saving vs ECDH P-256", "%", 94, func(r *Results) (float64, bool) {
		v, ok := r.Versus["ml-kem-512"]
		if !ok {
			return 0, false
		}
		return 100 * v.EnergySaving, true
	}},
	{"mldsa44_sign_mean_ms", "ML-DSA-44 sign, mean", "ms", 158.9, opStat("ml-dsa-44", "sign", func(o *Op) *float64 { return o.MeanMs })},
	{"mldsa44_sign_p99_ms", "ML-DSA-44 sign, p99", "ms", 489.9, opStat("ml-dsa-44", "sign", func(o *Op) *float64 { return o.P99Ms })},
	{"mldsa87_sign_mean_ms", "ML-DSA-87 sign, mean", "ms", 355.2, opStat("ml-dsa-87", "sign", func(o *Op) *float64 { return o.MeanMs })},
	{"mldsa87_sign_p99_ms", "ML-DSA-87 sign, p99", "ms", 1125, opStat("ml-dsa-87", "sign", func(o *Op) *float64 { return o.P99Ms })},
	{"mldsa_sign_cv_min", "ML-DSA sign CV, lowest of the three", "%", 66, signCV(false)},
	{"mldsa_sign_cv_max", "ML-DSA sign CV, highest of the three", "%", 73, signCV(true)},
	{"mlkem1024_decaps_stack_kb", "ML-KEM-1024 decaps peak stack", "KB", 20, opStack("ml-kem-1024", "decaps")},
	{"mldsa87_sign_stack_kb", "ML-DSA-87 sign peak stack", "KB", 119.6, opStack("ml-dsa-87", "sign")},
	{"mldsa87_sign_stack_sram_pct", "ML-DSA-87 sign peak stack / 264 KB SRAM", "%", 45, func(r *Results) (float64, bool) {
		kb, ok := opStack("ml-dsa-87", "sign")(r)
		return 100 * kb / 264, ok
	}},
	{"m4_speedup_min", "Cortex-M4 speed-up over M0+ (same C), low end", "x", 1.8, func(r *Results) (float64, bool) {
		return r.M4.RatioMin, len(r.M4.Rows) > 0
	}},
	{"m4_speedup_max", "Cortex-M4 speed-up over M0+ (same C), high end", "x", 1.9, func(r *Results) (float64, bool) {
		return r.M4.RatioMax, len(r.M4.Rows) > 0
	}},
}

func exchangeMs(s string) func(*Results) (float64, bool) {
	return func(r *Results) (float64, bool) {
		e, ok := r.Exchanges[s]
		if !ok {
			return 0, false
		}
		return e.Ms, true
	}
}

func exchangeMJ(s string) func(*Results) (float64, bool) {
	return func(r *Results) (float64, bool) {
		e, ok := r.Exchanges[s]
		if !ok {
			return 0, false
		}
		return e.EnergyMJ, true
	}
}

func opStat(s, op string, f func(*Op) *float64) func(*Results) (float64, bool) {
	return func(r *Results) (float64, bool) {
		sc, ok := r.Schemes[s]
		if !ok || sc.Ops[op] == nil {
			return 0, false
		}
		v := f(sc.Ops[op])
		if v == nil {
			return 0, false
		}
		return *v, true
	}
}

func opStack(s, op string) func(*Results) (float64, bool) {
	return func(r *Results) (float64, bool) {
		sc, ok := r.Schemes[s]
		if !ok || sc.Ops[op] == nil {
			return 0, false
		}
		return float64(sc.Ops[op].PeakStackBytes) / 1024, true
	}
}

func signCV(max bool) func(*Results) (float64, bool) {
	return func(r *Results) (float64, bool) {
		var out float64
		n := 0
		for _, s := range []string{"ml-dsa-44", "ml-dsa-65", "ml-dsa-87"} {
			v, ok := opStat(s, "sign", func(o *Op) *float64 { return o.CV })(r)
			if !ok {
				continue
			}
			if n == 0 || (max && v > out) || (!max && v < out) {
				out = v
			}
			n++
		}
		// "Of the three": a configuration that ran some of the sets
		// (its images key) has no such figure.
		return 100 * out, n == 3
	}
}
