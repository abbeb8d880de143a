package pipeline

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"pqrepro/analysis/agreement"
	"pqrepro/analysis/claims"
	"pqrepro/internal/deps"
	"pqrepro/internal/jsonnum"
	"pqrepro/internal/paperbuild"
	"pqrepro/internal/provenance"
	"pqrepro/internal/repro"
	"pqrepro/internal/runlist"
	"pqrepro/internal/settings"
	"pqrepro/internal/spec"
	"pqrepro/internal/treelock"
	"pqrepro/reproduce"
)

// reproRepo is a repository with fake studies that pin their runs in
// experiments/<name>.toml, as the real ones do. Each study's experiment
// records values[name+"/"+profile] in x.txt, sealed and pinned in the spec
// it is given; its stage writes results/<name>.json {"value": 2x}; its
// one claim, F-<name>, is reproduced when the value is 42. refs are the
// reference runs to commit ("alpha/quick") with their values, which are
// built into the committed outputs (results, lock, SHA256SUMS).
type reproRepo struct {
	cfg    Config
	log    *bytes.Buffer
	values map[string]int
	// runHook, when set, runs inside a study's experiment before it
	// records anything (to cancel the context mid-run).
	runHook func(ctx context.Context, study string) error
	cannot  map[string]string
	runs    map[string]int
}

