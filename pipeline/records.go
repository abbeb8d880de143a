package pipeline

import (
	"pqrepro/experiments/instruments/rederive"
	"pqrepro/internal/repro"
	"pqrepro/internal/settings"
)

// recordsOut is where a study's records stage writes the records of the
// run pinned for a profile, for the analysis to read.
func recordsOut(study, profile string) string {
	return "results/records/" + study + "-" + profile + ".csv.gz"
}

// recordsStage is the stage "captures -> records" of a study's run
// (experiments/instruments/rederive). The parameter code is the study's join
// package, whose Derive the runner called when it recorded the run.
func recordsStage(root, study, profile, run, code string, derive rederive.Derive, set settings.Settings, also ...rederive.Also) *repro.Stage {
	return rederive.Stage(rederive.Spec{
		Name:   study + ":records-" + profile,
		Doc:    "re-derive the " + profile + " run's records from its packet captures (or take them as recorded when the captures are absent)",
		Code:   []string{code},
		RunDir: run,
		Out:    recordsOut(study, profile),
		Store:  repro.OpenStore(root, set.Store),
		Derive: derive,
		Also:   also,
	})
}
