package picostudy

import (
	"slices"

	"pqrepro/analysis/stats"
	"pqrepro/datasets/picodata"
)

// DeadlinesMs are the hard signing deadlines the original's advice is
// tested against: 100 ms, 1 s and 10 s.
var DeadlinesMs = []float64{100, 1000, 10000}

// ConstantTimeSpread is the largest relative cycle spread of a signing
// operation, (max - min) / mean, that the analysis calls constant. That
// is, well above the few cycles SPHINCS+ varies by (its hash inputs
// have fixed lengths) and far below ML-DSA's rejection loop, which
// repeats whole iterations (a spread of the order of 100 %).
const ConstantTimeSpread = 1e-4

// Recommendation is the original's closing advice put to the test. That
// is, where ML-DSA's signing time varies too much for a hard deadline, use
// a scheme whose signing time does not vary, such as SLH-DSA (FIPS 205).
// It sets every signature scheme of the run that signs (ML-DSA-44/65/87,
// the SPHINCS+ sets) side by side on the same board and against the
// deadlines. This is our extension of the study: the original measured no
// SLH-DSA.
type Recommendation struct {
	// Implementation says what the SPHINCS+ rows ran.
	Implementation string      `json:"implementation"`
	DeadlinesMs    []float64   `json:"deadlines_ms"`
	Rows           []SignRow   `json:"rows"`
	NotMeasured    []string    `json:"not_measured"` // SPHINCS+ sets this run does not have
	Findings       FindingsRec `json:"findings"`
}

// FindingsRec is what the rows say about the advice, as numbers the text
// quotes.
type FindingsRec struct {
	// FastestSPHINCS is the SPHINCS+ set with the smallest mean signing
	// time, and SlowdownVsMLDSA44 its mean over ML-DSA-44's.
	FastestSPHINCS    string   `json:"fastest_sphincs"`
	SlowdownVsMLDSA44 *float64 `json:"slowdown_vs_mldsa44"`
	// SPHINCSMeetsMs is the smallest deadline some SPHINCS+ set of the run
	// always meets (0: none).
	SPHINCSMeetsMs float64 `json:"sphincs_meets_ms"`
}

// SignRow is one scheme's signing on the board.
type SignRow struct {
	Scheme string   `json:"scheme"`
	Family string   `json:"family"` // "ml-dsa" or "sphincs+"
	N      int      `json:"n"`
	MeanMs float64  `json:"mean_ms"`
	P99Ms  float64  `json:"p99_ms"`
	MinMs  float64  `json:"min_ms"`
	MaxMs  float64  `json:"max_ms"`
	CV     *float64 `json:"cv"` // null for one signature
	// CycleSpread is (max - min) / mean of the signing cycles; Constant is
	// CycleSpread <= ConstantTimeSpread with at least two signatures.
	CycleSpread float64 `json:"cycle_spread"`
	Constant    bool    `json:"constant_time"`
	StackBytes  uint32  `json:"sign_stack_bytes"`
	// CodeFlashBytes is the scheme's own code; ImageFlashBytes the image.
	CodeFlashBytes  uint32    `json:"code_flash_bytes"`
	ImageFlashBytes uint32    `json:"image_flash_bytes"`
	EnergyMJ        float64   `json:"sign_energy_mj"`
	VerifyMeanMs    *float64  `json:"verify_mean_ms"`
	Deadlines       []Meeting `json:"deadlines"`
}

// Meeting is how often one scheme's signing met one deadline: Met of N
// signatures took at most DeadlineMs. Lo and Hi are the Wilson 95 %
// interval of the probability (stats.Wilson). For a constant-time scheme
// the probability is 0 or 1 and the interval only reflects n; Verdict
// then rests on the constant time: "met" when every signature met it,
// "missed" when none did. For the others, "met" needs Lo >= 0.95 and
// "missed" Hi <= 0.05; anything else is "sometimes".
type Meeting struct {
	DeadlineMs float64 `json:"deadline_ms"`
	Met        int     `json:"met"`
	N          int     `json:"n"`
	Share      float64 `json:"share"`
	Lo         float64 `json:"lo"`
	Hi         float64 `json:"hi"`
	Verdict    string  `json:"verdict"`
}

