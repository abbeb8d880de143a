package pipeline

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"pqrepro/internal/deps"
	"pqrepro/internal/provenance"
	"pqrepro/internal/repro"
	"pqrepro/internal/runlist"
	"pqrepro/internal/settings"
	"pqrepro/internal/spec"
)

// fakeRunID is the fake study's run of profile: one run per profile, as
// NewRun would name it.
func fakeRunID(profile string) string { return "20260101T000000Z-" + profile }

// fakeStudy registers a study whose experiment writes one number, seals
// it and pins it in experiments/fake.toml as the real runners do, and
// whose single stage doubles it, in a temporary repository.
func fakeStudy(t *testing.T) (Config, *bytes.Buffer, *int) {
	t.Helper()
	root := t.TempDir()
	os.WriteFile(filepath.Join(root, "go.mod"), []byte("module fake\n"), 0o644)
	os.MkdirAll(filepath.Join(root, "analysis"), 0o755)
	os.WriteFile(filepath.Join(root, "analysis", "a.go"), []byte("package analysis\n"), 0o644)
	os.MkdirAll(filepath.Join(root, "experiments"), 0o755)
	os.WriteFile(filepath.Join(root, spec.Path("fake")), []byte("[runs]\n"), 0o644)
	runs := 0
	installed := false
	saved, savedClaims := studies, withClaims
	t.Cleanup(func() { studies, withClaims = saved, savedClaims })
	withClaims = false
	studies = []Study{{
		Name:  "fake",
		Title: "a study for tests",
		EstimateFor: func(_, p string) time.Duration {
			return map[string]time.Duration{settings.Quick: time.Second, settings.Full: time.Minute}[p]
		},
		Requirements: func(string) []deps.Requirement {
			return []deps.Requirement{{Name: "tool", Why: "fake:run", Present: func() bool { return installed }, Apt: []string{"faketool"}}}
		},
		Run: func(ctx context.Context, cfg Config, specPath, dataDir string) (string, error) {
			runs++
			id := fakeRunID(cfg.Profile)
			dir := filepath.Join(dataDir, "fake", id)
			os.MkdirAll(dir, 0o755)
			if err := os.WriteFile(filepath.Join(dir, "x.txt"), []byte("21\n"), 0o644); err != nil {
				return "", err
			}
			start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
			if err := provenance.Write(dir, provenance.Meta{Study: "fake", RunID: id, Start: start, End: start.Add(time.Second)}); err != nil {
				return "", err
			}
			sum, err := repro.WriteManifest(dir, "fake/"+id)
			if err != nil {
				return "", err
			}
			if err := spec.Pin(specPath, cfg.Profile, spec.Sealed(id, sum)); err != nil {
				return "", err
			}
			return id, runlist.Add(runlist.Beside(specPath), "fake", runlist.Entry{ID: id, Manifest: sum, Role: runlist.Pinned})
		},
		StagesFor: func(root, profile, run string, _ settings.Settings) ([]*repro.Stage, error) {
			return []*repro.Stage{{
				Name: "fake:analyze", Doc: "double it", Code: []string{"analysis"},
				Inputs: []string{run}, Outputs: []string{"results/fake.txt"},
				Run: func(ctx context.Context, env *repro.Env) error {
					b, err := env.ReadFile(run + "/x.txt")
					if err != nil {
						return err
					}
					return env.WriteFile("results/fake.txt", append([]byte("doubled "), b...))
				},
			}}, nil
		},
	}}
	var log bytes.Buffer
	cfg := Config{Root: root, Profile: settings.Quick, Log: &log, Installer: &deps.Installer{
		Root: root, Log: &log, IsRoot: func() bool { return true },
		Run: func(context.Context, string, io.Writer, ...string) error { installed = true; return nil },
	}}
	return cfg, &log, &runs
}

func TestRunBuildStatusVerify(t *testing.T) {
	cfg, log, runs := fakeStudy(t)
	if err := RunStudy(context.Background(), cfg, "fake"); err != nil {
		t.Fatalf("RunStudy: %v\n%s", err, log)
	}
	if err := Build(context.Background(), cfg); err != nil {
		t.Fatalf("Build: %v\n%s", err, log)
	}
	out := log.String()
	mustContain(t, out,
		"missing tool (needed by fake:run)",
		"will run: apt-get install faketool",
		"fake:run: a study for tests (quick profile, about 1s)",
		"build: 1 stages ran",
	)
	if *runs != 1 {
		t.Errorf("experiment ran %d times", *runs)
	}
	b, _ := os.ReadFile(filepath.Join(cfg.Root, "results", "fake.txt"))
	if string(b) != "doubled 21\n" {
		t.Errorf("result = %q", b)
	}

	// Second time: nothing is stale.
	log.Reset()
	if err := Build(context.Background(), cfg); err != nil {
		t.Fatal(err)
	}
	if *runs != 1 || !strings.Contains(log.String(), "0 stages ran, 1 up to date") {
		t.Errorf("second Build did work:\n%s", log)
	}

	// Status and verify on the built tree.
	log.Reset()
	if err := Status(context.Background(), cfg); err != nil || !strings.Contains(log.String(), "all 1 stages are up to date") {
		t.Errorf("Status: %v\n%s", err, log)
	}
	log.Reset()
	if err := Verify(context.Background(), cfg); err != nil {
		t.Errorf("Verify: %v\n%s", err, log)
	}
	os.WriteFile(filepath.Join(cfg.Root, "data", "fake", fakeRunID(settings.Quick), "x.txt"), []byte("22\n"), 0o644)
	log.Reset()
	err := Verify(context.Background(), cfg)
	if !errors.Is(err, ErrVerify) || !strings.Contains(log.String(), "FAIL data/fake/"+fakeRunID(settings.Quick)+"/x.txt: content differs") {
		t.Errorf("Verify after tampering: %v\n%s", err, log)
	}
	// Altered raw data is an error for status, never advice to rebuild.
	log.Reset()
	err = Status(context.Background(), cfg)
	if !errors.Is(err, ErrEvidence) || !strings.Contains(log.String(), "ERROR  data/fake/"+fakeRunID(settings.Quick)+"/x.txt: content differs from the sealed run") ||
		strings.Contains(log.String(), "mage all") || !strings.Contains(log.String(), "do NOT rebuild") {
		t.Errorf("Status after tampering: %v\n%s", err, log)
	}
}

