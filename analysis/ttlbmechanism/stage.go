package ttlbmechanism

import (
	"context"
	"fmt"
	"path"

	"pqrepro/analysis/ttlb"
	"pqrepro/internal/jsonnum"
	"pqrepro/internal/repro"
)

// stageTTLBMechanism is the mechanism's stage.
const stageTTLBMechanism = "net:ttlbmechanism"

// codeDir is the package the stage's code version is hashed from.
const codeDir = "analysis/ttlbmechanism"

// Stage is net:ttlbmechanism over the run folder runDir, writing
// ResultsFile, NumbersFile and Table.
//
// It reads the registration (analysis/ttlb/mechanism2.txt, which
// supersedes mechanism.txt; an input so that the stage reruns if it
// ever changed) and the run's transfer.csv.gz.
//
// A run without transfer.csv.gz, or without controlled rows in it, gives
// outputs that say NotMeasured; a controlled block without the padded
// arm, NotMeasuredNoArm.
func Stage(runDir string) *repro.Stage {
	return &repro.Stage{
		Name:    stageTTLBMechanism,
		Doc:     "Study B transfer block (our extension): the registered mechanism of the hybrid's shorter transfers, tested by a padded X25519 arm (pad check, order, intervention, cause)",
		Code:    []string{codeDir},
		Inputs:  []string{ttlb.Mechanism2File, path.Join(runDir, "*.csv.gz")},
		Outputs: []string{ResultsFile, NumbersFile, Table},
		Run: func(ctx context.Context, env *repro.Env) error {
			b, err := env.ReadFile(ttlb.Mechanism2File)
			if err != nil {
				return fmt.Errorf("read %s: %w", ttlb.Mechanism2File, err)
			}
			reg, err := ParseRegistration(b)
			if err != nil {
				return fmt.Errorf("%s: %w; the registration is never edited: restore it from git", stageTTLBMechanism, err)
			}
			rows, err := ttlb.ReadTransfer(env.Inputs(), env.ReadFile, runDir)
			if err != nil {
				return fmt.Errorf("%s: %w; the run folder is immutable: record a new run", stageTTLBMechanism, err)
			}
			t, err := Analyze(rows, reg)
			if err != nil {
				return fmt.Errorf("%s: %w", stageTTLBMechanism, err)
			}
			out, err := jsonnum.Marshal(t)
			if err != nil {
				return fmt.Errorf("%s: %w", stageTTLBMechanism, err)
			}
			if err := env.WriteFile(ResultsFile, out); err != nil {
				return err
			}
			nums, tex, err := tables(t)
			if err != nil {
				return fmt.Errorf("%s: %w", stageTTLBMechanism, err)
			}
			if err := env.WriteFile(NumbersFile, []byte(nums)); err != nil {
				return err
			}
			return env.WriteFile(Table, []byte(tex))
		},
	}
}
