package netstudy

import (
	"context"
	"encoding/json"
	"fmt"
	"path"

	"pqrepro/datasets/netdata"
	"pqrepro/internal/repro"
)

// Stage names.
const (
	stageAnalyze = "net:analyze"
	stageFigures = "net:figures"
	stageTables  = "net:tables"
)

const codeDir = "analysis/netstudy"

// Stages returns the analysis and render stages for the run folder runDir
// (relative, slash-separated, e.g. data/net/<run-id>):
//
//	net:analyze  records.csv.gz + meta.json (+ the run's late.csv.gz, inproc.csv.gz
//	             and control files: hygiene.go) -> results/net.json
//	net:figures  results/net.json            -> figures/net-{latency,diff-vs-rtt,bytes}.{pdf,svg}
//	net:tables   results/net.json            -> paper/generated/net-{comparisons,bytes,serial,toolchains,hygiene,numbers}.tex
func Stages(runDir string, params Params) []*repro.Stage {
	return StagesFrom(runDir, path.Join(runDir, netdata.RecordsFile), params)
}

// StagesFrom is Stages with net:analyze reading the records from the file
// derived, a byte-for-byte copy of <runDir>/records.csv.gz made by the
// build's net:records stage (experiments/instruments/rederive).
func StagesFrom(runDir, derived string, params Params) []*repro.Stage {
	records := derived
	metaFile := path.Join(runDir, netdata.MetaFile)
	analyze := &repro.Stage{
		Name:    stageAnalyze,
		Doc:     "Study B statistics: latency and bytes per scenario, round and group; the nine comparisons",
		Code:    []string{codeDir},
		Inputs:  []string{records, metaFile, path.Join(runDir, "*.csv.gz")},
		Params:  params.AnalysisParams(runDir),
		Outputs: []string{ResultsFile},
		Run: func(ctx context.Context, env *repro.Env) error {
			if path.IsAbs(runDir) || runDir != path.Clean(runDir) || runDir == "." {
				return fmt.Errorf("%s: run folder %q must be a clean relative slash-separated path such as data/net/<run-id>", stageAnalyze, runDir)
			}
			p, err := ParamsFrom(env.Param)
			if err != nil {
				return err
			}
			mb, err := env.ReadFile(metaFile)
			if err != nil {
				return fmt.Errorf("read %s: %w", metaFile, err)
			}
			m, err := netdata.ParseMeta(metaFile, mb)
			if err != nil {
				return err
			}
			f, err := env.Open(records)
			if err != nil {
				return fmt.Errorf("read %s: %w", records, err)
			}
			defer f.Close()
			rows, err := ReadRecords(f, records)
			if err != nil {
				return fmt.Errorf("read dataset: %w; the run folder is immutable: record a new run", err)
			}
			env.Logf("%s: %d rows", records, len(rows))
			in, err := readHygiene(env, runDir, mb, m.Measured.Design, rows)
			if err != nil {
				return fmt.Errorf("%s: %w; the run folder is immutable: record a new run", stageAnalyze, err)
			}
			res, err := Analyze(m.Measured.Design, rows, p, runDir, m.RunID, m.Profile)
			if err != nil {
				return fmt.Errorf("%s: %s: %w", stageAnalyze, runDir, err)
			}
			if res.Hygiene, err = hygiene(res, m.Measured.Design, rows, in, p); err != nil {
				return fmt.Errorf("%s: %s: measurement hygiene: %w", stageAnalyze, runDir, err)
			}
			pm, err := netdata.ParseProbeMeta(metaFile, mb)
			if err != nil {
				return fmt.Errorf("%s: %w; the run folder is immutable: record a new run", stageAnalyze, err)
			}
			res.Normalised = NormalisedDifferences(res, pm)
			b, err := json.MarshalIndent(res, "", "  ")
			if err != nil {
				return err
			}
			return env.WriteFile(ResultsFile, append(b, '\n'))
		},
	}
	var figOut []string
	for _, f := range []string{FigureLatency, FigureDiffVsRTT, FigureBytes} {
		figOut = append(figOut, f+".pdf", f+".svg")
	}
	figures := &repro.Stage{
		Name:    stageFigures,
		Doc:     "Study B figures: latency distributions, median difference vs RTT, bytes per connection",
		Code:    []string{codeDir},
		Inputs:  []string{ResultsFile},
		Params:  map[string]string{repro.EpochParam: repro.FormatEpoch(params.SourceDateEpoch)},
		Outputs: figOut,
		Run: func(ctx context.Context, env *repro.Env) error {
			date, err := env.Epoch()
			if err != nil {
				return fmt.Errorf("%s: %w", stageFigures, err)
			}
			res, err := readResults(env)
			if err != nil {
				return err
			}
			files, err := Figures(res, date)
			if err != nil {
				return fmt.Errorf("%s: %w", stageFigures, err)
			}
			for _, name := range figOut {
				if err := env.WriteFile(name, files[name]); err != nil {
					return err
				}
			}
			return nil
		},
	}
	texOut := []string{TableComparison, TableBytes, TableSerial, TableToolchains, TableHygiene, TableModel, NumbersFile}
	tables := &repro.Stage{
		Name:    stageTables,
		Doc:     "Study B LaTeX tables and number macros",
		Code:    []string{codeDir},
		Inputs:  []string{ResultsFile},
		Outputs: texOut,
		Run: func(ctx context.Context, env *repro.Env) error {
			res, err := readResults(env)
			if err != nil {
				return err
			}
			files, err := Tables(res)
			if err != nil {
				return fmt.Errorf("%s: %w", stageTables, err)
			}
			for _, name := range texOut {
				if err := env.WriteFile(name, []byte(files[name])); err != nil {
					return err
				}
			}
			return nil
		},
	}
	return []*repro.Stage{analyze, figures, tables}
}

func readResults(env *repro.Env) (*Results, error) {
	b, err := env.ReadFile(ResultsFile)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w (run %s first)", ResultsFile, err, stageAnalyze)
	}
	return DecodeResults(ResultsFile, b)
}
