package pipeline

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"pqrepro/internal/repro"
	"pqrepro/internal/treelock"
)

// blockingStudy replaces fakeStudy's experiment by one that starts a run,
// says so on started and waits for ctx, as a real runner does.
func blockingStudy(t *testing.T) (Config, chan struct{}) {
	t.Helper()
	cfg, _, _ := fakeStudy(t)
	started := make(chan struct{})
	studies[0].Requirements = nil
	studies[0].Run = func(ctx context.Context, cfg Config, _, _ string) (string, error) {
		r, err := repro.NewRun(filepath.Join(cfg.Root, "data"), "fake", cfg.Profile, time.Now())
		if err != nil {
			return "", err
		}
		defer r.Abort()
		close(started)
		<-ctx.Done()
		return "", ctx.Err()
	}
	return cfg, started
}

// Every writing target cancels its context on SIGINT and SIGTERM: the run
// takes its cleanup path and the lock is released.
func TestLockedStopsOnSignals(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		t.Run(sig.String(), func(t *testing.T) {
			cfg, started := blockingStudy(t)
			done := make(chan error, 1)
			go func() {
				done <- Locked(context.Background(), cfg, "fake:run", func(ctx context.Context, cfg Config) error { return RunStudy(ctx, cfg, "fake") })
			}()
			select {
			case <-started:
			case err := <-done:
				t.Fatalf("the run ended before it started: %v", err)
			}
			syscall.Kill(os.Getpid(), sig)
			select {
			case err := <-done:
				if !errors.Is(err, context.Canceled) {
					t.Errorf("Locked after %v: %v, want context.Canceled", sig, err)
				}
			case <-time.After(time.Minute):
				t.Fatalf("%v did not stop the run", sig)
			}
			if m, _ := filepath.Glob(filepath.Join(cfg.Root, "data", "fake", "*")); len(m) > 0 {
				t.Errorf("left in data/fake: %v", m)
			}
			if m, _ := filepath.Glob(filepath.Join(cfg.Root, "data", "fake", ".incomplete-*")); len(m) > 0 {
				t.Errorf("left in data/fake: %v", m)
			}
			if st, h, _ := treelock.Inspect(cfg.Root, treelock.Write); st != treelock.Free {
				t.Errorf("write lock after the run: %v %v", st, h)
			}
		})
	}
}

func TestLockedRunsRefuseBuildsWait(t *testing.T) {
	cfg, _, _ := fakeStudy(t)
	log := make(lines, 4)
	cfg.Log = log
	held, err := treelock.Acquire(context.Background(), cfg.Root, treelock.Write, "build", treelock.Wait, nil)
	if err != nil {
		t.Fatal(err)
	}
	ran := false
	err = Locked(context.Background(), cfg, "tls:run", func(context.Context, Config) error { ran = true; return nil })
	var be *treelock.BusyError
	if !errors.As(err, &be) || ran || be.Holder.Target != "build" {
		t.Errorf("tls:run while build holds the lock: ran %v, %v", ran, err)
	}
	done := make(chan error, 1)
	go func() {
		done <- Locked(context.Background(), cfg, "paper", func(context.Context, Config) error { ran = true; return nil })
	}()
	if line := <-log; !strings.HasPrefix(line, "paper: waiting for build (PID") {
		t.Errorf("paper while build holds the lock says %q", line)
	}
	held.Release()
	if err := <-done; err != nil || !ran {
		t.Errorf("paper after build: ran %v, %v", ran, err)
	}
}

// deadPID is a PID no process has: above the kernel's maximum.
func deadPID(t *testing.T) int {
	t.Helper()
	b, err := os.ReadFile("/proc/sys/kernel/pid_max")
	if err != nil {
		t.Skipf("no pid_max: %v", err)
	}
	var max int
	fmt.Sscan(string(b), &max)
	return max + 1
}

