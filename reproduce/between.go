package reproduce

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"pqrepro/analysis/agreement"
	"pqrepro/internal/repro"
	"pqrepro/internal/spec"
)

// runInfo is what a run's meta.json says that decides whether two runs
// measured one design on one kind of host.
type runInfo struct {
	Profile   string `json:"profile"`
	SpecSHA   string `json:"spec_sha256"`
	DesignSHA string `json:"spec_design_sha256"`
	Measured  struct {
		Machine struct {
			Verdict string `json:"verdict"`
		} `json:"machine"`
	} `json:"measured"`
	host agreement.Fingerprint
}

// readRunInfo reads the meta.json of run (a folder relative to root).
func readRunInfo(root, run string) (runInfo, error) {
	var m runInfo
	b, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(run), "meta.json"))
	if pe := (*fs.PathError)(nil); errors.As(err, &pe) {
		return m, fmt.Errorf("%s/meta.json: %w", run, pe.Err)
	} else if err != nil {
		return m, err
	}
	if err := json.Unmarshal(b, &m); err != nil {
		return m, fmt.Errorf("%s/meta.json: %w", run, err)
	}
	m.host, err = agreement.ReadFingerprint(b)
	return m, err
}

// sameDesign reports whether two runs were told to do the same things:
// the same spec without its pins (spec_design_sha256) when both record
// it, else the same spec file (spec_sha256), which every pin changes.
func (a runInfo) sameDesign(b runInfo) bool {
	if a.DesignSHA != "" && b.DesignSHA != "" {
		return a.DesignSHA == b.DesignSHA
	}
	return a.SpecSHA == b.SpecSHA
}

// comparableRuns lists the runs under root/data/<study>/ (every run the
// repository holds, pinned or not) that measured like's design at its
// profile on a host whose fingerprint matches like's, whose quiet check
// passed (meta.json measured.machine.verdict "quiet") and that sound
// passes (soundRun: the run matches its manifest, and its ID its
// meta.json and the clock), sorted by ID. left says, per run left out,
// why.
func comparableRuns(root, study string, like runInfo, sound func(run string) error) (ids, left []string, err error) {
	runs, err := runFolders(root, study)
	if err != nil {
		return nil, nil, err
	}
	for _, run := range runs {
		m, err := readRunInfo(root, run)
		why := ""
		switch {
		case err != nil:
			why = err.Error()
		case m.Profile != like.Profile:
			why = "profile " + m.Profile
		case !m.sameDesign(like):
			why = "another spec"
		case len(like.host.Differences(m.host)) > 0:
			why = "another host (" + strings.Join(like.host.Differences(m.host), "; ") + ")"
		case m.Measured.Machine.Verdict != "quiet":
			why = "quiet check not passed (verdict " + fmt.Sprintf("%q", m.Measured.Machine.Verdict) + ")"
		default:
			if err := sound(run); err != nil {
				why = "not sound evidence: " + err.Error()
			}
		}
		if why != "" {
			left = append(left, filepath.Base(run)+": "+why)
			continue
		}
		ids = append(ids, filepath.Base(run))
	}
	slices.Sort(ids)
	return ids, left, nil
}

// betweenCandidates lists the runs from which the between-run variance
// of refRun's items is estimated: comparableRuns of refRun (its profile
// and design, a matching host, quiet, sound), refRun itself included
// when it qualifies. left says, per run left out, why.
func betweenCandidates(root, study, refRun string, sound func(run string) error) (ids, left []string, err error) {
	ref, err := readRunInfo(root, refRun)
	if err != nil {
		return nil, nil, fmt.Errorf("the reference run's meta.json: %w", err)
	}
	return comparableRuns(root, study, ref, sound)
}

// soundRun returns comparableRuns' check of one committed run (a folder
// relative to cfg.Root): nil when the run is a sealed run (a folder
// with a run ID and its MANIFEST.sha256) whose files match its manifest
// (repro.CheckRun, every file read again) and whose ID agrees with its
// meta.json and the clock (Config.RunProblems); else the problems found.
// `mage all` refuses to start when any run fails these checks
// (Config.Verify), but the host reference and the between-run
// variance take a run's numbers as evidence, so they check it again.
func soundRun(cfg Config) func(run string) error {
	store, now := cfg.Store, cfg.Now()
	return func(run string) error {
		if !repro.IsRunID(path.Base(run)) {
			return fmt.Errorf("%s is not named like a run (<start time>-<profile>)", path.Base(run))
		}
		ps := repro.CheckRun(cfg.Root, run, "", "", nil, store).Problems
		if cfg.RunProblems != nil {
			ps = append(ps, cfg.RunProblems(run, now, len(ps) == 0)...)
		}
		if len(ps) == 0 {
			return nil
		}
		what := make([]string, len(ps))
		for i, p := range ps {
			what[i] = p.String()
		}
		return errors.New(strings.Join(what, "; "))
	}
}

