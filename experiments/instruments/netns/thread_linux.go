// Package netns runs work inside a Linux network namespace from Go.
package netns

import (
	"fmt"
	"runtime"

	"golang.org/x/sys/unix"
)

// A Thread is one goroutine locked to an OS thread that has joined a
// network namespace for good. Work given to Do runs there, so every socket
// it creates (a client's TCP connections, a capture's AF_PACKET socket)
// belongs to that namespace.
//
// The thread is never unlocked, so the Go runtime destroys it when Close
// ends the goroutine instead of reusing a thread that sits in another
// namespace (runtime.LockOSThread: "If the calling goroutine exits without
// unlocking the thread, the thread will be terminated"). It holds no lock
// of whoever made the namespace, only a reference to the namespace while
// it lives. Only the network namespace changes: no private mount namespace
// or sysfs.
type Thread struct {
	work chan func()
	done chan struct{}
}

// NewThread starts a Thread in the namespace at nsPath (for example
// /run/netns/<name>).
func NewThread(nsPath string) (*Thread, error) {
	t := &Thread{work: make(chan func()), done: make(chan struct{})}
	ready := make(chan error, 1)
	go func() {
		defer close(t.done)
		runtime.LockOSThread()
		// Never UnlockOSThread: the thread dies with this goroutine.
		if err := enter(nsPath); err != nil {
			ready <- err
			return
		}
		ready <- nil
		for fn := range t.work {
			fn()
		}
	}()
	if err := <-ready; err != nil {
		<-t.done
		return nil, err
	}
	return t, nil
}

func enter(nsPath string) error {
	fd, err := unix.Open(nsPath, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("open namespace %s: %w", nsPath, err)
	}
	defer unix.Close(fd)
	if err := unix.Setns(fd, unix.CLONE_NEWNET); err != nil {
		return fmt.Errorf("join namespace %s: %w", nsPath, err)
	}
	return nil
}

// Do runs fn on the thread and waits for it.
func (t *Thread) Do(fn func()) {
	ch := make(chan struct{})
	t.work <- func() { defer close(ch); fn() }
	<-ch
}

// Close ends the thread; it must not be used afterwards.
func (t *Thread) Close() {
	close(t.work)
	<-t.done
}
