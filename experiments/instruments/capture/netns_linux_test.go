package capture

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// readPackets returns the link type of a capture file and a copy of each
// packet's bytes.
func readPackets(t *testing.T, path string) (uint32, [][]byte) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	src, err := NewSource(f)
	if err != nil {
		t.Fatal(err)
	}
	var lt uint32
	var pkts [][]byte
	for {
		p, err := src.Next()
		if errors.Is(err, io.EOF) {
			return lt, pkts
		}
		if err != nil {
			t.Fatal(err)
		}
		lt = p.LinkType
		pkts = append(pkts, slices.Clone(p.Data))
	}
}

// inFreshNetns runs fn on a goroutine locked to an OS thread that has
// unshared into a new, empty network namespace (no mount namespace, no
// sysfs of its own). The thread is never unlocked, so the runtime ends it
// with the goroutine, and the namespace disappears with its last thread
// and descriptor: nothing is left behind even if fn fails or panics.
func inFreshNetns(t *testing.T, fn func() error) {
	t.Helper()
	errc := make(chan error, 1)
	go func() {
		defer func() {
			if r := recover(); r != nil {
				errc <- fmt.Errorf("panic: %v", r)
			}
		}()
		runtime.LockOSThread()
		if err := unix.Unshare(unix.CLONE_NEWNET); err != nil {
			errc <- fmt.Errorf("unshare network namespace: %w", err)
			return
		}
		errc <- fn()
	}()
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
}

// createTun makes a TUN device (raw IP, IFF_NO_PI) in the calling thread's
// network namespace and brings it up; writing an IP packet to the returned
// descriptor makes the kernel receive it on the device.
func createTun(name string) (int, error) {
	fd, err := unix.Open("/dev/net/tun", unix.O_RDWR|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, fmt.Errorf("open /dev/net/tun: %w (load the tun module)", err)
	}
	ifr, err := unix.NewIfreq(name)
	if err == nil {
		ifr.SetUint16(unix.IFF_TUN | unix.IFF_NO_PI)
		err = unix.IoctlIfreq(fd, unix.TUNSETIFF, ifr)
	}
	if err != nil {
		unix.Close(fd)
		return -1, fmt.Errorf("TUNSETIFF %s: %w", name, err)
	}
	s, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		unix.Close(fd)
		return -1, err
	}
	defer unix.Close(s)
	ifr, _ = unix.NewIfreq(name)
	ifr.SetUint16(unix.IFF_UP)
	if err := unix.IoctlIfreq(s, unix.SIOCSIFFLAGS, ifr); err != nil {
		unix.Close(fd)
		return -1, fmt.Errorf("bring %s up: %w", name, err)
	}
	return fd, nil
}

// TestCaptureInNetnsWithoutSysfs captures on a TUN device that exists only
// in a fresh network namespace entered by a locked thread, with the host's
// sysfs still mounted (where the device is missing): the link type and
// loopback flag must come from the kernel through the socket.
func TestCaptureInNetnsWithoutSysfs(t *testing.T) {
	needRoot(t)
	if _, err := os.Stat("/dev/net/tun"); err != nil {
		t.Skipf("skipped: no TUN clone device (%v); CI's machine has one", err)
	}
	name := "pqrcap" + strconv.Itoa(os.Getpid()%10000000)
	dir := t.TempDir()
	// The packets the test injects: kept by a port filter on 443 or not.
	inject := []struct {
		name string
		ip   []byte
		kept bool
	}{
		{"v4 tcp 443", ip4(6, nil, 0, tcpHdr(50000, 443)), true},
		{"v4 options tcp 443", ip4(6, ip4Opts, 0, tcpHdr(443, 50001)), true},
		{"v4 tcp 80", ip4(6, nil, 0, tcpHdr(50002, 80)), false},
		{"v4 udp 443", ip4(17, nil, 0, udpHdr(50003, 443)), false},
		{"v6 tcp 443", ip6(6, tcpHdr(50004, 443)), true},
		{"v6 tcp 8080", ip6(6, tcpHdr(50005, 8080)), false},
	}
	var hostErr error
	inFreshNetns(t, func() error {
		tun, err := createTun(name)
		if err != nil {
			return err
		}
		defer unix.Close(tun)
		// The host's sysfs (this test mounts none) does not show the
		// device: the old lookup through /sys/class/net failed here.
		if _, err := os.Stat(filepath.Join("/sys/class/net", name, "type")); err == nil {
			return fmt.Errorf("/sys/class/net/%s exists: sysfs shows this namespace, the test proves nothing", name)
		}
		for _, ports := range [][]uint16{nil, {443}} {
			path := filepath.Join(dir, fmt.Sprintf("ports%d.pcapng", len(ports)))
			c, err := Start(context.Background(), Options{Interface: name, Path: path, Ports: ports})
			if err != nil {
				return fmt.Errorf("Start in the namespace: %w", err)
			}
			if c.linkType != LinkRaw {
				c.Stop()
				return fmt.Errorf("link type %d on TUN, want raw IP %d", c.linkType, LinkRaw)
			}
			for _, p := range inject {
				if _, err := unix.Write(tun, p.ip); err != nil {
					c.Stop()
					return fmt.Errorf("inject %s: %w", p.name, err)
				}
			}
			time.Sleep(50 * time.Millisecond) // let the receive path deliver
			st, err := c.Stop()
			if err != nil {
				return err
			}
			if err := st.Valid(); err != nil {
				return err
			}
		}
		return nil
	})
	// Outside the namespace the device does not exist.
	_, hostErr = Start(context.Background(), Options{Interface: name, Path: filepath.Join(dir, "host.pcapng")})
	if hostErr == nil || !errors.Is(hostErr, unix.ENODEV) {
		t.Errorf("Start on %s in the host namespace: %v, want ENODEV", name, hostErr)
	}

	for _, ports := range []int{0, 1} {
		file := fmt.Sprintf("ports%d.pcapng", ports)
		lt, got := readPackets(t, filepath.Join(dir, file))
		if lt != LinkRaw {
			t.Errorf("%s: file link type %d, want %d", file, lt, LinkRaw)
		}
		if ports == 0 {
			// Unfiltered: every injected packet is there (the kernel may
			// add its own, such as IPv6 router solicitations).
			for _, p := range inject {
				if !slices.ContainsFunc(got, func(b []byte) bool { return bytes.Equal(b, p.ip) }) {
					t.Errorf("%s: injected %s not captured (%d packets)", file, p.name, len(got))
				}
			}
			continue
		}
		// Port 443: exactly the kept packets, in order, and nothing else.
		var want [][]byte
		for _, p := range inject {
			if p.kept {
				want = append(want, p.ip)
			}
		}
		if !slices.EqualFunc(got, want, bytes.Equal) {
			t.Errorf("%s: captured %d packets, want the %d TCP port 443 ones:\n got %x\nwant %x", file, len(got), len(want), got, want)
		}
	}
}