func TestLeftoversOfAKill(t *testing.T) {
	cfg, _, _ := fakeStudy(t)
	if l := FindLeftovers(cfg); len(l.Lines()) != 0 {
		t.Fatalf("leftovers in a fresh tree: %v", l.Lines())
	}
	for _, d := range []string{".stage-123", "data/fake/.incomplete-20260101T000000Z-quick-1"} {
		os.MkdirAll(filepath.Join(cfg.Root, d), 0o755)
	}
	os.MkdirAll(filepath.Join(cfg.Root, treelock.Dir), 0o755)
	dead := fmt.Sprintf("%d 2026-01-02T03:04:05Z net:run\n", deadPID(t))
	os.WriteFile(treelock.Path(cfg.Root, treelock.Write), []byte(dead), 0o644)
	out := strings.Join(FindLeftovers(cfg).Lines(), "\n")
	for _, want := range []string{"`go run mage.go clean` removes them", ".stage-123", "data/fake/.incomplete-20260101T000000Z-quick-1", "write.lock names net:run (PID"} {
		if !strings.Contains(out, want) {
			t.Errorf("leftovers do not say %q:\n%s", want, out)
		}
	}
	var log bytes.Buffer
	cfg.Log = &log
	if err := Status(context.Background(), cfg); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(log.String(), out) {
		t.Errorf("status does not report the leftovers:\n%s", log.String())
	}
}

// While another process writes, its folders are work in progress, not
// leftovers.
func TestLeftoversNotWhileAWriterRuns(t *testing.T) {
	if _, err := exec.LookPath("flock"); err != nil {
		t.Skipf("flock(1) holds the lock from another process: %v", err)
	}
	cfg, _, _ := fakeStudy(t)
	os.MkdirAll(filepath.Join(cfg.Root, "data/fake/.incomplete-x"), 0o755)
	os.MkdirAll(filepath.Join(cfg.Root, treelock.Dir), 0o755)
	path := treelock.Path(cfg.Root, treelock.Write)
	c := exec.Command("flock", "-n", cfg.Root, "sleep", "30") // the write lock is an flock on the root

	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { c.Process.Kill(); c.Wait() }()
	os.WriteFile(path, fmt.Appendf(nil, "%d 2026-01-02T03:04:05Z build\n", c.Process.Pid), 0o644)
	for i := 0; ; i++ {
		if st, _, _ := treelock.Inspect(cfg.Root, treelock.Write); st == treelock.Held {
			break
		}
		if i == 2000 {
			t.Fatal("flock(1) did not take the write lock in 10 s")
		}
		time.Sleep(5 * time.Millisecond)
	}
	l := FindLeftovers(cfg)
	if len(l.Incomplete) != 0 || !strings.HasPrefix(l.Writer, "build (PID ") {
		t.Errorf("with a writer running: %+v", l)
	}
}

// lines is a log that hands each write to the test.
type lines chan string

func (l lines) Write(p []byte) (int, error) { l <- string(p); return len(p), nil }

func TestRunsReportLeftoversWhenTheyStart(t *testing.T) {
	cfg, log, _ := fakeStudy(t)
	os.MkdirAll(filepath.Join(cfg.Root, "data/fake/.incomplete-x"), 0o755)
	for target, want := range map[string]bool{"tls:run": true, "quick": true, "build": false} {
		log.Reset()
		if err := Locked(context.Background(), cfg, target, func(context.Context, Config) error { return nil }); err != nil {
			t.Fatal(err)
		}
		if got := strings.Contains(log.String(), "data/fake/.incomplete-x"); got != want {
			t.Errorf("%s reports leftovers: %v, want %v\n%s", target, got, want, log)
		}
	}
}

// TestVerifyLeftovers is issue 44's item 5: the scratch tree of a killed
// verify (.cache/verify-<PID>-*, its PID dead) is listed by status and
// removed by clean; a running verify's (its PID alive) is neither, for
// verify takes no lock and may run beside clean.
func TestVerifyLeftovers(t *testing.T) {
	cfg, log, _ := fakeStudy(t)
	dead := filepath.Join(".cache", fmt.Sprintf("verify-%d-abc", deadPID(t)))
	live := filepath.Join(".cache", fmt.Sprintf("verify-%d-def", os.Getpid()))
	for _, d := range []string{dead, live} {
		if err := os.MkdirAll(filepath.Join(cfg.Root, d, "data"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	out := strings.Join(FindLeftovers(cfg).Lines(), "\n")
	if !strings.Contains(out, dead) || !strings.Contains(out, "`go run mage.go clean` removes them") {
		t.Errorf("status does not list the killed verify's tree %s:\n%s", dead, out)
	}
	if strings.Contains(out, live) {
		t.Errorf("status lists the running verify's tree %s:\n%s", live, out)
	}
	if err := Clean(cfg); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(cfg.Root, dead)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("clean left the killed verify's tree: %v\n%s", err, log)
	}
	if _, err := os.Stat(filepath.Join(cfg.Root, live)); err != nil {
		t.Errorf("clean removed the running verify's tree: %v\n%s", err, log)
	}
}
