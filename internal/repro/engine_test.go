package repro

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// tree is a throw-away repository with a module, raw data and two
// stages: "sum" adds the numbers in data/*.csv into results/sum.txt, and
// "report" renders results/sum.txt into paper/generated/report.tex.
type tree struct {
	t      *testing.T
	root   string
	failAt string // stage name that should fail after writing half its output
	runs   map[string]int
	cancel context.CancelFunc
}

func newTree(t *testing.T) *tree {
	t.Helper()
	tr := &tree{t: t, root: t.TempDir(), runs: map[string]int{}}
	tr.write("go.mod", "module example\n\ngo 1.27\n")
	tr.write("analysis/sum/sum.go", "package sum\n\nimport _ \"example/internal/util\"\n")
	tr.write("internal/util/util.go", "package util\n")
	tr.write("render/render.go", "package render\n")
	tr.write("data/a/records.csv", "1\n2\n3\n")
	tr.write("data/b/records.csv", "10\n")
	return tr
}

func (tr *tree) write(rel, content string) {
	tr.t.Helper()
	p := filepath.Join(tr.root, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		tr.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		tr.t.Fatal(err)
	}
}

// replaceRaw replaces a raw data file as if it were new data: raw data
// listed in SHA256SUMS is immutable (TestRawDataIsImmutable), so the list
// is dropped first. The staleness tests use it.
func (tr *tree) replaceRaw(rel, content string) {
	tr.t.Helper()
	tr.forgetSums()
	tr.write(rel, content)
}

func (tr *tree) forgetSums() {
	tr.t.Helper()
	if err := os.Remove(filepath.Join(tr.root, SumsFile)); err != nil && !errors.Is(err, os.ErrNotExist) {
		tr.t.Fatal(err)
	}
}

func (tr *tree) read(rel string) string {
	tr.t.Helper()
	b, err := os.ReadFile(filepath.Join(tr.root, rel))
	if err != nil {
		tr.t.Fatal(err)
	}
	return string(b)
}

func (tr *tree) stages() []*Stage {
	sum := &Stage{
		Name:    "sum",
		Doc:     "add up the records",
		Code:    []string{"analysis/sum"},
		Inputs:  []string{"data/*/records.csv"},
		Params:  map[string]string{"scale": "1"},
		Outputs: []string{"results/sum.txt", "results/count.txt"},
		Run: func(ctx context.Context, env *Env) error {
			tr.runs["sum"]++
			total, count := 0, 0
			scale, _ := strconv.Atoi(env.Param("scale"))
			for _, f := range env.Inputs() {
				b, err := env.ReadFile(f)
				if err != nil {
					return err
				}
				for _, line := range strings.Fields(string(b)) {
					n, err := strconv.Atoi(line)
					if err != nil {
						return fmt.Errorf("%s: %w", f, err)
					}
					total += n * scale
					count++
				}
			}
			if err := env.WriteFile("results/count.txt", []byte(strconv.Itoa(count)+"\n")); err != nil {
				return err
			}
			w, err := env.Create("results/sum.txt")
			if err != nil {
				return err
			}
			defer w.Abort()
			fmt.Fprintf(w, "total %d\n", total)
			if tr.failAt == "sum" {
				return errors.New("simulated failure half way through writing")
			}
			if tr.cancel != nil {
				tr.cancel()
				return ctx.Err()
			}
			return w.Commit()
		},
	}
	report := &Stage{
		Name:    "report",
		Doc:     "render the report",
		Code:    []string{"render"},
		Inputs:  []string{"results/sum.txt"},
		Outputs: []string{"paper/generated/report.tex"},
		Run: func(ctx context.Context, env *Env) error {
			tr.runs["report"]++
			b, err := env.ReadFile("results/sum.txt")
			if err != nil {
				return err
			}
			return env.WriteFile("paper/generated/report.tex", []byte(`\newcommand{\Total}{`+strings.TrimSpace(strings.TrimPrefix(string(b), "total "))+"}\n"))
		},
	}
	return []*Stage{report, sum} // deliberately out of order
}