// recommendation builds the comparison from res's signing operations, or
// nil when the run signs with no ML-DSA set (nothing to compare with).
func recommendation(res *Results) *Recommendation {
	rec := &Recommendation{DeadlinesMs: slices.Clone(DeadlinesMs), NotMeasured: []string{},
		Implementation: "SPHINCS+ round 3.1 -simple (PQClean clean C): the hashes of FIPS 205 SLH-DSA, so its cost, " +
			"but not byte-compatible signatures (FIPS 205 adds a 2-byte domain prefix to the message and reads the FORS indices big-endian)"}
	for _, s := range slices.Concat(picodata.DSASchemes, picodata.SPHINCSSchemes) {
		sc := res.Schemes[s]
		if sc == nil || sc.Ops["sign"] == nil || len(sc.Ops["sign"].SamplesMs) == 0 {
			if slices.Contains(picodata.SPHINCSSchemes, s) {
				rec.NotMeasured = append(rec.NotMeasured, s)
			}
			continue
		}
		rec.Rows = append(rec.Rows, signRow(s, sc))
	}
	if !slices.ContainsFunc(rec.Rows, func(r SignRow) bool { return r.Family == "ml-dsa" }) {
		return nil
	}
	var fastest *SignRow
	for i, r := range rec.Rows {
		if r.Family != "sphincs+" {
			continue
		}
		if fastest == nil || r.MeanMs < fastest.MeanMs {
			fastest = &rec.Rows[i]
		}
		for _, m := range r.Deadlines {
			if m.Verdict == "met" && (rec.Findings.SPHINCSMeetsMs == 0 || m.DeadlineMs < rec.Findings.SPHINCSMeetsMs) {
				rec.Findings.SPHINCSMeetsMs = m.DeadlineMs
			}
		}
	}
	if fastest != nil {
		rec.Findings.FastestSPHINCS = fastest.Scheme
		if base, ok := rowOf(rec, "ml-dsa-44"); ok {
			rec.Findings.SlowdownVsMLDSA44 = num(fastest.MeanMs / base.MeanMs)
		}
	}
	return rec
}

// rowOf is scheme's row, if rec has one (rec may be nil).
func rowOf(rec *Recommendation, scheme string) (SignRow, bool) {
	if rec != nil {
		for _, r := range rec.Rows {
			if r.Scheme == scheme {
				return r, true
			}
		}
	}
	return SignRow{}, false
}

// signRow describes one scheme's signing and checks it against every
// deadline.
func signRow(s string, sc *Scheme) SignRow {
	o := sc.Ops["sign"]
	row := SignRow{Scheme: s, Family: "ml-dsa", N: o.N, MeanMs: deref(o.MeanMs), P99Ms: deref(o.P99Ms),
		MinMs: deref(o.MinMs), MaxMs: deref(o.MaxMs), CV: o.CV, StackBytes: o.PeakStackBytes,
		CodeFlashBytes: sc.Code.FlashBytes, ImageFlashBytes: sc.ImageFlashBytes, EnergyMJ: deref(o.EnergyMJ)}
	if slices.Contains(picodata.SPHINCSSchemes, s) {
		row.Family = "sphincs+"
	}
	if v := sc.Ops["verify"]; v != nil {
		row.VerifyMeanMs = v.MeanMs
	}
	if o.MinCycles != nil && o.MaxCycles != nil && o.MeanCycles != nil && *o.MeanCycles > 0 {
		row.CycleSpread = round(float64(*o.MaxCycles-*o.MinCycles) / *o.MeanCycles)
		row.Constant = o.N >= 2 && row.CycleSpread <= ConstantTimeSpread
	}
	for _, d := range DeadlinesMs {
		m := Meeting{DeadlineMs: d, N: len(o.SamplesMs)}
		for _, v := range o.SamplesMs {
			if v <= d {
				m.Met++
			}
		}
		m.Share = round(float64(m.Met) / float64(m.N))
		lo, hi := stats.Wilson(m.Met, m.N)
		m.Lo, m.Hi = round(lo), round(hi)
		switch {
		case row.Constant && m.Met == m.N, !row.Constant && m.Lo >= 0.95:
			m.Verdict = "met"
		case row.Constant && m.Met == 0, !row.Constant && m.Hi <= 0.05:
			m.Verdict = "missed"
		default:
			m.Verdict = "sometimes"
		}
		row.Deadlines = append(row.Deadlines, m)
	}
	return row
}
