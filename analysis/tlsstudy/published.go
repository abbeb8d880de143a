package tlsstudy

import "pqrepro/analysis/claims"

// Source is the paper Study A reproduces, where its published values
// (Published) come from. The report states the results in its abstract
// and results table; this project has not recorded a page number.
var Source = claims.Citation{
	Authors: "Hara, Kawashima, Saito (Meiji University)",
	Title:   "Performance Impact of PQC/Hybrid Key Exchange in TLS 1.3",
	Venue:   "IPSJ SIG Technical Report 2026-IOT-73, no. 15",
	Where:   "abstract and results table: the median Ths increase of each configuration over Ed25519 + X25519, all significant (Mann-Whitney U, Holm); page not recorded",
}

// Published are Study A's own results (Source): the median Ths increase
// of each target over the Ed25519 + X25519 baseline. They are the one
// copy of these numbers: the claims (claims.go) judge them, and the
// analysis attaches them to the paper family's comparisons by role for
// side-by-side tables (results/tls.json "published").
var Published = PublishedResults{
	Source:           "Hara, Kawashima, Saito: Performance Impact of PQC/Hybrid Key Exchange in TLS 1.3, IPSJ SIG Technical Report 2026-IOT-73, no. 15 (OpenSSL 3.5.2, Docker Compose on one host)",
	BaselineMedianMs: 3.9,
	BaselineNote:     "not published; implied by the increases (4.651 ms = 120 %, 5.072 ms = 128 %, 9.048 ms = 228 %)",
	Increases: map[string]PublishedIncrease{
		"pq-sig": {Config: "ML-DSA-87 + X25519", IncreaseMs: 4.651, IncreasePct: 120},
		"pq-kem": {Config: "Ed25519 + ML-KEM-1024", IncreaseMs: 5.072, IncreasePct: 128},
		"hybrid": {Config: "Ed25519 + SecP384r1MLKEM1024", IncreaseMs: 9.048, IncreasePct: 228},
	},
}

// PublishedResults are a paper's published numbers.
type PublishedResults struct {
	Source           string                       `json:"source"`
	BaselineMedianMs float64                      `json:"baseline_median_ms"`
	BaselineNote     string                       `json:"baseline_note"`
	Increases        map[string]PublishedIncrease `json:"increases"` // by role
}

// PublishedIncrease is one published median increase over the baseline.
type PublishedIncrease struct {
	Config      string  `json:"config"` // as the paper names it
	IncreaseMs  float64 `json:"increase_ms"`
	IncreasePct float64 `json:"increase_pct"`
}