func TestBadConfig(t *testing.T) {
	cfg, _, _ := fakeStudy(t)
	cfg.Profile = "medium"
	if err := All(context.Background(), cfg); err == nil || !strings.Contains(err.Error(), `unknown profile "medium"`) {
		t.Errorf("All with a bad profile: %v", err)
	}
	cfg.Profile, cfg.Root = settings.Quick, t.TempDir()
	if err := Status(context.Background(), cfg); err == nil || !strings.Contains(err.Error(), "not the repository root") {
		t.Errorf("Status outside the repository: %v", err)
	}
	if err := RunStudy(context.Background(), Config{Root: "..", Profile: settings.Quick}, "nonesuch"); err == nil {
		t.Error("RunStudy of an unknown study succeeded")
	}
}

func TestCorruptLockIsAClearError(t *testing.T) {
	cfg, log, _ := fakeStudy(t)
	if err := RunStudy(context.Background(), cfg, "fake"); err != nil {
		t.Fatal(err)
	}
	if err := Build(context.Background(), cfg); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(cfg.Root, repro.LockFile), []byte("{garbage"), 0o644)
	for name, f := range map[string]func(context.Context, Config) error{"status": Status, "build": func(ctx context.Context, c Config) error { return Build(ctx, c) }} {
		log.Reset()
		err := f(context.Background(), cfg)
		if err == nil || !strings.Contains(err.Error(), "is corrupt") || !strings.Contains(err.Error(), "mage build") {
			t.Errorf("%s with a corrupt lock: %v", name, err)
		}
	}
}

func TestClean(t *testing.T) {
	cfg, log, _ := fakeStudy(t)
	for _, d := range []string{".cache/x", ".cache/locks", ".cache/mage", ".stage-123", "data/fake/.incomplete-1", "data/fake/" + fakeRunID(settings.Quick)} {
		os.MkdirAll(filepath.Join(cfg.Root, d), 0o755)
	}
	if err := Clean(cfg); err != nil {
		t.Fatal(err)
	}
	for _, kept := range []string{".cache/locks", ".cache/mage"} { // the lock clean holds, the binary running it
		if _, err := os.Stat(filepath.Join(cfg.Root, kept)); err != nil {
			t.Errorf("clean removed %s: %v", kept, err)
		}
	}
	for _, gone := range []string{".cache/x", ".stage-123", "data/fake/.incomplete-1"} {
		if _, err := os.Stat(filepath.Join(cfg.Root, gone)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s survived clean", gone)
		}
	}
	if _, err := os.Stat(filepath.Join(cfg.Root, "data/fake/"+fakeRunID(settings.Quick))); err != nil {
		t.Errorf("clean removed raw data: %v", err)
	}
	log.Reset()
	Clean(cfg)
	if !strings.Contains(log.String(), "nothing to remove") {
		t.Errorf("second clean: %s", log)
	}
}

// TestStudyLeftoverHooks: status lists each study's leftovers under the
// target that removes them, clean and net:clean call each study's Clean
// with their own name, clean lists what the hook removed, and a hook's
// error stops the target naming the study.
func TestStudyLeftoverHooks(t *testing.T) {
	cfg, log, _ := fakeStudy(t)
	var called []string
	fail := false
	studies[0].Leftovers = func() []Leftover {
		return []Leftover{{What: "fake sockets", Items: []string{"/tmp/fake-1", "/tmp/fake-2"}, RemovedBy: "fake:clean"}, {What: "nothing", RemovedBy: "clean"}}
	}
	studies[0].Clean = func(_ context.Context, _ Config, target string) ([]string, error) {
		called = append(called, target)
		if fail {
			return nil, errors.New("socket busy")
		}
		return []string{"fake:" + target}, nil
	}
	got := FindLeftovers(cfg).Lines()
	want := []string{"fake sockets (`go run mage.go fake:clean` removes them):", "  /tmp/fake-1", "  /tmp/fake-2"}
	if !slices.Equal(got, want) {
		t.Errorf("lines %q, want %q (a kind without items is not listed)", got, want)
	}
	if err := Clean(cfg); err != nil || !strings.Contains(log.String(), "clean: removed fake:clean") {
		t.Errorf("clean: %v\n%s", err, log)
	}
	if err := NetClean(context.Background(), cfg); err != nil {
		t.Errorf("net:clean: %v", err)
	}
	if !slices.Equal(called, []string{"clean", "net:clean"}) {
		t.Errorf("Clean called for %q, want clean then net:clean", called)
	}
	fail = true
	if err := Clean(cfg); err == nil || !strings.Contains(err.Error(), "clean: study fake: socket busy") {
		t.Errorf("clean with a failing hook: %v", err)
	}
}