func (tr *tree) engine() *Engine {
	return &Engine{
		Root:    tr.root,
		Stages:  tr.stages(),
		RawDirs: []string{"data"},
		Hasher:  OpenHashCache(filepath.Join(tr.root, ".cache", "hashes.json")),
	}
}

func (tr *tree) build(names ...string) *BuildReport {
	tr.t.Helper()
	rep, err := tr.engine().Build(context.Background(), names...)
	if err != nil {
		tr.t.Fatalf("Build: %v", err)
	}
	return rep
}

func (tr *tree) status() map[string][]string {
	tr.t.Helper()
	st, err := tr.engine().Status(context.Background())
	if err != nil {
		tr.t.Fatalf("Status: %v", err)
	}
	out := map[string][]string{}
	for _, s := range st {
		if s.Stale {
			out[s.Name] = s.Reasons
		}
	}
	return out
}

// snapshot returns every file below root (but the hash cache) and its
// content, to prove that an operation changed nothing.
func snapshot(t *testing.T, root string) map[string]string {
	t.Helper()
	m := map[string]string{}
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			t.Fatal(err)
		}
		if d.IsDir() && d.Name() == ".cache" {
			return filepath.SkipDir
		}
		if d.Type().IsRegular() {
			b, _ := os.ReadFile(p)
			rel, _ := filepath.Rel(root, p)
			m[rel] = string(b)
		}
		return nil
	})
	return m
}

