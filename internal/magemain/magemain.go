// Package magemain is the body of mage.go, the zero-install entry point
// (`go run mage.go <target>`). It is Mage's own main (mage.Main) with the
// two things Mage leaves out when several commands share a tree or a
// supervisor stops one:
//
//   - Compiling under a lock. Mage writes mage_output_file.go into the
//     root, compiles, and deletes it; two commands compiling at once
//     delete each other's file ("error compiling magefiles"). Here the
//     compile runs under .cache/locks/compile.lock into .cache/mage/mage,
//     and the compiled magefile is started before the lock is released
//     (go build replaces its output by rename, so a running binary is
//     never rewritten).
//
//   - One way to stop. SIGINT, SIGTERM and SIGHUP to this process, the
//     death of its parent (`go run` exits on SIGTERM without passing it
//     on: PR_SET_PDEATHSIG turns that into SIGTERM here) and Mage's -t
//     timeout all become one SIGTERM to the compiled magefile, which the
//     targets turn into a cancelled context and their cleanup path.
//     Nothing waits on a fixed cleanup window: Mage's own (5 s, hard-coded
//     in its generated main for SIGINT) never sees these signals, because
//     the magefile runs in its own process group. The magefile dies with
//     this process (PR_SET_PDEATHSIG), and whatever it leaves running in
//     its group is killed when it exits.
//
// A second signal is passed on again; the third kills the magefile's
// process group at once, which may leave the leftovers that `mage status`
// reports.
package magemain

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"sync"
	"syscall"
	"time"

	"github.com/magefile/mage/mage"
	"golang.org/x/sys/unix"

	"pqrepro/internal/treelock"
)

// Main runs mage with the command-line arguments and returns the exit code.
func Main() int {
	ppid := os.Getppid()
	unix.Prctl(unix.PR_SET_PDEATHSIG, uintptr(unix.SIGTERM), 0, 0, 0)
	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, os.Interrupt, unix.SIGTERM, unix.SIGHUP)
	// The magefile runs in a process group of its own, in the background
	// of a terminal: with these ignored (and inherited as ignored) it may
	// write to the terminal under `stty tostop` and change its settings
	// instead of being stopped.
	signal.Ignore(unix.SIGTTOU, unix.SIGTTIN)
	if os.Getppid() != ppid { // the parent died before the prctl
		sigs <- unix.SIGTERM
	}
	return run(os.Args[1:], sigs, os.Stdin, os.Stdout, os.Stderr)
}

func run(args []string, sigs chan os.Signal, stdin io.Reader, stdout, stderr io.Writer) int {
	inv, cmd, err := mage.Parse(io.Discard, io.Discard, args)
	if err != nil || cmd != mage.None || inv.List || inv.Help || inv.Autocomplete {
		// Nothing runs a target: Mage's own path (which prints its usage
		// and errors). -compile writes the main file too.
		if cmd == mage.CompileStatic {
			l, err := compileLock(inv.Dir)
			if err != nil {
				fmt.Fprintln(stderr, "Error:", err)
				return 1
			}
			defer l.Release()
		}
		signal.Reset(os.Interrupt, unix.SIGTERM, unix.SIGHUP)
		return mage.ParseAndRun(stdout, stderr, stdin, args)
	}
	inv.Stdin, inv.Stdout, inv.Stderr = stdin, stdout, stderr

	s := &stopper{stderr: stderr}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		for sig := range sigs {
			cancel()
			s.signal(sig)
		}
	}()

	// The child's Pdeathsig fires when the thread that started it exits;
	// keep this goroutine on one thread until the child is gone.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()

	l, err := compileLock(inv.Dir)
	if err != nil {
		fmt.Fprintln(stderr, "Error:", err)
		return 1
	}
	exe := filepath.Join(dirOf(inv), ".cache", "mage", "mage")
	code := compile(inv, exe)
	if code != 0 || ctx.Err() != nil {
		l.Release()
		if code == 0 {
			fmt.Fprintln(stderr, "mage: stopped before the targets started")
			code = 1
		}
		return code
	}
	c := command(inv, exe)
	err = c.Start()
	l.Release()
	if err != nil {
		fmt.Fprintf(stderr, "Error: start the compiled magefile: %v\n", err)
		return 1
	}
	s.started(c.Process)
	if inv.Timeout > 0 {
		t := time.AfterFunc(inv.Timeout, func() {
			fmt.Fprintf(stderr, "mage: timeout %v: stopping the targets\n", inv.Timeout)
			sigs <- unix.SIGTERM
		})
		defer t.Stop()
	}
	err = c.Wait()
	unix.Kill(-c.Process.Pid, unix.SIGKILL) // what it left running in its group
	s.done()
	return exitCode(err, stderr)
}