// TestVerifyInstallsLatex: verify needs pdflatex for the paper stage and,
// like every other target, installs it after saying what; without root
// or sudo it stops before re-deriving anything and gives the command.
func TestVerifyInstallsLatex(t *testing.T) {
	for _, tc := range []struct {
		name    string
		root    bool
		wantErr string
		wantRun string
	}{
		{"root installs", true, "installed, but still missing: pdflatex", "apt-get -o DPkg::Lock::Timeout=300 install -y -q --no-install-recommends lmodern poppler-utils texlive-fonts-recommended texlive-latex-base texlive-latex-recommended"},
		{"no root, no sudo", false, "run `sudo apt-get install lmodern poppler-utils texlive-fonts-recommended texlive-latex-base texlive-latex-recommended`", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, log, _ := fakeStudy(t)
			if err := os.MkdirAll(filepath.Join(cfg.Root, "paper"), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(cfg.Root, "paper", "main.tex"), []byte("\\documentclass{article}\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			t.Setenv("PATH", t.TempDir()) // no pdflatex
			var ran []string
			cfg.Installer = &deps.Installer{Root: cfg.Root, Log: log,
				IsRoot: func() bool { return tc.root }, HaveSudo: func() bool { return false },
				Run: func(_ context.Context, _ string, _ io.Writer, argv ...string) error {
					ran = append(ran, strings.Join(argv, " "))
					return nil
				}}
			err := Verify(context.Background(), cfg)
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) || !strings.Contains(err.Error(), "needs pdflatex") {
				t.Fatalf("Verify = %v, want %q\n%s", err, tc.wantErr, log)
			}
			mustContain(t, log.String(), "missing pdflatex (needed by the paper (paper stage))", "will run: apt-get install lmodern")
			if tc.wantRun != "" && !slices.Contains(ran, tc.wantRun) {
				t.Errorf("ran %q, want %q", ran, tc.wantRun)
			}
			if strings.Contains(log.String(), "re-deriving") {
				t.Errorf("verify went on without pdflatex:\n%s", log)
			}
		})
	}
}

// TestStrayFoldersRefused: a folder under data/<study>/ that is not a
// sealed run with a valid ID (here the attack's data/fake/zzattack with a
// meta.json only, and a validly named but unsealed one) makes build
// refuse and status and verify name it; nothing of it enters SHA256SUMS.
func TestStrayFoldersRefused(t *testing.T) {
	cfg, log, _ := fakeStudy(t)
	if err := RunStudy(context.Background(), cfg, "fake"); err != nil {
		t.Fatalf("RunStudy: %v\n%s", err, log)
	}
	if err := Build(context.Background(), cfg); err != nil {
		t.Fatalf("Build: %v\n%s", err, log)
	}
	sums, _ := os.ReadFile(filepath.Join(cfg.Root, repro.SumsFile))
	for _, d := range []string{"zzattack", "20260102T000000Z-quick"} {
		dir := filepath.Join(cfg.Root, "data", "fake", d)
		os.MkdirAll(dir, 0o755)
		os.WriteFile(filepath.Join(dir, "meta.json"), []byte(`{"study":"fake"}`), 0o644)
	}
	os.WriteFile(filepath.Join(cfg.Root, "data", "fake", "loose.csv"), []byte("1\n"), 0o644)
	for name, target := range map[string]func() error{
		"build":  func() error { return Build(context.Background(), cfg) },
		"status": func() error { return Status(context.Background(), cfg) },
		"verify": func() error { return Verify(context.Background(), cfg) },
	} {
		log.Reset()
		err := target()
		if err == nil {
			t.Errorf("%s succeeded with stray folders under data/fake/:\n%s", name, log)
		}
		for _, want := range []string{"data/fake/zzattack: not a run", "data/fake/20260102T000000Z-quick: not a sealed run", "data/fake/loose.csv: not a run"} {
			if !strings.Contains(log.String(), want) {
				t.Errorf("%s does not say %q:\n%s", name, want, log)
			}
		}
	}
	if after, _ := os.ReadFile(filepath.Join(cfg.Root, repro.SumsFile)); !bytes.Equal(after, sums) {
		t.Errorf("SHA256SUMS changed:\n%s", after)
	}
}
