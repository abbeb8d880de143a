package repro

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"
)

// LockFile and SumsFile are the names, relative to the root, of the lock
// file and the checksum list.
const (
	LockFile = "pqrepro.lock"
	SumsFile = "SHA256SUMS"
)

// An Engine runs a pipeline of stages in a repository tree.
type Engine struct {
	// Root is the repository root: inputs are read and outputs written
	// below it.
	Root string
	// CodeRoot is where the Go sources for code versions are read; empty
	// means Root. Verification sets it to the real repository while Root
	// is a temporary tree.
	CodeRoot string
	// Stages is the pipeline, in any order that respects dependencies or
	// none: Build sorts them topologically, keeping declaration order
	// among independent stages.
	Stages []*Stage
	// RawDirs are the directories of committed raw data (relative),
	// listed in SHA256SUMS together with every stage output.
	RawDirs []string
	// SealedRuns says that RawDirs hold only sealed runs,
	// <raw dir>/<study>/<run-id>/ with a MANIFEST.sha256: anything else
	// there (StrayEntries) is left out of SHA256SUMS.
	SealedRuns bool
	// Hasher hashes files; nil means no cache (every file is re-read).
	Hasher *Hasher
	// Log receives one line per step; Verbose adds detail.
	Log     io.Writer
	Verbose bool
	// Notices receives what stages report with Env.Notef, whatever the
	// verbosity; nil means Log. Verify sets it so that a stage's notices
	// show even though the stage's other output is discarded.
	Notices io.Writer
	// Now is the clock used for durations in messages; nil is time.Now.
	Now func() time.Time
	// KeepGoing makes Build run every stage it can after one fails,
	// skipping only the stages downstream of the failure, and report
	// every failure in BuildReport.Failed (verification uses it so that
	// one failing stage does not hide the other outputs' comparisons).
	KeepGoing bool
}

func (e *Engine) logf(format string, args ...any) {
	if e.Log != nil {
		fmt.Fprintf(e.Log, format+"\n", args...)
	}
}

// notices is where Env.Notef lines go: Notices, else Log, else nowhere.
func (e *Engine) notices() io.Writer {
	switch {
	case e.Notices != nil:
		return e.Notices
	case e.Log != nil:
		return e.Log
	}
	return io.Discard
}

func (e *Engine) now() time.Time {
	if e.Now != nil {
		return e.Now()
	}
	return time.Now()
}

func (e *Engine) abs(rel string) string { return filepath.Join(e.Root, filepath.FromSlash(rel)) }

func (e *Engine) hasher() *Hasher {
	if e.Hasher == nil {
		e.Hasher = &Hasher{}
	}
	return e.Hasher
}

// order returns the stages in dependency order: a stage comes after every
// stage that produces one of its inputs. It rejects duplicate names, two
// stages writing one file, and cycles.
func (e *Engine) order() ([]*Stage, map[string][]*Stage, error) {
	producer := map[string]*Stage{}
	names := map[string]bool{}
	for _, s := range e.Stages {
		if names[s.Name] {
			return nil, nil, fmt.Errorf("two stages are named %q", s.Name)
		}
		names[s.Name] = true
		for _, o := range s.Outputs {
			if p, dup := producer[o]; dup {
				return nil, nil, fmt.Errorf("stages %s and %s both write %s", p.Name, s.Name, o)
			}
			producer[o] = s
		}
	}
	deps := map[string][]*Stage{}
	for _, s := range e.Stages {
		for _, other := range e.Stages {
			if other == s {
				continue
			}
			for _, o := range other.Outputs {
				if slices.ContainsFunc(s.Inputs, func(p string) bool { return covers(p, o) }) {
					deps[s.Name] = append(deps[s.Name], other)
					break
				}
			}
		}
	}
	var out []*Stage
	state := map[string]int{} // 0 new, 1 visiting, 2 done
	var visit func(s *Stage, chain []string) error
	visit = func(s *Stage, chain []string) error {
		switch state[s.Name] {
		case 1:
			return fmt.Errorf("stages form a cycle: %s", strings.Join(append(chain, s.Name), " -> "))
		case 2:
			return nil
		}
		state[s.Name] = 1
		for _, d := range deps[s.Name] {
			if err := visit(d, append(chain, s.Name)); err != nil {
				return err
			}
		}
		state[s.Name] = 2
		out = append(out, s)
		return nil
	}
	for _, s := range e.Stages {
		if err := visit(s, nil); err != nil {
			return nil, nil, err
		}
	}
	return out, deps, nil
}

