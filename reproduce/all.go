package reproduce

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"pqrepro/internal/deps"
)

// ErrNotReproduced is returned by All when a new run contradicts the
// reference run of the same profile. That is, a judged item of a study
// lies outside its prediction interval after Holm's correction, or a
// claim's verdict changes while its estimate does not stay inside its
// interval (analysis/agreement). Items not judged (another host's
// times, another profile, null or missing values) are counted, not
// failures.
var ErrNotReproduced = errors.New("the new runs do not reproduce the reference runs")

// ReproduceDir is where All writes, relative to the root. That is, one
// complete reproduction tree per profile, ReproduceDir/<profile>/, laid
// out like the repository (data/, results/, figures/, paper/main.pdf)
// with SUMMARY.txt, and the incomplete tree of a running `all` as
// ReproduceDir/.incomplete-<profile>-*.
const ReproduceDir = ".cache/reproduce"

// buildEstimate is the expected time of the analysis, render and paper
// stages when everything is stale, on the reference machine.
const buildEstimate = 30 * time.Second

// All is `mage all` (and `mage quick`). That is, it reproduces every
// study at cfg.Profile (default full) without touching the committed
// tree, and says how the new runs compare with the committed ones. In
// order:
//
//  1. it prints its plan: per study what runs, its estimated time from
//     the study's cost model (Study.EstimateFor) and which reference run
//     it is compared with, and what cannot run here and why;
//  2. it verifies the committed data (Config.Verify: every pinned run
//     against its sealed manifest and pin, every file of SHA256SUMS
//     re-hashed) and refuses to go on if anything differs;
//  3. it installs what the experiments and the paper need; a study
//     whose needs cannot be installed (or Study.CannotRun: not root) is
//     skipped with the reason, never failed;
//  4. it re-runs every other experiment at the profile into a new tree,
//     ReproduceDir/.incomplete-<profile>-*, with copies of the specs,
//     so that the committed data, specs, outputs, SHA256SUMS and
//     pqrepro.lock stay as they are;
//  5. it analyses the new runs there with the same stages, evaluates the
//     claims and builds the paper from them (studies not re-run enter the
//     paper with their reference run, and the summary says so);
//  6. it compares like with like: each new run with the reference run of
//     the same profile (the committed results when the committed outputs
//     come from that run, else that run analysed in the tree's
//     .reference/ folder), never with another profile's; a study without
//     a reference run of the profile is shown, not compared;
//  7. it renames the tree to ReproduceDir/<profile>/ (replacing the
//     previous one) only when all of this is done, writes SUMMARY.txt
//     there, and ends with one table: per claim the published value, the
//     reference run's value and verdict, this run's value and verdict and
//     whether they agree, then where the new paper is and one overall
//     line.
//
// PQREPRO_STUDIES=tls,net limits which studies are re-run. An
// interrupted All (Ctrl-C, SIGTERM) removes its incomplete tree: a tree
// under ReproduceDir/<profile>/ is always a complete one. It returns
// ErrNotReproduced when a comparison differs, and the error of any run
// that failed (after the table). cfg.Profile is set and valid; target
// ("all" or "quick") starts every line.
func All(ctx context.Context, cfg Config, target string) error {
	began := cfg.Now()
	plans, err := planAll(cfg)
	if err != nil {
		return err
	}
	final := filepath.Join(cfg.Root, ReproduceDir, cfg.Profile)
	paperWhy := ""
	if _, err := os.Stat(filepath.Join(cfg.Root, "paper", "main.tex")); err != nil {
		paperWhy = "this tree has no paper/main.tex"
	}
	printPlan(cfg, target, plans, paperWhy)

	// 1. The committed data must be what was sealed before anything is
	// compared with it.
	if err := cfg.Verify(ctx, target); err != nil {
		return err
	}

	// 2. What the runs and the paper need; what cannot be installed
	// turns into a reason to skip.
	if paperWhy, err = installNeeds(ctx, cfg, target, plans, paperWhy); err != nil {
		return err
	}

	// 3. The new runs, in a tree of their own that becomes final only
	// when complete.
	if err := os.MkdirAll(filepath.Dir(final), 0o755); err != nil {
		return fmt.Errorf("%s: %w", target, err)
	}
	work, err := os.MkdirTemp(filepath.Dir(final), ".incomplete-"+cfg.Profile+"-")
	if err != nil {
		return fmt.Errorf("%s: create the reproduction tree: %w", target, err)
	}
	complete := false
	defer func() {
		if !complete {
			os.RemoveAll(work)
		}
	}()
	if err := runNew(ctx, cfg, target, plans, work); err != nil {
		return err
	}

	// 4. Reference results of the same profile: the pinned run's, or,
	// where the new run's host differs from its, those of a committed
	// quiet run of the same design on a host like this one.
	for i := range plans {
		hostReference(cfg, &plans[i], work)
	}
	if err := referenceResults(ctx, cfg, plans, filepath.Join(work, ".reference"), filepath.Join(ReproduceDir, cfg.Profile, ".reference")); err != nil {
		return err
	}

	// The between-run variance of each study's host-dependent estimates,
	// from the repository's quiet runs of the profile on this host.
	betweenRuns(ctx, cfg, plans, filepath.Join(work, ".between"))

	// 5. The new runs' results, claims and paper.
	paperErr, err := buildTree(ctx, cfg, target, plans, work, paperWhy == "")
	if err != nil {
		return err
	}
	if paperErr != nil {
		first, _, _ := strings.Cut(paperErr.Error(), "\n")
		paperWhy = "the paper stage failed (its error is above and at the end): " + first
	}

	// 6. Compare, write the summary, make the tree final.
	sum := summarize(ctx, cfg, work, plans, filepath.Join(work, ".crosshost"))
	sum.took = cfg.Now().Sub(began)
	pdf := ""
	if paperWhy == "" {
		pdf = filepath.Join(final, "paper", "main.pdf")
	}
	text := sum.text(cfg, target, final, pdf, paperWhy)
	if err := os.WriteFile(filepath.Join(work, "SUMMARY.txt"), []byte(text+calibrationNote(cfg)), 0o644); err != nil {
		return fmt.Errorf("%s: %w", target, err)
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("%s: interrupted: %w; the incomplete reproduction tree was removed", target, err)
	}
	if err := publishTree(work, final); err != nil {
		return fmt.Errorf("%s: %w", target, err)
	}
	complete = true
	fmt.Fprint(cfg.Log, text)

	var errs []error
	for _, p := range plans {
		if p.failed != nil {
			errs = append(errs, fmt.Errorf("%s: %w", p.s.Name, p.failed))
		}
	}
	if paperErr != nil {
		errs = append(errs, fmt.Errorf("paper: %w", paperErr))
	}
	if sum.differs() {
		errs = append(errs, ErrNotReproduced)
	}
	return errors.Join(errs...)
}