// betweenRuns estimates, per compared study, the between-run variance
// of its host-dependent estimates from the runs betweenCandidates finds
// for its reference run (agreement.Between): the reference's results
// are p.refResults, every other run is analysed in a tree of its own
// under dir (removed afterwards). With fewer than agreement.MinBetweenRuns
// runs it analyses nothing and τ² is 0 with the caveat.
func betweenRuns(ctx context.Context, cfg Config, plans []studyPlan, dir string) {
	for i := range plans {
		p := &plans[i]
		if p.ref == "" || p.refResults == nil || p.s.Results == nil {
			continue
		}
		ids, left, err := betweenCandidates(cfg.Root, p.s.Name, p.ref, soundRun(cfg))
		if err != nil {
			p.between = agreement.BetweenRun{Caveat: "between-run variance not estimated: " + err.Error() + "; τ² = 0"}
			continue
		}
		if len(left) > 0 {
			cfg.printf("between-run variance of %s: %d run(s) of data/%s left out (%s)", p.s.Name, len(left), p.s.Name, strings.Join(left, "; "))
		}
		if len(ids) < agreement.MinBetweenRuns {
			p.between = agreement.BetweenScaled(ids, make([][]agreement.Item, len(ids)), p.s.BetweenScale)
			continue
		}
		var runs [][]agreement.Item
		var used []string
		for _, id := range ids {
			b := p.refResults
			if run := "data/" + p.s.Name + "/" + id; run != p.ref {
				if b, err = analyseRun(ctx, cfg, p.s, run, filepath.Join(dir, id)); err != nil {
					cfg.printf("between-run variance of %s: run %s left out: %v", p.s.Name, id, err)
					continue
				}
			}
			as, _, err := selfCompare(p.s, b, cfg.Profile)
			if err != nil {
				cfg.printf("between-run variance of %s: run %s left out: %v", p.s.Name, id, err)
				continue
			}
			runs, used = append(runs, as.Items), append(used, id)
		}
		p.between = agreement.BetweenScaled(used, runs, p.s.BetweenScale)
	}
	os.RemoveAll(dir)
}

// analyseRun analyses one committed run of s into tree and returns its
// results/<study>.json.
func analyseRun(ctx context.Context, cfg Config, s Study, run, tree string) ([]byte, error) {
	st, err := s.Stages(cfg.Profile, run)
	if err != nil {
		return nil, err
	}
	rep, err := analyseIn(ctx, cfg, tree, st, nil)
	if err != nil {
		return nil, err
	}
	if len(rep.Failed) > 0 {
		return nil, fmt.Errorf("stage %s failed: %v", rep.Failed[0].Stage, rep.Failed[0].Err)
	}
	return os.ReadFile(filepath.Join(tree, "results", s.Name+".json"))
}

// QuietRepeats lists the other runs of data/<study>/ (folders relative
// to root) that repeat run for the specification curve. They have its
// profile and the design of the study's spec as committed now
// (spec_design_sha256 of its [runs]-less bytes), and passed their quiet
// check; other hosts are included. A run recorded before meta.json carried the
// design hash (as Study A's pinned full run) is never a repeat.
func QuietRepeats(root, study, profile, run string) ([]string, error) {
	b, err := os.ReadFile(filepath.Join(root, spec.Path(study)))
	if err != nil {
		return nil, err
	}
	design := repro.HashBytes(spec.WithoutPins(b))
	runs, err := runFolders(root, study)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, r := range runs {
		if r == run {
			continue
		}
		m, err := readRunInfo(root, r)
		if err != nil {
			continue
		}
		if m.Profile == profile && m.DesignSHA == design && m.Measured.Machine.Verdict == "quiet" {
			out = append(out, r)
		}
	}
	slices.Sort(out)
	return out, nil
}

// runFolders lists the run folders under root/data/<study>/ that hold a
// meta.json, as "data/<study>/<id>", sorted by ID.
func runFolders(root, study string) ([]string, error) {
	metas, err := filepath.Glob(filepath.Join(root, "data", study, "*", "meta.json"))
	if err != nil {
		return nil, err
	}
	runs := make([]string, len(metas))
	for i, m := range metas {
		runs[i] = "data/" + study + "/" + filepath.Base(filepath.Dir(m))
	}
	return runs, nil
}
