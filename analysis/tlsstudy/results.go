package tlsstudy

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"pqrepro/analysis/gapmodel"
	"pqrepro/analysis/tlscompare"
	"pqrepro/analysis/tlshost"
	"pqrepro/internal/jsonnum"
)

// Schema is the version of the results/tls.json layout.
const Schema = 1

// Results is the content of results/tls.json. Times are in milliseconds,
// bytes in bytes. It is written with sorted keys (MarshalResults).
type Results struct {
	Schema  int    `json:"schema"`
	Study   string `json:"study"` // "tls"
	Profile string `json:"profile"`
	// Input identifies the dataset the results follow from.
	Input Input `json:"input"`
	// Methods states the definitions and test conventions, for the paper.
	Methods map[string]string `json:"methods"`
	// Params are the analysis parameters as used.
	Params ResultParams `json:"params"`
	// Host is the primitive-cost account of the hybrid from meta.json's
	// measured.host_crypto (analysis/tlshost, Account); absent before
	// issue 24's results.
	Host *tlshost.Account `json:"host_cost,omitempty"`
	// Stalls is the per-cell packet timing that shows Nagle or
	// delayed-ACK stalls (stalls.go); absent before issue 24's results.
	Stalls *Stalls `json:"stalls,omitempty"`
	// GapModelRows are the emulated-path cells the gap model
	// (analysis/gapmodel, issue 30) is fitted on; absent when the run
	// measured no emulated path (analysis/tlsgapmodel then says "not measured
	// in this run").
	GapModelRows []gapmodel.Row `json:"gap_model_rows,omitempty"`
	// GapModelMissing says, per registered Ths definition
	// (gapmodel.Definitions) that some cell cannot give, why: the joint
	// fit leaves it out and its table says so.
	GapModelMissing map[string]string `json:"gap_model_missing,omitempty"`
	// Primary says which cell the claims are judged on and why
	// (PrimaryChoice: the stated cell, its fallback, or neither).
	Primary PrimaryChoice `json:"primary_choice"`
	// Configs holds one entry per configuration with measured
	// connections, in table order (cert key, group, chain, HRR).
	Configs []ConfigResult `json:"configs"`
	// Agreement pools the Ths vs in-process timer agreement over every
	// measured connection.
	Agreement Agreement `json:"agreement"`
	// Families are the two comparison families: "paper" (the paper's four
	// configurations) and "matrix" (every configuration). Each has its own
	// multiplicity correction.
	Families map[string]*Family `json:"families"`
	// Published are the study's own numbers, for side-by-side tables.
	Published PublishedResults `json:"published"`
	// Gap sets the paper's four configurations of every cell beside the
	// published increases, and estimates each factor's effect (gap.go).
	Gap *Gap `json:"gap"`
	// Dependence is the serial dependence of each primary-cell
	// configuration and the run's drift by fifths (dependence.go).
	Dependence *Dependence `json:"dependence"`
}

// Input describes the raw dataset.
type Input struct {
	Path     string `json:"path"`   // slash-separated, relative to the root
	SHA256   string `json:"sha256"` // of the records file as read
	Rows     int    `json:"rows" range:"0,"`
	Warmups  int    `json:"warmups" range:"0,"`
	Measured int    `json:"measured" range:"0,"`
	// OtherCells counts rows outside the primary cell (another stack,
	// path or key-share mode), which only the gap analysis reads: the
	// paper's comparisons are within one cell, and pooling two would mix
	// two distributions under one config ID. Absent when zero.
	OtherCells int `json:"other_cell_rows,omitempty" range:"0,"`
}

// ResultParams are the parameters of the analysis as used.
type ResultParams struct {
	Baseline string            `json:"baseline"`
	Paper    map[string]string `json:"paper"`        // role -> config ID in the primary cell
	Cell     Cell              `json:"primary_cell"` // the cell of the families

	Bootstrap BootstrapParams `json:"bootstrap"`
	Level     float64         `json:"level" range:"0,1"`
	MinN      int             `json:"min_connections" range:"0,"`
	MinRounds int             `json:"min_rounds" range:"0,"` // fewest paired rounds for a round-level interval and test
}

