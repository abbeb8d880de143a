// Package runlife is the life of one recorded run, shared by the three
// studies' runners.
//
// It is what every run does around its measurements, written once so
// that experiments/tls/tlsrun, experiments/net/netrun and
// experiments/pico/picorun do it the same way. Each runner's RunConfig
// embeds Config, and each Run returns a Result.
//
//	l, err := runlife.New(cfg)   // defaults, profile, the spec read and hashed
//	...                          // study checks and set-up (nothing on disk)
//	err = l.Begin(ctx)           // pre-flight (internal/quiet), then the run folder: repro.NewRun, hidden until committed
//	defer l.Abort()              // removes it on every path that does not commit
//	...                          // measure, write files into l.Run.Dir
//	m := l.Meta(ctx, tools)      // meta.json's provenance (provenance.Collect)
//	...                          // the study's fields of m
//	err = l.Commit(ctx, m)       // meta.json, git.diff, seal (MANIFEST.sha256), publish, list, pin
//
// The rules it keeps (see also internal/repro.Run):
//
//   - Nothing is created before Begin: a bad spec, profile or root fails
//     with nothing on disk.
//   - A run that fails or whose ctx ends before Commit publishes it is
//     removed by Abort and not pinned; earlier runs and the spec's pins are
//     untouched (ErrInterrupted).
//   - Commit checks ctx once more after meta.json is written: past that
//     point the run is published in one rename (repro.Run.Commit) and then
//     pinned (spec.Pin). A run that is committed but cannot be pinned stays
//     and the error (ErrNotPinned) says which line to add by hand.
//   - The machine is watched from Begin to Commit (internal/quiet): Begin
//     prints the pre-flight line, MachineLine gives the runners' progress
//     lines the current figures, and Commit records the Record as
//     meta.json's measured.machine. A run whose machine was busy (or could
//     not be sampled) is committed but not pinned (ErrBusy, wrapping
//     ErrNotPinned) unless PinBusyEnv gives the reason to pin it anyway;
//     the reason is recorded in measured.machine.override.
//   - Commit lists every run it publishes in the run list beside the
//     spec (internal/runlist: experiments/<study>.runs), as pinned or as
//     evidence: build, status and verify refuse a run folder no list
//     names. A run that is committed but cannot be listed stays, and
//     the error (ErrNotListed) gives the line to add.
//   - A run recorded from a dirty tree (meta.json git.dirty) keeps
//     `git diff HEAD --binary` in its folder as git.diff, sealed with
//     the rest, and any untracked files' names as git.untracked
//     (TreeState). A dirty run whose patch was not taken (Config.Tree)
//     is committed and listed but not pinned (ErrDirty, wrapping
//     ErrNotPinned): a reference run can be rebuilt exactly.
//   - Every error of the lifecycle and of the runners that use Errorf or
//     Wrap starts with "<study>:run: " (tls:run, net:run, pico:run).
package runlife

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"pqrepro/internal/provenance"
	"pqrepro/internal/quiet"
	"pqrepro/internal/repro"
	"pqrepro/internal/runlist"
	"pqrepro/internal/settings"
	"pqrepro/internal/spec"
)

// ErrInterrupted is wrapped by the error of a run interrupted before Commit.
// The context's error is wrapped too; the incomplete run was removed and
// nothing was pinned.
var ErrInterrupted = errors.New("run interrupted: the incomplete run was removed and not registered; earlier runs and the spec are untouched")

// ErrNotPinned is wrapped by Commit's error when the run was committed
// but the spec could not be changed to pin it.
var ErrNotPinned = errors.New("run committed but not pinned")

// ErrNotListed is wrapped by Commit's error when a committed run could
// not be added to the study's run list.
//
// The run (internal/runlist) is not evidence until the line the error
// gives is added by hand.
var ErrNotListed = errors.New("run committed but not listed")

// ErrDirty is wrapped by Commit's error for a run from a modified tree
// whose diff was not captured.
//
// It comes beside ErrNotPinned: the tree's tracked files differed from
// its commit and the diff was not captured (provenance.Git.Diff), so the
// run is committed and listed as evidence, flagged dirty-no-diff, but
// not a reference run.
var ErrDirty = errors.New("the run was recorded from a dirty tree whose diff was not kept")

