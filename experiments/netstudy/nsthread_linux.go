package netstudy

import (
	"fmt"
	"runtime"

	"golang.org/x/sys/unix"
)

// nsThread is one goroutine locked to an OS thread that has joined a link
// namespace for good. Work sent to it runs there, so every socket it
// creates (the client's TCP connections, the capture's AF_PACKET socket)
// belongs to that namespace.
//
// Why not linkemu.Link.RunIn for the whole loop: RunIn holds the link's
// namespace lock while fn runs, so the link's own teardown (forwarder death,
// cancellation) would wait for a handshake to time out. This thread holds no
// lock of the link; it keeps a reference to the namespace only while it
// lives, and it is never unlocked, so the Go runtime destroys the thread when
// the goroutine ends instead of reusing a thread that sits in another
// namespace (runtime.LockOSThread: "If the calling goroutine exits without
// unlocking the thread, the thread will be terminated").
//
// Only the network namespace changes: the capture package asks the kernel
// about the TUN device through its socket (in this thread's namespace), so
// the thread needs no private mount namespace or sysfs of its own.
type nsThread struct {
	work chan func()
	done chan struct{}
}

func newNSThread(nsPath string) (*nsThread, error) {
	t := &nsThread{work: make(chan func()), done: make(chan struct{})}
	ready := make(chan error, 1)
	go func() {
		defer close(t.done)
		runtime.LockOSThread()
		// Never UnlockOSThread: the thread dies with this goroutine.
		if err := enterNetns(nsPath); err != nil {
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

func enterNetns(nsPath string) error {
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

// do runs fn on the thread and waits for it.
func (t *nsThread) do(fn func()) {
	ch := make(chan struct{})
	t.work <- func() { defer close(ch); fn() }
	<-ch
}

// close ends the thread.
func (t *nsThread) close() {
	close(t.work)
	<-t.done
}