// installNeeds installs what each study to re-run and the paper need. A
// study whose needs cannot be installed gets that as its reason to skip;
// a paper that cannot be built returns the reason as paperWhy.
func installNeeds(ctx context.Context, cfg Config, target string, plans []studyPlan, paperWhy string) (string, error) {
	for i := range plans {
		p := &plans[i]
		if p.skip != "" || p.s.Requirements == nil {
			continue
		}
		if err := cfg.Install(ctx, p.s.Requirements()); err != nil {
			if ctx.Err() != nil {
				return paperWhy, ctx.Err()
			}
			p.skip = "cannot install what it needs: " + err.Error()
			cfg.printf("%s: %s: not re-run: %s", target, p.s.Name, p.skip)
		}
	}
	if paperWhy == "" {
		if err := cfg.Install(ctx, []deps.Requirement{cfg.Latex}); err != nil {
			if ctx.Err() != nil {
				return paperWhy, ctx.Err()
			}
			paperWhy = "cannot install pdflatex: " + err.Error()
		}
	}
	return paperWhy, nil
}

// runNew runs every study not skipped into work, one after the other,
// with the repository's git state taken first. A failed run is recorded
// in its plan; an interruption is an error.
func runNew(ctx context.Context, cfg Config, target string, plans []studyPlan, work string) error {
	runs := 0
	for _, p := range plans {
		if p.skip == "" {
			runs++
		}
	}
	if runs > 0 {
		// The new runs' provenance is the repository's state, taken at
		// the repository root, not the tree they are written in.
		if err := cfg.WithGit(ctx); err != nil {
			return err
		}
	}
	n := 0
	for i := range plans {
		p := &plans[i]
		if p.skip != "" {
			continue
		}
		n++
		cfg.printf("%s [%d/%d]: %s: new %s run (about %v)", target, n, runs, p.s.Name, cfg.Profile, RoundDuration(p.estimate))
		start := cfg.Now()
		p.newRun, p.failed = newRun(ctx, cfg, p.s, work)
		p.took = cfg.Now().Sub(start)
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("%s: interrupted during the %s run: %w; the incomplete reproduction tree was removed, nothing else was written", target, p.s.Name, err)
		}
		if p.failed != nil {
			cfg.printf("%s: %s: the run FAILED after %v: %v", target, p.s.Name, p.took.Round(time.Second), p.failed)
			continue
		}
		cfg.printf("%s: %s: new run %s in %v", target, p.s.Name, p.newRun, p.took.Round(time.Second))
	}
	return nil
}
