package magemain

import (
	"bufio"
	"context"
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

// TestKilledGoRunStopsTheTarget: SIGKILL to `go run mage.go` (a CI time
// limit, `timeout -s KILL`) stops the whole chain: mage.go's process gets
// its parent-death signal, passes a SIGTERM on, and the target
// (testdata/spin, which computes while holding the tree's write lock)
// cleans up and releases the lock. It uses a small magefile in a
// temporary directory of testdata, not the real targets.
func TestKilledGoRunStopsTheTarget(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: compiles a magefile (about 10 s)")
	}
	src, err := os.ReadFile(filepath.Join("testdata", "spin", "magefile.go"))
	if err != nil {
		t.Fatal(err)
	}
	dir, err := os.MkdirTemp("testdata", "spin-") // inside the module: the magefile imports its packages
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if dir, err = filepath.Abs(dir); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "magefile.go"), src, 0o644); err != nil {
		t.Fatal(err)
	}
	c := exec.Command("go", "run", "mage.go", "-d", dir, "-w", dir, "spin")
	c.Dir = filepath.Join("..", "..")
	c.Stderr = os.Stderr
	out, err := c.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	r := bufio.NewReader(out)
	var target int
	for deadline := time.Now().Add(3 * time.Minute); target == 0; {
		line, err := r.ReadString('\n')
		if err != nil || time.Now().After(deadline) {
			c.Process.Kill()
			t.Fatalf("no \"spinning PID\" line from the target: %v", err)
		}
		if pid, ok := strings.CutPrefix(strings.TrimSpace(line), "spinning "); ok {
			target, _ = strconv.Atoi(pid)
		}
	}
	defer syscall.Kill(target, syscall.SIGKILL) // if the test fails
	go func() {                                 // the target's output goes on to a pipe whose reader is gone otherwise
		for {
			if _, err := r.ReadString('\n'); err != nil {
				return
			}
		}
	}()
	if err := c.Process.Signal(syscall.SIGKILL); err != nil { // go run itself
		t.Fatal(err)
	}
	c.Wait()
	deadline := time.Now().Add(20 * time.Second)
	for alive(target) {
		if time.Now().After(deadline) {
			t.Fatalf("the target (PID %d) still runs 20 s after go run was killed", target)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if _, err := os.Stat(filepath.Join(dir, ".cache", "spinning")); err == nil {
		t.Error("the target did not clean up (its marker file is still there)")
	}
	l, err := treelock.Acquire(context.Background(), dir, treelock.Write, "check", treelock.Refuse, nil)
	if err != nil {
		t.Fatalf("the tree's lock after the target stopped: %v", err)
	}
	l.Release()
}
