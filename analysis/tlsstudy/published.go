package tlsstudy

import (
	"fmt"

	"pqrepro/analysis/claims"
)

// Source is the paper Study A reproduces, where its published values
// (Published) come from. That is its abstract, in Japanese, which is what
// this project has read; no page or table is cited.
var Source = claims.Citation{
	Authors: "Hara, Kawashima, Saito (Meiji University)",
	Title:   "Performance Impact of PQC/Hybrid Key Exchange in TLS 1.3",
	Venue:   "IPSJ SIG Technical Report 2026-IOT-73, no. 15",
	Where:   "abstract (Japanese): the median Ths increase of each configuration over Ed25519 + X25519, every difference significant, the hybrid's increase the largest",
}

// abstract is where Study A's quotes were read.
const abstract = "abstract, Japanese"

// quoteHybrid is the one sentence of Study A's abstract this project
// quotes verbatim: its finding that the hybrid shows the largest
// increase.
var quoteHybrid = claims.Quote{
	Text: "特にHybrid構成において最も大きな遅延増加", Lang: "ja", Where: abstract, Verbatim: true,
	English: "the largest increase in latency, in particular in the hybrid configuration",
}

// quoteSignificant renders the abstract's statement that every
// difference is statistically significant (not the original's words).
var quoteSignificant = claims.Quote{
	Text: "every difference from the baseline is statistically significant (Mann-Whitney U, Holm correction; Kruskal-Wallis)",
	Lang: "en", Where: abstract,
}

// quoteIncrease renders the abstract's statement of one configuration's
// median increase (not the original's words).
func quoteIncrease(p PublishedIncrease) claims.Quote {
	return claims.Quote{
		Text: fmt.Sprintf("%s: the median Ths increases by %.3f ms (%.0f %%) over Ed25519 + X25519", p.Config, p.IncreaseMs, p.IncreasePct),
		Lang: "en", Where: abstract,
	}
}

// ImpliedBaseline is the interval of baseline medians (ms) that a
// published pair implies, allowing for the rounding of both. A pair is an
// increase in ms to three decimals and in per cent to an integer; the
// interval is
// [(ms - 0.0005) / ((pct + 0.5)/100), (ms + 0.0005) / ((pct - 0.5)/100)].
// The pairs disagree: 4.651 ms at +120 % implies 3.86-3.89 ms, 5.072 ms at
// +128 % and 9.048 ms at +228 % imply 3.95-3.98 ms (TestPublishedPairsDisagree),
// so the published percentages are not the published differences over one
// baseline median.
func ImpliedBaseline(p PublishedIncrease) (lo, hi float64) {
	return (p.IncreaseMs - 0.0005) / ((p.IncreasePct + 0.5) / 100), (p.IncreaseMs + 0.0005) / ((p.IncreasePct - 0.5) / 100)
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
