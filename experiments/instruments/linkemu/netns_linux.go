package linkemu

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"pqrepro/internal/treelock"
)

// DefaultNetnsDir is where iproute2 keeps named network namespaces.
const DefaultNetnsDir = "/run/netns"

// netns is one network namespace the link created. fd keeps it alive and is
// what setns(2) uses; path is its bind mount (empty for anonymous ones).
type netns struct {
	name string
	path string
	fd   int
}

// onThread runs fn in a new goroutine locked to its OS thread, so that fn
// may change the thread's namespaces. If fn returns with keep == false the
// thread is unlocked and reused; otherwise (the thread could not be put
// back into its original namespace) the goroutine exits still locked and Go
// destroys the thread, so no other goroutine ever runs in a foreign
// namespace by accident. A panic in fn is re-raised in the caller.
func onThread(fn func() (keep bool, err error)) error {
	type result struct {
		err   error
		panic any
	}
	done := make(chan result, 1)
	go func() {
		runtime.LockOSThread()
		keep := true // a panic leaves the thread locked: it dies
		defer func() {
			if p := recover(); p != nil {
				done <- result{panic: p}
			}
		}()
		var err error
		keep, err = fn()
		if !keep {
			runtime.UnlockOSThread()
		}
		done <- result{err: err}
	}()
	r := <-done
	if r.panic != nil {
		panic(r.panic)
	}
	return r.err
}

// threadNetnsPath is the current thread's (not the process's) namespace:
// /proc/self/ns/net would be the main thread's.
const threadNetnsPath = "/proc/thread-self/ns/net"

// inNetns runs fn on a locked OS thread inside the namespace nsfd and then
// returns the thread to its original namespace.
func inNetns(nsfd int, fn func() error) error {
	return onThread(func() (bool, error) {
		orig, err := unix.Open(threadNetnsPath, unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			return false, fmt.Errorf("open %s: %w", threadNetnsPath, err)
		}
		defer unix.Close(orig)
		if err := unix.Setns(nsfd, unix.CLONE_NEWNET); err != nil {
			return false, fmt.Errorf("setns into link namespace: %w (needs CAP_SYS_ADMIN in the namespace's owning user namespace)", err)
		}
		ferr := fn()
		if err := unix.Setns(orig, unix.CLONE_NEWNET); err != nil {
			return true, errors.Join(ferr, fmt.Errorf("setns back to the original namespace: %w (thread discarded)", err))
		}
		return false, ferr
	})
}

// newNetns creates a network namespace. With dir != "" it is bind-mounted
// at dir/name like "ip netns add" does; setup then runs inside it (on the
// creating thread) before the thread returns to its original namespace.
func newNetns(dir, name string, setup func() error) (ns *netns, err error) {
	ns = &netns{name: name, fd: -1}
	if dir != "" {
		if err := prepareNetnsDir(dir); err != nil {
			return nil, err
		}
		ns.path = filepath.Join(dir, name)
		f, err := os.OpenFile(ns.path, os.O_RDONLY|os.O_CREATE|os.O_EXCL, 0)
		if err != nil {
			if errors.Is(err, os.ErrExist) {
				return nil, fmt.Errorf("create namespace %s: it already exists (a leftover? run 'pqrepro linkemu clean')", ns.path)
			}
			return nil, fmt.Errorf("create namespace mount point: %w%s", err, permHint(err, dir))
		}
		f.Close()
	}
	defer func() {
		if err != nil {
			ns.remove()
		}
	}()
	err = onThread(func() (bool, error) {
		orig, err := unix.Open(threadNetnsPath, unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			return false, fmt.Errorf("open %s: %w", threadNetnsPath, err)
		}
		defer unix.Close(orig)
		if err := unix.Unshare(unix.CLONE_NEWNET); err != nil {
			return false, fmt.Errorf("unshare(CLONE_NEWNET): %w (run as root, or inside 'unshare -Urnm')", err)
		}
		ferr := func() error {
			fd, err := unix.Open(threadNetnsPath, unix.O_RDONLY|unix.O_CLOEXEC, 0)
			if err != nil {
				return fmt.Errorf("open new namespace: %w", err)
			}
			ns.fd = fd
			if ns.path != "" {
				if err := unix.Mount(threadNetnsPath, ns.path, "none", unix.MS_BIND, ""); err != nil {
					return fmt.Errorf("bind-mount namespace at %s: %w%s", ns.path, err, permHint(err, ns.path))
				}
			}
			return setup()
		}()
		if err := unix.Setns(orig, unix.CLONE_NEWNET); err != nil {
			return true, errors.Join(ferr, fmt.Errorf("setns back to the original namespace: %w", err))
		}
		return false, ferr
	})
	if err != nil {
		return ns, fmt.Errorf("namespace %s: %w", name, err)
	}
	return ns, nil
}

