package tlsstudy

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"pqrepro/datasets/tlsdata"
)

// Roles of the paper's four configurations, in the order Params.Paper
// lists them.
var Roles = []string{"baseline", "pq-sig", "pq-kem", "hybrid"}

// roleMacro is the macro-name part of each role (letters only).
var roleMacro = map[string]string{"baseline": "Baseline", "pq-sig": "Sig", "pq-kem": "Kem", "hybrid": "Hybrid"}

// Params are what the pipeline passes to the stages. Every field becomes a
// stage parameter, so a change reruns the analysis.
type Params struct {
	// Profile names the run's profile (quick, full); it is recorded in the
	// results, not used for any decision.
	Profile string
	// Baseline is the config ID every target is compared with, e.g.
	// "ed25519/X25519" (datasets/tlsdata.ParseConfigID).
	Baseline string
	// Paper are the paper's four configuration IDs in the order of Roles:
	// baseline (must equal Baseline), PQ signature only, PQ KEM only,
	// hybrid. The published results are attached by this position.
	Paper []string
	// BootstrapSeed seeds the percentile bootstrap of the median
	// differences (stats.BootstrapMedianDiff); it is recorded in the
	// results.
	BootstrapSeed uint64
	// BootstrapResamples is the number of bootstrap resamples; 0 means
	// DefaultResamples.
	BootstrapResamples int
	// Cell is the primary cell: the paper and matrix families compare the
	// configurations of this stack, path and key-share mode, the paper's
	// IDs (Go, direct, e.g. "ed25519/X25519") named as the cell names them
	// ("ed25519/X25519/openssl"). Zero fields are the records' defaults
	// (Go, loopback, direct). The pipeline sets it from [paper.cell] of
	// experiments/tls.toml.
	Cell Cell
	// Fallback is the primary cell of a run without Cell (the pipeline
	// sets it from [paper.fallback]; the runner leaves the docker cells
	// out on a host without Docker and says so in meta.json): the
	// analysis judges on the first of Cell, Fallback that the run has
	// (PrimaryChoice). The zero Fallback means none.
	Fallback Cell
	// SourceDateEpoch is the date of the figures' PDFs (the figures
	// stage's parameter SOURCE_DATE_EPOCH); zero is the default (repro.EpochOr).
	SourceDateEpoch time.Time
}

// DefaultResamples is the bootstrap size when Params leaves it 0.
const DefaultResamples = 2000

// Confidence level of every interval (Cliff's delta, Hodges-Lehmann,
// bootstrap).
const Level = 0.95

// MinConnections is the fewest measured connections a configuration
// needs. That is, with one, the standard deviation, Cliff's variance
// and its interval are undefined (divisor n-1), so such a dataset is
// refused.
const MinConnections = 2

// DefaultParams are the paper's configurations with the Ed25519 + X25519
// baseline and a fixed bootstrap seed.
func DefaultParams(profile string) Params {
	return Params{
		Profile:       profile,
		Baseline:      "ed25519/X25519",
		Paper:         []string{"ed25519/X25519", "mldsa87/X25519", "ed25519/MLKEM1024", "ed25519/SecP384r1MLKEM1024"},
		BootstrapSeed: 20260101,
	}
}

// ParamsFrom are DefaultParams with the paper's configurations, primary
// cell and fallback of the spec's design d, and the figures' date epoch.
// It is the study's spec-to-parameters translation, so the pipeline only
// calls it.
func ParamsFrom(profile string, d tlsdata.Design, epoch time.Time) (Params, error) {
	p := DefaultParams(profile)
	p.SourceDateEpoch = epoch
	p.Paper = nil
	for _, role := range Roles {
		id, ok := d.Configs[role]
		if !ok {
			return Params{}, fmt.Errorf("[[paper.configs]] has no configuration named %q: add it", role)
		}
		p.Paper = append(p.Paper, id)
	}
	p.Baseline = p.Paper[0]
	p.Cell = d.Cell
	// [paper.fallback]: the analysis judges on the first of the two
	// cells the run has (a host without Docker runs no docker cell).
	p.Fallback = d.Fallback
	return p, p.Validate()
}