// current is the state a stage would record if it ran now.
type current struct {
	code   string
	inputs map[string]string
}

func (e *Engine) currentState(ch *codeHasher, s *Stage) (*current, error) {
	code, err := ch.version(s.Code)
	if err != nil {
		return nil, fmt.Errorf("stage %s: %w", s.Name, err)
	}
	files, err := expandInputs(e.Root, s.Inputs)
	if err != nil {
		return nil, fmt.Errorf("stage %s: %w", s.Name, err)
	}
	inputs := make(map[string]string, len(files))
	for _, f := range files {
		sum, err := e.hasher().Hash(e.abs(f))
		if err != nil {
			return nil, fmt.Errorf("stage %s: hash input: %w", s.Name, err)
		}
		inputs[f] = sum
	}
	return &current{code: code, inputs: inputs}, nil
}

// StageStatus says whether a stage is up to date, and if not, why.
type StageStatus struct {
	Name    string
	Doc     string
	Stale   bool
	Reasons []string
}

func short(h string) string {
	if len(h) > 12 {
		return h[:12]
	}
	if h == "" {
		return "(none)"
	}
	return h
}

// staleness compares a stage's current state with its lock entry and
// returns the reasons it must run; none means it is up to date.
func (e *Engine) staleness(s *Stage, cur *current, rec *StageState) []string {
	if rec == nil {
		return []string{"never built (no entry in " + LockFile + ")"}
	}
	var why []string
	if rec.Code != cur.code {
		why = append(why, fmt.Sprintf("code changed: %s -> %s", short(rec.Code), short(cur.code)))
	}
	for _, k := range sortedUnion(rec.Params, s.Params) {
		old, hadOld := rec.Params[k]
		now, hasNow := s.Params[k]
		switch {
		case !hadOld:
			why = append(why, fmt.Sprintf("parameter %s added: %q", k, now))
		case !hasNow:
			why = append(why, fmt.Sprintf("parameter %s removed (was %q)", k, old))
		case old != now:
			why = append(why, fmt.Sprintf("parameter %s changed: %q -> %q", k, old, now))
		}
	}
	for _, f := range sortedUnion(rec.Inputs, cur.inputs) {
		old, hadOld := rec.Inputs[f]
		now, hasNow := cur.inputs[f]
		switch {
		case !hadOld:
			why = append(why, fmt.Sprintf("input %s added (sha256 %s)", f, short(now)))
		case !hasNow:
			why = append(why, fmt.Sprintf("input %s removed (was sha256 %s)", f, short(old)))
		case old != now:
			why = append(why, fmt.Sprintf("input %s changed: sha256 %s -> %s", f, short(old), short(now)))
		}
	}
	for _, o := range s.Outputs {
		want, ok := rec.Outputs[o]
		if !ok {
			why = append(why, fmt.Sprintf("output %s is new", o))
			continue
		}
		got, err := e.hasher().Hash(e.abs(o))
		switch {
		case errors.Is(err, os.ErrNotExist):
			why = append(why, fmt.Sprintf("output %s is missing", o))
		case err != nil:
			why = append(why, fmt.Sprintf("output %s unreadable: %v", o, err))
		case got != want:
			why = append(why, fmt.Sprintf("output %s was modified: sha256 %s in the lock, %s on disk", o, short(want), short(got)))
		}
	}
	return why
}

func sortedUnion(a, b map[string]string) []string {
	keys := map[string]bool{}
	for k := range a {
		keys[k] = true
	}
	for k := range b {
		keys[k] = true
	}
	return slices.Sorted(maps.Keys(keys))
}