// prepareNetnsDir makes dir a shared mount point, as iproute2 does, so that
// namespaces mounted there are visible to "ip netns exec" in other mount
// namespaces.
func prepareNetnsDir(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("create %s: %w%s", dir, err, permHint(err, dir))
	}
	err := unix.Mount("", dir, "none", unix.MS_SHARED|unix.MS_REC, "")
	if errors.Is(err, unix.EINVAL) { // not a mount point yet: bind it onto itself
		if err = unix.Mount(dir, dir, "none", unix.MS_BIND|unix.MS_REC, ""); err == nil {
			err = unix.Mount("", dir, "none", unix.MS_SHARED|unix.MS_REC, "")
		}
	}
	if err != nil {
		return fmt.Errorf("make %s a shared mount: %w%s", dir, err, permHint(err, dir))
	}
	return nil
}

func permHint(err error, path string) string {
	if errors.Is(err, unix.EPERM) || errors.Is(err, unix.EACCES) || errors.Is(err, unix.EROFS) {
		return fmt.Sprintf(" (not allowed to write or mount at %s: run as root; inside 'unshare -Urnm' "+
			"mount a tmpfs there first or set Options.NetnsDir / -netns-dir to a directory you own; "+
			"or use Options.Anonymous / -anonymous for unnamed namespaces)", path)
	}
	return ""
}

// remove unmounts and deletes the namespace's name and closes its fd; the
// kernel frees the namespace when nothing else refers to it.
func (ns *netns) remove() error {
	var errs []error
	if ns.fd >= 0 {
		unix.Close(ns.fd)
		ns.fd = -1
	}
	if ns.path != "" {
		errs = append(errs, removeNetnsPath(ns.path))
		ns.path = ""
	}
	return errors.Join(errs...)
}

func removeNetnsPath(path string) error {
	if err := unix.Unmount(path, unix.MNT_DETACH); err != nil && !errors.Is(err, unix.EINVAL) && !errors.Is(err, unix.ENOENT) {
		return fmt.Errorf("unmount %s: %w", path, err)
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("remove %s: %w", path, err)
	}
	return nil
}

// CleanReport lists what Clean removed and what it left alone.
type CleanReport struct {
	Removed []string // namespace names removed
	InUse   []string // names of a still-running process, left alone
}

// Clean removes the namespaces named prefix* in dir (DefaultNetnsDir when
// empty) that were left behind by a process that is no longer running. The
// creator's PID is the number after the prefix. With force it removes them
// all, including those of running processes (their links break). It is
// what "pqrepro linkemu clean" and "mage net:clean" run.
//
// Devices need no separate cleanup: the TUN devices are not persistent and
// live inside the namespaces, so they disappear with the creator's file
// descriptors and the namespaces.
func Clean(dir, prefix string, force bool) (CleanReport, error) {
	var rep CleanReport
	if dir == "" {
		dir = DefaultNetnsDir
	}
	if err := validPrefix(prefix); err != nil {
		return rep, err
	}
	entries, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return rep, nil
	}
	if err != nil {
		return rep, fmt.Errorf("list %s: %w", dir, err)
	}
	var errs []error
	for _, e := range entries { // ReadDir sorts by name
		name := e.Name()
		if !strings.HasPrefix(name, prefix) {
			continue
		}
		if !force && treelock.ProcessAlive(ownerPID(name)) {
			rep.InUse = append(rep.InUse, name)
			continue
		}
		if err := removeNetnsPath(filepath.Join(dir, name)); err != nil {
			errs = append(errs, err)
			continue
		}
		rep.Removed = append(rep.Removed, name)
	}
	return rep, errors.Join(errs...)
}

// Orphaned returns the names in dir (DefaultNetnsDir when empty) that
// start with prefix and whose creator is no longer running: what Clean
// would remove. `mage status` reports them as leftovers of a killed run.
func Orphaned(dir, prefix string) ([]string, error) {
	names, err := ListNamespaces(dir, prefix)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, n := range names {
		if !treelock.ProcessAlive(ownerPID(n)) {
			out = append(out, n)
		}
	}
	return out, nil
}

// ownerPID parses the creator's PID from a name "<prefix><pid>-<n>-<side>"
// (reading from the right, so any prefix works); 0 if the name has another
// form.
func ownerPID(name string) int {
	parts := strings.Split(name, "-")
	if len(parts) < 3 {
		return 0
	}
	if _, err := strconv.Atoi(parts[len(parts)-2]); err != nil {
		return 0
	}
	p := parts[len(parts)-3]
	i := len(p)
	for i > 0 && p[i-1] >= '0' && p[i-1] <= '9' {
		i--
	}
	pid, err := strconv.Atoi(p[i:])
	if err != nil || pid <= 0 {
		return 0
	}
	return pid
}

// ListNamespaces returns the names in dir (DefaultNetnsDir when empty) that
// start with prefix, sorted.
func ListNamespaces(dir, prefix string) ([]string, error) {
	if dir == "" {
		dir = DefaultNetnsDir
	}
	entries, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", dir, err)
	}
	var names []string
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), prefix) {
			names = append(names, e.Name())
		}
	}
	return names, nil
}

func validPrefix(p string) error {
	if len(p) == 0 || len(p) > 32 {
		return fmt.Errorf("namespace prefix %q: want 1 to 32 characters", p)
	}
	for _, c := range p {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
			return fmt.Errorf("namespace prefix %q: only a-z, 0-9 and '-' allowed", p)
		}
	}
	return nil
}
