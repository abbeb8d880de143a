package pipeline

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"pqrepro/internal/deps"
	"pqrepro/internal/remote"
	"pqrepro/internal/treelock"
)

func (c *Config) installer() *deps.Installer {
	if c.Installer != nil {
		return c.Installer
	}
	return &deps.Installer{Root: c.Root, Log: c.log()}
}

// RunTarget is a study's <name>:run target: it takes the tree's write
// lock (refusing to start while another command writes), then RunStudy.
// Each study's Mage namespace calls it with the study's name.
func RunTarget(ctx context.Context, cfg Config, name string) error {
	return Locked(ctx, cfg, name+":run", func(ctx context.Context, cfg Config) error { return RunStudy(ctx, cfg, name) })
}

// RunStudy runs one study's experiment into a new run folder.
func RunStudy(ctx context.Context, cfg Config, name string) error {
	ctx, stop := withSignals(ctx)
	defer stop()
	if cfg.Profile == "" {
		cfg.Profile = Full
	}
	if err := cfg.Validate(); err != nil {
		return err
	}
	for _, s := range Studies() {
		if s.Name != name {
			continue
		}
		if s.Run == nil {
			return fmt.Errorf("study %s has no experiment yet", name)
		}
		if s.Requirements != nil {
			if err := cfg.installer().Ensure(ctx, s.Requirements(cfg.Root)); err != nil {
				return err
			}
		}
		cfg, err := cfg.withGit(ctx)
		if err != nil {
			return err
		}
		cfg.printf("%s:run: %s (%s profile, about %v)", name, s.Title, cfg.Profile, roundDuration(s.estimate(cfg.Root, cfg.Profile)))
		return s.Run(ctx, cfg, "", "")
	}
	var known []string
	for _, s := range Studies() {
		known = append(known, fmt.Sprintf("%s (Study %s)", s.Name, s.Label))
	}
	return fmt.Errorf("study %q is not registered: the studies are %s", name, strings.Join(known, ", "))
}

// Paper builds paper/main.pdf and everything it depends on.
func Paper(ctx context.Context, cfg Config) error {
	if _, err := os.Stat(filepath.Join(cfg.Root, "paper", "main.tex")); errors.Is(err, os.ErrNotExist) {
		return errors.New("paper/main.tex does not exist yet: the paper sources are not written")
	}
	return Build(ctx, cfg, "paper")
}

// Clean removes build caches and the leftovers of interrupted runs:
// .cache/ (but its locks and the compiled magefile), staging folders of interrupted stages and incomplete run
// folders under data/, and the data remote's leftovers of killed pushes
// (a dir remote's .incoming-* files no upload holds). It keeps raw data, the content store and the
// committed outputs (they are artifacts; delete pqrepro.lock to force a
// full rebuild).
func Clean(cfg Config) error {
	var removed []string
	remove := func(p string) error {
		if err := os.RemoveAll(p); err != nil {
			return fmt.Errorf("clean: %w", err)
		}
		rel, _ := filepath.Rel(cfg.Root, p)
		removed = append(removed, rel)
		return nil
	}
	// .cache/locks and .cache/mage stay: the lock this command holds and
	// the compiled magefile it runs (and that another command may be
	// compiling right now).
	keep := map[string]bool{filepath.Join(cfg.Root, treelock.Dir): true, filepath.Join(cfg.Root, ".cache", "mage"): true}
	patterns := []string{".cache/*", ".stage-*", "data/*/.incomplete-*"}
	for _, pat := range patterns {
		matches, err := filepath.Glob(filepath.Join(cfg.Root, pat))
		if err != nil {
			return err
		}
		for _, m := range matches {
			if keep[m] {
				continue
			}
			if err := remove(m); err != nil {
				return err
			}
		}
	}
	if lr, name := leftoverRemover(cfg.Root); lr != nil {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		gone, err := lr.RemoveLeftovers(ctx)
		cancel()
		for _, g := range gone {
			removed = append(removed, name+": "+g)
		}
		if err != nil && !errors.Is(err, remote.ErrRemoteAbsent) {
			return fmt.Errorf("clean: %w", err)
		}
	}
	if len(removed) == 0 {
		cfg.printf("clean: nothing to remove")
		return nil
	}
	cfg.printf("clean: removed %s", strings.Join(removed, ", "))
	return nil
}