// BootstrapParams are what is needed to rerun the bootstrap.
type BootstrapParams struct {
	Seed      uint64  `json:"seed"`
	Stream    string  `json:"stream"` // stats.BootstrapStream in hex (a JSON number would lose bits above 2^53 in many readers)
	Resamples int     `json:"resamples" range:"0,"`
	Level     float64 `json:"level" range:"0,1"`
}

// ConfigResult is everything about one configuration.
type ConfigResult struct {
	Config  string `json:"config"` // config ID
	Label   string `json:"label"`  // for tables and figures, e.g. "ML-DSA-87 + X25519"
	CertKey string `json:"cert_key"`
	Group   string `json:"group"`
	Chain   bool   `json:"chain"`
	HRR     bool   `json:"hrr"`          // HelloRetryRequest expected
	N       int    `json:"n" range:"0,"` // measured connections
	Warmups int    `json:"warmups" range:"0,"`
	// ThsMs describes the capture's handshake time in ms.
	ThsMs Summary `json:"ths_ms"`
	// ECDFMs are the R type 7 quantiles of Ths at p = 0, 0.01, ..., 1
	// (101 values), a downsampled ECDF for figures.
	ECDFMs []Num `json:"ecdf_ms"`
	// Bytes are per-connection medians (frame bytes include the link
	// header; TCP payload bytes exclude all headers).
	Bytes           Bytes           `json:"bytes"`
	Packets         Directions      `json:"packets"` // per-connection medians
	Retransmissions Retransmissions `json:"retransmissions"`
	Agreement       Agreement       `json:"agreement"`
	// InprocClientMs and InprocServerMs are medians of the in-process
	// timers (null when the dataset has none).
	InprocClientMs Num `json:"inproc_client_median_ms"`
	InprocServerMs Num `json:"inproc_server_median_ms"`
}

// Summary is stats.Summary in ms.
type Summary = jsonnum.Summary

// Bytes are per-connection median byte counts.
type Bytes struct {
	Frame      Directions `json:"frame"`
	TCPPayload Directions `json:"tcp_payload"`
}

// Directions are medians per direction and of the per-connection total.
type Directions struct {
	C2S   Num `json:"c2s"`
	S2C   Num `json:"s2c"`
	Total Num `json:"total" range:"0,"`
}

// Retransmissions summarise retransmitted segments.
type Retransmissions struct {
	Total       int `json:"total" range:"0,"`       // over all measured connections
	Connections int `json:"connections" range:"0,"` // connections with at least one
	Max         int `json:"max" range:"0,"`         // most in one connection
}

// Agreement compares the capture's Ths with the client's in-process
// timer.
//
// The timer runs from dial start to handshake complete, so it also spans
// the TCP handshake and the client's work after its Finished left.
type Agreement struct {
	// Ths: d = inproc_client - Ths.
	Ths AgreementStat `json:"ths"`
	// SynToFinished: d = inproc_client - (client Finished - SYN), the
	// capture span closest to what the timer measures.
	SynToFinished AgreementStat `json:"syn_to_finished"`
}

// AgreementStat is the median of the differences d and the 95th
// percentile of |d|, in ms, over the n connections that have both values.
type AgreementStat struct {
	N            int `json:"n" range:"0,"`
	MedianDiffMs Num `json:"median_diff_ms"`
	P95AbsDiffMs Num `json:"p95_abs_diff_ms"`
}

// Family is a set of configurations compared with one baseline.
type Family struct {
	Baseline string   `json:"baseline"`
	Configs  []string `json:"configs"` // baseline first, then targets
	// Kruskal treats every handshake as an independent observation
	// (descriptive only: the handshakes of a block are serially
	// dependent); Friedman compares the configurations over rounds.
	Kruskal  Kruskal             `json:"kruskal_wallis"`
	Friedman tlscompare.Friedman `json:"friedman"`
	// BaselineRoundsMs is the baseline's block median per round (index =
	// round; null where it has no block), the drift the rounds control.
	BaselineRoundsMs []Num        `json:"baseline_rounds_ms"`
	Comparisons      []Comparison `json:"comparisons"`
}

// Kruskal is the Kruskal-Wallis test over all of a family's
// configurations.
type Kruskal struct {
	H        Num `json:"h"`
	DF       int `json:"df" range:"0,"`
	P        Num `json:"p" range:"0,1"`
	Epsilon2 Num `json:"epsilon2" range:"0,1"`
	N        int `json:"n" range:"0,"`
}

