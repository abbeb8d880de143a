package reproduce

import (
	"context"
	"encoding/json"
	"path/filepath"

	"pqrepro/analysis/agreement"
	"pqrepro/analysis/claims"
)

// A Comparison is one study's reference run and new run with their
// results, as All holds them once the runs are analysed. Judge and
// Calibration take them, so that the composition root (and its tests over
// the registered studies) judges results without running anything.
type Comparison struct {
	Study Study
	// Ref is the reference run folder (relative to the root) and
	// RefResults its results/<study>.json.
	Ref        string
	RefResults []byte
	// NewRun is the new run folder (relative to the tree) and NewResults
	// its results; both empty for a study not re-run.
	NewRun     string
	NewResults []byte
	// Between is the between-run variance applied to the items.
	Between agreement.BetweenRun
}

func plansOf(cs []Comparison) []studyPlan {
	plans := make([]studyPlan, len(cs))
	for i, c := range cs {
		plans[i] = studyPlan{s: c.Study, ref: c.Ref, refResults: c.RefResults, newRun: c.NewRun, newResults: c.NewResults, between: c.Between}
	}
	return plans
}

// Judge compares the new runs (under tree) with their references as All
// does. It returns the summary's text (final, the tree's place; no paper,
// paperWhy), whether it differs, and each claim's status by claim ID.
func Judge(ctx context.Context, cfg Config, target, tree, final, paperWhy string, cs []Comparison) (text string, differs bool, status map[string]agreement.Status) {
	sum := summarize(ctx, cfg, tree, plansOf(cs), filepath.Join(tree, ".crosshost"))
	status = map[string]agreement.Status{}
	for _, c := range sum.claims {
		status[c.ID] = c.status
	}
	return sum.text(cfg, target, final, "", paperWhy), sum.differs(), status
}

// Calibration is Calibrate's report of K pseudo-replicate comparisons of
// the references' results (calibration), without the cross-host and flip
// blocks that need the committed runs.
func Calibration(ctx context.Context, profile string, cs []Comparison, k int, seed uint64) (string, error) {
	return calibration(ctx, profile, plansOf(cs), k, seed)
}

// A QuietRun is one committed quiet run of a study, analysed: its ID, its
// folder relative to the root, its meta.json and its results.
type QuietRun struct {
	ID, Run       string
	Meta, Results []byte
}

// FlipCalibration is the calibration of the whole verdict line on the runs
// (calibrateFlips): its report, as `mage calibrate` prints it.
func FlipCalibration(s Study, profile string, cats []claims.Catalogue, runs []QuietRun) (string, error) {
	analysed := make([]analysedRun, len(runs))
	for i, r := range runs {
		var info runInfo
		if err := json.Unmarshal(r.Meta, &info); err != nil {
			return "", err
		}
		host, err := agreement.ReadFingerprint(r.Meta)
		if err != nil {
			return "", err
		}
		info.host = host
		analysed[i] = analysedRun{id: r.ID, run: r.Run, info: info, results: r.Results}
	}
	return calibrateFlips(s, profile, cats, analysed).report(), nil
}