// Status reports every stage in dependency order, stale or not. A stage
// whose upstream stage is stale is stale too, since its inputs will
// change when the upstream stage runs.
func (e *Engine) Status(ctx context.Context) ([]StageStatus, error) {
	lock, err := ReadLock(e.abs(LockFile))
	if errors.Is(err, ErrNoLock) {
		lock = NewLock()
	} else if err != nil {
		return nil, err
	}
	stages, deps, err := e.order()
	if err != nil {
		return nil, err
	}
	ch, err := newCodeHasher(e.codeRoot(), e.hasher())
	if err != nil {
		return nil, err
	}
	stale := map[string]bool{}
	var out []StageStatus
	for _, s := range stages {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		st := StageStatus{Name: s.Name, Doc: s.Doc}
		for _, d := range deps[s.Name] {
			if stale[d.Name] {
				st.Reasons = append(st.Reasons, "upstream stage "+d.Name+" is stale")
			}
		}
		cur, err := e.currentState(ch, s)
		if err != nil {
			st.Reasons = append(st.Reasons, err.Error())
		} else {
			st.Reasons = append(st.Reasons, e.staleness(s, cur, lock.Stages[s.Name])...)
		}
		st.Stale = len(st.Reasons) > 0
		stale[s.Name] = st.Stale
		out = append(out, st)
	}
	return out, e.hasher().Save()
}

func (e *Engine) codeRoot() string {
	if e.CodeRoot != "" {
		return e.CodeRoot
	}
	return e.Root
}

// BuildReport says what a build did.
type BuildReport struct {
	Ran, UpToDate []string
	// Failed lists the stages that failed, in order, with KeepGoing;
	// Skipped the stages not run because a stage upstream failed.
	Failed  []StageError
	Skipped []string
}

// A StageError is a stage that failed and why.
type StageError struct {
	Stage string
	Err   error
}

func (s StageError) Error() string { return s.Err.Error() }

// Build brings the named stages and everything upstream of them up to
// date (all stages when names is empty), then rewrites SHA256SUMS. A stage
// runs only when its code, parameters, input hashes or output hashes
// differ from the lock. After each successful stage the lock file is
// rewritten atomically, so an interrupted build keeps the work it
// finished; a failed or cancelled stage leaves its previous outputs and
// its lock entry untouched, and runs again next time.
func (e *Engine) Build(ctx context.Context, names ...string) (*BuildReport, error) {
	lock, err := ReadLock(e.abs(LockFile))
	if errors.Is(err, ErrNoLock) {
		lock = NewLock()
	} else if err != nil {
		return nil, err
	}
	stages, deps, err := e.order()
	if err != nil {
		return nil, err
	}
	want, err := e.selectStages(stages, deps, names)
	if err != nil {
		return nil, err
	}
	ch, err := newCodeHasher(e.codeRoot(), e.hasher())
	if err != nil {
		return nil, err
	}
	defer e.hasher().Save()
	// Raw data that differs from SHA256SUMS stops the build before any
	// stage runs on it (WriteSums would refuse at the end anyway).
	raw, err := e.sumsContent(NewLock(), e.hasher().Hash)
	if err != nil {
		return nil, err
	}
	if err := e.checkRawUnchanged(raw); err != nil {
		return nil, err
	}
	rep := &BuildReport{}
	broken := map[string]bool{} // failed or skipped, with KeepGoing
	for _, s := range stages {
		if !want[s.Name] {
			continue
		}
		if err := ctx.Err(); err != nil {
			return rep, fmt.Errorf("build interrupted before %s: %w", s.Name, err)
		}
		if slices.ContainsFunc(deps[s.Name], func(d *Stage) bool { return broken[d.Name] }) {
			broken[s.Name] = true
			rep.Skipped = append(rep.Skipped, s.Name)
			continue
		}
		cur, err := e.currentState(ch, s)
		if err != nil {
			if e.KeepGoing {
				broken[s.Name] = true
				rep.Failed = append(rep.Failed, StageError{s.Name, err})
				continue
			}
			return rep, err
		}
		why := e.staleness(s, cur, lock.Stages[s.Name])
		if len(why) == 0 {
			rep.UpToDate = append(rep.UpToDate, s.Name)
			if e.Verbose {
				e.logf("  %-22s up to date", s.Name)
			}
			continue
		}
		e.logf("  %-22s %s (%s)", s.Name, s.Doc, why[0])
		for _, w := range why[1:] {
			if e.Verbose {
				e.logf("  %-22s   also: %s", "", w)
			}
		}
		start := e.now()
		rec, err := e.runStage(ctx, s, cur)
		if err != nil && e.KeepGoing && ctx.Err() == nil {
			broken[s.Name] = true
			rep.Failed = append(rep.Failed, StageError{s.Name, err})
			continue
		}
		if err != nil {
			return rep, err
		}
		lock.Stages[s.Name] = rec
		if err := lock.Write(e.abs(LockFile)); err != nil {
			return rep, fmt.Errorf("record stage %s: %w", s.Name, err)
		}
		rep.Ran = append(rep.Ran, s.Name)
		if e.Verbose {
			e.logf("  %-22s done in %v", s.Name, e.now().Sub(start).Round(time.Millisecond))
		}
	}
	if len(rep.Failed) > 0 {
		errs := make([]error, len(rep.Failed))
		for i, f := range rep.Failed {
			errs[i] = f
		}
		return rep, errors.Join(errs...)
	}
	if len(names) == 0 {
		// Drop lock entries of stages that no longer exist.
		for name := range lock.Stages {
			if !slices.ContainsFunc(e.Stages, func(s *Stage) bool { return s.Name == name }) {
				delete(lock.Stages, name)
			}
		}
		if err := lock.Write(e.abs(LockFile)); err != nil {
			return rep, err
		}
	}
	if err := e.WriteSums(lock); err != nil {
		return rep, err
	}
	return rep, nil
}