// ErrBusy is wrapped (beside ErrNotPinned) by Commit's error when the
// machine was busy during the run and no reason to pin it was given. The
// run is then committed but not a reference run; PinBusyEnv gives the
// reason to pin it anyway.
var ErrBusy = errors.New("the machine was busy during the run")

// PinBusyEnv is the setting that pins a run although its machine was
// busy: PQREPRO_PIN_BUSY="why this run is good enough" (Config.PinBusy;
// internal/settings reads it). The reason is recorded in meta.json
// (measured.machine.override) and in the paper's table of runs.
const PinBusyEnv = settings.PinBusy

// PinEnv is the setting that, set to "no", commits a quiet run without
// pinning it (Config.NoPin; internal/settings reads it). Such a run is a
// repeat run of the pinned design, kept under data/<study>/ for the
// between-run variance and as the reference of hosts like the one it ran
// on (docs/agreement.md), while the pinned run stays the paper's. The
// pipeline's scratch runs (WithPinBusy) are always pinned in their
// scratch spec, whatever it says.
const PinEnv = settings.Pin

type pinBusyKey struct{}

// WithPinBusy returns a ctx whose runs are pinned even if the machine was
// busy, for the reason given unless the Config gives one. The reason is
// recorded like PinBusyEnv's. The pipeline uses it for the new runs of
// `mage all`, which go into a scratch tree to be compared with the
// reference runs and are never reference runs themselves.
func WithPinBusy(ctx context.Context, reason string) context.Context {
	return context.WithValue(ctx, pinBusyKey{}, reason)
}

// pinBusy is the run's reason to pin a busy run: Config.PinBusy, else
// WithPinBusy's, else "".
func (l *Life) pinBusy(ctx context.Context) string {
	if l.PinBusy != "" {
		return l.PinBusy
	}
	r, _ := ctx.Value(pinBusyKey{}).(string)
	return r
}

// DefaultMachine makes the Watcher of a run whose Config.Machine is nil:
// the real sampler of this machine (quiet.New), with the defaults of
// internal/quiet. Tests of runners replace it (in TestMain) with a
// quiet.Fixed, so that they do not depend on how busy the machine running
// them is, nor wait for its pre-flight.
var DefaultMachine = func() quiet.Watcher { return quiet.New(quiet.Options{}) }

// Config is the run lifecycle's settings, embedded in every runner's RunConfig.
type Config struct {
	// Study names the study: data/<Study>/<run-id>/, the spec
	// experiments/<Study>.toml (spec.Path) and the error prefix
	// "<Study>:run: ". A study's Run sets it.
	Study string
	// Root is the repository root; "" is the root of the pqrepro module
	// above the working directory (FindRoot).
	Root string
	// Git is the state of the repository the run was started from
	// (provenance.RepoGit at the repository root, taken by the pipeline
	// when the run starts); nil means the state of Root.
	Git *provenance.Git
	// Tree is the patch and the untracked files of that repository,
	// taken with Git (ReadTree); nil with a nil Git means Meta takes them
	// from Root. A run from a dirty tree keeps the patch (git.diff), and
	// is pinned only then.
	Tree *TreeState
	// Profile names a [profiles.*] table of the spec; it may not be empty.
	Profile string
	// SpecPath is the spec; "" is Root/experiments/<Study>.toml. A
	// committed run is pinned in it.
	SpecPath string
	// DataDir is where runs go (DataDir/<Study>/<run-id>/); "" is
	// Root/data.
	DataDir string
	// Log receives the runner's lines; nil is io.Discard.
	Log io.Writer
	// Now names the run (its ID is the UTC start time) and stamps
	// meta.json's start and end; nil is time.Now.
	Now func() time.Time
	// Machine watches the machine from Begin to Commit; nil is
	// DefaultMachine().
	Machine quiet.Watcher
	// PinBusy, when not empty, is the reason to pin the run even if the
	// machine was busy (PinBusyEnv); "" is a scratch run's (WithPinBusy)
	// or none.
	PinBusy string
	// Verbose makes MachineLine name the busiest other processes.
	Verbose bool
	// NoPin commits the run without pinning it (a repeat run: PinEnv=no).
	NoPin bool
	// Settle, when not nil, runs in Begin before the pre-flight: it
	// waits for the load of the run's own start-up to decay
	// (quiet.Settler; the pipeline sets it for real runs, tests leave it
	// nil). Its error other than an interruption is printed, not fatal:
	// the pre-flight then judges the machine as it is.
	Settle func(ctx context.Context, log io.Writer) (float64, error)
}

