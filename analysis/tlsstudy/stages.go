package tlsstudy

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"path"
	"slices"

	"pqrepro/datasets/tlsdata"
	"pqrepro/internal/render"
	"pqrepro/internal/repro"
)

// Output paths, relative to the repository root.
const (
	ResultsFile   = "results/tls.json"
	FigureThs     = "figures/tls-ths"   // .pdf and .svg
	FigureBytes   = "figures/tls-bytes" // .pdf and .svg
	FigureGap     = "figures/tls-gap"   // .pdf and .svg
	FigureDrift   = "figures/tls-drift" // .pdf and .svg
	TableDrift    = "paper/generated/tls-drift.tex"
	TableSerial   = "paper/generated/tls-serial.tex"
	TableGap      = "paper/generated/tls-gap.tex"
	TableFactors  = "paper/generated/tls-factors.tex" // and the host table, tab:tls-host
	TablePaper    = "paper/generated/tls-paper.tex"
	TableMatrix   = "paper/generated/tls-matrix.tex"
	TableBytes    = "paper/generated/tls-bytes.tex"
	NumbersFile   = "paper/generated/tls-numbers.tex"
	codeDir       = "analysis/tlsstudy"
	stageAnalyze  = "tls:analyze"
	stageFigures  = "tls:figures"
	stageTables   = "tls:tables"
	recordsInFile = tlsdata.RecordsFile
	// MetaFile is the run's meta.json, read for the host's cryptography
	// and the socket options (analysis/tlshost, stalls.go).
	MetaFile = "meta.json"
)

// A Part is an analysis in a package of its own that Study A's stages run
// beside the study's (analysis/tlsgapmodel's gap model).
//
// It gets its inputs as arguments: tls:analyze calls Attach after
// AttachMeta with the emulated-path cells' samples, and tls:figures and
// tls:tables render its outputs from the results.
type Part struct {
	// Code are its source directories, which version the three stages.
	Code []string
	// Attach adds its results to res before results/tls.json is written.
	Attach func(res *Results, emulated []EmulatedSample, p Params, m RunMeta) error
	// Figures draws its figures; their Base is an output path without
	// the .pdf and .svg extension.
	Figures func(*Results) ([]render.Figure, error)
	// FigureBases are the Base of every figure Figures draws.
	FigureBases []string
	// Tables renders its LaTeX tables, keyed by output path.
	Tables map[string]func(*Results) (string, error)
	// Numbers sets its macros in NumbersFile (set prefixes "Tls").
	Numbers func(r *Results, set func(name, v string)) error
}

// Stages returns the analysis and render stages of Study A for the pinned
// run folder runDir (relative to the repository root, slash-separated,
// e.g. "data/tls/20261130T120000Z-quick"):
//
//   - tls:analyze reads <runDir>/records.csv.gz and <runDir>/meta.json and
//     writes results/tls.json;
//   - tls:figures reads results/tls.json and writes figures/tls-ths.{pdf,svg}
//     figures/tls-bytes.{pdf,svg}, figures/tls-gap.{pdf,svg} and
//     figures/tls-drift.{pdf,svg}, dated
//     SOURCE_DATE_EPOCH (a stage parameter, from Params.SourceDateEpoch);
//   - tls:tables reads results/tls.json and writes the LaTeX tables
//     paper/generated/tls-{paper,matrix,bytes,gap,factors,drift,serial}.tex and the
//     \newcommand numbers paper/generated/tls-numbers.tex.
//
// Each of parts adds its code, results and outputs to the three stages.
// Invalid params or runDir are reported when tls:analyze runs (Stages
// itself cannot fail); call Params.Validate first to report them earlier.
func Stages(runDir string, params Params, parts ...Part) []*repro.Stage {
	return StagesFrom(runDir, path.Join(runDir, recordsInFile), params, parts...)
}

