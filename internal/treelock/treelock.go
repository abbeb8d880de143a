// Package treelock keeps two commands from writing in one working tree at
// once. A command that writes (a build, a run, clean) takes the tree's
// write lock, an flock(2) on the tree's root directory itself, and writes
// its PID, target and start time into a record file under .cache/locks/
// so that a second command can say whom it waits for. The flock is on the
// root, not on the record, because a file can be removed from under its
// holder: deleting .cache/locks (by hand, or an old clean) would leave the
// holder locking an unlinked file and let a second writer in. A record
// that is missing or unreadable while the lock is held names an unknown
// holder, with the record's path. The kernel drops an flock when its holder exits,
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
	"unicode"

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

// Path is the lock file name under root: the holder's record.
func Path(root, name string) string { return filepath.Join(root, Dir, name) }

// flockPath is what the flock is taken on. It is the root directory for the
// write lock (it cannot be removed from under its holder while the tree
// exists), the record file itself for the compile lock (held for the
// seconds of a compile, and by a different process than the write lock
// its compiled magefile then takes, so it cannot share the root).
func flockPath(root, name string) string {
	if name == Write {
		return root
	}
	return Path(root, name)
}

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
	// Record is set, and the rest zero, when the lock is held but its
	// record (this path) is missing or cannot be read.
	Record string
}

func (h Holder) String() string {
	if h.PID <= 0 {
		rec := h.Record
		if rec == "" {
			rec = "the lock's record"
		}
		return "an unknown command (its record " + printable(rec) + " is missing or unreadable)"
	}
	return fmt.Sprintf("%s (PID %d, started %s)", printable(h.Target), h.PID, h.Start.Local().Format("15:04:05"))
}

// printable returns s as it is when every rune prints, else quoted with
// Go escapes. A record is a file anyone with write access to the tree can
// edit, and its text reaches terminals (status, the waiting line), where
// escape sequences would act instead of showing.
func printable(s string) string {
	for _, r := range s {
		if !unicode.IsPrint(r) {
			return strconv.Quote(s)
		}
	}
	return s
}

// Alive reports whether the holder's process still exists.
func (h Holder) Alive() bool { return ProcessAlive(h.PID) }

// ProcessAlive reports whether a process with that PID exists (signal 0
// reaches it; a process of another user, EPERM, counts). It is how the
// tree's locks, and the leftovers of killed runs named after their PID
// (network namespaces, temporary folders), tell a dead owner from a
// live one.
func ProcessAlive(pid int) bool {
	if pid <= 0 {
		return false
	}
	err := unix.Kill(pid, 0)
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
	f    *os.File // holds the flock
	rec  *os.File // the holder's record (f itself for a file lock)
	path string   // rec's path
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
		l, h, err := try(root, name)
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

// try takes the lock without blocking. It returns the lock, or the
// holder the record names when another process holds it.
func try(root, name string) (*Lock, Holder, error) {
	path := Path(root, name)
	if flockPath(root, name) == root {
		d, err := os.Open(root)
		if err != nil {
			return nil, Holder{}, fmt.Errorf("lock %s: %w", root, err)
		}
		if err := unix.Flock(int(d.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
			d.Close()
			if errors.Is(err, unix.EWOULDBLOCK) {
				return nil, readHolder(path), nil
			}
			return nil, Holder{}, fmt.Errorf("lock %s: %w", root, err)
		}
		rec, err := openRecord(path, os.O_RDWR|os.O_CREATE)
		if err != nil {
			d.Close()
			return nil, Holder{}, err
		}
		return &Lock{f: d, rec: rec, path: path}, Holder{}, nil
	}
	for {
		f, err := openRecord(path, os.O_RDWR|os.O_CREATE)
		if err != nil {
			return nil, Holder{}, err
		}
		if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
			b, _ := io.ReadAll(io.LimitReader(f, maxRecord))
			f.Close()
			if errors.Is(err, unix.EWOULDBLOCK) {
				h, ok := parseHolder(b)
				if !ok {
					h = Holder{Record: path}
				}
				return nil, h, nil
			}
			return nil, Holder{}, fmt.Errorf("lock %s: %w", path, err)
		}
		// clean may have removed the file (or a copy replaced it) between
		// open and flock: a lock on an unlinked file guards nothing.
		var fst, pst unix.Stat_t
		if unix.Fstat(int(f.Fd()), &fst) == nil && unix.Stat(path, &pst) == nil && fst.Ino == pst.Ino && fst.Dev == pst.Dev {
			return &Lock{f: f, rec: f, path: path}, Holder{}, nil
		}
		f.Close()
	}
}

// maxRecord bounds what is read of a record: "PID START TARGET" takes
// well under a kilobyte; a larger file is garbled.
const maxRecord = 4096

// openRecord opens the record at path without following a symbolic link
// and refuses anything but a regular file. A link planted at
// .cache/locks/write.lock would have the lock truncate and write its
// target, and a FIFO or device would block or never end a read.
func openRecord(path string, flag int) (*os.File, error) {
	f, err := os.OpenFile(path, flag|unix.O_NOFOLLOW|unix.O_NONBLOCK, 0o644)
	if errors.Is(err, unix.ELOOP) {
		to, _ := os.Readlink(path)
		return nil, fmt.Errorf("lock %s is a symbolic link (to %s), not a lock record: remove it and start again (the lock writes its record there)", path, printable(to))
	}
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		f.Close()
		return nil, fmt.Errorf("lock %s is not a regular file: remove it and start again", path)
	}
	return f, nil
}

// readRecord reads at most maxRecord bytes of the record at path.
func readRecord(path string) ([]byte, error) {
	f, err := openRecord(path, os.O_RDONLY)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, maxRecord))
}

// readHolder reads the record at path; a missing or garbled one names an
// unknown holder with the path.
func readHolder(path string) Holder {
	b, err := readRecord(path)
	if err != nil {
		return Holder{Record: path}
	}
	h, ok := parseHolder(b)
	if !ok {
		return Holder{Record: path}
	}
	return h
}

func (l *Lock) write(h Holder) error {
	if err := l.rec.Truncate(0); err != nil {
		return fmt.Errorf("lock %s: %w", l.path, err)
	}
	if _, err := l.rec.WriteAt(h.encode(), 0); err != nil {
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
	l.rec.Truncate(0)
	if l.rec != l.f {
		l.rec.Close()
	}
	l.f.Close() // drops the flock
	l.f, l.rec = nil, nil
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
	b, err := readRecord(path)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return Free, Holder{}, err
	}
	h, ok := parseHolder(b)
	if !ok {
		h = Holder{Record: path}
	}
	if !ok && flockPath(root, name) == path && err != nil {
		return Free, Holder{}, nil // no file, so no flock on it
	}
	f, err := os.Open(flockPath(root, name))
	if err != nil {
		return Free, Holder{}, fmt.Errorf("lock %s: %w", flockPath(root, name), err)
	}
	defer f.Close()
	// A shared probe: it fails while a writer holds the lock.
	if err := unix.Flock(int(f.Fd()), unix.LOCK_SH|unix.LOCK_NB); errors.Is(err, syscall.EWOULDBLOCK) {
		return Held, h, nil
	}
	if !ok || h.Alive() {
		// No holder named, or released between our read and the probe:
		// not a leftover.
		return Free, Holder{}, nil
	}
	return Stale, h, nil
}