// testRequirements are what the test suite needs beyond Go, so that no
// test skips in CI for want of a tool.
var testRequirements = func(root string) []deps.Requirement { return nil }

// Test installs what the tests need, then runs go vet and go test over
// the whole module, printing package results, failed tests in full and
// every skipped test with its reason, then "N passed, N failed, N
// skipped". Extra arguments are passed to go test.
func Test(ctx context.Context, cfg Config, args ...string) error {
	if err := cfg.installer().Ensure(ctx, testRequirements(cfg.Root)); err != nil {
		return err
	}
	for _, s := range Studies() {
		if s.BeforeTests == nil || !withBeforeTests {
			continue
		}
		if err := s.BeforeTests(ctx, cfg); err != nil {
			return err
		}
	}
	if err := boundedFuzz(ctx, cfg); err != nil {
		return err
	}
	vet := []string{"go", "vet", "./..."}
	cfg.printf("test: %s", strings.Join(vet, " "))
	cmd := exec.CommandContext(ctx, vet[0], vet[1:]...)
	cmd.Dir = cfg.Root
	cmd.Stdout, cmd.Stderr = cfg.log(), cfg.log()
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s: %w", strings.Join(vet, " "), err)
	}
	// -p 1: one package at a time. The link-emulator and Study B tests
	// measure delays in milliseconds, and the RP2040 emulator tests keep
	// both cores busy; run together, the first fail for want of CPU.
	argv := append([]string{"go", "test", "-json", "-count=1", "-p", "1"}, append(args, "./...")...)
	cfg.printf("test: %s", strings.Join(argv, " "))
	cmd = exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Dir = cfg.Root
	cmd.Stderr = cfg.log()
	out, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("%s: %w", strings.Join(argv, " "), err)
	}
	sum, serr := summarizeTests(out, cfg.log())
	werr := cmd.Wait()
	switch {
	case serr != nil:
		return serr
	case werr != nil:
		return fmt.Errorf("go test: %w (%d failed)", werr, sum.Failed)
	case sum.Passed == 0:
		return errors.New("go test ran no test")
	}
	return nil
}

// roundDuration rounds an estimate to what a person reads: seconds below
// an hour, minutes above.
func roundDuration(d time.Duration) time.Duration {
	if d >= time.Hour {
		return d.Round(time.Minute)
	}
	return d.Round(time.Second)
}

// withBeforeTests is false in tests of Test itself, which fake the tree.
var withBeforeTests = true

// FuzzListFile names, in a package folder, the bounded fuzz runs of that
// package: one `go test -fuzz` command per line, # for comments.
const FuzzListFile = "fuzz.txt"

// boundedFuzz runs every command of every fuzz.txt in the tree (each a
// fuzzer for a few seconds) when CI is set or PQREPRO_FUZZ=1, before the
// tests, so that the test run's summary stays the last line. Otherwise it
// says how to run them.
func boundedFuzz(ctx context.Context, cfg Config) error {
	var lists []string
	err := filepath.WalkDir(cfg.Root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && p != cfg.Root && (strings.HasPrefix(d.Name(), ".") || d.Name() == "node_modules" || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if !d.IsDir() && d.Name() == FuzzListFile {
			lists = append(lists, p)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("find %s files: %w", FuzzListFile, err)
	}
	var cmds []string
	for _, l := range lists {
		b, err := os.ReadFile(l)
		if err != nil {
			return err
		}
		for _, line := range strings.Split(string(b), "\n") {
			if line = strings.TrimSpace(line); line != "" && !strings.HasPrefix(line, "#") {
				cmds = append(cmds, line)
			}
		}
	}
	if len(cmds) == 0 {
		return nil
	}
	if os.Getenv("CI") == "" && os.Getenv("PQREPRO_FUZZ") != "1" {
		cfg.printf("test: %d bounded fuzz runs (%s files) not run: set PQREPRO_FUZZ=1 (CI runs them)", len(cmds), FuzzListFile)
		return nil
	}
	for i, c := range cmds {
		cfg.printf("test: fuzz %d/%d: %s", i+1, len(cmds), c)
		cmd := exec.CommandContext(ctx, "sh", "-c", c)
		cmd.Dir = cfg.Root
		cmd.Stdout, cmd.Stderr = cfg.log(), cfg.log()
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("bounded fuzzing: %s: %w (the failing input is under the package's testdata/fuzz: commit it as a regression case)", c, err)
		}
	}
	return nil
}