func equalMaps(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

func TestBuildRunsOnlyWhatChanged(t *testing.T) {
	tr := newTree(t)
	rep := tr.build()
	if got := strings.Join(rep.Ran, ","); got != "sum,report" {
		t.Fatalf("first build ran %q, want sum,report in dependency order", got)
	}
	if got := tr.read("paper/generated/report.tex"); got != "\\newcommand{\\Total}{16}\n" {
		t.Fatalf("report = %q", got)
	}
	if st := tr.status(); len(st) != 0 {
		t.Fatalf("status after build: %v, want nothing stale", st)
	}

	// A no-op build runs nothing and reads no file (hash cache hits).
	e := tr.engine()
	rep, err := e.Build(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Ran) != 0 {
		t.Fatalf("no-op build ran %v", rep.Ran)
	}
	if e.Hasher.Reads != 0 {
		t.Errorf("no-op build read %d files, want 0 (cache by size, mtime, inode)", e.Hasher.Reads)
	}

	// Rewriting a file with the same content (new mtime) reruns nothing.
	tr.write("data/a/records.csv", "1\n2\n3\n")
	if rep := tr.build(); len(rep.Ran) != 0 {
		t.Fatalf("touching an input reran %v", rep.Ran)
	}

	// A real change reruns the stage, and the downstream stage only
	// because its input changed.
	tr.replaceRaw("data/b/records.csv", "20\n")
	st := tr.status()
	if len(st["sum"]) != 1 || !strings.Contains(st["sum"][0], "input data/b/records.csv changed: sha256 ") {
		t.Errorf("status of sum = %q, want the changed input with old and new hash", st["sum"])
	}
	if len(st["report"]) != 1 || st["report"][0] != "upstream stage sum is stale" {
		t.Errorf("status of report = %q, want upstream sum", st["report"])
	}
	tr.runs = map[string]int{}
	if rep := tr.build(); strings.Join(rep.Ran, ",") != "sum,report" {
		t.Fatalf("after input change ran %v", rep.Ran)
	}
	if tr.read("paper/generated/report.tex") != "\\newcommand{\\Total}{26}\n" {
		t.Errorf("report not updated: %q", tr.read("paper/generated/report.tex"))
	}
}

func TestStaleReasons(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func(tr *tree, e *Engine)
		want   string
	}{
		{"code", func(tr *tree, e *Engine) { tr.write("analysis/sum/sum.go", "package sum // edited\n") }, "code changed: "},
		{"transitive code", func(tr *tree, e *Engine) { tr.write("internal/util/util.go", "package util // edited\n") }, "code changed: "},
		{"dependency", func(tr *tree, e *Engine) { tr.write("go.mod", "module example\n\ngo 1.27.3\n") }, "code changed: "},
		{"parameter", func(tr *tree, e *Engine) { e.Stages[1].Params["scale"] = "2" }, `parameter scale changed: "1" -> "2"`},
		{"new input", func(tr *tree, e *Engine) { tr.write("data/c/records.csv", "5\n") }, "input data/c/records.csv added"},
		{"removed input", func(tr *tree, e *Engine) {
			tr.forgetSums()
			os.Remove(filepath.Join(tr.root, "data/b/records.csv"))
		}, "input data/b/records.csv removed"},
		{"modified output", func(tr *tree, e *Engine) { tr.write("results/count.txt", "5\n") }, "output results/count.txt was modified"},
		{"missing output", func(tr *tree, e *Engine) { os.Remove(filepath.Join(tr.root, "results/count.txt")) }, "output results/count.txt is missing"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr := newTree(t)
			tr.build()
			e := tr.engine()
			tc.change(tr, e)
			st, err := e.Status(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			var sum StageStatus
			for _, s := range st {
				if s.Name == "sum" {
					sum = s
				}
			}
			if !sum.Stale || !strings.Contains(strings.Join(sum.Reasons, "\n"), tc.want) {
				t.Errorf("reasons = %q, want one containing %q", sum.Reasons, tc.want)
			}
			rep, err := e.Build(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if len(rep.Ran) == 0 || rep.Ran[0] != "sum" {
				t.Errorf("build after change ran %v, want sum first", rep.Ran)
			}
		})
	}
}

func TestFailedStageKeepsPreviousOutputsAndLock(t *testing.T) {
	for _, mode := range []string{"failing writer", "cancelled context"} {
		t.Run(mode, func(t *testing.T) {
			tr := newTree(t)
			tr.build()
			tr.replaceRaw("data/b/records.csv", "99\n")
			before := snapshot(t, tr.root)

			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if mode == "failing writer" {
				tr.failAt = "sum"
			} else {
				tr.cancel = cancel
			}
			_, err := tr.engine().Build(ctx)
			if err == nil || !strings.Contains(err.Error(), "previous outputs kept") {
				t.Fatalf("Build error = %v, want a failure that keeps previous outputs", err)
			}
			if after := snapshot(t, tr.root); !equalMaps(before, after) {
				t.Errorf("the failed stage changed the tree:\nbefore %v\nafter  %v", before, after)
			}
			tr.failAt, tr.cancel = "", nil
			if st := tr.status(); len(st["sum"]) == 0 {
				t.Error("after the failure sum is not stale")
			}
			if rep := tr.build(); strings.Join(rep.Ran, ",") != "sum,report" {
				t.Errorf("next build ran %v, want sum,report", rep.Ran)
			}
			if got := tr.read("results/sum.txt"); got != "total 105\n" {
				t.Errorf("sum after redo = %q", got)
			}
		})
	}
}

func TestStageMustUseDeclaredFiles(t *testing.T) {
	tr := newTree(t)
	e := tr.engine()
	e.Stages = []*Stage{{
		Name: "sneaky", Code: []string{"render"}, Inputs: []string{"data/a"},
		Outputs: []string{"out.txt"},
		Run: func(ctx context.Context, env *Env) error {
			_, err := env.ReadFile("data/b/records.csv")
			return err
		},
	}}
	if _, err := e.Build(context.Background()); err == nil || !strings.Contains(err.Error(), "not a declared input") {
		t.Errorf("reading an undeclared input: err = %v", err)
	}
	e.Stages[0].Run = func(ctx context.Context, env *Env) error { return env.WriteFile("other.txt", nil) }
	if _, err := e.Build(context.Background()); err == nil || !strings.Contains(err.Error(), "not a declared output") {
		t.Errorf("writing an undeclared output: err = %v", err)
	}
	e.Stages[0].Run = func(ctx context.Context, env *Env) error { return nil }
	if _, err := e.Build(context.Background()); err == nil || !strings.Contains(err.Error(), "did not write its declared output out.txt") {
		t.Errorf("forgetting an output: err = %v", err)
	}
	e.Stages[0].Run = func(ctx context.Context, env *Env) error { panic("bug") }
	if _, err := e.Build(context.Background()); err == nil || !strings.Contains(err.Error(), "panic: bug") {
		t.Errorf("panicking stage: err = %v", err)
	}
	if _, err := os.Stat(filepath.Join(tr.root, LockFile)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("failed stages wrote a lock file: %v", err)
	}
}

func TestPipelineErrors(t *testing.T) {
	tr := newTree(t)
	run := func(ctx context.Context, env *Env) error { return nil }
	for _, tc := range []struct {
		name   string
		stages []*Stage
		want   string
	}{
		{"cycle", []*Stage{
			{Name: "a", Code: []string{"render"}, Inputs: []string{"b.txt"}, Outputs: []string{"a.txt"}, Run: run},
			{Name: "b", Code: []string{"render"}, Inputs: []string{"a.txt"}, Outputs: []string{"b.txt"}, Run: run},
		}, "cycle"},
		{"two writers", []*Stage{
			{Name: "a", Code: []string{"render"}, Inputs: []string{"data"}, Outputs: []string{"x.txt"}, Run: run},
			{Name: "b", Code: []string{"render"}, Inputs: []string{"data"}, Outputs: []string{"x.txt"}, Run: run},
		}, "both write x.txt"},
		{"missing input", []*Stage{
			{Name: "a", Code: []string{"render"}, Inputs: []string{"nope.csv"}, Outputs: []string{"x.txt"}, Run: run},
		}, "input nope.csv"},
		{"empty glob", []*Stage{
			{Name: "a", Code: []string{"render"}, Inputs: []string{"data/*/none.csv"}, Outputs: []string{"x.txt"}, Run: run},
		}, "matches no file"},
		{"missing code", []*Stage{
			{Name: "a", Code: []string{"gone"}, Inputs: []string{"data"}, Outputs: []string{"x.txt"}, Run: run},
		}, "gone"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := tr.engine()
			e.Stages = tc.stages
			if _, err := e.Build(context.Background()); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want %q", err, tc.want)
			}
		})
	}
	e := tr.engine()
	if _, err := e.Build(context.Background(), "nonesuch"); err == nil || !strings.Contains(err.Error(), `no stage named "nonesuch"`) {
		t.Errorf("unknown stage: err = %v", err)
	}
}

