// Package netstudy is the analysis of Study B (Marques and Zavan 2026):
// X25519 against X25519MLKEM768 across three emulated networks and rounds
// of handshakes. It turns a run folder written by experiments/net/netrun
// (records.csv.gz and meta.json, read with datasets/netdata) into
// results/net.json, the figures and the LaTeX tables and numbers of the
// paper, as three repro stages.
//
// The analysis follows the paper: descriptive statistics per scenario,
// round and group, median differences in ms and percent, Vargha-Delaney
// A12 as the effect size (the measurements are serial, so the paper makes
// no claim of significance), bytes per connection and their growth, and the
// nine comparisons (3 scenarios x 3 rounds) as a table. It adds serial
// diagnostics per series on the values and on their ranks (ACF at lags
// 1..MaxLag, Ljung-Box Q at MaxLag, the runs test about the median) with
// the effective sample size on ranks; intervals and tests of every
// difference from the circular block bootstrap of each series
// (inference.go), Bonferroni over the comparisons; each scenario's
// difference over its rounds with the Student t interval over them (the
// series is the unit of replication); and a two-sided Mann-Whitney U as a
// supplement only (it treats the handshakes as independent). Conventions
// are those of analysis/stats (R type 7 quantiles and so on).
//
// The latency is ths_ns from the capture on the client's side of the link:
// first segment of the ClientHello to first segment of the client Finished
// (capture.Record.ThsNs), in milliseconds. Bytes per connection are summed
// over both directions from SYN to the end of the connection, on two bases:
// IP datagram bytes ("frame": the TUN device has no link header) and TCP
// payload bytes.
package netstudy

import (
	"errors"
	"fmt"
	"strconv"
	"time"
)

// Params tune the analysis. The zero value gives the defaults.
type Params struct {
	// MaxLag is the largest ACF lag and the Ljung-Box lag; 0 means 10.
	MaxLag int
	// Alpha is the family-wise level of the Bonferroni-adjusted
	// Mann-Whitney supplement; 0 means 0.05.
	Alpha float64
	// BootstrapSeed seeds the block bootstrap of every series
	// (stats.BootstrapSeries, one PCG stream per series: SeriesStream)
	// and the independent-sample bootstrap kept for the record; 0 means 1.
	BootstrapSeed uint64
	// BootstrapResamples is the bootstrap size of both; 0 means 2000.
	BootstrapResamples int
	// SourceDateEpoch is the date in the PDFs; zero means
	// the default (repro.EpochOr: 2026-01-01; the pipeline passes the setting
	// SOURCE_DATE_EPOCH).
	SourceDateEpoch time.Time
}

// Level is the confidence level of the bootstrap and t intervals.
const Level = 0.95

// Outputs, relative to the repository root.
const (
	ResultsFile     = "results/net.json"
	FigureLatency   = "figures/net-latency"
	FigureDiffVsRTT = "figures/net-diff-vs-rtt"
	FigureBytes     = "figures/net-bytes"
	TableComparison = "paper/generated/net-comparisons.tex"
	TableBytes      = "paper/generated/net-bytes.tex"
	TableSerial     = "paper/generated/net-serial.tex"
	TableToolchains = "paper/generated/net-toolchains.tex"
	NumbersFile     = "paper/generated/net-numbers.tex"
	TableHygiene    = "paper/generated/net-hygiene.tex"
	TableModel      = "paper/generated/net-model.tex"
)

// WithDefaults is p with every zero field set to its default.
func (p Params) WithDefaults() Params {
	if p.MaxLag == 0 {
		p.MaxLag = 10
	}
	if p.Alpha == 0 {
		p.Alpha = 0.05
	}
	if p.BootstrapSeed == 0 {
		p.BootstrapSeed = 1
	}
	if p.BootstrapResamples == 0 {
		p.BootstrapResamples = 2000
	}
	return p
}

func (p Params) validate() error {
	var errs []error
	if p.MaxLag < 1 {
		errs = append(errs, fmt.Errorf("max lag %d: must be >= 1", p.MaxLag))
	}
	if !(p.Alpha > 0 && p.Alpha < 1) {
		errs = append(errs, fmt.Errorf("alpha %v: must be in (0, 1)", p.Alpha))
	}
	if p.BootstrapResamples < 100 {
		errs = append(errs, fmt.Errorf("bootstrap resamples %d: at least 100", p.BootstrapResamples))
	}
	return errors.Join(errs...)
}

// AnalysisParams are the stage parameters of net:analyze.
func (p Params) AnalysisParams(runDir string) map[string]string {
	p = p.WithDefaults()
	return map[string]string{
		"run":                 runDir,
		"max_lag":             strconv.Itoa(p.MaxLag),
		"alpha":               strconv.FormatFloat(p.Alpha, 'g', -1, 64),
		"bootstrap_seed":      strconv.FormatUint(p.BootstrapSeed, 10),
		"bootstrap_resamples": strconv.Itoa(p.BootstrapResamples),
	}
}

// ParamsFrom reads the parameters AnalysisParams recorded, through a
// stage's Param, and validates them.
func ParamsFrom(get func(string) string) (Params, error) {
	var p Params
	var errs []error
	var err error
	if p.MaxLag, err = strconv.Atoi(get("max_lag")); err != nil {
		errs = append(errs, fmt.Errorf("max_lag: %w", err))
	}
	if p.Alpha, err = strconv.ParseFloat(get("alpha"), 64); err != nil {
		errs = append(errs, fmt.Errorf("alpha: %w", err))
	}
	if p.BootstrapSeed, err = strconv.ParseUint(get("bootstrap_seed"), 10, 64); err != nil {
		errs = append(errs, fmt.Errorf("bootstrap_seed: %w", err))
	}
	if p.BootstrapResamples, err = strconv.Atoi(get("bootstrap_resamples")); err != nil {
		errs = append(errs, fmt.Errorf("bootstrap_resamples: %w", err))
	}
	if len(errs) == 0 {
		errs = append(errs, p.validate())
	}
	if err := errors.Join(errs...); err != nil {
		return p, fmt.Errorf("net:analyze parameters: %w", err)
	}
	return p, nil
}
