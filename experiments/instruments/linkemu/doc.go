// Package linkemu is a userspace link emulator between two network
// namespaces. It joins two network namespaces, each holding one TUN
// device, by a Go forwarder that applies per-direction delay, jitter
// (without reordering), seeded random loss and a rate limit with a
// bounded drop-tail byte queue.
//
// It is an instrument, knowing no study: Study B's runner measures over
// its links, and Study A's emulated paths are its links with a fixed
// delay. So it lives under experiments/instruments, where neither study
// reaches into the other's folder for it.
//
// Why userspace: the kernel this project runs on has no sch_netem (tbf and
// htb exist, but neither delays packets), so the forwarder does netem's job.
// Every packet leaving namespace A through its TUN device is read by the
// forwarder in the calling process, shaped (see Shaper for the model and
// formulas), and written into namespace B's TUN device at its due time, and
// the same in the other direction.
//
//	netns <prefix><pid>-<n>-a          netns <prefix><pid>-<n>-b
//	  tun "pqr-tun" 10.77.0.1/24         tun "pqr-tun" 10.77.0.2/24
//	          |  fd                                 ^ fd
//	          v                                     |
//	     [read] -> Shaper(A->B) -> FIFO -> [timerfd wait, write]
//	     [write] <- FIFO <- Shaper(B->A) <- [read]
//
// Namespaces and devices are created with system calls (unshare(2), a bind
// mount of /proc/thread-self/ns/net onto <NetnsDir>/<name> exactly as
// iproute2's "ip netns add" does, TUNSETIFF and the SIOCSIF* ioctls), not by
// running the ip command: there is no runtime dependency on iproute2, errors
// carry the errno of the failing step, and the same code works in a user +
// network + mount namespace without root. The names are still ordinary
// iproute2 names, so "ip netns exec <name> ..." and "ip netns list" see them.
//
// Cleanup: TUN devices are not persistent, so they vanish with the
// forwarder's file descriptors (also when the process is killed); a
// namespace vanishes when its bind mount is removed and nothing else holds
// it. Link.Close removes both; Start removes them when the context is
// cancelled; Clean removes namespaces left by a process that died (its PID is
// part of every name).
//
// Timing: each direction's writer sleeps on a timerfd (CLOCK_MONOTONIC,
// absolute expiry) in a goroutine locked to its OS thread, because Go's own
// timers wake through epoll with millisecond granularity when the process is
// idle.
package linkemu