func TestBuildOneStageBuildsUpstream(t *testing.T) {
	tr := newTree(t)
	if rep := tr.build("report"); strings.Join(rep.Ran, ",") != "sum,report" {
		t.Fatalf("building report ran %v", rep.Ran)
	}
	tr.replaceRaw("data/a/records.csv", "0\n")
	if rep := tr.build("sum"); strings.Join(rep.Ran, ",") != "sum" {
		t.Fatalf("building sum ran %v", rep.Ran)
	}
	if st := tr.status(); len(st["report"]) == 0 {
		t.Error("report should be stale after its input changed")
	}
}

func TestMissingAndCorruptLock(t *testing.T) {
	tr := newTree(t)
	// Missing: everything is "never built", not an error.
	st := tr.status()
	if !strings.Contains(strings.Join(st["sum"], ""), "never built") {
		t.Errorf("status without a lock: %v", st)
	}
	tr.build()
	for _, bad := range []string{"", "{", "null", `{"version":1,"stages":{"sum":null}}`, `{"version":99,"stages":{}}`,
		`{"version":1,"stages":{}} trailing`, `{"version":1,"stages":{"sum":{"code":"x","inputs":{},"outputs":{}}}}`, "\x00\xff"} {
		tr.write(LockFile, bad)
		e := tr.engine()
		for name, op := range map[string]func() error{
			"status": func() error { _, err := e.Status(context.Background()); return err },
			"build":  func() error { _, err := e.Build(context.Background()); return err },
		} {
			err := op()
			if err == nil || !strings.Contains(err.Error(), "mage build") {
				t.Errorf("%s with lock %q: err = %v, want an error that says how to rebuild", name, bad, err)
			}
		}
		if got := tr.read(LockFile); got != bad {
			t.Errorf("the corrupt lock was overwritten")
		}
	}
}

