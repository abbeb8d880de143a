package reproduce

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"pqrepro/internal/repro"
	"pqrepro/internal/spec"
)

// newRun runs one study's experiment into tree/data/ with a copy of its
// spec under tree/.pins/ (where the runner pins the new run). It returns
// the new run folder, relative to the tree.
func newRun(ctx context.Context, cfg Config, s Study, tree string) (string, error) {
	specCopy := filepath.Join(tree, ".pins", s.Name+".toml")
	b, err := os.ReadFile(filepath.Join(cfg.Root, spec.Path(s.Name)))
	if err != nil {
		return "", fmt.Errorf("read the spec: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(specCopy), 0o755); err != nil {
		return "", err
	}
	if err := os.WriteFile(specCopy, b, 0o644); err != nil {
		return "", err
	}
	id, err := s.Run(ctx, specCopy, filepath.Join(tree, "data"))
	if err != nil {
		return "", err
	}
	return "data/" + s.Name + "/" + id, nil
}

// analyseIn builds the given stages (fresh, relative paths) in tree. It
// first copies from the repository every source file they read but the
// runs already in the tree. Stages keep going after a failure; the
// report lists the failures.
func analyseIn(ctx context.Context, cfg Config, tree string, stages []*repro.Stage, fresh []string) (*repro.BuildReport, error) {
	repo := &repro.Engine{Root: cfg.Root, Stages: stages}
	sources, err := repo.Sources(func(p string) bool {
		for _, run := range fresh {
			if repro.Covers(run, p) || repro.Covers(p, run) {
				return true
			}
		}
		return false
	})
	if err != nil {
		return nil, err
	}
	if err := repo.CopyFiles(tree, sources); err != nil {
		return nil, fmt.Errorf("copy the sources into %s: %w", tree, err)
	}
	e := &repro.Engine{Root: tree, CodeRoot: cfg.Root, Stages: stages, Log: cfg.Log, Verbose: cfg.Verbose, Now: cfg.Now, KeepGoing: true}
	if !cfg.Verbose {
		e.Log = io.Discard
	}
	rep, err := e.Build(ctx)
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	if err != nil && (rep == nil || len(rep.Failed) == 0) {
		return nil, err
	}
	return rep, nil
}

// referenceResults fills refResults. It takes the committed
// results/<study>.json where the committed outputs come from the reference run
// of the profile, else that run analysed in tree (so that a quick run is
// compared with the quick reference run, never with the full one); where says
// in the log where tree will be.
func referenceResults(ctx context.Context, cfg Config, plans []studyPlan, tree, where string) error {
	var stages []*repro.Stage
	var analysed []*studyPlan
	for i := range plans {
		p := &plans[i]
		switch {
		case p.ref == "":
		case p.committed:
			b, err := os.ReadFile(filepath.Join(cfg.Root, "results", p.s.Name+".json"))
			if err != nil {
				return fmt.Errorf("the committed results of %s: %w (restore them with `git checkout -- results/`)", p.s.Name, err)
			}
			p.refResults = b
		default:
			st, err := p.s.Stages(cfg.Profile, p.ref)
			if err != nil {
				return fmt.Errorf("study %s: %w", p.s.Name, err)
			}
			stages = append(stages, st...)
			analysed = append(analysed, p)
		}
	}
	if len(stages) == 0 {
		return nil
	}
	names := make([]string, len(analysed))
	for i, p := range analysed {
		names[i] = p.s.Name + " " + p.ref
	}
	cfg.printf("reference: analysing the %s reference runs that the committed outputs are not built from, or not with the current code (%s), in %s", cfg.Profile, strings.Join(names, ", "), where)
	start := cfg.Now()
	rep, err := analyseIn(ctx, cfg, tree, stages, nil)
	if err != nil {
		return fmt.Errorf("analyse the reference runs: %w", err)
	}
	for _, f := range rep.Failed {
		cfg.printf("reference: stage %s FAILED: %v", f.Stage, f.Err)
	}
	cfg.printf("reference: %d stages ran, %d failed (%v)", len(rep.Ran), len(rep.Failed), cfg.Now().Sub(start).Round(time.Millisecond))
	for _, p := range analysed {
		if b, err := os.ReadFile(filepath.Join(tree, "results", p.s.Name+".json")); err == nil {
			p.refResults = b
		}
	}
	return nil
}

// buildTree analyses the new runs in the tree, evaluates the claims and
// builds the paper there. A study not re-run enters with its reference
// run of the profile, or else the run behind the committed outputs, so
// that the paper is whole. It returns the paper stage's failure apart
// from the error of the build itself.
func buildTree(ctx context.Context, cfg Config, target string, plans []studyPlan, tree string, paper bool) (paperErr, err error) {
	var fresh []string
	byName := map[string]studyPlan{}
	for _, p := range plans {
		byName[p.s.Name] = p
	}
	stages, err := cfg.Assemble(func(name string) (string, string, error) {
		p, ok := byName[name]
		if !ok {
			return "", "", nil
		}
		if p.newRun != "" {
			fresh = append(fresh, p.newRun)
			return cfg.Profile, p.newRun, nil
		}
		profile, run := cfg.Profile, p.ref
		if run == "" {
			var err error
			if profile, err = p.s.committedProfile(); err != nil {
				return "", "", err
			}
			if run, err = p.s.pinned(profile); err != nil || run == "" {
				return "", "", err
			}
		}
		cfg.printf("%s: %s enters the tree's paper with its committed %s run %s (not re-run here)", target, name, profile, run)
		return profile, run, nil
	}, paper)
	if err != nil {
		return nil, err
	}
	cfg.printf("%s: analysing the new runs in the tree: %d stages", target, len(stages))
	start := cfg.Now()
	rep, err := analyseIn(ctx, cfg, tree, stages, fresh)
	if err != nil {
		return nil, fmt.Errorf("analyse the new runs: %w", err)
	}
	for _, f := range rep.Failed {
		cfg.printf("%s: stage %s FAILED: %v", target, f.Stage, f.Err)
		if f.Stage == "paper" {
			paperErr = f.Err
		}
	}
	if paper && paperErr == nil && !slices.Contains(rep.Ran, "paper") && !slices.Contains(rep.UpToDate, "paper") {
		paperErr = errors.New("not built: a stage it depends on failed (listed above)")
	}
	cfg.printf("%s: %d stages ran, %d failed (%v)", target, len(rep.Ran), len(rep.Failed), cfg.Now().Sub(start).Round(time.Millisecond))
	for i := range plans {
		p := &plans[i]
		if p.newRun == "" {
			continue
		}
		b, err := os.ReadFile(filepath.Join(tree, "results", p.s.Name+".json"))
		if err != nil {
			p.failed = fmt.Errorf("the analysis of the new run %s made no results (its failed stages are listed above)", p.newRun)
			continue
		}
		p.newResults = b
	}
	return paperErr, nil
}

// publishTree makes work the complete tree final, replacing the
// previous one. The old tree is moved aside first and removed after, so
// that final is at every moment either the previous complete tree, absent
// or the new complete tree.
func publishTree(work, final string) error {
	old := ""
	if _, err := os.Lstat(final); err == nil {
		old = work + ".old"
		if err := os.Rename(final, old); err != nil {
			return fmt.Errorf("move the previous reproduction tree aside: %w", err)
		}
	}
	if err := os.Rename(work, final); err != nil {
		if old != "" {
			os.Rename(old, final)
		}
		return fmt.Errorf("publish the reproduction tree: %w", err)
	}
	if old != "" {
		return os.RemoveAll(old)
	}
	return nil
}
