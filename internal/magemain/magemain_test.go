package magemain

import (
	"bufio"
	"bytes"
	"errors"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The stopper passes the first signal on as SIGTERM (also one that came
// before the magefile started), treats a repeat within a second as the
// same stop, says so on the second and kills the group on the third.
func TestStopper(t *testing.T) {
	c := exec.Command("sh", "-c", `trap 'echo T' TERM; echo ready; while :; do sleep 0.01; done`)
	c.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	out, err := c.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Start(); err != nil {
		t.Skipf("no sh to play the magefile: %v", err)
	}
	defer func() { syscall.Kill(-c.Process.Pid, syscall.SIGKILL); c.Wait() }()
	lines := bufio.NewScanner(out)
	next := func(want string) {
		t.Helper()
		if !lines.Scan() || lines.Text() != want {
			t.Fatalf("the magefile printed %q (%v), want %q", lines.Text(), lines.Err(), want)
		}
	}
	next("ready")

	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clock := t0
	var msgs bytes.Buffer
	s := &stopper{stderr: &msgs, now: func() time.Time { return clock }}
	s.signal(syscall.SIGINT) // before the start
	s.started(c.Process)
	next("T")
	clock = t0.Add(500 * time.Millisecond)
	s.signal(syscall.SIGTERM) // the same stop, delivered twice
	clock = t0.Add(2 * time.Second)
	s.signal(syscall.SIGINT)
	next("T")
	if !strings.Contains(msgs.String(), "still cleaning up") || strings.Count(msgs.String(), "\n") != 1 {
		t.Errorf("after the second signal: %q", msgs.String())
	}
	clock = t0.Add(3 * time.Second)
	s.signal(syscall.SIGINT)
	err = c.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Errorf("after the third signal the magefile ended with %v, want SIGKILL", err)
	}
	if lines.Scan() {
		t.Errorf("a third SIGTERM reached the magefile: %q (the repeat was passed on)", lines.Text())
	}
	if got := exitCode(err, &msgs); got != 128+int(syscall.SIGKILL) {
		t.Errorf("exit code %d, want %d", got, 128+int(syscall.SIGKILL))
	}
}
