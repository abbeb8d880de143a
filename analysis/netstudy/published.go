package netstudy

import "pqrepro/analysis/claims"

// Source is the paper Study B reproduces, where its published values
// (published) come from. The values are those of its abstract; this
// project has not recorded a page or table number.
var Source = claims.Citation{
	Authors: "Marques, Zavan",
	Title:   "Análise Comparativa de Performance entre Criptografia Clássica e Pós-Quântica no TLS 1.3",
	Venue:   "2026, CC BY-SA 4.0",
	Where:   "abstract: 96,000 handshakes, nine comparisons, the 10,000 round's median differences, relative increases and volume growth; page not recorded",
}

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