// Life is one run's lifecycle. Its Config has every default filled.
type Life struct {
	Config
	// SpecSHA is the SHA-256 of the spec as New read it (meta.json's
	// spec_sha256). SpecDesignSHA is that of the spec without its pins
	// (spec.WithoutPins; meta.json's spec_design_sha256), the same for
	// every run of one design whatever was pinned when it started.
	SpecSHA, SpecDesignSHA string
	// Run is the run being recorded, from Begin on.
	Run *repro.Run
	// Start is the run's start (Now at Begin), the time in its ID.
	Start time.Time

	committed bool
	pinned    bool // Commit pinned the run
	watching  bool // Machine started and not yet stopped
}

// Error is an error of a run: its text starts with "<study>:run: ".
type Error struct {
	Study string
	Err   error
}

func (e *Error) Error() string { return e.Study + ":run: " + e.Err.Error() }
func (e *Error) Unwrap() error { return e.Err }

// New fills cfg's defaults, checks the profile is named and reads the
// spec (its SHA-256 is meta.json's). It creates nothing.
func New(cfg Config) (*Life, error) {
	l := &Life{Config: cfg}
	if cfg.Study == "" {
		return nil, errors.New("runlife: Config.Study is empty")
	}
	if l.Root == "" {
		root, err := FindRoot("")
		if err != nil {
			return nil, l.Errorf("%w (or give RunConfig.Root)", err)
		}
		l.Root = root
	}
	if l.SpecPath == "" {
		l.SpecPath = filepath.Join(l.Root, spec.Path(l.Study))
	}
	if l.DataDir == "" {
		l.DataDir = filepath.Join(l.Root, "data")
	}
	if l.Log == nil {
		l.Log = io.Discard
	}
	if l.Now == nil {
		l.Now = time.Now
	}
	if l.Machine == nil {
		l.Machine = DefaultMachine()
	}
	if l.PinBusy != "" {
		// The reason is sealed into meta.json and printed by the
		// paper: checked before anything is recorded.
		if err := CheckReason(PinBusyEnv, l.PinBusy); err != nil {
			return nil, l.Errorf("%w; nothing was recorded", err)
		}
	}
	if l.Profile == "" {
		return nil, l.Errorf("no profile given: use quick or full (PQREPRO_PROFILE)")
	}
	b, err := os.ReadFile(l.SpecPath)
	if err != nil {
		return nil, l.Errorf("read spec: %w", err)
	}
	l.SpecSHA = repro.HashBytes(b)
	l.SpecDesignSHA = repro.HashBytes(spec.WithoutPins(b))
	return l, nil
}

// Errorf returns an error of the run: "<study>:run: " and the message.
func (l *Life) Errorf(format string, a ...any) error {
	return &Error{Study: l.Study, Err: fmt.Errorf(format, a...)}
}

// Wrap prefixes err with "<study>:run: " unless it is an Error already;
// nil stays nil.
func (l *Life) Wrap(err error) error {
	if err == nil {
		return nil
	}
	if _, ok := err.(*Error); ok {
		return err
	}
	return &Error{Study: l.Study, Err: err}
}

// Interrupted returns nil while ctx is live, else the run's error
// wrapping ErrInterrupted and ctx's error.
func (l *Life) Interrupted(ctx context.Context) error {
	if ctx.Err() == nil {
		return nil
	}
	if l.Run == nil {
		return l.Errorf("%w (%w)", ErrInterrupted, ctx.Err())
	}
	return l.Errorf("run %s: %w (%w)", l.Run.ID, ErrInterrupted, ctx.Err())
}

