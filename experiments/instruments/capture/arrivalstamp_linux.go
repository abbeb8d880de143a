package capture

import (
	"encoding/binary"
	"errors"
	"fmt"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// awaitArrivalStamps waits until the kernel stamps packets when they
// arrive, not when a reader asks for them, and reports how long that took.
//
// Why: SO_TIMESTAMPNS on the first socket of the system to ask for
// timestamps turns them on through net_enable_timestamp, which flips the
// kernel's netstamp static key from a work queue, a little later. A packet
// that arrives before the key is on carries no stamp, and recvmsg stamps
// it at read time (__sock_recv_timestamp). A capture started then would
// stamp its first packets late: seen here as a ClientHello stamped after
// its own client Finished, a negative Ths on the run's first connection.
//
// The probe sends itself a UDP datagram on 127.0.0.1 of the calling
// thread's network namespace, waits probeHold, and reads it: a stamp
// taken on arrival is at least probeHold older than the read; one taken
// at read time is not. The key is global, so any namespace with an up
// loopback answers for all. Without one (a fresh namespace whose lo is
// down), the probe cannot tell, and it waits fallbackWait instead, the
// work queue's usual delay many times over.
func awaitArrivalStamps(limit time.Duration) (time.Duration, error) {
	start := time.Now()
	p, err := openStampProbe()
	if err != nil {
		time.Sleep(fallbackWait)
		return time.Since(start), nil
	}
	defer p.close()
	for {
		onArrival, err := p.once()
		if err != nil {
			return time.Since(start), fmt.Errorf("probe the kernel's packet timestamps on 127.0.0.1: %w", err)
		}
		if onArrival {
			return time.Since(start), nil
		}
		if time.Since(start) > limit {
			return time.Since(start), fmt.Errorf("the kernel still stamps packets when they are read, not when they arrive, %v after timestamps were enabled; a capture now would misdate its first packets: check that nothing disables net timestamps (sysctl net.core.netdev_tstamp_prequeue) and try again", limit)
		}
	}
}

const (
	probeHold    = 2 * time.Millisecond
	fallbackWait = 50 * time.Millisecond
)

// stampProbe is a pair of UDP sockets on 127.0.0.1, the receiver asking
// for nanosecond timestamps.
type stampProbe struct {
	rx, tx int
	to     unix.Sockaddr
}

func openStampProbe() (*stampProbe, error) {
	rx, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	p := &stampProbe{rx: rx, tx: -1}
	fail := func(err error) (*stampProbe, error) {
		p.close()
		return nil, err
	}
	if err := unix.SetsockoptInt(rx, unix.SOL_SOCKET, unix.SO_TIMESTAMPNS, 1); err != nil {
		return fail(err)
	}
	tv := unix.NsecToTimeval(int64(100 * time.Millisecond))
	if err := unix.SetsockoptTimeval(rx, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &tv); err != nil {
		return fail(err)
	}
	if err := unix.Bind(rx, &unix.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		return fail(err)
	}
	if p.to, err = unix.Getsockname(rx); err != nil {
		return fail(err)
	}
	if p.tx, err = unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0); err != nil {
		return fail(err)
	}
	// One datagram through, or lo is down in this namespace.
	if _, err := p.once(); err != nil {
		return fail(err)
	}
	return p, nil
}

// once sends one datagram, holds it probeHold, reads it and says whether
// its stamp is from its arrival.
func (p *stampProbe) once() (bool, error) {
	if err := unix.Sendto(p.tx, []byte("pqrepro timestamp probe"), 0, p.to); err != nil {
		return false, fmt.Errorf("send: %w", err)
	}
	time.Sleep(probeHold)
	buf := make([]byte, 64)
	oob := make([]byte, unix.CmsgSpace(int(unsafe.Sizeof(unix.Timespec{}))))
	before := time.Now()
	_, oobn, _, _, err := unix.Recvmsg(p.rx, buf, oob, 0)
	if err != nil {
		return false, fmt.Errorf("receive: %w", err)
	}
	ts, ok := stampOf(oob[:oobn])
	if !ok {
		return false, errors.New("the datagram came without a SO_TIMESTAMPNS stamp")
	}
	return arrivalStamped(ts, before), nil
}

// arrivalStamped reports whether a packet stamped at ts and read from
// at was held for most of probeHold before the read: stamped on arrival.
func arrivalStamped(ts, read time.Time) bool {
	return read.Sub(ts) >= probeHold/2
}

func stampOf(oob []byte) (time.Time, bool) {
	cms, err := unix.ParseSocketControlMessage(oob)
	if err != nil {
		return time.Time{}, false
	}
	for _, cm := range cms {
		if cm.Header.Level == unix.SOL_SOCKET && cm.Header.Type == unix.SO_TIMESTAMPNS && len(cm.Data) >= 16 {
			sec := int64(binary.NativeEndian.Uint64(cm.Data[0:]))
			nsec := int64(binary.NativeEndian.Uint64(cm.Data[8:]))
			return time.Unix(sec, nsec), true
		}
	}
	return time.Time{}, false
}

func (p *stampProbe) close() {
	unix.Close(p.rx)
	if p.tx >= 0 {
		unix.Close(p.tx)
	}
}
