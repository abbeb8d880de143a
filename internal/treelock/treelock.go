// Package treelock keeps two commands from writing in one working tree at
// once. A command that writes (a build, a run, clean) takes the tree's
// write lock, an flock(2) on a file under .cache/locks/, and writes its PID,
// target and start time into the file so that a second command can say
// whom it waits for. The kernel drops an flock when its holder exits,
// however it exits, so a lock can never be left held by a dead process; a
// file that still names a dead PID is only a trace of a killed command
// (Inspect reports it) and the next command takes the lock over.
package treelock

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Dir is where the lock files live, relative to the tree's root. clean
// keeps it.
const Dir = ".cache/locks"

// Names of the lock files under Dir.
const (
	// Write is held by every target that writes in the tree.
	Write = "write.lock"
	// Compile is held by `go run mage.go` while Mage generates its main
	// file in the root and compiles the magefile.
	Compile = "compile.lock"
)

// Path is the lock file name under root.
func Path(root, name string) string { return filepath.Join(root, Dir, name) }

// A Policy says what Acquire does when another process holds the lock.
type Policy int

const (
	// Wait waits for the holder to finish, after one line saying so.
	Wait Policy = iota
	// Refuse returns a *BusyError at once.
	Refuse
)

// Holder is what a lock file says about the process holding it.
type Holder struct {
	PID    int
	Target string
	Start  time.Time
}

func (h Holder) String() string {
	return fmt.Sprintf("%s (PID %d, started %s)", h.Target, h.PID, h.Start.Local().Format("15:04:05"))
}

// Alive reports whether the holder's process still exists.
func (h Holder) Alive() bool {
	if h.PID <= 0 {
		return false
	}
	err := unix.Kill(h.PID, 0)
	return err == nil || errors.Is(err, unix.EPERM)
}

func (h Holder) encode() []byte {
	return fmt.Appendf(nil, "%d %s %s\n", h.PID, h.Start.UTC().Format(time.RFC3339), h.Target)
}

// parseHolder reads "PID START TARGET"; ok is false for an empty or
// garbled file (a lock released, or being written).
func parseHolder(b []byte) (h Holder, ok bool) {
	f := strings.SplitN(strings.TrimSpace(string(b)), " ", 3)
	if len(f) != 3 {
		return Holder{}, false
	}
	pid, err := strconv.Atoi(f[0])
	if err != nil || pid <= 0 {
		return Holder{}, false
	}
	t, err := time.Parse(time.RFC3339, f[1])
	if err != nil {
		return Holder{}, false
	}
	return Holder{PID: pid, Target: f[2], Start: t}, true
}

// BusyError is returned by Acquire with Refuse while another process
// holds the lock.
type BusyError struct {
	Target string // the target that asked
	Holder Holder
}

func (e *BusyError) Error() string {
	return fmt.Sprintf("%s refuses to start while %s writes in this tree: wait for it to finish (or stop it) and start again", e.Target, e.Holder)
}

// A Lock is a held lock; Release it when done.
type Lock struct {
	f    *os.File
	path string
}

// poll is how often Acquire retries while it waits.
var poll = 100 * time.Millisecond

// Acquire takes the lock file name under root for target. While another
// process holds it, Acquire waits (printing one line to log, which may be
// nil) or refuses, per p; waiting ends early with ctx's error.
func Acquire(ctx context.Context, root, name, target string, p Policy, log io.Writer) (*Lock, error) {
	path := Path(root, name)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	said := false
	unknown := 0 // polls that found the lock held but no live holder named
	for {
		l, h, err := try(path)
		if err != nil {
			return nil, err
		}
		if l != nil {
			if err := l.write(Holder{PID: os.Getpid(), Target: target, Start: time.Now()}); err != nil {
				l.Release()
				return nil, err
			}
			return l, nil
		}
		// Held. A holder that has just taken the lock may not have
		// written its name yet, and Inspect holds it for an instant
		// without writing: give either a moment before judging.
		if !h.Alive() && unknown < 10 {
			unknown++
		} else if p == Refuse {
			return nil, &BusyError{Target: target, Holder: h}
		} else if !said && log != nil {
			fmt.Fprintf(log, "%s: waiting for %s ...\n", target, h)
			said = true
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("%s: stopped while waiting for %s: %w", target, h, ctx.Err())
		case <-time.After(poll):
		}
	}
}

// try opens the lock file and takes the lock without blocking. It returns
// the lock, or the holder the file names when another process holds it.
func try(path string) (*Lock, Holder, error) {
	for {
		f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
		if err != nil {
			return nil, Holder{}, fmt.Errorf("lock %s: %w", path, err)
		}
		if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
			b, _ := io.ReadAll(f)
			f.Close()
			if errors.Is(err, unix.EWOULDBLOCK) {
				h, _ := parseHolder(b)
				return nil, h, nil
			}
			return nil, Holder{}, fmt.Errorf("lock %s: %w", path, err)
		}
		// clean may have removed the file (or a copy replaced it) between
		// open and flock: a lock on an unlinked file guards nothing.
		var fst, pst unix.Stat_t
		if unix.Fstat(int(f.Fd()), &fst) == nil && unix.Stat(path, &pst) == nil && fst.Ino == pst.Ino && fst.Dev == pst.Dev {
			return &Lock{f: f, path: path}, Holder{}, nil
		}
		f.Close()
	}
}

func (l *Lock) write(h Holder) error {
	if err := l.f.Truncate(0); err != nil {
		return fmt.Errorf("lock %s: %w", l.path, err)
	}
	if _, err := l.f.WriteAt(h.encode(), 0); err != nil {
		return fmt.Errorf("lock %s: %w", l.path, err)
	}
	return nil
}

// Release empties the lock file (so that it names no holder) and drops
// the lock. It is safe to call more than once.
func (l *Lock) Release() {
	if l == nil || l.f == nil {
		return
	}
	l.f.Truncate(0)
	l.f.Close() // drops the flock
	l.f = nil
}

// State is what Inspect finds.
type State int

const (
	// Free: no holder named.
	Free State = iota
	// Held: a live process holds the lock.
	Held
	// Stale: the file names a process that died without releasing it
	// (killed); the next Acquire takes it over.
	Stale
)

// Inspect reports the state of the lock file name under root without
// waiting. It never changes the file.
func Inspect(root, name string) (State, Holder, error) {
	path := Path(root, name)
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return Free, Holder{}, nil
	}
	if err != nil {
		return Free, Holder{}, fmt.Errorf("lock %s: %w", path, err)
	}
	h, ok := parseHolder(b)
	if !ok {
		return Free, Holder{}, nil
	}
	f, err := os.Open(path)
	if err != nil {
		return Free, Holder{}, fmt.Errorf("lock %s: %w", path, err)
	}
	defer f.Close()
	// A shared probe: it fails while a writer holds the lock.
	if err := unix.Flock(int(f.Fd()), unix.LOCK_SH|unix.LOCK_NB); errors.Is(err, syscall.EWOULDBLOCK) {
		return Held, h, nil
	}
	if h.Alive() {
		// Released between our read and the probe: not a leftover.
		return Free, Holder{}, nil
	}
	return Stale, h, nil
}
