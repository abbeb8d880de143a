package interrupt

import (
	"bufio"
	"context"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"pqrepro/internal/treelock"
)

// TestHelperChain is not a test: run by TestKilledLauncherStopsTarget as
// `TEST -test.run=^TestHelperChain$ -- ROLE DIR`, it plays a launcher
// (starts the target as a plain child, prints its PID and waits) or the
// target (holds DIR's write lock until its Target context is cancelled, then
// cleans up: writes DIR/stopped and releases the lock).
func TestHelperChain(t *testing.T) {
	args := flag.Args()
	if len(args) != 2 {
		t.Skip("a helper process of TestKilledLauncherStopsTarget")
	}
	role, dir := args[0], args[1]
	switch role {
	case "launcher":
		c := exec.Command(os.Args[0], "-test.run=^TestHelperChain$", "--", "target", dir)
		c.Stderr = os.Stderr
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		os.Stdout.WriteString(strconv.Itoa(c.Process.Pid) + "\n")
		c.Wait()
	case "target":
		ctx, stop := Target(context.Background())
		defer stop()
		l, err := treelock.Acquire(ctx, dir, treelock.Write, "chain", treelock.Refuse, nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "ready"), nil, 0o644); err != nil {
			t.Fatal(err)
		}
		<-ctx.Done()
		os.WriteFile(filepath.Join(dir, "stopped"), nil, 0o644)
		l.Release()
	}
}

// TestKilledLauncherStopsTarget: SIGKILL to the process that started a
// target (which sets no parent-death signal) cancels the target's context,
// so it cleans up and releases the tree's lock; before the parent watch
// it ran on, holding the lock.
func TestKilledLauncherStopsTarget(t *testing.T) {
	dir := t.TempDir()
	launcher := exec.Command(os.Args[0], "-test.run=^TestHelperChain$", "--", "launcher", dir)
	out, err := launcher.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	launcher.Stderr = os.Stderr
	if err := launcher.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	target, err2 := strconv.Atoi(strings.TrimSpace(line))
	if err != nil || err2 != nil {
		launcher.Process.Kill()
		t.Fatalf("launcher printed %q: %v %v", line, err, err2)
	}
	defer syscall.Kill(target, syscall.SIGKILL) // if the test fails
	waitFor(t, "the target takes the lock", func() bool {
		_, err := os.Stat(filepath.Join(dir, "ready"))
		return err == nil
	})
	launcher.Process.Kill()
	launcher.Wait()
	waitFor(t, "the target cleans up after its launcher died", func() bool {
		_, err := os.Stat(filepath.Join(dir, "stopped"))
		return err == nil
	})
	waitFor(t, "the tree's lock is free", func() bool {
		l, err := treelock.Acquire(context.Background(), dir, treelock.Write, "check", treelock.Refuse, nil)
		if err != nil {
			return false
		}
		l.Release()
		return true
	})
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); !cond(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting until %s", what)
		}
	}
}
