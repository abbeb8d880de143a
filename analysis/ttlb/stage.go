package ttlb

import (
	"context"
	"fmt"
	"path"

	"pqrepro/analysis/netstudy"
	"pqrepro/datasets/netdata"
	"pqrepro/internal/repro"
)

// stageTTLB is the transfer block's stage (our extension, issue 34).
const stageTTLB = "net:ttlb"

// Table holds the transfer block's table.
const Table = "paper/generated/net-ttlb.tex"

// NumbersFile holds the transfer block's macros, read before the paper's
// body.
const NumbersFile = "paper/generated/net-ttlb-numbers.tex"

// codeDir is the package the stage's code version is hashed from (with
// the packages it imports, analysis/netstudy among them).
const codeDir = "analysis/ttlb"

// Stage is net:ttlb over the run folder runDir and the records file.
//
// It reads the run's transfer.csv.gz (none in a run recorded before the
// block: every output then says NotMeasuredPinned) and the rounds'
// records (size 0), and writes ResultsFile, NumbersFile, Table and Figure. records is
// the derived copy netstudy.StagesFrom's analysis reads too.
func Stage(runDir, records string, params netstudy.Params) *repro.Stage {
	metaFile := path.Join(runDir, netdata.MetaFile)
	return &repro.Stage{
		Name:    stageTTLB,
		Doc:     "Study B transfer block (our extension): the hybrid's time-to-last-byte increase per scenario and response size; Kampanakis and Childs-Klein's statements as our claims",
		Code:    []string{codeDir},
		Inputs:  []string{records, metaFile, path.Join(runDir, "*.csv.gz")},
		Params:  stageParams(runDir, params),
		Outputs: []string{ResultsFile, NumbersFile, Table, Figure + ".pdf", Figure + ".svg"},
		Run: func(ctx context.Context, env *repro.Env) error {
			p, err := netstudy.ParamsFrom(env.Param)
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
			xfer, err := readTransfer(env.Inputs(), env.ReadFile, runDir)
			if err != nil {
				return fmt.Errorf("%s: %w; the run folder is immutable: record a new run", stageTTLB, err)
			}
			var rows []netstudy.Row
			if len(xfer) > 0 {
				f, err := env.Open(records)
				if err != nil {
					return fmt.Errorf("read %s: %w", records, err)
				}
				defer f.Close()
				if rows, err = netstudy.ReadRecords(f, records); err != nil {
					return fmt.Errorf("read dataset: %w", err)
				}
			}
			t, err := Analyze(m.Measured.Design, xfer, rows, p)
			if err != nil {
				return fmt.Errorf("%s: %w", stageTTLB, err)
			}
			b, err := encode(t)
			if err != nil {
				return fmt.Errorf("%s: %w", stageTTLB, err)
			}
			if err := env.WriteFile(ResultsFile, b); err != nil {
				return err
			}
			nums, tex, err := tables(t)
			if err != nil {
				return fmt.Errorf("%s: %w", stageTTLB, err)
			}
			if err := env.WriteFile(NumbersFile, []byte(nums)); err != nil {
				return err
			}
			if err := env.WriteFile(Table, []byte(tex)); err != nil {
				return err
			}
			date, err := env.Epoch()
			if err != nil {
				return fmt.Errorf("%s: %w", stageTTLB, err)
			}
			figs, err := figures(t, date)
			if err != nil {
				return fmt.Errorf("%s: %w", stageTTLB, err)
			}
			for _, ext := range []string{".pdf", ".svg"} {
				if err := env.WriteFile(Figure+ext, figs[Figure+ext]); err != nil {
					return err
				}
			}
			return nil
		},
	}
}

// stageParams are the analysis' parameters and the figures' date.
func stageParams(runDir string, params netstudy.Params) map[string]string {
	m := params.AnalysisParams(runDir)
	m[repro.EpochParam] = repro.FormatEpoch(params.SourceDateEpoch)
	return m
}
