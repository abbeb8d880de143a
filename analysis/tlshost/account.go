package tlshost

import (
	"fmt"
	"math"
	"slices"

	"pqrepro/analysis/stats"
	"pqrepro/analysis/tlscompare"
	"pqrepro/datasets/tlsdata"
	"pqrepro/internal/jsonnum"
)

// The host's account of the hybrid (issue 24 item 1): a primitive-cost account of
// the hybrid's increase from the host's own `openssl speed` figures,
// which the runner records in meta.json measured.host_crypto before and
// after the handshakes (experiments/tls/openssl, speed.go).
//
// Model. SecP384r1MLKEM1024 (draft-ietf-tls-ecdhe-mlkem) is ML-KEM-1024
// plus an ECDHE over P-384 in the same key share, so the hybrid's
// increase over the X25519 baseline minus ML-KEM-1024's is the P-384 work
// a handshake adds inside Ths (the X25519 work it replaces is in both
// increases and cancels). Ths runs from the ClientHello to the client's
// Finished, and the client makes its first key share before it sends the
// ClientHello (RFC 8446 4.1.2: the key_share extension is in the
// ClientHello), so that key generation is outside Ths. With a direct key
// share Ths holds three P-384 scalar multiplications, the server's key
// generation and each side's derivation of the shared point; after a
// HelloRetryRequest (RFC 8446 4.1.4) the client generates a second share
// for the group the server named, inside Ths, which makes four:
//
//	predicted_ms = n x ms_per_op["ecdh-p384"],  n = 3 (direct), 4 (HRR),
//
// where one `openssl speed ecdhp384` operation is one derivation
// (apps/speed.c times EVP_PKEY_derive with keys made beforehand) on
// OpenSSL's generic P-384, and we assume a key generation costs about one
// derivation: both are one scalar multiplication, and this build's P-384
// has no fixed-base precomputation that would make the generator's
// multiplication cheaper (Implementations["P-384"]). The speed is the mean of
// the before and after measurements; their drift says how much the host
// changed within the run. The model is OpenSSL's: it applies to the
// openssl and openssl-cli stacks, not to Go's crypto/ecdh, whose P-384
// differs (its cells are reported with Applies false). Extra
// bytes on the wire (97 for the P-384 point each way) are ignored.
// (Before issue 30 the account counted four operations in every cell,
// the client's first key generation included; the HRR cells fitted it,
// the direct cells fell short by a quarter.)
//
// The same account of ML-KEM-1024 against X25519 is
//
//	kem_predicted_ms = encaps + decaps of ML-KEM-1024
//	                   - 3 x ms_per_op["ecdh-x25519"]            (direct)
//	kem_predicted_ms = keygen + encaps + decaps of ML-KEM-1024
//	                   - 4 x ms_per_op["ecdh-x25519"]            (HRR),
//
// the server's encapsulation and the client's decapsulation (and, after
// an HRR, the client's second key generation) replacing X25519's
// server key generation and two derivations (and the client's second key
// generation), one X25519 speed operation each by the same assumption.

// Account is the primitive-cost account of the hybrid, per cell of the run.
//
// It sets each cell's observed hybrid-minus-ML-KEM-1024 increase beside
// the P-384 work the model above predicts from the host's own speeds.
type Account struct {
	Model string `json:"model"`
	// Note says why there is no account (no host_crypto in meta.json),
	// else is empty.
	Note        string                 `json:"note,omitempty"`
	CPUSettings string                 `json:"cpu_settings,omitempty"`
	Before      map[string]jsonnum.Num `json:"before_ms_per_op,omitempty"`
	After       map[string]jsonnum.Num `json:"after_ms_per_op,omitempty"`
	// P384Ms is the mean of the before and after ecdh-p384 times (one of
	// them when only one was measured); P384DriftPct = 100 (after -
	// before) / before, null with one measurement.
	P384Ms       jsonnum.Num `json:"p384_ms_per_op"`
	P384DriftPct jsonnum.Num `json:"p384_drift_pct"`
	// HybridPredictedMs and KemPredictedMs are the accounts of a direct
	// key share (3 P-384 operations), the HRR ones those after a
	// HelloRetryRequest (4).
	HybridPredictedMs    jsonnum.Num   `json:"hybrid_predicted_ms"`
	HybridPredictedHRRMs jsonnum.Num   `json:"hybrid_predicted_hrr_ms"`
	KemPredictedMs       jsonnum.Num   `json:"kem_predicted_ms"`
	KemPredictedHRRMs    jsonnum.Num   `json:"kem_predicted_hrr_ms"`
	Cells                []AccountCell `json:"cells"`
}