// Validate checks the parameters and says what to fix.
func (p Params) Validate() error {
	var errs []error
	if p.Profile == "" {
		errs = append(errs, errors.New("profile is empty"))
	}
	if _, err := tlsdata.ParseConfigID(p.Baseline); err != nil {
		errs = append(errs, fmt.Errorf("baseline: %w", err))
	}
	if len(p.Paper) != len(Roles) {
		errs = append(errs, fmt.Errorf("paper lists %d configurations, want %d (%s)", len(p.Paper), len(Roles), strings.Join(Roles, ", ")))
	} else {
		if p.Paper[0] != p.Baseline {
			errs = append(errs, fmt.Errorf("paper[0] (the paper's baseline) is %q but baseline is %q", p.Paper[0], p.Baseline))
		}
		seen := map[string]bool{}
		for i, id := range p.Paper {
			if _, err := tlsdata.ParseConfigID(id); err != nil {
				errs = append(errs, fmt.Errorf("paper %s: %w", Roles[i], err))
			}
			if seen[id] {
				errs = append(errs, fmt.Errorf("paper lists %s twice", id))
			}
			seen[id] = true
		}
	}
	if err := p.Cell.OrDefault().Validate(); err != nil {
		errs = append(errs, fmt.Errorf("primary %w", err))
	}
	if p.Fallback != (Cell{}) {
		if err := p.Fallback.OrDefault().Validate(); err != nil {
			errs = append(errs, fmt.Errorf("fallback %w", err))
		}
	}
	for _, id := range p.Paper {
		if c, err := tlsdata.ParseConfigID(id); err == nil && (c.HRR || c.Stack != "") {
			errs = append(errs, fmt.Errorf("paper %s: name it without /hrr, /openssl or /openssl-cli; the primary cell adds them", id))
		}
	}
	if p.BootstrapResamples < 0 || p.BootstrapResamples > 1_000_000 {
		errs = append(errs, fmt.Errorf("bootstrap resamples %d: want 0 (default %d) to 1000000", p.BootstrapResamples, DefaultResamples))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("tls analysis parameters: %w", err)
	}
	return nil
}

func (p Params) resamples() int {
	if p.BootstrapResamples == 0 {
		return DefaultResamples
	}
	return p.BootstrapResamples
}

// Stage parameter names of tls:analyze.
const (
	paramProfile   = "profile"
	paramBaseline  = "baseline"
	paramPaper     = "paper"
	paramSeed      = "bootstrap_seed"
	paramResamples = "bootstrap_resamples"
	paramCell      = "primary_cell"
	paramFallback  = "fallback_cell"
)

func (p Params) stageParams() map[string]string {
	return map[string]string{
		paramProfile:   p.Profile,
		paramBaseline:  p.Baseline,
		paramPaper:     strings.Join(p.Paper, ","),
		paramSeed:      strconv.FormatUint(p.BootstrapSeed, 10),
		paramResamples: strconv.Itoa(p.resamples()),
		paramCell:      p.Cell.OrDefault().String(),
		paramFallback:  p.fallbackString(),
	}
}

// fallbackString is the fallback cell's stage parameter: "" for none.
func (p Params) fallbackString() string {
	if p.Fallback == (Cell{}) {
		return ""
	}
	return p.Fallback.OrDefault().String()
}

// paramsFrom rebuilds Params from a stage's parameters, so that the
// analysis runs on exactly what the lock file records.
func paramsFrom(get func(string) string) (Params, error) {
	p := Params{Profile: get(paramProfile), Baseline: get(paramBaseline)}
	if s := get(paramPaper); s != "" {
		p.Paper = strings.Split(s, ",")
	}
	var err error
	if p.BootstrapSeed, err = strconv.ParseUint(get(paramSeed), 10, 64); err != nil {
		return p, fmt.Errorf("parameter %s=%q: want an unsigned integer", paramSeed, get(paramSeed))
	}
	if p.BootstrapResamples, err = strconv.Atoi(get(paramResamples)); err != nil {
		return p, fmt.Errorf("parameter %s=%q: want an integer", paramResamples, get(paramResamples))
	}
	if s := get(paramCell); s != "" {
		if p.Cell, err = tlsdata.ParseCell(s); err != nil {
			return p, fmt.Errorf("parameter %s: %w", paramCell, err)
		}
	}
	if s := get(paramFallback); s != "" {
		if p.Fallback, err = tlsdata.ParseCell(s); err != nil {
			return p, fmt.Errorf("parameter %s: %w", paramFallback, err)
		}
	}
	return p, p.Validate()
}