func newReproRepo(t *testing.T, names []string, refs map[string]int) *reproRepo {
	t.Helper()
	root := t.TempDir()
	rr := &reproRepo{values: map[string]int{}, cannot: map[string]string{}, runs: map[string]int{}}
	write := func(rel, s string) {
		t.Helper()
		p := filepath.Join(root, rel)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("go.mod", "module fake\n")
	write("analysis/a.go", "package analysis\n")
	saved, savedClaims, savedCat := studies, withClaims, catalogues
	t.Cleanup(func() { studies, withClaims, catalogues = saved, savedClaims, savedCat })
	withClaims = false
	studies = nil
	var cat []claims.Catalogue
	for _, name := range names {
		write(spec.Path(name), "# spec of "+name+"\n[runs]\n")
		studies = append(studies, Study{
			Name:  name,
			Title: "fake study " + name,
			EstimateFor: func(_, p string) time.Duration {
				return map[string]time.Duration{settings.Quick: time.Second, settings.Full: time.Minute}[p]
			},
			CannotRun: func(string) string { return rr.cannot[name] },
			Run: func(ctx context.Context, cfg Config, specPath, dataDir string) (string, error) {
				rr.runs[name]++
				if rr.runHook != nil {
					if err := rr.runHook(ctx, name); err != nil {
						return "", err
					}
				}
				return fakeRecord(cfg, name, specPath, dataDir, rr.values[name+"/"+cfg.Profile])
			},
			StagesFor: func(root, profile, run string, _ settings.Settings) ([]*repro.Stage, error) {
				return []*repro.Stage{{
					Name: name + ":analyze", Doc: "double it", Code: []string{"analysis"},
					Inputs: []string{run}, Outputs: []string{"results/" + name + ".json"},
					Run: func(ctx context.Context, env *repro.Env) error {
						b, err := env.ReadFile(run + "/x.txt")
						if err != nil {
							return err
						}
						v, err := strconv.Atoi(strings.TrimSpace(string(b)))
						if err != nil {
							return err
						}
						return env.WriteFile("results/"+name+".json", fmt.Appendf(nil, `{"value": %d}`+"\n", 2*v))
					},
				}}, nil
			},
		})
		cat = append(cat, claims.Catalogue{Study: name, Claims: []claims.Claim{{ID: "F-" + name, Study: name, Statement: "the value is 42", Published: "42", Agreement: "equal",
			Eval: claims.On(name, func(r *struct {
				Value float64 `json:"value"`
			}) claims.Outcome {
				if r.Value == 42 {
					return claims.Outcome{Ours: "value " + fmt.Sprint(r.Value), Verdict: claims.Reproduced}
				}
				return claims.Outcome{Ours: "value " + fmt.Sprint(r.Value), Verdict: claims.NotReproduced}
			})}}})
	}
	catalogues = func() []claims.Catalogue { return cat }
	if newReproRepoHook != nil {
		newReproRepoHook(root)
	}
	rr.log = &bytes.Buffer{}
	rr.cfg = Config{Root: root, Log: rr.log, Installer: &deps.Installer{Root: root, Log: rr.log,
		IsRoot: func() bool { return false }, HaveSudo: func() bool { return false },
		Run: func(context.Context, string, io.Writer, ...string) error { return errors.New("no installing in tests") }}}
	// The committed reference runs and the outputs built from them.
	for _, ref := range slices.Sorted(maps.Keys(refs)) {
		rr.values[ref] = refs[ref]
		name, profile, _ := strings.Cut(ref, "/")
		c := rr.cfg
		c.Profile = profile
		if _, err := fakeRecord(c, name, filepath.Join(root, spec.Path(name)), filepath.Join(root, "data"), rr.values[ref]); err != nil {
			t.Fatal(err)
		}
	}
	if err := Build(context.Background(), rr.cfg); err != nil {
		t.Fatalf("build the committed outputs: %v\n%s", err, rr.log)
	}
	rr.log.Reset()
	return rr
}

// newReproRepoHook, when set, changes the repository and the studies
// before the reference runs are recorded and built.
var newReproRepoHook func(root string)

// fakeRecord records a sealed run holding value, pins it in specPath and
// returns its ID.
func fakeRecord(cfg Config, study, specPath, dataDir string, value int) (string, error) {
	start := time.Date(2026, 12, 1, 5, 0, 0, 0, time.UTC)
	r, err := repro.NewRun(dataDir, study, cfg.Profile, start)
	if err != nil {
		return "", err
	}
	b := []byte(fmt.Sprintf("%d\n", value))
	if err := os.WriteFile(filepath.Join(r.Dir, "x.txt"), b, 0o644); err != nil {
		return "", err
	}
	if err := provenance.Write(r.Dir, provenance.Meta{Study: study, RunID: r.ID, Start: start, End: start.Add(time.Minute), Files: map[string]string{"x.txt": repro.HashBytes(b)}}); err != nil {
		return "", err
	}
	if err := r.Commit(); err != nil {
		return "", err
	}
	if err := spec.Pin(specPath, cfg.Profile, spec.Sealed(r.ID, r.Manifest)); err != nil {
		return "", err
	}
	return r.ID, runlist.Add(runlist.Beside(specPath), study, runlist.Entry{ID: r.ID, Manifest: r.Manifest, Role: runlist.Pinned})
}

// treeFiles hashes every file of the committed tree: everything but .cache.
func treeFiles(t *testing.T, root string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		if d.IsDir() && rel == ".cache" {
			return filepath.SkipDir
		}
		if !d.IsDir() {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			out[rel] = repro.HashBytes(b)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func (rr *reproRepo) all(t *testing.T, profile string) error {
	t.Helper()
	rr.log.Reset()
	c := rr.cfg
	c.Profile = profile
	return All(context.Background(), c)
}

// mustContain reports each of wants that out lacks.
func mustContain(t *testing.T, out string, wants ...string) {
	t.Helper()
	for _, want := range wants {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

// claimLine is the table line of a claim.
func claimLine(t *testing.T, out, id string) string {
	t.Helper()
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, id+" ") {
			return strings.Join(strings.Fields(l), " ")
		}
	}
	t.Errorf("no table line for %s:\n%s", id, out)
	return ""
}

func TestAllRunsEverythingOutsideTheCommittedTree(t *testing.T) {
	// The committed reference runs: alpha quick 21 (claim reproduced),
	// alpha full 50 (not reproduced; the committed results come from it),
	// beta full 21. The new runs record the same values.
	rr := newReproRepo(t, []string{"alpha", "beta"}, map[string]int{"alpha/quick": 21, "alpha/full": 50, "beta/full": 21})
	rr.values["beta/quick"] = 21
	before := treeFiles(t, rr.cfg.Root)
	if err := rr.all(t, settings.Quick); err != nil {
		t.Fatalf("All: %v\n%s", err, rr.log)
	}
	out := rr.log.String()
	if after := treeFiles(t, rr.cfg.Root); fmt.Sprint(after) != fmt.Sprint(before) {
		t.Errorf("all changed the committed tree:\nbefore %v\nafter  %v", before, after)
	}
	mustContain(t, out,
		"quick: plan (quick profile), into .cache/reproduce/quick",
		"1. verify the committed data",
		"2. alpha: re-run fake study alpha at the quick profile [about 1s]; compare with the quick reference run data/alpha/20261201T050000Z-quick",
		"3. beta: re-run fake study beta at the quick profile [about 1s]; no quick reference run: its results are shown, not compared",
		"quick: estimated time about 32s (experiments at the quick profile: about 2s; at the full profile: about 2m0s)",
		"quick: verified the committed data: 3 runs (3 pinned) against their manifests",
		"reference: analysing the quick reference runs that the committed outputs are not built from, or not with the current code (alpha data/alpha/20261201T050000Z-quick)",
		"paper: not built: this tree has no paper/main.tex",
		"quick: REPRODUCED WHERE COMPARED: re-run alpha 0s, beta 0s; skipped none; failed none; claims: 1 same verdict, 0 differ, 1 not compared",
	)
	if strings.Index(out, "estimated time") > strings.Index(out, "verified the committed data") {
		t.Error("verified before printing the plan")
	}
	// Like with like: alpha's reference is the quick run (42), never the
	// full run behind the committed outputs (100).
	if l := claimLine(t, out, "F-alpha"); l != "F-alpha alpha 42 value 42 reproduced value 42 reproduced same verdict" {
		t.Errorf("F-alpha line: %q\n%s", l, out)
	}
	if l := claimLine(t, out, "F-beta"); l != "F-beta beta 42 - (no quick reference run) value 42 reproduced not compared: no quick reference run (never compared with another profile)" {
		t.Errorf("F-beta line: %q\n%s", l, out)
	}
	// The complete tree, its results and its summary.
	final := filepath.Join(rr.cfg.Root, reproduce.ReproduceDir, settings.Quick)
	for rel, want := range map[string]string{
		"results/alpha.json":            `{"value": 42}`,
		"results/beta.json":             `{"value": 42}`,
		".reference/results/alpha.json": `{"value": 42}`,
	} {
		b, err := os.ReadFile(filepath.Join(final, rel))
		if err != nil || strings.TrimSpace(string(b)) != want {
			t.Errorf("%s = %q, %v; want %s", rel, b, err, want)
		}
	}
	if b, err := os.ReadFile(filepath.Join(final, "SUMMARY.txt")); err != nil || !strings.Contains(string(b), "F-alpha") {
		t.Errorf("SUMMARY.txt: %v\n%s", err, b)
	}
	if l := FindLeftovers(rr.cfg).Lines(); len(l) > 0 {
		t.Errorf("leftovers after a complete all: %v", l)
	}

	// At the full profile the committed results are the reference.
	if err := rr.all(t, settings.Full); err != nil {
		t.Fatalf("All full: %v\n%s", err, rr.log)
	}
	out = rr.log.String()
	if !strings.Contains(out, "reference data/alpha/20261201T050000Z-full (the committed results/alpha.json)") || strings.Contains(out, "reference: analysing") {
		t.Errorf("full: the committed results are not the reference:\n%s", out)
	}
	if l := claimLine(t, out, "F-alpha"); l != "F-alpha alpha 42 value 100 not reproduced value 100 not reproduced same verdict" {
		t.Errorf("full F-alpha line: %q\n%s", l, out)
	}
	if after := treeFiles(t, rr.cfg.Root); fmt.Sprint(after) != fmt.Sprint(before) {
		t.Error("all at the full profile changed the committed tree")
	}

	// With the analysis code changed since the committed outputs were
	// built, the reference run is analysed again by the current code.
	os.WriteFile(filepath.Join(rr.cfg.Root, "analysis", "b.go"), []byte("package analysis\n\n// changed\n"), 0o644)
	if err := rr.all(t, settings.Full); err != nil {
		t.Fatalf("All full, stale: %v\n%s", err, rr.log)
	}
	if out := rr.log.String(); !strings.Contains(out, "reference: analysing the full reference runs that the committed outputs are not built from, or not with the current code (alpha data/alpha/20261201T050000Z-full, beta data/beta/20261201T050000Z-full)") {
		t.Errorf("stale committed results taken as the reference:\n%s", out)
	}
}

func TestAllSkipsWhatCannotRunHere(t *testing.T) {
	rr := newReproRepo(t, []string{"alpha", "beta"}, map[string]int{"alpha/quick": 21, "beta/quick": 21})
	rr.cannot["alpha"] = "not root: it captures packets"
	// beta needs a package that cannot be installed (not root, no sudo).
	studies[1].Requirements = func(string) []deps.Requirement {
		return []deps.Requirement{{Name: "tool", Why: "beta:run", Present: func() bool { return false }, Apt: []string{"faketool"}}}
	}
	before := treeFiles(t, rr.cfg.Root)
	if err := rr.all(t, settings.Quick); err != nil {
		t.Fatalf("All with nothing runnable failed instead of skipping: %v\n%s", err, rr.log)
	}
	out := rr.log.String()
	if rr.runs["alpha"]+rr.runs["beta"] != 0 {
		t.Errorf("ran %v", rr.runs)
	}
	mustContain(t, out,
		"2. alpha: NOT re-run here: not root: it captures packets; its claims are shown from the quick reference run",
		"quick: beta: not re-run: cannot install what it needs: need the Debian packages faketool and cannot install them (not root, no password-less sudo)",
		"alpha enters the tree's paper with its committed quick run",
		"quick: NOTHING RE-RUN: re-run none; skipped alpha, beta; failed none; claims: 0 same verdict, 0 differ, 2 not compared",
	)
	if l := claimLine(t, out, "F-alpha"); l != "F-alpha alpha 42 value 42 reproduced - (not re-run here: not root: it captures packets) not compared: not re-run here: not root: it captures packets" {
		t.Errorf("F-alpha line: %q", l)
	}
	if after := treeFiles(t, rr.cfg.Root); fmt.Sprint(after) != fmt.Sprint(before) {
		t.Error("all changed the committed tree")
	}

	// PQREPRO_STUDIES limits the re-runs the same way; an unknown name is an error.
	s := settings.Defaults()
	s.Studies = []string{"beta", "gamma"}
	rr.cfg.Settings = &s
	if err := rr.all(t, settings.Quick); err == nil || !strings.Contains(err.Error(), `PQREPRO_STUDIES names "gamma"`) {
		t.Errorf("unknown study in PQREPRO_STUDIES: %v", err)
	}
	s.Studies = []string{"alpha"}
	delete(rr.cannot, "alpha")
	rr.values["alpha/quick"] = 21
	if err := rr.all(t, settings.Quick); err != nil || !strings.Contains(rr.log.String(), "3. beta: NOT re-run here: not in PQREPRO_STUDIES") || rr.runs["alpha"] != 1 {
		t.Errorf("PQREPRO_STUDIES=alpha: %v, runs %v\n%s", err, rr.runs, rr.log)
	}
}

func TestAllReportsADifferentVerdict(t *testing.T) {
	rr := newReproRepo(t, []string{"alpha"}, map[string]int{"alpha/quick": 21})
	rr.values["alpha/quick"] = 22 // the new run: 44, not 42
	err := rr.all(t, settings.Quick)
	if !errors.Is(err, reproduce.ErrNotReproduced) {
		t.Fatalf("All: %v, want reproduce.ErrNotReproduced\n%s", err, rr.log)
	}
	out := rr.log.String()
	if l := claimLine(t, out, "F-alpha"); l != "F-alpha alpha 42 value 42 reproduced value 44 not reproduced VERDICT DIFFERS" {
		t.Errorf("F-alpha line: %q", l)
	}
	if !strings.Contains(out, "quick: NOT REPRODUCED: re-run alpha") {
		t.Errorf("overall line:\n%s", out)
	}
	// The tree is complete all the same: the difference is its finding.
	if _, err := os.Stat(filepath.Join(rr.cfg.Root, reproduce.ReproduceDir, settings.Quick, "SUMMARY.txt")); err != nil {
		t.Error(err)
	}

	// A run that fails is an error of all, after the table.
	rr.runHook = func(context.Context, string) error { return errors.New("the link broke") }
	err = rr.all(t, settings.Quick)
	if err == nil || !strings.Contains(err.Error(), "alpha: the link broke") || !strings.Contains(rr.log.String(), "failed alpha") {
		t.Errorf("failed run: %v\n%s", err, rr.log)
	}
	// Its overall line says so, never REPRODUCED (a quick run whose Study A
	// failed once printed "REPRODUCED WHERE COMPARED" and exited 1).
	if out := rr.log.String(); !strings.Contains(out, "quick: INCOMPLETE: re-run none; skipped none; failed alpha") || strings.Contains(out, "quick: REPRODUCED") {
		t.Errorf("overall line of a failed run:\n%s", out)
	}
}

func TestAllInterruptedLeavesNoTreeReportedComplete(t *testing.T) {
	rr := newReproRepo(t, []string{"alpha", "beta"}, map[string]int{"alpha/quick": 21, "beta/quick": 21})
	rr.values["alpha/quick"], rr.values["beta/quick"] = 21, 21
	final := filepath.Join(rr.cfg.Root, reproduce.ReproduceDir, settings.Quick)
	before := treeFiles(t, rr.cfg.Root)
	for _, tc := range []struct {
		name     string
		previous bool // a complete tree of an earlier all exists
		stopIn   string
	}{
		{"first study, no previous tree", false, "alpha"},
		{"second study, no previous tree", false, "beta"},
		{"second study, a previous tree", true, "beta"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			os.RemoveAll(final)
			rr.runHook = nil
			var summary []byte
			if tc.previous {
				if err := rr.all(t, settings.Quick); err != nil {
					t.Fatal(err)
				}
				summary, _ = os.ReadFile(filepath.Join(final, "SUMMARY.txt"))
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			rr.runHook = func(ctx2 context.Context, study string) error {
				if study != tc.stopIn {
					return nil
				}
				cancel() // as SIGINT does, through withSignals
				<-ctx2.Done()
				return ctx2.Err()
			}
			rr.log.Reset()
			c := rr.cfg
			c.Profile = settings.Quick
			err := All(ctx, c)
			if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "interrupted during the "+tc.stopIn+" run") {
				t.Errorf("All: %v", err)
			}
			if strings.Contains(rr.log.String(), "REPRODUCED") {
				t.Errorf("an interrupted all printed an overall verdict:\n%s", rr.log)
			}
			got, err := os.ReadFile(filepath.Join(final, "SUMMARY.txt"))
			switch {
			case tc.previous && (err != nil || !bytes.Equal(got, summary)):
				t.Errorf("the previous complete tree was not kept: %v", err)
			case !tc.previous && !errors.Is(err, os.ErrNotExist):
				t.Errorf("a tree is at %s after an interrupted first all: %v", final, err)
			}
			if m, _ := filepath.Glob(filepath.Join(rr.cfg.Root, reproduce.ReproduceDir, ".incomplete-*")); len(m) > 0 {
				t.Errorf("incomplete trees left: %v", m)
			}
			if after := treeFiles(t, rr.cfg.Root); fmt.Sprint(after) != fmt.Sprint(before) {
				t.Error("an interrupted all changed the committed tree")
			}
		})
	}
	// A tree a SIGKILL left is a leftover that status and the next run report.
	os.MkdirAll(filepath.Join(rr.cfg.Root, reproduce.ReproduceDir, ".incomplete-quick-123"), 0o755)
	if l := strings.Join(FindLeftovers(rr.cfg).Lines(), "\n"); !strings.Contains(l, ".cache/reproduce/.incomplete-quick-123") {
		t.Errorf("leftovers: %s", l)
	}
}

func TestAllRefusesWhileBuildWrites(t *testing.T) {
	rr := newReproRepo(t, []string{"alpha"}, map[string]int{"alpha/quick": 21})
	held, err := treelock.Acquire(context.Background(), rr.cfg.Root, treelock.Write, "build", treelock.Wait, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer held.Release()
	for _, target := range []string{"all", "quick"} {
		ran := false
		err := Locked(context.Background(), rr.cfg, target, func(context.Context, Config) error { ran = true; return nil })
		var be *treelock.BusyError
		if !errors.As(err, &be) || ran {
			t.Errorf("%s while build holds the lock: ran %v, %v", target, ran, err)
		}
	}
}

func TestAllBuildsThePaperFromTheNewRuns(t *testing.T) {
	if _, err := exec.LookPath("pdflatex"); err != nil {
		t.Skip("pdflatex is not installed: `go run mage.go test` installs it (texlive-latex-base); skipping the paper-in-the-tree test")
	}
	// The paper says the value of alpha's results; the committed paper is
	// built from the reference run (42), the new run records 22 (44).
	write := func(root, rel, s string) {
		os.MkdirAll(filepath.Dir(filepath.Join(root, rel)), 0o755)
		os.WriteFile(filepath.Join(root, rel), []byte(s), 0o644)
	}
	rr := newReproRepoWithPaper(t, write)
	rr.values["alpha/quick"] = 22
	before := treeFiles(t, rr.cfg.Root)
	err := rr.all(t, settings.Quick)
	if !errors.Is(err, reproduce.ErrNotReproduced) {
		t.Fatalf("All: %v\n%s", err, rr.log)
	}
	if after := treeFiles(t, rr.cfg.Root); fmt.Sprint(after) != fmt.Sprint(before) {
		t.Error("all changed the committed tree (the committed paper included)")
	}
	final := filepath.Join(rr.cfg.Root, reproduce.ReproduceDir, settings.Quick)
	if !strings.Contains(rr.log.String(), "paper built from the new runs: .cache/reproduce/quick/paper/main.pdf") {
		t.Errorf("no paper line:\n%s", rr.log)
	}
	tex, err := os.ReadFile(filepath.Join(final, "paper/generated/alpha.tex"))
	if err != nil || !strings.Contains(string(tex), `"value": 44`) {
		t.Errorf("the tree's paper input is %q (%v), want the new run's value 44", tex, err)
	}
	if _, err := os.Stat(filepath.Join(final, "paper/main.pdf")); err != nil {
		t.Error(err)
	}
	committed, _ := os.ReadFile(filepath.Join(rr.cfg.Root, "paper/generated/alpha.tex"))
	if !strings.Contains(string(committed), `"value": 42`) {
		t.Errorf("committed paper input: %q", committed)
	}
}

// newReproRepoWithPaper is newReproRepo over alpha (quick reference run
// 21) with a paper that prints alpha's results.
func newReproRepoWithPaper(t *testing.T, write func(root, rel, s string)) *reproRepo {
	t.Helper()
	var root string
	orig := newReproRepoHook
	newReproRepoHook = func(r string) {
		root = r
		write(root, "internal/paperbuild/x.go", "package x\n")
		write(root, "paper/main.tex", "\\documentclass{article}\n\\begin{document}\n\\input{generated/alpha.tex}\n\\typeout{"+paperbuild.BodyEndMarker+"\\thepage}\n\\end{document}\n")
		s := studies[0].StagesFor
		studies[0].StagesFor = func(root, profile, run string, set settings.Settings) ([]*repro.Stage, error) {
			st, err := s(root, profile, run, set)
			return append(st, &repro.Stage{Name: "alpha:tables", Code: []string{"analysis"},
				Inputs: []string{"results/alpha.json"}, Outputs: []string{"paper/generated/alpha.tex"},
				Run: func(ctx context.Context, env *repro.Env) error {
					b, err := env.ReadFile("results/alpha.json")
					if err != nil {
						return err
					}
					return env.WriteFile("paper/generated/alpha.tex", []byte("The result is "+strings.NewReplacer("{", "(", "}", ")").Replace(string(b))))
				}}), err
		}
	}
	defer func() { newReproRepoHook = orig }()
	return newReproRepo(t, []string{"alpha"}, map[string]int{"alpha/quick": 21})
}

// TestAllJudgesItems: all judges a study's items with analysis/agreement:
// a time is not judged when the hosts' fingerprints are unknown (the fake
// runs record none), a count that differs is inconsistent and makes the
// overall line NOT REPRODUCED, and SUMMARY.txt has every item's row.
func TestAllJudgesItems(t *testing.T) {
	rr := newReproRepo(t, []string{"alpha"}, map[string]int{"alpha/quick": 21})
	rr.values["alpha/quick"] = 21
	type value struct {
		Value float64 `json:"value"`
	}
	studies[0].Results = resultsOf[value]{Decode: jsonnum.Decode[value], Items: func(ref, now *value) []agreement.Item {
		return []agreement.Item{
			{Name: "time", Unit: "ms", Class: agreement.HostDependent, Kind: agreement.Estimate, Ref: agreement.V(ref.Value, 1), New: agreement.V(2*now.Value, 1)},
			{Name: "count", Class: agreement.HostIndependent, Kind: agreement.Exact, Ref: agreement.V(ref.Value, 0), New: agreement.V(now.Value, 0)},
		}
	}}.decode
	if err := rr.all(t, settings.Quick); err != nil {
		t.Fatalf("All: %v\n%s", err, rr.log)
	}
	out := rr.log.String()
	mustContain(t, out,
		"alpha host differs from the reference run's: the reference run's host is unknown", "it has no \"host\" object (its times are shown with their ratio, not judged)",
		"quick: REPRODUCED WHERE COMPARED: re-run alpha",
		"study items: 2 items: 1 judged, 1 consistent, 0 inconsistent; 1 not judged (1 host differs)",
	)
	b, err := os.ReadFile(filepath.Join(rr.cfg.Root, reproduce.ReproduceDir, settings.Quick, "SUMMARY.txt"))
	if err != nil || !strings.Contains(string(b), "not judged (host differs)") || !strings.Contains(string(b), "calibration of this rule at the quick profile: not measured here") ||
		!strings.Contains(string(b), "alpha between-run variance not estimated: the reference run's meta.json: ") {
		t.Errorf("SUMMARY.txt: %v\n%s", err, b)
	}
	rr.values["alpha/quick"] = 22
	if err := rr.all(t, settings.Quick); !errors.Is(err, reproduce.ErrNotReproduced) {
		t.Errorf("a count that differs: %v\n%s", err, rr.log)
	}
	mustContain(t, strings.Join(strings.Fields(rr.log.String()), " "), "alpha count host-independent 42 44 [42, 42] INCONSISTENT differs by 2, more than 0", "quick: NOT REPRODUCED")
}

// TestOneTimeWork: a fresh machine's one-time work is the missing
// packages' install, then the study's own builds; none once they are
// there.
func TestOneTimeWork(t *testing.T) {
	s := Study{Name: "alpha",
		Requirements: func(string) []deps.Requirement {
			return []deps.Requirement{{Name: "tshark", Why: "test", Present: func() bool { return false }, Apt: []string{"tshark"}}}
		},
		OneTime: func(string) []OneTimeWork {
			return []OneTimeWork{{What: "build X into .cache/x", Estimate: 6 * time.Minute}}
		},
	}
	got := s.oneTimeWork(t.TempDir())
	want := []OneTimeWork{{What: "apt-get install tshark", Estimate: 24 * time.Second}, {What: "build X into .cache/x", Estimate: 6 * time.Minute}}
	if !slices.Equal(got, want) {
		t.Errorf("one-time work %v, want %v", got, want)
	}
	s.Requirements, s.OneTime = nil, nil
	if got := s.oneTimeWork(t.TempDir()); len(got) != 0 {
		t.Errorf("with nothing to do: %v", got)
	}
}