func (e *Engine) selectStages(stages []*Stage, deps map[string][]*Stage, names []string) (map[string]bool, error) {
	want := map[string]bool{}
	if len(names) == 0 {
		for _, s := range stages {
			want[s.Name] = true
		}
		return want, nil
	}
	byName := map[string]*Stage{}
	for _, s := range stages {
		byName[s.Name] = s
	}
	var add func(s *Stage)
	add = func(s *Stage) {
		if want[s.Name] {
			return
		}
		want[s.Name] = true
		for _, d := range deps[s.Name] {
			add(d)
		}
	}
	for _, n := range names {
		s, ok := byName[n]
		if !ok {
			return nil, fmt.Errorf("no stage named %q (see `mage status` for the list)", n)
		}
		add(s)
	}
	return want, nil
}

// runStage runs one stage into a staging directory and, on success, moves
// its outputs into place and returns its new lock entry.
func (e *Engine) runStage(ctx context.Context, s *Stage, cur *current) (*StageState, error) {
	staging, err := os.MkdirTemp(e.Root, ".stage-")
	if err != nil {
		return nil, fmt.Errorf("stage %s: create staging directory: %w", s.Name, err)
	}
	defer os.RemoveAll(staging)
	env := &Env{
		stage:   s,
		root:    e.Root,
		staging: staging,
		inputs:  map[string]bool{},
		written: map[string]bool{},
		log:     e.Log,
		notices: e.Notices,
		verbose: e.Verbose,
	}
	if env.log == nil {
		env.log = io.Discard
	}
	if env.notices == nil {
		env.notices = env.log
	}
	for f := range cur.inputs {
		env.inputs[f] = true
	}
	if err := runGuarded(ctx, s, env); err != nil {
		return nil, fmt.Errorf("stage %s failed, previous outputs kept: %w", s.Name, err)
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("stage %s interrupted, previous outputs kept: %w", s.Name, err)
	}
	for _, o := range s.Outputs {
		if !env.written[o] {
			return nil, fmt.Errorf("stage %s did not write its declared output %s", s.Name, o)
		}
		if _, err := os.Stat(filepath.Join(staging, filepath.FromSlash(o))); err != nil {
			return nil, fmt.Errorf("stage %s: output %s was not completed: %w", s.Name, o, err)
		}
	}
	rec := &StageState{
		Code:    cur.code,
		Params:  maps.Clone(s.Params),
		Inputs:  cur.inputs,
		Outputs: map[string]string{},
		Tools:   map[string]string{"go": runtime.Version()},
	}
	if s.Tools != nil {
		maps.Copy(rec.Tools, s.Tools(ctx))
	}
	for _, o := range s.Outputs {
		src := filepath.Join(staging, filepath.FromSlash(o))
		dst := e.abs(o)
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return nil, fmt.Errorf("stage %s: %w", s.Name, err)
		}
		if err := os.Rename(src, dst); err != nil {
			return nil, fmt.Errorf("stage %s: move %s into place: %w", s.Name, o, err)
		}
		sum, err := e.hasher().Hash(dst)
		if err != nil {
			return nil, fmt.Errorf("stage %s: hash output: %w", s.Name, err)
		}
		rec.Outputs[o] = sum
	}
	return rec, nil
}

// runGuarded runs the stage and turns a panic into an error, so that a
// bug in one stage reports which stage it was and keeps the lock intact.
func runGuarded(ctx context.Context, s *Stage, env *Env) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic: %v", r)
		}
	}()
	return s.Run(ctx, env)
}
