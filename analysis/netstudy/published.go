package netstudy

import "pqrepro/analysis/claims"

// Source is the paper Study B reproduces, where its published values
// (published) come from. That is its abstract, in Portuguese, which is
// what this project has read; no page or table is cited.
var Source = claims.Citation{
	Authors: "Marques, Zavan",
	Title:   "Análise Comparativa de Performance entre Criptografia Clássica e Pós-Quântica no TLS 1.3",
	Venue:   "2026, CC BY-SA 4.0",
	Where:   "abstract (Portuguese): 96,000 handshakes, nine comparisons, the 10,000 round's median differences, relative increases and volume growth, with no statistical significance established",
}

// abstract is where Study B's quotes were read.
const abstract = "abstract, Portuguese"

// QuoteNoSignificance is the abstract's own words that its comparisons
// establish no statistical significance: no rule of Study B asks for it.
var QuoteNoSignificance = claims.Quote{
	Text: "sem estabelecer significância estatística", Lang: "pt", Where: abstract, Verbatim: true,
	English: "without establishing statistical significance",
}

// The abstract's statements, rendered in English (not its words).
var (
	quoteHigher = claims.Quote{Lang: "en", Where: abstract,
		Text: "the hybrid had higher medians and higher volumes in all nine comparisons"}
	quoteDiffs = claims.Quote{Lang: "en", Where: abstract,
		Text: "in the 10,000 round the median differences ranged from 0.742 to 2.168 ms"}
	quoteFall = claims.Quote{Lang: "en", Where: abstract,
		Text: "the relative increase fell from 46.98 % in the fastest scenario to 2.54 % in the slowest"}
	quoteVolume = claims.Quote{Lang: "en", Where: abstract,
		Text: "the volume grew by about 100-115 %"}
)

// Published are the paper's numbers (Source), in the form results/net.json
// records them beside ours.
type Published struct {
	Source             string  `json:"source"`
	Handshakes         int     `json:"handshakes"`
	Comparisons        int     `json:"comparisons"`
	Round              int     `json:"round"` // the round the differences refer to
	DiffMsMin          float64 `json:"diff_ms_min"`
	DiffMsMax          float64 `json:"diff_ms_max"`
	RelIncFastestPct   float64 `json:"rel_increase_fastest_pct"`
	RelIncSlowestPct   float64 `json:"rel_increase_slowest_pct"`
	VolumeGrowthMinPct float64 `json:"volume_growth_min_pct"`
	VolumeGrowthMaxPct float64 `json:"volume_growth_max_pct"`
	HybridHigherAll    bool    `json:"hybrid_higher_in_all"`
}

// published is the one copy of Study B's published values: the claims
// (claims.go) judge them, and the analysis writes them into
// results/net.json ("published") and the figures.
var published = Published{
	Source:     "Marques and Zavan (2026), Analise Comparativa de Performance entre Criptografia Classica e Pos-Quantica no TLS 1.3, abstract",
	Handshakes: 96000, Comparisons: 9, Round: 10000,
	DiffMsMin: 0.742, DiffMsMax: 2.168,
	RelIncFastestPct: 46.98, RelIncSlowestPct: 2.54,
	VolumeGrowthMinPct: 100, VolumeGrowthMaxPct: 115,
	HybridHigherAll: true,
}
