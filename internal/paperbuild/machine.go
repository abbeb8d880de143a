package paperbuild

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"pqrepro/internal/quiet"
	"pqrepro/internal/render"
	"pqrepro/internal/repro"
	"pqrepro/internal/runlist"
)

// MachineFile is the table of the pinned runs' machines (quiet or busy,
// internal/quiet), for the paper's section on verification. It comes at
// that section's end, so that it does not renumber the studies' tables;
// MachineNumbersFile holds its macros, for the method section.
const (
	MachineFile        = "paper/generated/machine.tex"
	MachineNumbersFile = "paper/generated/machine-numbers.tex"
)

// NotRecorded is what the table says of a run recorded before the
// runners sampled the machine.
const NotRecorded = "not recorded (run predates the quiet check)"

// Machine returns the stage that writes MachineFile and MachineNumbersFile:
// how quiet the machine was in each run the paper uses.
//
// It reads the meta.json of every run folder the other stages read
// (data/<study>/<run-id>/, the pinned runs of this build): per run, whether
// the machine was quiet, its maximum load and other processes' CPU, the mean
// steal share and, for a busy run pinned anyway, the recorded reason
// (measured.machine in meta.json; docs/quiet.md). It also sets the macros
// \MachinePinnedRuns, \MachineQuietRuns, \MachineBusyRuns,
// \MachineUnrecordedRuns and the thresholds of internal/quiet
// (\QuietOtherCores, \QuietLoadPerCore, \QuietStealPercent,
// \QuietBusySharePercent), so that the text states no number by hand. It
// returns nil when no source of the paper under root (paper/main.tex,
// paper/sections/*.tex) includes MachineFile (a tree without this paper: its
// table would be a float no text refers to) or no such run folder has a
// meta.json.
func Machine(root string, stages []*repro.Stage) *repro.Stage {
	if !paperIncludes(root, strings.TrimPrefix(MachineFile, "paper/")) {
		return nil
	}
	var metas []string
	for _, s := range stages {
		for _, in := range s.Inputs {
			parts := strings.Split(path.Clean(in), "/")
			if len(parts) < 3 || parts[0] != "data" {
				continue
			}
			m := path.Join(parts[0], parts[1], parts[2], "meta.json")
			if _, err := os.Stat(filepath.Join(root, filepath.FromSlash(m))); err == nil {
				metas = append(metas, m)
			}
		}
	}
	if len(metas) == 0 {
		return nil
	}
	slices.Sort(metas)
	metas = slices.Compact(metas)
	// A modified tree's diff, where the run folder keeps it (git.diff,
	// runlife): the table says "diff kept" only of a file that is there
	// and hashes to meta.json's git.diff_sha256.
	inputs := slices.Clone(metas)
	diffs := map[string]string{}
	for _, m := range metas {
		d := path.Join(path.Dir(m), runlist.DiffFile)
		if _, err := os.Stat(filepath.Join(root, filepath.FromSlash(d))); err == nil {
			inputs, diffs[m] = append(inputs, d), d
		}
	}
	slices.Sort(inputs)
	return &repro.Stage{
		Name:    "paper:machine",
		Doc:     "say per pinned run whether its machine was quiet (measured.machine of meta.json)",
		Code:    []string{"internal/paperbuild"},
		Inputs:  inputs,
		Outputs: []string{MachineFile, MachineNumbersFile},
		Run: func(ctx context.Context, env *repro.Env) error {
			var runs []machineRun
			for _, m := range metas {
				b, err := env.ReadFile(m)
				if err != nil {
					return err
				}
				var diff []byte
				if d, ok := diffs[m]; ok {
					if diff, err = env.ReadFile(d); err != nil {
						return err
					}
				}
				r, err := readMachine(path.Dir(strings.TrimPrefix(m, "data/")), b, diff)
				if err != nil {
					return fmt.Errorf("paper:machine: %s: %w", m, err)
				}
				runs = append(runs, r)
			}
			nums, tab, err := machineTex(runs)
			if err != nil {
				return err
			}
			if err := env.WriteFile(MachineNumbersFile, []byte(nums)); err != nil {
				return err
			}
			return env.WriteFile(MachineFile, []byte(tab))
		},
	}
}

// machineRun is one pinned run's name and machine record (nil before the
// quiet check existed).
type machineRun struct {
	name string // <study>/<run-id>
	rec  *quiet.Record
	// tree says whether the run was recorded from a clean checkout
	// (meta.json git.dirty) and, when it was not, whether the run folder
	// keeps the diff (runlist.DiffFile, hashing to git.diff_sha256): a reader
	// must be told that the code of a dirty run is not the commit it
	// names.
	tree string
}

// The states of a run's source tree, as the table prints them.
const (
	TreeClean       = "clean"
	TreeDiffKept    = "modified, diff kept"
	TreeDiffLost    = "modified, diff not kept"
	TreeNotRecorded = "not recorded"
)

