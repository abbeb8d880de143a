package runlife

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"pqrepro/experiments/instruments/readonly"
	"pqrepro/internal/provenance"
	"pqrepro/internal/quiet"
	"pqrepro/internal/repro"
	"pqrepro/internal/runlist"
	"pqrepro/internal/spec"
)

// The study of these tests: a name no real study has.
const study = "lifetest"

var clock = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

// testRoot is a repository root in a temporary folder with the study's
// spec (holding an earlier pin when pinned is set) and nothing else.
func testRoot(t *testing.T, pinned string) (root, specPath string, specBytes []byte) {
	t.Helper()
	root = t.TempDir()
	specPath = filepath.Join(root, spec.Path(study))
	if err := os.MkdirAll(filepath.Dir(specPath), 0o755); err != nil {
		t.Fatal(err)
	}
	body := "# the study's spec\nseed = 1\n\n[runs]\n"
	if pinned != "" {
		body += "quick = \"" + pinned + "\"\n"
	}
	if err := os.WriteFile(specPath, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return root, specPath, []byte(body)
}

// testDiff is the diff of testConfig's dirty tree.
const testDiff = "diff --git a/x b/x\n"

func testConfig(root string) Config {
	n := 0
	return Config{Study: study, Root: root, Profile: "quick", Git: &provenance.Git{Commit: "abc", Dirty: true, DiffSHA256: repro.HashBytes([]byte(testDiff))}, Tree: &TreeState{Diff: []byte(testDiff)},
		Now: func() time.Time { n++; return clock.Add(time.Duration(n-1) * time.Second) }, Machine: quiet.NewFixed(quiet.Quiet), PinBusy: ""}
}

// record runs the whole lifecycle with one data file; cancel, when not
// nil, is called before step number cancelAt (0 Begin, 1 writing the
// file, 2 Meta, 3 Commit).
func record(t *testing.T, ctx context.Context, l *Life, cancelAt int, cancel func()) (err error) {
	t.Helper()
	step := func(i int) {
		if cancel != nil && i == cancelAt {
			cancel()
		}
	}
	step(0)
	if err := l.Begin(ctx); err != nil {
		return err
	}
	defer l.Abort()
	step(1)
	if err := l.Interrupted(ctx); err != nil {
		return err
	}
	data := []byte("a,b\n1,2\n")
	if err := os.WriteFile(filepath.Join(l.Run.Dir, "records.csv"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	step(2)
	m := l.Meta(ctx, nil)
	m.Files = map[string]string{"records.csv": repro.HashBytes(data)}
	step(3)
	return l.Commit(ctx, m)
}

// assertUntouched checks that no run and no leftover is in data/ and the
// spec is as it was.
func assertUntouched(t *testing.T, root, specPath string, before []byte) {
	t.Helper()
	ents, _ := os.ReadDir(filepath.Join(root, "data", study))
	for _, e := range ents {
		t.Errorf("data/%s holds %s", study, e.Name())
	}
	if after, _ := os.ReadFile(specPath); string(after) != string(before) {
		t.Errorf("the spec changed:\n%s", after)
	}
}

func TestNewDefaults(t *testing.T) {
	// Root "": the repository above the working directory (this
	// package's folder under go test), whose experiments/tls.toml exists.
	l, err := New(Config{Study: "tls", Profile: "quick"})
	if err != nil {
		t.Fatal(err)
	}
	wd, _ := os.Getwd()
	if want := filepath.Dir(filepath.Dir(filepath.Dir(wd))); l.Root != want {
		t.Errorf("root %s, want %s", l.Root, want)
	}
	if l.SpecPath != filepath.Join(l.Root, "experiments", "tls.toml") || l.DataDir != filepath.Join(l.Root, "data") {
		t.Errorf("spec %s, data %s", l.SpecPath, l.DataDir)
	}
	if l.Log != io.Discard || l.Now == nil || l.SpecSHA == "" || l.Run != nil {
		t.Errorf("log %v, now set %v, spec sha %q, run %v", l.Log, l.Now != nil, l.SpecSHA, l.Run)
	}
	// Given values are kept.
	root, specPath, _ := testRoot(t, "")
	cfg := testConfig(root)
	cfg.DataDir, cfg.Log = filepath.Join(root, "elsewhere"), os.Stderr
	l, err = New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if l.Root != root || l.SpecPath != specPath || l.DataDir != cfg.DataDir || l.Log != os.Stderr || l.Now().IsZero() {
		t.Errorf("%+v", l.Config)
	}
}

func TestNewRejectsCreatingNothing(t *testing.T) {
	root, specPath, before := testRoot(t, "")
	for _, tc := range []struct {
		name string
		edit func(*Config)
		want string
	}{
		{"no study", func(c *Config) { c.Study = "" }, "Config.Study is empty"},
		{"no profile", func(c *Config) { c.Profile = "" }, "lifetest:run: no profile given: use quick or full"},
		{"no spec", func(c *Config) { c.SpecPath = filepath.Join(root, "missing.toml") }, "lifetest:run: read spec: open "},
		{"spec is a folder", func(c *Config) { c.SpecPath = root }, "lifetest:run: read spec: "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := testConfig(root)
			tc.edit(&cfg)
			_, err := New(cfg)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want %q", err, tc.want)
			}
			if ents, _ := os.ReadDir(root); len(ents) != 1 {
				t.Errorf("root holds %d entries after a refused run, want only experiments/", len(ents))
			}
			assertUntouched(t, root, specPath, before)
		})
	}
}

func TestLifecycle(t *testing.T) {
	root, specPath, _ := testRoot(t, "")
	l, err := New(testConfig(root))
	if err != nil {
		t.Fatal(err)
	}
	if err := record(t, context.Background(), l, -1, nil); err != nil {
		t.Fatal(err)
	}
	const id = "20261130T120000Z-quick"
	final := filepath.Join(root, "data", study, id)
	if l.Run.ID != id || l.Run.Final != final || !l.Committed() {
		t.Fatalf("run %s in %s (committed %v)", l.Run.ID, l.Run.Final, l.Committed())
	}
	fi, err := os.Stat(final)
	if err != nil || fi.Mode().Perm() != 0o755 {
		t.Fatalf("run folder: %v %v, want 0755", fi, err)
	}
	if ents, _ := os.ReadDir(filepath.Join(root, "data", study)); len(ents) != 1 {
		t.Errorf("data/%s holds %d entries, want the run only", study, len(ents))
	}
	m, err := provenance.Read(final)
	if err != nil {
		t.Fatal(err)
	}
	if m.Study != study || m.RunID != id || m.Spec != "experiments/lifetest.toml" || m.Profile != "quick" || m.SpecSHA != l.SpecSHA ||
		!m.Start.Equal(clock) || !m.End.Equal(clock.Add(time.Second)) || m.Git.Commit != "abc" || !m.Git.Dirty || m.Files["records.csv"] == "" {
		t.Errorf("meta.json %+v", m)
	}
	if rc := repro.CheckRun(root, "data/"+study+"/"+id, l.Run.Manifest, "the test's pin", nil, nil); len(rc.Problems) > 0 || rc.Files != 3 {
		t.Errorf("the committed run does not check: %+v", rc)
	}
	if b, err := os.ReadFile(filepath.Join(final, runlist.DiffFile)); err != nil || string(b) != testDiff {
		t.Errorf("the dirty tree's diff is not kept in %s: %q, %v", runlist.DiffFile, b, err)
	}
	if l, err := runlist.Read(filepath.Join(root, runlist.Path(study))); err != nil || len(l) != 1 || l[0].String() != id+"@sha256:"+l[0].Manifest+" pinned" || l[0].Manifest == "" {
		t.Errorf("run list %+v, %v; want the run, pinned", l, err)
	}
	pin, err := spec.PinnedIn(specPath, "quick")
	if err != nil || pin != id {
		t.Errorf("pinned %q (%v), want %s", pin, err, id)
	}
	b, _ := os.ReadFile(specPath)
	if !strings.Contains(string(b), "quick = \""+spec.Sealed(id, l.Run.Manifest)+"\"") || !strings.HasPrefix(string(b), "# the study's spec\n") {
		t.Errorf("spec after the pin:\n%s", b)
	}
	if err := l.Begin(context.Background()); err == nil {
		t.Error("a second Begin succeeded")
	}
}

// A run interrupted at any step before it is published leaves no run, no
// incomplete folder and the spec (with its earlier pin) as it was.
func TestInterruptedAtEachStep(t *testing.T) {
	const earlier = "20260101T000000Z-quick"
	for i, name := range []string{"before Begin", "after Begin", "after the data", "before Commit"} {
		t.Run(name, func(t *testing.T) {
			root, specPath, before := testRoot(t, earlier)
			l, err := New(testConfig(root))
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			err = record(t, ctx, l, i, cancel)
			if !errors.Is(err, ErrInterrupted) || !errors.Is(err, context.Canceled) || !strings.HasPrefix(err.Error(), "lifetest:run: ") {
				t.Fatalf("err = %v, want lifetest:run: ... ErrInterrupted (context canceled)", err)
			}
			if l.Committed() {
				t.Error("an interrupted run was committed")
			}
			assertUntouched(t, root, specPath, before)
			if pin, _ := spec.PinnedIn(specPath, "quick"); pin != earlier {
				t.Errorf("pin %q, want the earlier %s", pin, earlier)
			}
		})
	}
}

// begun is a Life in a fresh root whose spec pins earlier, after Begin.
func begun(t *testing.T, earlier string) (l *Life, root, specPath string, before []byte) {
	t.Helper()
	root, specPath, before = testRoot(t, earlier)
	l, err := New(testConfig(root))
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Begin(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(l.Abort)
	return l, root, specPath, before
}

// A commit that fails leaves the earlier pin and no new run; the error
// says what failed.
func TestCommitFailure(t *testing.T) {
	const earlier = "20260101T000000Z-quick"
	ctx := context.Background()
	t.Run("a run of the same name appeared", func(t *testing.T) {
		l, root, specPath, before := begun(t, earlier)
		if err := os.Mkdir(l.Run.Final, 0o755); err != nil { // another process's run
			t.Fatal(err)
		}
		err := l.Commit(ctx, l.Meta(ctx, nil))
		if err == nil || !strings.Contains(err.Error(), "lifetest:run: commit run 20261130T120000Z-quick") || !strings.Contains(err.Error(), "an earlier run with this name is kept") {
			t.Fatalf("err = %v", err)
		}
		l.Abort()
		os.Remove(l.Run.Final)
		assertUntouched(t, root, specPath, before)
	})
	t.Run("meta.json disagrees with a file", func(t *testing.T) {
		l, root, specPath, before := begun(t, earlier)
		os.WriteFile(filepath.Join(l.Run.Dir, "x.csv"), []byte("x"), 0o644)
		m := l.Meta(ctx, nil)
		m.Files = map[string]string{"x.csv": repro.HashBytes([]byte("y"))}
		err := l.Commit(ctx, m)
		if err == nil || !strings.Contains(err.Error(), "meta.json lists x.csv") {
			t.Fatalf("err = %v", err)
		}
		l.Abort()
		assertUntouched(t, root, specPath, before)
	})
	t.Run("read-only data folder", func(t *testing.T) {
		l, _, specPath, before := begun(t, earlier)
		// Mode 0555, or for root the immutable attribute (chattr +i).
		readonly.Dir(t, filepath.Dir(l.Run.Final))
		err := l.Commit(ctx, l.Meta(ctx, nil))
		if err == nil || !strings.HasPrefix(err.Error(), "lifetest:run: commit run ") || l.Committed() {
			t.Fatalf("err = %v, committed %v", err, l.Committed())
		}
		if _, err := os.Stat(l.Run.Final); err == nil {
			t.Error("the run was published into a read-only folder")
		}
		if after, _ := os.ReadFile(specPath); string(after) != string(before) {
			t.Errorf("the spec changed:\n%s", after)
		}
	})
}

// A run that is committed but cannot be pinned stays; the error wraps
// ErrNotPinned and says which line to add.
func TestPinFailureKeepsTheRun(t *testing.T) {
	root, specPath, _ := testRoot(t, "")
	l, err := New(testConfig(root))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := l.Begin(ctx); err != nil {
		t.Fatal(err)
	}
	defer l.Abort()
	// The spec turns into something Pin cannot edit.
	if err := os.Remove(specPath); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(specPath, 0o755); err != nil {
		t.Fatal(err)
	}
	err = l.Commit(ctx, l.Meta(ctx, nil))
	if !errors.Is(err, ErrNotPinned) || !l.Committed() || !strings.Contains(err.Error(), "add quick = ") || !strings.Contains(err.Error(), "by hand") {
		t.Fatalf("err = %v, committed %v", err, l.Committed())
	}
	l.Abort() // a no-op after Commit
	if _, err := os.Stat(filepath.Join(l.Run.Final, repro.ManifestFile)); err != nil {
		t.Errorf("the committed run is gone: %v", err)
	}
}

func TestErrorPrefix(t *testing.T) {
	l := &Life{Config: Config{Study: "net"}}
	base := errors.New("boom")
	e := l.Wrap(base)
	if e.Error() != "net:run: boom" || !errors.Is(e, base) {
		t.Errorf("Wrap: %v", e)
	}
	if l.Wrap(e) != e {
		t.Error("Wrap prefixed an Error twice")
	}
	if l.Wrap(nil) != nil {
		t.Error("Wrap(nil) is not nil")
	}
	if e := l.Errorf("run %s: %w", "x", base); e.Error() != "net:run: run x: boom" || !errors.Is(e, base) {
		t.Errorf("Errorf: %v", e)
	}
}

func TestSpecRel(t *testing.T) {
	for _, tc := range []struct{ root, path, want string }{
		{"/r", "/r/experiments/tls.toml", "experiments/tls.toml"},
		{".", "experiments/net.toml", "experiments/net.toml"},
		{"/r", "/tmp/x/pico.toml", "pico.toml"},
		{"/r", "/r/../r2/net.toml", "net.toml"},
		{"/r", "/rx/tls.toml", "tls.toml"},
	} {
		if got := SpecRel(tc.root, tc.path); got != tc.want {
			t.Errorf("SpecRel(%q, %q) = %q, want %q", tc.root, tc.path, got, tc.want)
		}
	}
}

func TestFindRoot(t *testing.T) {
	dir := t.TempDir()
	deep := filepath.Join(dir, "a", "b")
	if err := os.MkdirAll(deep, 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := FindRoot(deep); err == nil || !strings.Contains(err.Error(), "no go.mod of module pqrepro") {
		t.Errorf("no go.mod: %v", err)
	}
	os.WriteFile(filepath.Join(dir, "a", "go.mod"), []byte("module other\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "go.mod"), []byte("\nmodule pqrepro\n\ngo 1.26\n"), 0o644)
	if got, err := FindRoot(deep); err != nil || got != dir {
		t.Errorf("FindRoot = %q, %v; want %s", got, err, dir)
	}
}

// machineOf reads measured.machine back from a committed run's meta.json.
func machineOf(t *testing.T, dir string) quiet.Record {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, provenance.FileName))
	if err != nil {
		t.Fatal(err)
	}
	var m struct {
		Measured map[string]json.RawMessage `json:"measured"`
	}
	var rec quiet.Record
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(m.Measured[MachineKey], &rec); err != nil {
		t.Fatalf("measured.machine: %v in %s", err, b)
	}
	return rec
}

// A busy machine: the run is committed (kept as evidence) with the
// verdict and reasons in meta.json, NOT pinned, and the error says so
// and what to do; with PinBusy the run is pinned and the reason recorded.
func TestBusyMachine(t *testing.T) {
	const earlier = "20260101T000000Z-quick"
	for _, tc := range []struct {
		name, override, verdict string
		pinned                  bool
	}{
		{"quiet", "", quiet.Quiet, true},
		{"busy", "", quiet.Busy, false},
		{"unknown", "", quiet.Unknown, false},
		{"busy with override", "the reference host has no idle hours this week", quiet.Busy, true},
		{"quiet with override", "not needed", quiet.Quiet, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root, specPath, _ := testRoot(t, earlier)
			cfg := testConfig(root)
			var log strings.Builder
			cfg.Machine, cfg.PinBusy, cfg.Log = quiet.NewFixed(tc.verdict), tc.override, &log
			l, err := New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			err = record(t, context.Background(), l, -1, nil)
			if !l.Committed() {
				t.Fatalf("not committed: %v", err)
			}
			pin, _ := spec.PinnedIn(specPath, "quick")
			if tc.pinned {
				if err != nil || pin != l.Run.ID {
					t.Fatalf("err %v, pin %q; want %s pinned", err, pin, l.Run.ID)
				}
			} else {
				if !errors.Is(err, ErrBusy) || !errors.Is(err, ErrNotPinned) || !strings.Contains(err.Error(), PinBusyEnv) || !strings.Contains(err.Error(), "docs/quiet.md") {
					t.Fatalf("err = %v, want ErrBusy and ErrNotPinned naming %s and docs/quiet.md", err, PinBusyEnv)
				}
				if pin != earlier {
					t.Errorf("pin %q, want the earlier %s kept", pin, earlier)
				}
			}
			rec := machineOf(t, l.Run.Final)
			if rec.Verdict != tc.verdict {
				t.Errorf("recorded verdict %q, want %q", rec.Verdict, tc.verdict)
			}
			wantOverride := tc.override
			if tc.verdict == quiet.Quiet {
				wantOverride = "" // an override of a quiet run is not needed and not recorded
			}
			if rec.Override != wantOverride {
				t.Errorf("recorded override %q, want %q", rec.Override, wantOverride)
			}
			if tc.verdict == quiet.Busy && len(rec.Reasons) == 0 {
				t.Error("a busy record without reasons")
			}
			out := log.String()
			if !strings.Contains(out, "lifetest:run: machine before the run: "+strings.ToUpper(tc.verdict)) {
				t.Errorf("no pre-flight line in\n%s", out)
			}
			if tc.verdict != quiet.Quiet && tc.override == "" && !strings.Contains(out, "stop other jobs; see docs/quiet.md") {
				t.Errorf("no reminder in\n%s", out)
			}
		})
	}
}

// The operator's reason (PQREPRO_PIN_BUSY in Config.PinBusy) wins over
// a scratch run's.
func TestPinBusyWinsOverScratch(t *testing.T) {
	root, specPath, _ := testRoot(t, "")
	cfg := testConfig(root)
	cfg.Machine = quiet.NewFixed(quiet.Busy)
	cfg.PinBusy = "measured on the only host"
	l, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx := WithPinBusy(context.Background(), "scratch")
	if err := record(t, ctx, l, -1, nil); err != nil {
		t.Fatal(err)
	}
	if pin, _ := spec.PinnedIn(specPath, "quick"); pin != l.Run.ID {
		t.Errorf("pin %q", pin)
	}
	if rec := machineOf(t, l.Run.Final); rec.Override != "measured on the only host" {
		t.Errorf("override %q", rec.Override)
	}
}

// A context's reason (the pipeline's scratch runs) pins a busy run too;
// the Config's reason wins over it.
func TestPinBusyFromContext(t *testing.T) {
	for _, cfgWhy := range []string{"", "the operator's reason"} {
		root, specPath, _ := testRoot(t, "")
		cfg := testConfig(root)
		cfg.Machine, cfg.PinBusy = quiet.NewFixed(quiet.Busy), cfgWhy
		l, err := New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		if err := record(t, WithPinBusy(context.Background(), "a scratch run"), l, -1, nil); err != nil {
			t.Fatal(err)
		}
		if pin, _ := spec.PinnedIn(specPath, "quick"); pin != l.Run.ID {
			t.Errorf("pin %q", pin)
		}
		want := cmp.Or(cfgWhy, "a scratch run")
		if rec := machineOf(t, l.Run.Final); rec.Override != want {
			t.Errorf("override %q, want %q", rec.Override, want)
		}
	}
}

// Ctrl-C during the pre-flight of a real sampler: Begin creates nothing
// and leaves no sampler running; Abort after Begin stops it.
func TestInterruptedPreflight(t *testing.T) {
	root, specPath, before := testRoot(t, "")
	cfg := testConfig(root)
	s := quiet.New(quiet.Options{Preflight: time.Hour, PreflightEvery: time.Hour})
	cfg.Machine = s
	l, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	go func() { time.Sleep(10 * time.Millisecond); cancel() }()
	err = l.Begin(ctx)
	if !errors.Is(err, ErrInterrupted) || l.Run != nil {
		t.Fatalf("Begin: %v (run %v), want ErrInterrupted and no run", err, l.Run)
	}
	l.Abort()
	assertUntouched(t, root, specPath, before)
	if ents, _ := os.ReadDir(filepath.Join(root, "data")); len(ents) != 0 {
		t.Errorf("data/ holds %v", ents)
	}

	// Begun with a real sampler and aborted: the sampler is stopped (a
	// second Stop returns at once with the same record).
	cfg = testConfig(root)
	// Intervals of 30 ms: /proc/stat counts in ticks of 10 ms, so an
	// interval of 1 ms often saw no tick and made no sample.
	s = quiet.New(quiet.Options{Preflight: 60 * time.Millisecond, PreflightEvery: 30 * time.Millisecond, Every: time.Hour})
	cfg.Machine = s
	if l, err = New(cfg); err != nil {
		t.Fatal(err)
	}
	if err := l.Begin(context.Background()); err != nil {
		t.Fatal(err)
	}
	if line := l.MachineLine(); !strings.HasPrefix(line, "machine: ") {
		t.Errorf("MachineLine %q", line)
	}
	l.Abort()
	if rec := s.Stop(); rec.Samples < 1 {
		t.Errorf("stopped sampler: %+v", rec)
	}
	assertUntouched(t, root, specPath, before)
}

// A whole run with the real sampler of this machine: meta.json holds a
// record with sane figures, whichever the verdict (this machine may be
// busy), and the pin follows the verdict.
func TestRealMachineRecorded(t *testing.T) {
	if _, err := os.Stat("/proc/stat"); err != nil {
		t.Skip("no /proc")
	}
	root, specPath, _ := testRoot(t, "")
	cfg := testConfig(root)
	cfg.Machine = quiet.New(quiet.Options{Preflight: 400 * time.Millisecond, PreflightEvery: 200 * time.Millisecond, Every: 100 * time.Millisecond})
	l, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	err = record(t, context.Background(), l, -1, nil)
	rec := machineOf(t, l.Run.Final)
	t.Logf("machine: %s", rec.Line())
	if rec.Samples < 2 || rec.Preflight.Samples < 1 || rec.Cores < 1 || rec.Load1.Max < 0 || rec.OtherCores.Max < 0 ||
		rec.OtherCores.Max > float64(rec.Cores)+0.01 || rec.Steal.Max < 0 || rec.Steal.Max > 1 || rec.Thresholds != quiet.DefaultThresholds {
		t.Errorf("record %+v", rec)
	}
	pin, _ := spec.PinnedIn(specPath, "quick")
	switch rec.Verdict {
	case quiet.Quiet:
		if err != nil || pin != l.Run.ID {
			t.Errorf("quiet: err %v, pin %q", err, pin)
		}
	case quiet.Busy:
		if !errors.Is(err, ErrBusy) || pin != "" {
			t.Errorf("busy: err %v, pin %q", err, pin)
		}
	default:
		t.Errorf("verdict %q on a machine with /proc", rec.Verdict)
	}
}

// PQREPRO_PIN=no commits a quiet run without pinning it: the earlier pin
// stays, the run is sealed and its meta.json records the same design
// hash as the pinned run's spec without its pins; a pipeline's scratch
// run is pinned whatever the setting says (internal/settings rejects
// any value but yes and no).
func TestRepeatRunNotPinned(t *testing.T) {
	const earlier = "20261129T120000Z-quick"
	root, specPath, before := testRoot(t, earlier)
	var log strings.Builder
	cfg := testConfig(root)
	cfg.Log, cfg.NoPin = &log, true
	l, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := record(t, context.Background(), l, -1, nil); err != nil {
		t.Fatal(err)
	}
	if after, _ := os.ReadFile(specPath); string(after) != string(before) {
		t.Errorf("the spec changed:\n%s", after)
	}
	if got := l.PinState(); got != "not pinned (PQREPRO_PIN=no: a repeat run)" {
		t.Errorf("PinState %q", got)
	}
	if !l.Repeat(context.Background()) || l.CaptureLimit(context.Background(), 5) != -1 {
		t.Errorf("a repeat run keeps its captures with it: limit %d", l.CaptureLimit(context.Background(), 5))
	}
	if _, err := os.Stat(filepath.Join(l.Run.Final, repro.ManifestFile)); err != nil {
		t.Errorf("the repeat run is not sealed: %v", err)
	}
	for _, want := range []string{"will be committed but not pinned (PQREPRO_PIN=no)", "committed, not pinned (PQREPRO_PIN=no)"} {
		if !strings.Contains(log.String(), want) {
			t.Errorf("log lacks %q:\n%s", want, log.String())
		}
	}
	b, _ := os.ReadFile(filepath.Join(l.Run.Final, provenance.FileName))
	var m provenance.Meta
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	if m.SpecSHA != repro.HashBytes(before) || m.SpecDesignSHA != repro.HashBytes(spec.WithoutPins(before)) || m.SpecDesignSHA == m.SpecSHA {
		t.Errorf("spec hashes %s (design %s)", m.SpecSHA, m.SpecDesignSHA)
	}
	// The same design once more pinned: the design hash does not move.
	if err := spec.Pin(specPath, "full", "20261130T120000Z-full"); err != nil {
		t.Fatal(err)
	}
	pinned, _ := os.ReadFile(specPath)
	if repro.HashBytes(spec.WithoutPins(pinned)) != m.SpecDesignSHA {
		t.Error("a pin changed the design hash")
	}

	// A scratch run of the pipeline is pinned in its spec.
	root2, specPath2, _ := testRoot(t, earlier)
	cfg2 := testConfig(root2)
	cfg2.NoPin = true
	l2, err := New(cfg2)
	if err != nil {
		t.Fatal(err)
	}
	if err := record(t, WithPinBusy(context.Background(), "scratch"), l2, -1, nil); err != nil {
		t.Fatal(err)
	}
	if pin, _ := spec.PinnedIn(specPath2, "quick"); pin != l2.Run.ID {
		t.Errorf("the scratch run is not pinned: pin %q", pin)
	}
	if got := l2.PinState(); got != "pinned for the quick profile in "+spec.Path(study) {
		t.Errorf("PinState %q", got)
	}
	if scratch := WithPinBusy(context.Background(), "scratch"); l2.Repeat(scratch) || l2.CaptureLimit(scratch, 5) != 5 {
		t.Error("a scratch run counts as a repeat run")
	}

	// PQREPRO_PIN=no (Config.NoPin) makes a repeat run; a scratch run
	// stays pinned.
	c3 := testConfig(root)
	c3.NoPin = true
	l3, err := New(c3)
	if err != nil {
		t.Fatal(err)
	}
	if ctx := context.Background(); !l3.Repeat(ctx) || l3.Repeat(WithPinBusy(ctx, "scratch")) {
		t.Error("Config.NoPin does not make a repeat run, or a scratch run is not pinned")
	}
}

// TestSettleBeforePreflight: Begin runs Settle before the pre-flight,
// goes on after a Settle error with a line, and an interrupted wait
// creates nothing.
func TestSettleBeforePreflight(t *testing.T) {
	root, specPath, before := testRoot(t, "")
	var log strings.Builder
	cfg := testConfig(root)
	cfg.Log = &log
	called := 0
	cfg.Settle = func(ctx context.Context, w io.Writer) (float64, error) {
		called++
		return 5, errors.New("no /proc/loadavg")
	}
	l, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Begin(context.Background()); err != nil {
		t.Fatal(err)
	}
	l.Abort()
	if called != 1 || !strings.Contains(log.String(), "not waiting for the load to settle: no /proc/loadavg") {
		t.Errorf("settle called %d times; log:\n%s", called, log.String())
	}

	ctx, cancel := context.WithCancel(context.Background())
	cfg.Settle = func(ctx context.Context, w io.Writer) (float64, error) {
		cancel()
		return 5, ctx.Err()
	}
	l, err = New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Begin(ctx); !errors.Is(err, ErrInterrupted) {
		t.Errorf("an interrupted settle: Begin returned %v, want ErrInterrupted", err)
	}
	assertUntouched(t, root, specPath, before)
}

// TestCommitLists: every committed run is listed beside its spec, pinned
// or as evidence; a new pin demotes the run pinned before; a run from a
// dirty tree whose diff was not captured is listed dirty-no-diff and not
// pinned (ErrDirty); a clean run keeps no git.diff.
func TestCommitLists(t *testing.T) {
	ctx := context.Background()
	root, specPath, _ := testRoot(t, "")
	listPath := filepath.Join(root, runlist.Path(study))
	n := 0
	run := func(cfg Config) (*Life, error) {
		t.Helper()
		n++
		cfg.Now = func() time.Time { return clock.Add(time.Duration(n) * time.Hour) }
		l, err := New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		return l, record(t, ctx, l, -1, nil)
	}
	lines := func() string {
		t.Helper()
		l, err := runlist.Read(listPath)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, e := range l {
			out = append(out, strings.TrimPrefix(e.String(), e.ID+"@sha256:"+e.Manifest+" "))
		}
		return strings.Join(out, " ")
	}
	for _, tc := range []struct {
		name  string
		cfg   func(c Config) Config
		is    error  // the error Commit wraps; nil for none
		roles string // of every run so far, by ID
	}{
		{"clean, pinned", func(c Config) Config { c.Git, c.Tree = &provenance.Git{Commit: "abc"}, &TreeState{}; return c }, nil, "pinned"},
		{"dirty with its diff, pinned", func(c Config) Config { return c }, nil, "evidence pinned"},
		{"a repeat run", func(c Config) Config { c.NoPin = true; return c }, nil, "evidence pinned evidence"},
		{"dirty without its diff", func(c Config) Config { c.Tree = nil; return c }, ErrDirty, "evidence pinned evidence evidence,dirty-no-diff"},
		{"dirty, a diff that is not the one hashed", func(c Config) Config { c.Tree = &TreeState{Diff: []byte("other\n")}; return c }, ErrDirty,
			"evidence pinned evidence evidence,dirty-no-diff evidence,dirty-no-diff"},
		{"busy", func(c Config) Config { c.Machine = quiet.NewFixed(quiet.Busy); return c }, ErrBusy, "evidence pinned evidence evidence,dirty-no-diff evidence,dirty-no-diff evidence"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before, _ := os.ReadFile(specPath)
			l, err := run(tc.cfg(testConfig(root)))
			switch {
			case tc.is == nil && err != nil:
				t.Fatalf("commit: %v", err)
			case tc.is != nil && (!errors.Is(err, tc.is) || !errors.Is(err, ErrNotPinned)):
				t.Fatalf("commit: %v, want %v and %v", err, tc.is, ErrNotPinned)
			}
			if got := lines(); got != tc.roles {
				t.Errorf("roles %q, want %q", got, tc.roles)
			}
			_, diffErr := os.Stat(filepath.Join(l.Run.Final, runlist.DiffFile))
			if kept := diffErr == nil; kept != (tc.name == "dirty with its diff, pinned" || tc.name == "a repeat run" || tc.name == "busy") {
				t.Errorf("%s kept: %v", runlist.DiffFile, kept)
			}
			if after, _ := os.ReadFile(specPath); tc.is != nil && string(after) != string(before) {
				t.Errorf("the spec changed:\n%s", after)
			}
		})
	}
}

// TestReadTree: the patch RepoGit hashes and the untracked files, which
// Commit keeps in the run folder.
func TestReadTree(t *testing.T) {
	if exec.Command("git", "--version").Run() != nil {
		t.Skip("git is not installed")
	}
	root, _, _ := testRoot(t, "")
	for _, args := range [][]string{{"init", "-q"}, {"add", "."}, {"-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "x"}} {
		if out, err := exec.Command("git", append([]string{"-C", root}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	ctx := context.Background()
	if tr, err := ReadTree(ctx, root); err != nil || len(tr.Diff) != 0 || tr.Untracked != nil {
		t.Errorf("clean tree: %+v, %v", tr, err)
	}
	sp := filepath.Join(root, spec.Path(study))
	b, _ := os.ReadFile(sp)
	os.WriteFile(sp, append(b, "# edited\n"...), 0o644)
	os.WriteFile(filepath.Join(root, "new.go"), []byte("package x\n"), 0o644)
	g, err := provenance.RepoGit(ctx, root)
	if err != nil {
		t.Fatal(err)
	}
	tr, err := ReadTree(ctx, root)
	if err != nil || !g.Dirty || repro.HashBytes(tr.Diff) != g.DiffSHA256 || fmt.Sprint(tr.Untracked) != "[new.go]" {
		t.Fatalf("dirty tree: %+v, %v; git %+v", tr, err, g)
	}
	// A run from it keeps both.
	cfg := testConfig(root)
	cfg.Git, cfg.Tree = &g, &tr
	l, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := record(t, ctx, l, -1, nil); err != nil {
		t.Fatal(err)
	}
	for f, want := range map[string]string{runlist.DiffFile: string(tr.Diff), UntrackedFile: "new.go\n"} {
		if got, _ := os.ReadFile(filepath.Join(l.Run.Final, f)); string(got) != want {
			t.Errorf("%s = %q, want %q", f, got, want)
		}
	}
	if _, err := ReadTree(ctx, t.TempDir()); err == nil {
		t.Error("ReadTree outside a checkout succeeded")
	}
}