// Begin checks the machine before the run and creates the run folder.
// The pre-flight is a few seconds of samples (internal/quiet); Begin
// prints its line, leaves the sampler running
// until Commit or Abort, and creates the run folder (repro.NewRun, named
// after Now), hidden until Commit. It creates nothing when ctx has ended,
// also during the pre-flight.
func (l *Life) Begin(ctx context.Context) error {
	if l.Run != nil {
		return l.Errorf("run %s has begun already", l.Run.ID)
	}
	if err := l.Interrupted(ctx); err != nil {
		return err
	}
	if why := l.pinBusy(ctx); why != "" {
		if err := CheckReason("the reason to pin a busy run", why); err != nil {
			return l.Errorf("%w; nothing was recorded", err)
		}
	}
	if l.Settle != nil {
		if _, err := l.Settle(ctx, l.Log); err != nil {
			if ierr := l.Interrupted(ctx); ierr != nil {
				return ierr
			}
			fmt.Fprintf(l.Log, "%s:run: machine: not waiting for the load to settle: %v\n", l.Study, err)
		}
	}
	pre, err := l.Machine.Start(ctx)
	if err != nil {
		l.Machine.Stop()
		if ierr := l.Interrupted(ctx); ierr != nil {
			return ierr
		}
		return l.Errorf("machine pre-flight: %w", err)
	}
	l.watching = true
	fmt.Fprintf(l.Log, "%s:run: machine before the run: %s\n", l.Study, pre.Line())
	if l.Repeat(ctx) {
		fmt.Fprintf(l.Log, "%s:run: the run will be committed but not pinned (%s=no): a repeat run\n", l.Study, PinEnv)
	}
	if pre.Verdict != quiet.Quiet {
		if why := l.pinBusy(ctx); why != "" {
			fmt.Fprintf(l.Log, "%s:run: machine: the run will be pinned even if the machine stays busy, because %q (%s)\n", l.Study, why, PinBusyEnv)
		} else {
			fmt.Fprintf(l.Log, "%s:run: machine: a run recorded on a busy machine is committed but NOT pinned; stop other jobs and wait until `uptime` is low, or set %s=\"reason\" to pin it anyway (docs/quiet.md)\n", l.Study, PinBusyEnv)
		}
	}
	l.Start = l.Now()
	run, err := repro.NewRun(l.DataDir, l.Study, l.Profile, l.Start)
	if err != nil {
		l.stopMachine()
		return l.Errorf("%w", err)
	}
	l.Run = run
	return nil
}

// Abort removes the run folder unless the run was committed; it is safe
// to call at any time, also before Begin and more than once.
func (l *Life) Abort() {
	l.stopMachine()
	if l.Run != nil {
		l.Run.Abort()
	}
}

// stopMachine stops the sampler once and returns its Record.
func (l *Life) stopMachine() quiet.Record {
	if !l.watching {
		return quiet.Record{}
	}
	l.watching = false
	return l.Machine.Stop()
}

// MachineLine is the machine's latest figures for a progress line.
// It reads "machine: load 0.52, other processes 0.03 core, steal 0.0 %"; with
// Verbose it names the busiest other processes too. A nil Life (a
// runner's unit test) says "machine: not watched".
func (l *Life) MachineLine() string {
	if l == nil || l.Machine == nil {
		return "machine: not watched"
	}
	sm := l.Machine.Latest()
	line := sm.Line()
	if sm.Busy() {
		line += " (BUSY)"
	}
	if l.Verbose && len(sm.Top) > 0 {
		top := make([]string, len(sm.Top))
		for i, p := range sm.Top {
			top[i] = p.String()
		}
		line += "; top other: " + strings.Join(top, ", ")
	}
	return line
}

// Committed reports whether Commit published the run (it may still have
// failed to pin it).
func (l *Life) Committed() bool { return l.committed }

// Meta returns meta.json's provenance for the run. It has host, Go, git
// (Config.Git), the versions of tools (name to command line, as
// provenance.Options.Tools), the study, run ID, spec (relative to Root),
// spec SHA-256, profile, start and end (Now, taken before the tools are
// asked). The seeds, board, files, measurements and notes are the
// runner's.
func (l *Life) Meta(ctx context.Context, tools map[string][]string) provenance.Meta {
	end := l.Now()
	m := provenance.Collect(ctx, provenance.Options{Root: l.Root, Git: l.Git, Tools: tools})
	if l.Git == nil && l.Tree == nil && m.Git.Commit != "unknown" {
		if t, err := ReadTree(ctx, l.Root); err == nil {
			l.Tree = &t
		}
	}
	m.Study = l.Study
	m.Spec = SpecRel(l.Root, l.SpecPath)
	m.SpecSHA, m.SpecDesignSHA = l.SpecSHA, l.SpecDesignSHA
	m.Profile = l.Profile
	if l.Run != nil {
		m.RunID = l.Run.ID
	}
	m.Start, m.End = l.Start.UTC(), end.UTC()
	return m
}