// Comparison is one target against the family's baseline. Differences
// are target minus baseline; a positive delta means the target is slower.
type Comparison struct {
	Target           string `json:"target"`
	Baseline         string `json:"baseline"`
	Role             string `json:"role,omitempty"` // paper family only
	NTarget          int    `json:"n_target" range:"0,"`
	NBaseline        int    `json:"n_baseline" range:"0,"`
	MedianTargetMs   Num    `json:"median_target_ms"`
	MedianBaselineMs Num    `json:"median_baseline_ms"`
	MedianDiffMs     Num    `json:"median_diff_ms"`
	MedianDiffPct    Num    `json:"median_diff_pct"` // 100 (median_t - median_b) / median_b

	// Rounds is the round-level comparison, the study's inference:
	// increase, interval and test over rounds (analysis/tlscompare).
	Rounds tlscompare.RoundComparison `json:"rounds"`
	// PHolm and PBonferroni adjust the round-level signed-rank p
	// (Rounds.SignedRank.P) over the family's comparisons that have one.
	PHolm       Num `json:"p_holm" range:"0,1"`
	PBonferroni Num `json:"p_bonferroni" range:"0,1"`
	// MannWhitney, Cliff, HodgesLehmann and Bootstrap treat the
	// handshakes as independent samples: descriptive only (their p and
	// intervals overstate the evidence; Methods says so).
	MannWhitney   MannWhitney        `json:"mann_whitney"`
	Cliff         Cliff              `json:"cliff_delta"`
	HodgesLehmann HodgesLehmann      `json:"hodges_lehmann_ms"`
	Bootstrap     Bootstrap          `json:"bootstrap_median_diff_ms"`
	Published     *PublishedIncrease `json:"published,omitempty"` // paper family only
}

// MannWhitney is the two-sided test of baseline (X) against target (Y).
type MannWhitney struct {
	U       Num    `json:"u_baseline"` // U of the baseline sample, as SciPy returns it
	UTarget Num    `json:"u_target"`
	P       Num    `json:"p" range:"0,1"`
	Z       Num    `json:"z"`
	Method  string `json:"method"`
}

// Cliff is Cliff's delta of the target against the baseline.
type Cliff struct {
	Delta     Num    `json:"delta" range:"-1,1"`
	Lower     Num    `json:"lower"`
	Upper     Num    `json:"upper"`
	Level     Num    `json:"level" range:"0,1"`
	Magnitude string `json:"magnitude"`
}

// HodgesLehmann is the shift estimate and its interval, in ms.
type HodgesLehmann struct {
	Shift  Num    `json:"shift"`
	Lower  Num    `json:"lower"`
	Upper  Num    `json:"upper"`
	Level  Num    `json:"level" range:"0,1"`
	Method string `json:"method"`
}

// Bootstrap is the percentile interval of the median difference, in ms.
type Bootstrap struct {
	Estimate  Num    `json:"estimate"`
	Lower     Num    `json:"lower"`
	Upper     Num    `json:"upper"`
	Level     Num    `json:"level" range:"0,1"`
	Resamples int    `json:"resamples" range:"0,"`
	Seed      uint64 `json:"seed"`
}

// Num and NumDigits are those of internal/jsonnum: numbers rounded to
// NumDigits significant digits, null for NaN.
type Num = jsonnum.Num

// NumDigits is the number of significant digits results keep.
const NumDigits = jsonnum.Digits

// MarshalResults encodes r canonically: indented JSON with every object's
// keys sorted (struct fields included), numbers exactly as encoding/json
// writes them, and a final newline.
func MarshalResults(r *Results) ([]byte, error) { return jsonnum.Marshal(r) }

// DecodeResults reads results/tls.json strictly and checks its schema
// version and factors. Errors name the file by name, and jsonnum.Decode
// holds it to its schema: a mistyped, missing or unknown field is an error
// naming it. It is the study's one decoder of its results, for its stages
// and for the pipeline's comparison and calibration hooks.
func DecodeResults(name string, b []byte) (*Results, error) {
	r, err := jsonnum.Decode[Results](name, b)
	if err != nil {
		return nil, err
	}
	if r.Schema != Schema {
		return nil, fmt.Errorf("read %s: schema %d, want %d (rebuild it with mage analyze)", name, r.Schema, Schema)
	}
	if err := r.check(); err != nil {
		return nil, fmt.Errorf("read %s: %w (rebuild it with mage analyze)", name, err)
	}
	return r, nil
}