// StagesFrom is Stages with tls:analyze reading the records from the file
// derived, a byte-for-byte copy of <runDir>/records.csv.gz made by the
// build's tls:records stage (experiments/instruments/rederive). results/tls.json still
// names the run's records file, whose bytes they are.
func StagesFrom(runDir, derived string, params Params, parts ...Part) []*repro.Stage {
	records := path.Join(runDir, recordsInFile)
	metaFile := path.Join(runDir, MetaFile)
	code := []string{codeDir}
	figureOut := []string{FigureThs + ".pdf", FigureThs + ".svg", FigureBytes + ".pdf", FigureBytes + ".svg", FigureGap + ".pdf", FigureGap + ".svg", FigureDrift + ".pdf", FigureDrift + ".svg"}
	tableOut := []string{TablePaper, TableMatrix, TableBytes, TableGap, TableFactors, TableDrift, TableSerial}
	for _, pt := range parts {
		code = append(code, pt.Code...)
		for _, b := range pt.FigureBases {
			figureOut = append(figureOut, b+".pdf", b+".svg")
		}
		tableOut = append(tableOut, slices.Sorted(maps.Keys(pt.Tables))...)
	}
	tableOut = append(tableOut, NumbersFile)
	analyze := &repro.Stage{
		Name:    stageAnalyze,
		Doc:     "Study A statistics: Ths per configuration, tests vs baseline",
		Code:    code,
		Inputs:  []string{derived, metaFile},
		Params:  params.stageParams(),
		Outputs: []string{ResultsFile},
		Run: func(ctx context.Context, env *repro.Env) error {
			if path.IsAbs(runDir) || runDir != path.Clean(runDir) || runDir == "." {
				return fmt.Errorf("tls:analyze: run folder %q must be a clean relative slash-separated path such as data/tls/<run-id>", runDir)
			}
			p, err := paramsFrom(env.Param)
			if err != nil {
				return err
			}
			b, err := env.ReadFile(derived)
			if err != nil {
				return fmt.Errorf("read %s: %w", derived, err)
			}
			recs, err := tlsdata.ReadRecords(bytes.NewReader(b), records)
			if err != nil {
				return fmt.Errorf("read dataset: %w; the run folder is immutable: record a new run", err)
			}
			env.Logf("%s: %d rows", records, len(recs))
			res, emulated, err := AnalyzeRun(recs, p, Input{Path: records, SHA256: repro.HashBytes(b)})
			if err != nil {
				return err
			}
			mb, err := env.ReadFile(metaFile)
			if err != nil {
				return fmt.Errorf("read %s: %w", metaFile, err)
			}
			meta, err := ParseRunMeta(metaFile, mb)
			if err != nil {
				return err
			}
			AttachMeta(res, p, meta)
			for _, pt := range parts {
				if pt.Attach == nil {
					continue
				}
				if err := pt.Attach(res, emulated, p, meta); err != nil {
					return fmt.Errorf("%s: %w", records, err)
				}
			}
			if err := ctx.Err(); err != nil {
				return err
			}
			out, err := MarshalResults(res)
			if err != nil {
				return err
			}
			return env.WriteFile(ResultsFile, out)
		},
	}

	figures := &repro.Stage{
		Name:    stageFigures,
		Doc:     "Study A figures: Ths distributions and bytes on the wire",
		Code:    code,
		Inputs:  []string{ResultsFile},
		Params:  map[string]string{repro.EpochParam: repro.FormatEpoch(params.SourceDateEpoch)},
		Outputs: figureOut,
		Run: func(ctx context.Context, env *repro.Env) error {
			date, err := env.Epoch()
			if err != nil {
				return err
			}
			res, err := readResults(env)
			if err != nil {
				return err
			}
			files, err := Figures(res, date, parts...)
			if err != nil {
				return err
			}
			return writeAll(ctx, env, files)
		},
	}

	tables := &repro.Stage{
		Name:    stageTables,
		Doc:     "Study A LaTeX tables and numbers",
		Code:    code,
		Inputs:  []string{ResultsFile},
		Outputs: tableOut,
		Run: func(ctx context.Context, env *repro.Env) error {
			res, err := readResults(env)
			if err != nil {
				return err
			}
			files, err := Tables(res, parts...)
			if err != nil {
				return err
			}
			return writeAll(ctx, env, files)
		},
	}
	return []*repro.Stage{analyze, figures, tables}
}

func readResults(env *repro.Env) (*Results, error) {
	b, err := env.ReadFile(ResultsFile)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", ResultsFile, err)
	}
	return DecodeResults(ResultsFile, b)
}

// writeAll writes every output after all were rendered, in name order.
func writeAll(ctx context.Context, env *repro.Env, files map[string][]byte) error {
	for _, name := range slices.Sorted(maps.Keys(files)) {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := env.WriteFile(name, files[name]); err != nil {
			return err
		}
	}
	return nil
}