// Commit writes meta.json, publishes the run, lists it and pins it.
// It stops the machine's sampler and records it as measured.machine,
// writes the patch of a dirty tree (runlist.DiffFile), the untracked
// files (UntrackedFile) and meta.json into
// the run folder, checks ctx a last time, seals and publishes the run
// (repro.Run.Commit: MANIFEST.sha256, one rename, readable like the rest
// of data/), lists it as evidence in the run list beside the spec
// (runlist.Beside) and pins it for the profile in the spec (spec.Sealed)
// and as pinned in the list, unless the machine was not quiet and no
// reason to pin it anyway was given (PinBusy: the error wraps ErrBusy),
// or the tree was dirty and its diff not captured (ErrDirty), or the run
// is a repeat run: then the run stays committed and listed, unpinned,
// and the error (but a repeat run's) wraps ErrNotPinned. On an error
// before the publication nothing is committed, listed or pinned (the
// caller's deferred Abort removes the folder); after it the run stays
// and the error wraps ErrNotListed or ErrNotPinned.
func (l *Life) Commit(ctx context.Context, m provenance.Meta) error {
	if l.Run == nil {
		return l.Errorf("commit before Begin")
	}
	if err := checkMeta(m); err != nil {
		l.stopMachine()
		return l.Errorf("run %s: %w; the run is not sealed", l.Run.ID, err)
	}
	mach := l.stopMachine()
	if mach.Verdict != quiet.Quiet {
		mach.Override = l.pinBusy(ctx)
	}
	if m.Measured == nil {
		m.Measured = map[string]any{}
	}
	m.Measured[MachineKey] = mach
	// The diff of a dirty tree, kept with the run: its SHA-256 is
	// meta.json's git.diff_sha256, and build checks that they agree.
	diffKept := false
	if t := l.Tree; t != nil {
		if m.Git.Dirty && len(t.Diff) > 0 && repro.HashBytes(t.Diff) == m.Git.DiffSHA256 {
			if err := os.WriteFile(filepath.Join(l.Run.Dir, runlist.DiffFile), t.Diff, 0o644); err != nil {
				return l.Errorf("run %s: %w", l.Run.ID, err)
			}
			diffKept = true
		}
		if len(t.Untracked) > 0 {
			if err := os.WriteFile(filepath.Join(l.Run.Dir, UntrackedFile), []byte(strings.Join(t.Untracked, "\n")+"\n"), 0o644); err != nil {
				return l.Errorf("run %s: %w", l.Run.ID, err)
			}
		}
	}
	if err := provenance.Write(l.Run.Dir, m); err != nil {
		return l.Errorf("run %s: %w", l.Run.ID, err)
	}
	// The last moment to stop: after this the run is published.
	if err := l.Interrupted(ctx); err != nil {
		return err
	}
	// NewRun's folder is private (0700) while it is written; a published
	// run is readable like the rest of data/.
	if err := os.Chmod(l.Run.Dir, 0o755); err != nil {
		return l.Errorf("run %s: %w", l.Run.ID, err)
	}
	if err := l.Run.Commit(); err != nil {
		return l.Errorf("%w", err)
	}
	l.committed = true
	pin := spec.Sealed(l.Run.ID, l.Run.Manifest)
	fmt.Fprintf(l.Log, "%s:run: machine during the run: %s\n", l.Study, mach.Line())
	listPath := runlist.Beside(l.SpecPath)
	entry := runlist.Entry{ID: l.Run.ID, Manifest: l.Run.Manifest, Role: runlist.Evidence, DirtyNoDiff: m.Git.Dirty && !diffKept}
	if err := runlist.Add(listPath, l.Study, entry); err != nil {
		return l.Errorf("run %s is committed in %s but %w: %w; add the line %q to %s by hand",
			l.Run.ID, l.Run.Final, ErrNotListed, err, entry.String(), SpecRel(l.Root, listPath))
	}
	fmt.Fprintf(l.Log, "%s:run: listed in %s: %s\n", l.Study, SpecRel(l.Root, listPath), entry)
	if mach.Verdict != quiet.Quiet {
		if mach.Override == "" {
			return l.Errorf("run %s is committed in %s but %w: %w (%s); it is kept as evidence, not as a reference run: stop other jobs and record again (docs/quiet.md), or record with %s=\"reason\" to pin a busy run with its reason in meta.json and the paper",
				l.Run.ID, l.Run.Final, ErrNotPinned, ErrBusy, strings.Join(mach.Reasons, "; "), PinBusyEnv)
		}
		fmt.Fprintf(l.Log, "%s:run: machine was %s; pinned anyway because %s=%q (recorded in meta.json)\n", l.Study, mach.Verdict, PinBusyEnv, mach.Override)
	}
	if l.Repeat(ctx) {
		fmt.Fprintf(l.Log, "%s:run: run %s committed, not pinned (%s=no): a repeat run of the pinned design, for the between-run variance and as the reference of hosts like this one (docs/agreement.md)\n", l.Study, l.Run.ID, PinEnv)
		return nil
	}
	if entry.DirtyNoDiff {
		return l.Errorf("run %s is committed in %s but %w: %w (meta.json git.dirty, and no patch of the tree with its git.diff_sha256 was taken: Config.Tree); it is kept as evidence, flagged %s in %s: commit or stash your changes and record again",
			l.Run.ID, l.Run.Final, ErrNotPinned, ErrDirty, runlist.DirtyNoDiff, SpecRel(l.Root, listPath))
	}
	if err := spec.Pin(l.SpecPath, l.Profile, pin); err != nil {
		return l.Errorf("run %s is committed in %s but %w: %w; add %s = %q under [runs] in %s by hand",
			l.Run.ID, l.Run.Final, ErrNotPinned, err, l.Profile, pin, l.SpecPath)
	}
	entry.Role = runlist.Pinned
	if err := runlist.Add(listPath, l.Study, entry); err != nil {
		return l.Errorf("run %s is committed in %s and pinned, but %w as pinned: %w; write %q in %s by hand (and `evidence` for the run the profile pinned before)",
			l.Run.ID, l.Run.Final, ErrNotListed, err, entry.String(), SpecRel(l.Root, listPath))
	}
	l.pinned = true
	return nil
}