func dirOf(inv mage.Invocation) string {
	if inv.Dir == "" {
		return "."
	}
	return inv.Dir
}

func compileLock(dir string) (*treelock.Lock, error) {
	if dir == "" {
		dir = "."
	}
	// No message: the wait is another command's compile, a second or two
	// on a warm cache.
	return treelock.Acquire(context.Background(), dir, treelock.Compile, "compile", treelock.Wait, nil)
}

// compile generates Mage's main file and compiles the magefile into exe;
// Mage prints the errors.
func compile(inv mage.Invocation, exe string) int {
	if err := os.MkdirAll(filepath.Dir(exe), 0o755); err != nil {
		fmt.Fprintln(inv.Stderr, "Error:", err)
		return 1
	}
	inv.CompileOut = exe
	inv.Force = true     // never run an existing binary from Invoke
	inv.HashFast = false // ... which HashFast would do
	return mage.Invoke(inv)
}

// command is the compiled magefile's command line, as mage.RunCompiled
// builds it, in a process group of its own.
func command(inv mage.Invocation, exe string) *exec.Cmd {
	c := exec.Command(exe, inv.Args...)
	c.Stdin, c.Stdout, c.Stderr = inv.Stdin, inv.Stdout, inv.Stderr
	c.Dir = dirOf(inv)
	if inv.WorkDir != "" {
		c.Dir = inv.WorkDir
	}
	c.Env = os.Environ()
	for _, e := range []struct {
		on  bool
		env string
	}{
		{inv.Verbose, "MAGEFILE_VERBOSE=1"},
		{inv.Debug, "MAGEFILE_DEBUG=1"},
		{inv.GoCmd != "", "MAGEFILE_GOCMD=" + inv.GoCmd},
	} {
		if e.on {
			c.Env = append(c.Env, e.env)
		}
	}
	c.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
	return c
}

// stopper passes signals on to the compiled magefile.
type stopper struct {
	stderr io.Writer
	mu     sync.Mutex
	p      *os.Process
	n      int // signals received
	first  time.Time
	now    func() time.Time // nil is time.Now
	exited bool
}

// started records the magefile's process; a signal that came while it
// was starting is passed on now.
func (s *stopper) started(p *os.Process) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.p = p
	if s.n > 0 {
		p.Signal(unix.SIGTERM)
	}
}

func (s *stopper) done() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.exited = true
}

func (s *stopper) signal(sig os.Signal) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := time.Now()
	if s.now != nil {
		now = s.now()
	}
	if s.n > 0 && now.Sub(s.first) < time.Second {
		// One stop, delivered twice: Ctrl-C reaches this process and `go
		// run` (which may pass it on), SIGTERM to `go run` arrives again
		// as the parent-death signal.
		return
	}
	if s.n == 0 {
		s.first = now
	}
	s.n++
	if s.p == nil || s.exited {
		return
	}
	switch {
	case s.n >= 3:
		fmt.Fprintf(s.stderr, "mage: %v again: killing the targets (PID %d); `go run mage.go status` lists what they leave\n", sig, s.p.Pid)
		unix.Kill(-s.p.Pid, unix.SIGKILL)
	case s.n == 2:
		fmt.Fprintf(s.stderr, "mage: %v: still cleaning up (PID %d); a third signal kills it\n", sig, s.p.Pid)
		s.p.Signal(unix.SIGTERM)
	default:
		s.p.Signal(unix.SIGTERM)
	}
}

// exitCode is the compiled magefile's exit status, 128+n for signal n.
func exitCode(err error, stderr io.Writer) int {
	if err == nil {
		return 0
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return 128 + int(ws.Signal())
		}
		return ee.ExitCode()
	}
	fmt.Fprintf(stderr, "Error: run the compiled magefile: %v\n", err)
	return 1
}