// readMachine reads measured.machine and the source tree's state from a
// run's meta.json; diff is the run folder's runlist.DiffFile (nil when
// absent).
func readMachine(name string, meta, diff []byte) (machineRun, error) {
	var m struct {
		Measured map[string]json.RawMessage `json:"measured"`
		Git      *struct {
			Dirty      bool   `json:"dirty"`
			DiffSHA256 string `json:"diff_sha256"`
		} `json:"git"`
	}
	if err := json.Unmarshal(meta, &m); err != nil {
		return machineRun{}, fmt.Errorf("not valid JSON: %w", err)
	}
	r := machineRun{name: name, tree: TreeNotRecorded}
	switch {
	case m.Git == nil:
	case !m.Git.Dirty:
		r.tree = TreeClean
	case diff != nil && repro.HashBytes(diff) == m.Git.DiffSHA256:
		r.tree = TreeDiffKept
	default:
		r.tree = TreeDiffLost
	}
	raw, ok := m.Measured["machine"]
	if !ok {
		return r, nil
	}
	r.rec = &quiet.Record{}
	if err := json.Unmarshal(raw, r.rec); err != nil {
		return r, fmt.Errorf("measured.machine: %w", err)
	}
	switch r.rec.Verdict {
	case quiet.Quiet, quiet.Busy, quiet.Unknown:
	default:
		return r, fmt.Errorf("measured.machine.verdict %q is not quiet, busy or unknown", r.rec.Verdict)
	}
	return r, nil
}

// machineTex renders the macros of MachineNumbersFile and the table of
// MachineFile.
func machineTex(runs []machineRun) (nums, tab string, err error) {
	var n render.Numbers
	th := quiet.DefaultThresholds
	count := map[string]int{}
	t := render.Table{
		Label: "tab:machine",
		Caption: `The machine during each pinned run (\texttt{measured.machine} of its \texttt{meta.json}): the verdict, ` +
			`the maximum 1-minute load average, the maximum CPU of processes that were not the experiment's (cores), ` +
			`the mean share of CPU time stolen by the hypervisor, for a busy run pinned anyway the reason recorded with it, ` +
			`and whether the run was recorded from a clean checkout of the commit it names (\texttt{git.dirty}); ` +
			`a modified tree's diff is kept in the run folder when the runner could take it.`,
		Align:  "llrrrp{3.5cm}l",
		Header: []string{"Run", "Machine", "Load", "Other CPU", "Steal", "Pinned although busy because", "Source tree"},
	}
	for _, r := range runs {
		name := `\texttt{` + render.Escape(r.name) + `}`
		count["tree "+r.tree]++
		if r.rec == nil {
			count["unrecorded"]++
			t.Rows = append(t.Rows, []string{name, NotRecorded, "---", "---", "---", "", r.tree})
			continue
		}
		count[r.rec.Verdict]++
		why := ""
		if r.rec.Verdict != quiet.Quiet {
			why = cmp.Or(render.Escape(r.rec.Override), "not pinned by the check (pinned by hand)")
		}
		t.Rows = append(t.Rows, []string{name, r.rec.Verdict, render.Fixed(r.rec.Load1.Max, 2), render.Fixed(r.rec.OtherCores.Max, 2),
			render.Fixed(100*r.rec.Steal.Mean, 1) + `\,\%`, why, r.tree})
	}
	t.Notes = fmt.Sprintf(`A run is busy when more than %s\,\%% of its samples (every few seconds, from a pre-flight before the work to its end) `+
		`show other processes above %s core, a load average beyond the experiment's above %s per core or steal above %s\,\%% (docs/quiet.md).`,
		render.Fixed(100*th.BusyShare, 0), render.Fixed(th.OtherCores, 2), render.Fixed(th.LoadPerCore, 1), render.Fixed(100*th.StealShare, 0))
	if tab, err = t.Latex(); err != nil {
		return "", "", err
	}
	for name, v := range map[string]string{
		"MachinePinnedRuns":     fmt.Sprint(len(runs)),
		"MachineQuietRuns":      fmt.Sprint(count[quiet.Quiet]),
		"MachineBusyRuns":       fmt.Sprint(count[quiet.Busy] + count[quiet.Unknown]),
		"MachineUnrecordedRuns": fmt.Sprint(count["unrecorded"]),
		"MachineCleanTreeRuns":  fmt.Sprint(count["tree "+TreeClean]),
		"MachineDiffLostRuns":   fmt.Sprint(count["tree "+TreeDiffLost]),
		"QuietOtherCores":       render.Fixed(th.OtherCores, 2),
		"QuietLoadPerCore":      render.Fixed(th.LoadPerCore, 1),
		"QuietStealPercent":     render.Fixed(100*th.StealShare, 0),
		"QuietBusySharePercent": render.Fixed(100*th.BusyShare, 0),
	} {
		if err := n.Set(name, v); err != nil {
			return "", "", err
		}
	}
	return n.Latex(), tab, nil
}

// paperIncludes reports whether paper/main.tex or a paper/sections/*.tex
// under root names the file rel (relative to paper/).
func paperIncludes(root, rel string) bool {
	srcs, _ := filepath.Glob(filepath.Join(root, "paper", "sections", "*.tex"))
	for _, f := range append([]string{filepath.Join(root, "paper", "main.tex")}, srcs...) {
		if b, err := os.ReadFile(f); err == nil && strings.Contains(string(b), rel) {
			return true
		}
	}
	return false
}