// AccountCell is one cell's observed hybrid-minus-ML-KEM-1024 increase
// beside the prediction.
type AccountCell struct {
	tlsdata.Cell
	// Applies: the model's P-384 is the cell's (OpenSSL stacks).
	Applies bool `json:"applies"`
	// ObservedMs is the median over rounds of the per-round hybrid
	// increase minus ML-KEM-1024's (both round-level paired differences
	// against the cell's baseline), with a percentile cluster-bootstrap
	// interval over the NEff rounds that have both.
	ObservedMs jsonnum.Num `json:"observed_ms"`
	Lower      jsonnum.Num `json:"lower"`
	Upper      jsonnum.Num `json:"upper"`
	NEff       int         `json:"n_eff"`
	// P384Ops is the number of P-384 operations inside the cell's Ths:
	// 3 with a direct key share, 4 after an HRR; PredictedMs is P384Ops
	// x the host's P-384 operation.
	P384Ops     int         `json:"p384_ops"`
	PredictedMs jsonnum.Num `json:"predicted_ms"`
	// Ratio is ObservedMs / PredictedMs.
	Ratio jsonnum.Num `json:"ratio"`
	// KemIncreaseMs is the cell's ML-KEM-1024 increase, beside
	// KemPredictedMs (or KemPredictedHRRMs in an HRR cell).
	KemIncreaseMs jsonnum.Num `json:"kem_increase_ms"`
	Note          string      `json:"note,omitempty"`
}

// Model states the account's model, for results/tls.json's methods.
const Model = "observed = median over rounds of (hybrid increase - ML-KEM-1024 increase); predicted = n x ms_per_op[ecdh-p384], n = 3 with a direct key share (the server's key generation and both derivations; the client's first key generation precedes the ClientHello, outside Ths, RFC 8446 4.1.2) and n = 4 after a HelloRetryRequest (the client's second key generation); one `openssl speed ecdhp384` operation is one derivation, a key generation assumed as dear, no fixed-base precomputation in this build; kem_predicted = ML-KEM-1024 encaps + decaps - 3 x ms_per_op[ecdh-x25519] (direct), keygen + encaps + decaps - 4 x ms_per_op[ecdh-x25519] (HRR); speeds the mean of before and after; OpenSSL stacks only"

// CellIncreases are one cell's per-round hybrid and ML-KEM-1024
// increases over the cell's baseline, the account's input.
//
// They are indexed by round, NaN where the cell has no such pair of
// blocks; KemIncreaseMs is the cell's ML-KEM-1024 increase as reported.
type CellIncreases struct {
	Cell          tlsdata.Cell
	HybridDiffsMs []float64
	KemDiffsMs    []float64
	KemIncreaseMs float64
}

// Resampling is how the account's cluster bootstrap draws.
//
// Seed, Resamples and Level are the study's bootstrap parameters;
// MinRounds is the fewest paired rounds an interval needs.
type Resampling struct {
	Seed      uint64
	Resamples int
	Level     float64
	MinRounds int
}

