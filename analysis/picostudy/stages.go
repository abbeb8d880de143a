package picostudy

import (
	"context"
	"fmt"
	"maps"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"

	"pqrepro/internal/repro"
)

// Outputs of the stages, relative to the repository root.
const (
	ResultsFile = "results/pico.json"
	FigureSign  = "figures/pico-mldsa-sign"
	FigureOps   = "figures/pico-ops"
	FigureStack = "figures/pico-stack"
	// FigureDeadline: every signature of ML-DSA and SPHINCS+ against
	// the deadlines (our extension, recommendation.go).
	FigureDeadline   = "figures/pico-sign-deadlines"
	TableDeadlines   = "paper/generated/pico-deadlines.tex"
	TableOps         = "paper/generated/pico-ops.tex"
	TableVersusPaper = "paper/generated/pico-vs-paper.tex"
	TableM4          = "paper/generated/pico-m4.tex"
	// TableConfigurations: what each factor moved (configurations.go).
	TableConfigurations = "paper/generated/pico-configurations.tex"
	// TableSigning: ML-DSA signing by its rejection loop (signing.go).
	TableSigning = "paper/generated/pico-signing.tex"
	NumbersFile  = "paper/generated/pico-numbers.tex"
)

// Stage names.
const (
	stageAnalyze = "pico:analyze"
	stageFigures = "pico:figures"
	stageTables  = "pico:tables"
)

// Params are the analysis' parameters; a changed value reruns the stages.
type Params struct {
	// SourceDateEpoch is the date written into the PDFs; zero is the
	// default (repro.EpochOr; the pipeline passes the setting
	// SOURCE_DATE_EPOCH).
	SourceDateEpoch time.Time
	// PowerMilliwatts is the power model; 0 is the paper's 79.2 mW.
	PowerMilliwatts float64
	// PQM4 is the pqm4 table, relative to the root; "" is DefaultPQM4.
	PQM4 string
	// Require are the schemes a run must have; nil is DefaultRequire.
	Require []string
}

func (p Params) withDefaults() (Params, error) {
	if p.PowerMilliwatts == 0 {
		p.PowerMilliwatts = DefaultPowerMilliwatts
	}
	if p.PQM4 == "" {
		p.PQM4 = DefaultPQM4
	}
	if p.Require == nil {
		p.Require = DefaultRequire
	}
	return p, nil
}

// Code is the stages' code: this package (and, through the engine, every
// package of the module it imports).
var Code = []string{"analysis/picostudy"}

// Stages returns Study C's analysis and render stages for the run folder
// runDir (relative to the root, e.g. data/pico/20261130T114300Z-quick):
//
//   - pico:analyze reads the whole run folder (measurements, serial logs,
//     size reports, host checks, meta.json) and the pqm4 table, and writes
//     results/pico.json;
//   - pico:figures draws the ML-DSA signing-time distributions, the
//     operation times on a log scale and the peak stack against the SRAM;
//   - pico:tables writes the LaTeX tables (operations, ours vs the paper,
//     M0+ vs M4, deadlines, what each configuration's factors moved) and
//     the number macros.
//
// A bad SOURCE_DATE_EPOCH is reported by the figures stage.
func Stages(runDir string, params Params) []*repro.Stage {
	p, perr := params.withDefaults()
	runDir = path.Clean(strings.TrimSuffix(runDir, "/"))
	power := strconv.FormatFloat(p.PowerMilliwatts, 'f', -1, 64)
	analyzeStage := &repro.Stage{
		Name:    stageAnalyze,
		Doc:     "Study C statistics per scheme and operation, energy, exchanges, paper and Cortex-M4 comparisons",
		Code:    Code,
		Inputs:  []string{runDir, p.PQM4},
		Params:  map[string]string{"run": runDir, "power_mw": power, "require": strings.Join(p.Require, ","), "pqm4": p.PQM4},
		Outputs: []string{ResultsFile},
		Run: func(ctx context.Context, env *repro.Env) error {
			if perr != nil {
				return perr
			}
			res, err := analyze(ctx, input{runDir: runDir, files: env.Inputs(), read: env.ReadFile,
				pqm4: p.PQM4, power: p.PowerMilliwatts, require: slices.Clone(p.Require)})
			if err != nil {
				return err
			}
			b, err := res.Marshal()
			if err != nil {
				return fmt.Errorf("encode results: %w", err)
			}
			return env.WriteFile(ResultsFile, b)
		},
	}
	figures := &repro.Stage{
		Name:   stageFigures,
		Doc:    "Study C figures: ML-DSA signing distributions, operation times (log), stack vs SRAM",
		Code:   Code,
		Inputs: []string{ResultsFile},
		Params: map[string]string{repro.EpochParam: repro.FormatEpoch(p.SourceDateEpoch)},
		Outputs: []string{FigureSign + ".pdf", FigureSign + ".svg", FigureOps + ".pdf", FigureOps + ".svg",
			FigureStack + ".pdf", FigureStack + ".svg", FigureDeadline + ".pdf", FigureDeadline + ".svg"},
		Run: func(ctx context.Context, env *repro.Env) error {
			if perr != nil {
				return perr
			}
			date, err := env.Epoch()
			if err != nil {
				return err
			}
			b, err := env.ReadFile(ResultsFile)
			if err != nil {
				return err
			}
			res, err := DecodeResults(ResultsFile, b)
			if err != nil {
				return err
			}
			figs, err := Figures(res, date)
			if err != nil {
				return err
			}
			for _, name := range slices.Sorted(maps.Keys(figs)) {
				if err := env.WriteFile(name, figs[name]); err != nil {
					return err
				}
			}
			return nil
		},
	}
	tables := &repro.Stage{
		Name:    stageTables,
		Doc:     "Study C LaTeX tables and number macros",
		Code:    Code,
		Inputs:  []string{ResultsFile},
		Outputs: []string{TableOps, TableVersusPaper, TableM4, TableDeadlines, TableConfigurations, TableSigning, NumbersFile},
		Run: func(ctx context.Context, env *repro.Env) error {
			b, err := env.ReadFile(ResultsFile)
			if err != nil {
				return err
			}
			res, err := DecodeResults(ResultsFile, b)
			if err != nil {
				return err
			}
			out, err := Tables(res)
			if err != nil {
				return err
			}
			for _, name := range slices.Sorted(maps.Keys(out)) {
				if err := env.WriteFile(name, []byte(out[name])); err != nil {
					return err
				}
			}
			return nil
		},
	}
	return []*repro.Stage{analyzeStage, figures, tables}
}