// checkFactorOrder accepts the factors of Factors in table order, or of
// an earlier analysis that had fewer of them (stack, path, keyshare before
// the process and runtime factors), so that a reference run's results
// stay readable; any other list is an error.
func checkFactorOrder(fs []FactorResult) error {
	at := 0
	for _, f := range fs {
		i := slices.IndexFunc(Factors[at:], func(g Factor) bool { return g.Name == f.Factor })
		if i < 0 {
			return fmt.Errorf("gap: factor %q is unknown or out of order (want a subsequence of %s)", f.Factor, factorList())
		}
		at += i + 1
	}
	if len(fs) == 0 {
		return fmt.Errorf("gap: no factors (want %s)", factorList())
	}
	return nil
}

func factorList() string {
	names := make([]string, len(Factors))
	for i, f := range Factors {
		names[i] = f.Name
	}
	return strings.Join(names, ", ")
}

// check verifies what the renderers rely on: both families, each with a
// baseline and at least one comparison whose configurations have results
// (with a 101-point ECDF), and a role on every paper comparison.
func (r *Results) check() error {
	if len(r.Configs) == 0 {
		return errors.New("no configurations")
	}
	if r.Gap == nil {
		return errors.New("no gap analysis")
	}
	if r.Dependence == nil || len(r.Dependence.Fifths.BaselineMs) != 5 {
		return errors.New("no dependence analysis (with five fifths)")
	}
	primaries := 0
	for _, c := range r.Gap.Cells {
		if c.Primary {
			primaries++
		}
		for _, cmp := range c.Comparisons {
			if roleMacro[cmp.Role] == "" {
				return fmt.Errorf("gap cell %s: target %s has role %q, want one of %v", c.Cell, cmp.Target, cmp.Role, Roles)
			}
		}
	}
	if r.Primary.Status == "" { // results written before the fallback rule: the stated cell was judged
		r.Primary = PrimaryChoice{Cell: r.Params.Cell, Judged: r.Params.Cell, Status: PrimaryStated,
			Note: fmt.Sprintf("the claims are judged on the primary cell %s ([paper.cell])", r.Params.Cell)}
	}
	if want := map[bool]int{true: 1, false: 0}[r.Primary.Judgeable()]; primaries != want {
		return fmt.Errorf("gap: %d primary cells, want %d (primary choice %s)", primaries, want, r.Primary.Status)
	}
	if err := checkFactorOrder(r.Gap.Factors); err != nil {
		return err
	}
	for _, c := range r.Configs {
		if len(c.ECDFMs) != 101 {
			return fmt.Errorf("config %s: %d ECDF points, want 101", c.Config, len(c.ECDFMs))
		}
	}
	for _, name := range []string{"paper", "matrix"} {
		f := r.Families[name]
		if f == nil {
			return fmt.Errorf("no %s family", name)
		}
		if r.config(f.Baseline) == nil {
			return fmt.Errorf("%s family: baseline %q has no results", name, f.Baseline)
		}
		if len(f.Comparisons) == 0 {
			return fmt.Errorf("%s family: no comparisons", name)
		}
		for _, c := range f.Comparisons {
			if r.config(c.Target) == nil {
				return fmt.Errorf("%s family: target %q has no results", name, c.Target)
			}
			if name == "paper" && roleMacro[c.Role] == "" {
				return fmt.Errorf("paper family: target %s has role %q, want one of %v", c.Target, c.Role, Roles)
			}
		}
	}
	return nil
}

// Config returns the result of a config ID, or nil.
func (r *Results) Config(id string) *ConfigResult { return r.config(id) }

// PaperFamily returns the paper family the claims are judged on, or why
// there is none (no judged cell, or no family).
func (r *Results) PaperFamily() (*Family, error) { return paperFamily(r) }

// config returns the result of a config ID, or nil.
func (r *Results) config(id string) *ConfigResult {
	for i := range r.Configs {
		if r.Configs[i].Config == id {
			return &r.Configs[i]
		}
	}
	return nil
}