// Repeat reports whether the run is a repeat run, committed without a
// pin. That is NoPin (PinEnv=no), unless ctx is a pipeline's scratch run
// (WithPinBusy), which is always pinned in its scratch spec. A repeat
// run keeps its packet captures in the content store, not in the run
// folder, whatever their size (CaptureLimit): it adds records to the
// repository, not tens of MB of captures to its history for every
// repetition.
func (l *Life) Repeat(ctx context.Context) bool {
	_, scratch := ctx.Value(pinBusyKey{}).(string)
	return l.NoPin && !scratch
}

// CaptureLimit is the runner's limit in bytes for committing its
// captures with the run (rederive.InRepoLimit's argument): max, or -1
// (never) for a repeat run.
func (l *Life) CaptureLimit(ctx context.Context, max int64) int64 {
	if l.Repeat(ctx) {
		return -1
	}
	return max
}

// PinState says what became of the run after a successful Commit. It is
// for a runner's last line: "pinned for the <profile> profile in <spec>", or
// "not pinned (PQREPRO_PIN=no: a repeat run)".
func (l *Life) PinState() string {
	if !l.pinned {
		return "not pinned (" + PinEnv + "=no: a repeat run)"
	}
	return "pinned for the " + l.Profile + " profile in " + SpecRel(l.Root, l.SpecPath)
}

// MachineKey is the key of the quiet.Record in meta.json's measured map.
const MachineKey = "machine"

// SpecRel names the spec in meta.json without a path of this machine:
// relative to root when it is below it, else by its base name.
func SpecRel(root, path string) string {
	if rel, err := filepath.Rel(root, path); err == nil && filepath.IsLocal(rel) {
		return filepath.ToSlash(rel)
	}
	return filepath.Base(path)
}

// FindRoot returns the repository root: the nearest folder at or above
// dir ("" is the working directory) whose go.mod declares module pqrepro.
func FindRoot(dir string) (string, error) {
	if dir == "" {
		wd, err := os.Getwd()
		if err != nil {
			return "", fmt.Errorf("find repository root: %w", err)
		}
		dir = wd
	}
	dir, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("find repository root: %w", err)
	}
	for d := dir; ; d = filepath.Dir(d) {
		b, err := os.ReadFile(filepath.Join(d, "go.mod"))
		if err == nil && bytes.HasPrefix(bytes.TrimSpace(b), []byte("module pqrepro")) {
			return d, nil
		}
		if filepath.Dir(d) == d {
			return "", fmt.Errorf("no go.mod of module pqrepro above %s: run from inside the repository", dir)
		}
	}
}