// NewAccount computes the account of every cell given, in their order.
//
// A run without host_crypto (hc nil or without measurements) gets a note
// and no cells: the account needs the host's own speeds.
func NewAccount(hc *CryptoMeta, cells []CellIncreases, rs Resampling) *Account {
	nan := jsonnum.Num(math.NaN())
	h := &Account{Model: Model, P384Ms: nan, P384DriftPct: nan, HybridPredictedMs: nan, HybridPredictedHRRMs: nan, KemPredictedMs: nan, KemPredictedHRRMs: nan, Cells: []AccountCell{}}
	if hc == nil || (hc.Before == nil && hc.After == nil) {
		h.Note = "meta.json has no measured.host_crypto (a run recorded before issue 24, or the OpenSSL build was not run): no primitive-cost account"
		if hc != nil && len(hc.Errors) > 0 {
			h.Note += "; the runner says: " + fmt.Sprint(hc.Errors)
		}
		return h
	}
	conv := func(s *Speed) map[string]jsonnum.Num {
		if s == nil {
			return nil
		}
		out := map[string]jsonnum.Num{}
		for k, v := range s.MsPerOp {
			out[k] = jsonnum.Num(v)
		}
		return out
	}
	h.Before, h.After = conv(hc.Before), conv(hc.After)
	if hc.Before != nil {
		h.CPUSettings = hc.Before.CPUSettings
	} else {
		h.CPUSettings = hc.After.CPUSettings
	}
	speed := func(op string) float64 {
		var xs []float64
		for _, s := range []*Speed{hc.Before, hc.After} {
			if s != nil {
				if v, ok := s.MsPerOp[op]; ok {
					xs = append(xs, v)
				}
			}
		}
		if len(xs) == 0 {
			return math.NaN()
		}
		sum := 0.0
		for _, x := range xs {
			sum += x
		}
		return sum / float64(len(xs))
	}
	p384 := speed("ecdh-p384")
	h.P384Ms = jsonnum.Num(p384)
	if hc.Before != nil && hc.After != nil {
		if b, a := hc.Before.MsPerOp["ecdh-p384"], hc.After.MsPerOp["ecdh-p384"]; b > 0 && a > 0 {
			h.P384DriftPct = jsonnum.Num(100 * (a - b) / b)
		}
	}
	h.HybridPredictedMs = jsonnum.Num(float64(P384Ops(false)) * p384)
	h.HybridPredictedHRRMs = jsonnum.Num(float64(P384Ops(true)) * p384)
	encDec, x25519 := speed("mlkem1024-encaps")+speed("mlkem1024-decaps"), speed("ecdh-x25519")
	h.KemPredictedMs = jsonnum.Num(encDec - 3*x25519)
	h.KemPredictedHRRMs = jsonnum.Num(speed("mlkem1024-keygen") + encDec - 4*x25519)
	for _, c := range cells {
		ops := P384Ops(c.Cell.KeyShare == tlsdata.KeyShareHRR)
		hcell := AccountCell{Cell: c.Cell, Applies: c.Cell.Stack != tlsdata.StackGo,
			P384Ops: ops, PredictedMs: jsonnum.Num(float64(ops) * p384), KemIncreaseMs: jsonnum.Num(c.KemIncreaseMs),
			ObservedMs: nan, Lower: nan, Upper: nan, Ratio: nan}
		if !hcell.Applies {
			hcell.Note = "Go's crypto/ecdh P-384, not OpenSSL's: the prediction does not apply"
		}
		_, dk, dh := tlscompare.PairRounds(c.KemDiffsMs, c.HybridDiffsMs)
		hcell.NEff = len(dk)
		per := make([]float64, len(dk))
		for j := range dk {
			per[j] = dh[j] - dk[j]
		}
		if len(per) > 0 {
			med, _ := stats.Median(per)
			hcell.ObservedMs = jsonnum.Num(med)
			if p384 > 0 && ops > 0 {
				hcell.Ratio = jsonnum.Num(med / (float64(ops) * p384))
			}
		}
		switch {
		case hcell.NEff < rs.MinRounds:
			hcell.Note = joinNote(hcell.Note, fmt.Sprintf("%d paired round(s): the interval needs at least %d", hcell.NEff, rs.MinRounds))
		case slices.Min(per) == slices.Max(per):
			hcell.Note = joinNote(hcell.Note, "no spread over rounds to resample")
		default:
			stat := func(idx []int) float64 { return stats.MedianAt(per, idx) }
			if ci, err := stats.ClusterBootstrap(hcell.NEff, stat, stats.ClusterConfig{
				Seed: rs.Seed, Stream: tlscompare.Stream(c.Cell.String() + "|host-cost"), Resamples: rs.Resamples, Level: rs.Level}); err == nil {
				hcell.Lower, hcell.Upper = jsonnum.Num(ci.Lower), jsonnum.Num(ci.Upper)
			}
		}
		h.Cells = append(h.Cells, hcell)
	}
	return h
}

func joinNote(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; " + b
}