func TestDeterministicOutputs(t *testing.T) {
	a, b := newTree(t), newTree(t)
	a.build()
	b.build()
	for _, f := range []string{"results/sum.txt", "paper/generated/report.tex", LockFile, SumsFile} {
		if a.read(f) != b.read(f) {
			t.Errorf("%s differs between two builds of the same inputs", f)
		}
	}
	if !strings.Contains(a.read(SumsFile), "  data/a/records.csv\n") || !strings.Contains(a.read(SumsFile), "  paper/generated/report.tex\n") {
		t.Errorf("SHA256SUMS lacks raw data or outputs:\n%s", a.read(SumsFile))
	}
}

func TestVerify(t *testing.T) {
	tr := newTree(t)
	tr.build()
	before := snapshot(t, tr.root)
	rep, err := tr.engine().Verify(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Problems) != 0 {
		t.Fatalf("clean tree: problems %v", rep.Problems)
	}
	if rep.Checked != 5 || rep.Rederived != 3 {
		t.Errorf("checked %d, re-derived %d; want 5 and 3", rep.Checked, rep.Rederived)
	}
	if after := snapshot(t, tr.root); !equalMaps(before, after) {
		t.Errorf("verify modified the working tree")
	}

	for _, f := range []string{"data/a/records.csv", "results/sum.txt", "paper/generated/report.tex", SumsFile} {
		t.Run("flipped byte in "+f, func(t *testing.T) {
			tr := newTree(t)
			tr.build()
			p := filepath.Join(tr.root, f)
			b, _ := os.ReadFile(p)
			b[0] ^= 0x01
			os.WriteFile(p, b, 0o644)
			rep, err := tr.engine().Verify(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			var named bool
			for _, p := range rep.Problems {
				if p.Path == f {
					named = true
				}
			}
			if !named {
				t.Errorf("problems %v do not name %s", rep.Problems, f)
			}
			if f == SumsFile {
				return
			}
			st := tr.status()
			if len(st) == 0 {
				t.Errorf("status reports no stale stage after %s changed", f)
			}
		})
	}
	t.Run("unlisted raw file", func(t *testing.T) {
		tr := newTree(t)
		tr.build()
		tr.write("data/z/extra.bin", "x")
		rep, err := tr.engine().Verify(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(fmt.Sprint(rep.Problems), "data/z/extra.bin: raw data file not listed") {
			t.Errorf("problems = %v, want the unlisted file", rep.Problems)
		}
	})
	t.Run("missing output", func(t *testing.T) {
		tr := newTree(t)
		tr.build()
		os.Remove(filepath.Join(tr.root, "results/count.txt"))
		rep, _ := tr.engine().Verify(context.Background())
		if fmt.Sprint(rep.Problems) == "[]" || !strings.Contains(fmt.Sprint(rep.Problems), "results/count.txt: missing") {
			t.Errorf("problems = %v", rep.Problems)
		}
	})
}

func TestParseSums(t *testing.T) {
	good := strings.Repeat("a", 64) + "  data/x.csv\n" + strings.Repeat("b", 64) + " *bin/y\n"
	ents, err := ParseSums("S", []byte(good))
	if err != nil || len(ents) != 2 || ents[1].Path != "bin/y" {
		t.Fatalf("ParseSums = %v, %v", ents, err)
	}
	for _, bad := range []string{"short  x", strings.Repeat("A", 64) + "  x", strings.Repeat("a", 64) + "  /etc/passwd",
		strings.Repeat("a", 64) + "  ../x", strings.Repeat("a", 64) + "  a/../b", strings.Repeat("a", 64) + "\tx"} {
		if _, err := ParseSums("S", []byte(bad+"\n")); err == nil || !strings.Contains(err.Error(), "S:1:") {
			t.Errorf("ParseSums(%q) err = %v, want an error naming line 1", bad, err)
		}
	}
}

func FuzzParseSums(f *testing.F) {
	f.Add([]byte(strings.Repeat("a", 64) + "  data/x.csv\n"))
	f.Add([]byte("\n\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		ents, err := ParseSums("f", b)
		if err != nil {
			return
		}
		for _, e := range ents {
			if len(e.SHA256) != 64 || filepath.IsAbs(e.Path) || strings.HasPrefix(e.Path, "..") {
				t.Fatalf("accepted bad entry %+v", e)
			}
		}
	})
}

func FuzzParseLock(f *testing.F) {
	f.Add(NewLock().Marshal())
	f.Add([]byte(`{"version":1,"stages":{"s":{"code":"` + strings.Repeat("0", 64) + `","inputs":{},"outputs":{}}}}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		l, err := ParseLock("f", b)
		if err != nil {
			return
		}
		// A lock that parses must survive a round trip unchanged.
		l2, err := ParseLock("f", l.Marshal())
		if err != nil || !bytes.Equal(l.Marshal(), l2.Marshal()) {
			t.Fatalf("round trip: %v", err)
		}
	})
}

func TestRun(t *testing.T) {
	data := t.TempDir()
	r, err := NewRun(data, "tls", "quick", mustTime(t, "2026-11-30T12:00:00Z"))
	if err != nil {
		t.Fatal(err)
	}
	if r.ID != "20261130T120000Z-quick" {
		t.Errorf("ID = %q", r.ID)
	}
	os.WriteFile(filepath.Join(r.Dir, "records.csv"), []byte("x\n"), 0o644)
	// An interrupted run is not visible.
	if _, err := os.Stat(r.Final); !errors.Is(err, os.ErrNotExist) {
		t.Fatal("run visible before Commit")
	}
	if err := r.Commit(); err != nil {
		t.Fatal(err)
	}
	r.Abort() // no-op after commit
	if b, _ := os.ReadFile(filepath.Join(r.Final, "records.csv")); string(b) != "x\n" {
		t.Error("committed run lost its data")
	}
	// A second run with the same name is refused; the first is kept.
	if _, err := NewRun(data, "tls", "quick", mustTime(t, "2026-11-30T12:00:00Z")); err == nil || !strings.Contains(err.Error(), "never overwritten") {
		t.Errorf("second run with the same ID: err = %v", err)
	}
	// Abort removes everything.
	r2, err := NewRun(data, "tls", "full", mustTime(t, "2026-11-30T12:00:00Z"))
	if err != nil {
		t.Fatal(err)
	}
	r2.Abort()
	entries, _ := os.ReadDir(filepath.Join(data, "tls"))
	if len(entries) != 1 {
		t.Errorf("after Abort data/tls holds %d entries, want 1", len(entries))
	}
	// A run that appears meanwhile is not overwritten by Commit.
	r3, _ := NewRun(data, "pico", "quick", mustTime(t, "2026-11-30T13:00:00Z"))
	os.MkdirAll(r3.Final, 0o755)
	if err := r3.Commit(); err == nil {
		t.Error("Commit replaced an existing run")
	}
	r3.Abort()
	if _, err := NewRun(data, "../x", "quick", mustTime(t, "2026-11-30T13:00:00Z")); err == nil {
		t.Error("NewRun accepted a study name that leaves the data directory")
	}
}

func TestStore(t *testing.T) {
	s := &Store{Dir: t.TempDir()}
	src := filepath.Join(t.TempDir(), "capture.pcapng")
	os.WriteFile(src, []byte("capture bytes"), 0o644)
	sum, err := s.Put(src)
	if err != nil {
		t.Fatal(err)
	}
	if sum != HashBytes([]byte("capture bytes")) {
		t.Errorf("Put returned %s", sum)
	}
	if sum2, err := s.Put(src); err != nil || sum2 != sum {
		t.Errorf("second Put = %s, %v", sum2, err)
	}
	if err := s.Check(sum); err != nil {
		t.Errorf("Check: %v", err)
	}
	os.Chmod(s.Path(sum), 0o644)
	os.WriteFile(s.Path(sum), []byte("tampered"), 0o644)
	if err := s.Check(sum); err == nil || !strings.Contains(err.Error(), "corrupt") {
		t.Errorf("Check of a tampered blob: %v", err)
	}
	if err := s.Check(HashBytes(nil)); err == nil || !strings.Contains(err.Error(), "not in") {
		t.Errorf("Check of a missing blob: %v", err)
	}
	if err := s.Check("zz"); err == nil {
		t.Error("Check accepted a bad hash")
	}
}

// TestEpoch: a stage's date defaults to 2026-01-01 (the setting
// SOURCE_DATE_EPOCH's default; internal/settings tests the variable), and
// Env.Epoch bounds the parameter like the setting (0 to the end of the
// year 9999; 2^63-1 crashed pdflatex), naming the parameter and the bound.
func TestEpoch(t *testing.T) {
	if ts := EpochOr(time.Time{}); !ts.Equal(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)) || ts.Location() != time.UTC {
		t.Errorf("EpochOr(zero) = %v", ts)
	}
	env := func(v string) *Env { return &Env{stage: &Stage{Name: "x", Params: map[string]string{EpochParam: v}}} }
	if d, err := env(FormatEpoch(time.Time{})).Epoch(); err != nil || d.Unix() != 1767225600 {
		t.Errorf("Epoch of FormatEpoch(zero) = %v, %v", d, err)
	}
	if d, err := env("253402300799").Epoch(); err != nil || d.Year() != 9999 {
		t.Errorf("Epoch(253402300799) = %v, %v", d, err)
	}
	for _, bad := range []string{"yesterday", "-1", "253402300800", "9223372036854775807"} {
		if _, err := env(bad).Epoch(); err == nil || !strings.Contains(err.Error(), `stage parameter SOURCE_DATE_EPOCH: SOURCE_DATE_EPOCH="`+bad+`"`) || !strings.Contains(err.Error(), "253402300799") {
			t.Errorf("Epoch(%q) = %v, want an error naming the parameter and the bound", bad, err)
		}
	}
}

// TestVerifyTreeInCacheNamedByPID is issue 44's item 5: Verify re-derives
// in a scratch tree under the project's .cache, named after its PID (so
// that status and clean can tell a killed verify's tree from a running
// one's), not in the system's temporary directory, where a verify
// killed by SIGKILL left 256 MB that status did not list and clean did
// not remove. The tree is gone when Verify returns.
func TestVerifyTreeInCacheNamedByPID(t *testing.T) {
	tr := newTree(t)
	tr.build()
	e := tr.engine()
	var scratch string
	run := e.Stages[0].Run
	e.Stages[0].Run = func(ctx context.Context, env *Env) error {
		scratch = env.Root()
		if got := VerifyTreeOwner(scratch); got != os.Getpid() {
			t.Errorf("VerifyTreeOwner(%s) = %d while it runs, want this process, %d", scratch, got, os.Getpid())
		}
		return run(ctx, env)
	}
	if _, err := e.Verify(context.Background()); err != nil {
		t.Fatal(err)
	}
	want := filepath.Join(tr.root, ".cache", fmt.Sprintf("verify-%d-", os.Getpid()))
	if !strings.HasPrefix(scratch, want) {
		t.Errorf("verify re-derived in %s, want a folder %s*", scratch, want)
	}
	if _, err := os.Stat(scratch); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the scratch tree %s outlived Verify: %v", scratch, err)
	}
}
