// Package tcpns reads a network namespace's TCP stack for meta.json and
// sets its congestion control, per namespace or per socket.
//
// The parsing and the record are internal/tcpstack's; this package is the
// thin layer that reads /proc/sys and runs iproute2's ip and tc inside a
// namespace. Work runs through an In function: netns.Thread's Do
// (Thread), linkemu.Link's RunIn for one side, or Here for the caller's
// own namespace. A child process started there is in that namespace, as
// the thread that forks it is.
package tcpns

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"

	"pqrepro/experiments/instruments/netns"
	"pqrepro/internal/tcpstack"
)

// In runs fn inside a network namespace and returns its error.
type In func(fn func() error) error

// Here runs fn in the caller's own namespace.
func Here(fn func() error) error { return fn() }

// Thread runs work on th, inside its namespace.
func Thread(th *netns.Thread) In {
	return func(fn func() error) (err error) {
		th.Do(func() { err = fn() })
		return err
	}
}

// Reader reads the TCP stack; its zero value reads the running kernel.
type Reader struct {
	// ProcSys is where the sysctls are; "" is /proc/sys.
	ProcSys string
	// Command runs ip or tc with args and returns its standard output;
	// nil runs the program.
	Command func(name string, args ...string) ([]byte, error)
}

// sysctl paths under ProcSys.
const (
	ccPath        = "net/ipv4/tcp_congestion_control"
	availablePath = "net/ipv4/tcp_available_congestion_control"
	allowedPath   = "net/ipv4/tcp_allowed_congestion_control"
	qdiscPath     = "net/core/default_qdisc"
)

func (r Reader) path(name string) string {
	root := r.ProcSys
	if root == "" {
		root = "/proc/sys"
	}
	return filepath.Join(root, name)
}

// sysctl reads one sysctl and parses it with parse; errors name it.
func sysctl[T any](r Reader, name string, parse func([]byte) (T, error)) (T, error) {
	var zero T
	b, err := os.ReadFile(r.path(name))
	if err != nil {
		return zero, fmt.Errorf("read %s: %w", strings.ReplaceAll(name, "/", "."), err)
	}
	v, err := parse(b)
	if err != nil {
		return zero, fmt.Errorf("%s: %w", strings.ReplaceAll(name, "/", "."), err)
	}
	return v, nil
}

func (r Reader) run(name string, args ...string) ([]byte, error) {
	if r.Command != nil {
		return r.Command(name, args...)
	}
	out, err := exec.Command(name, args...).Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return nil, fmt.Errorf("%s %s: %w: %s", name, strings.Join(args, " "), err, strings.TrimSpace(string(ee.Stderr)))
		}
		return nil, fmt.Errorf("%s %s: %w", name, strings.Join(args, " "), err)
	}
	return out, nil
}

// Read reads the TCP stack of the namespace in runs in, for the
// interfaces ifaces that its connections use (at least one).
// net.core.default_qdisc is global and shown only in the initial
// namespace: it is read in the caller's (a process's unlocked threads
// stay in the namespace it started in).
func (r Reader) Read(in In, ifaces []string) (tcpstack.Stack, error) {
	var s tcpstack.Stack
	if len(ifaces) == 0 {
		return s, errors.New("tcp stack: no interface named")
	}
	var err error
	if s.DefaultQdisc, err = sysctl(r, qdiscPath, tcpstack.ParseWord); err != nil {
		return s, fmt.Errorf("tcp stack: %w", err)
	}
	err = in(func() error {
		var err error
		if s.CongestionControl, err = sysctl(r, ccPath, tcpstack.ParseName); err != nil {
			return err
		}
		if s.Available, err = sysctl(r, availablePath, tcpstack.ParseNames); err != nil {
			return err
		}
		if s.Allowed, err = sysctl(r, allowedPath, tcpstack.ParseNames); err != nil {
			return err
		}
		ints := []struct {
			name   string
			to     *int
			lo, hi int
		}{
			{"net/ipv4/tcp_pacing_ss_ratio", &s.PacingSSRatio, 0, 1000},
			{"net/ipv4/tcp_pacing_ca_ratio", &s.PacingCARatio, 0, 1000},
			{"net/ipv4/tcp_slow_start_after_idle", &s.SlowStartAfterIdle, 0, 1},
			{"net/ipv4/tcp_ecn", &s.ECN, 0, 5},
		}
		for _, x := range ints {
			if *x.to, err = sysctl(r, x.name, func(b []byte) (int, error) { return tcpstack.ParseInt(b, x.lo, x.hi) }); err != nil {
				return err
			}
		}
		out, err := r.run("ip", "-o", "route", "show", "table", "all")
		if err != nil {
			return err
		}
		if s.InitCwndRoutes, err = tcpstack.ParseRoutes(out, ifaces); err != nil {
			return err
		}
		if s.InitCwnd, s.InitCwndFrom, err = tcpstack.InitCwndOf(s.InitCwndRoutes); err != nil {
			return err
		}
		s.Qdiscs = map[string]string{}
		for _, i := range ifaces {
			out, err := r.run("tc", "qdisc", "show", "dev", i)
			if err != nil {
				return err
			}
			if s.Qdiscs[i], err = tcpstack.ParseQdisc(out); err != nil {
				return fmt.Errorf("tc qdisc show dev %s: %w", i, err)
			}
		}
		return nil
	})
	if err != nil {
		return s, fmt.Errorf("tcp stack: %w", err)
	}
	s.Pacing = tcpstack.PacingOf(s.CongestionControl, s.Qdiscs)
	if err := s.Validate(); err != nil {
		return s, fmt.Errorf("tcp stack: %w", err)
	}
	return s, nil
}

// Read reads the running kernel's TCP stack (Reader's zero value).
func Read(in In, ifaces []string) (tcpstack.Stack, error) { return Reader{}.Read(in, ifaces) }

// Available reads net.ipv4.tcp_available_congestion_control.
func (r Reader) Available() ([]string, error) {
	return sysctl(r, availablePath, tcpstack.ParseNames)
}

// Check checks a list of congestion controls, as a spec would name them,
// against the running kernel before any work: every bad name is reported.
//
// Each must be a name, listed once and available; with perNamespace
// (set with SetCongestionControl in a namespace other than the initial
// one) it must also be allowed (net.ipv4.tcp_allowed_congestion_control).
// Per socket (SetSocket, as root) available is enough.
func (r Reader) Check(names []string, perNamespace bool) error {
	if len(names) == 0 {
		return errors.New("congestion control: no name")
	}
	avail, err := r.Available()
	if err != nil {
		return fmt.Errorf("congestion control: %w", err)
	}
	var allowed []string
	if perNamespace {
		if allowed, err = sysctl(r, allowedPath, tcpstack.ParseNames); err != nil {
			return fmt.Errorf("congestion control: %w", err)
		}
	}
	var errs []error
	for i, n := range names {
		switch err := tcpstack.CheckAvailable(n, avail); {
		case err != nil:
			errs = append(errs, err)
		case slices.Contains(names[:i], n):
			errs = append(errs, fmt.Errorf("congestion control %q listed twice", n))
		case perNamespace && !slices.Contains(allowed, n):
			errs = append(errs, fmt.Errorf("congestion control %q is available but not allowed (net.ipv4.tcp_allowed_congestion_control is %q): a namespace other than the initial one cannot default to it; set it per socket or allow it in the initial namespace", n, strings.Join(allowed, " ")))
		}
	}
	return errors.Join(errs...)
}

// SetCongestionControl makes name the default congestion control of new
// sockets in the namespace in runs in.
//
// net.ipv4.tcp_congestion_control is per namespace. It first checks that
// the kernel has name: an unknown name or one the kernel lacks is an error
// naming the available ones, and nothing is written. It reads the setting
// back. It needs root.
//
// Linux lets a namespace other than the initial one make only an allowed
// congestion control (net.ipv4.tcp_allowed_congestion_control) its
// default: for another, the kernel's refusal is an error that says so and
// names SetSocket, which sets it per socket.
func (r Reader) SetCongestionControl(in In, name string) error {
	err := in(func() error {
		avail, err := r.Available()
		if err != nil {
			return err
		}
		if err := tcpstack.CheckAvailable(name, avail); err != nil {
			return err
		}
		if err := os.WriteFile(r.path(ccPath), []byte(name), 0o644); err != nil {
			if errors.Is(err, fs.ErrPermission) {
				allowed, aerr := sysctl(r, allowedPath, tcpstack.ParseNames)
				if aerr == nil && !slices.Contains(allowed, name) {
					return fmt.Errorf("write net.ipv4.tcp_congestion_control: %w: %q is available but not allowed (net.ipv4.tcp_allowed_congestion_control is %q), and Linux lets only the initial namespace make such a one its default; set it per socket (TCP_CONGESTION, SetSocket) or allow it in the initial namespace before the run", err, name, strings.Join(allowed, " "))
				}
				return fmt.Errorf("write net.ipv4.tcp_congestion_control: %w (setting it needs root)", err)
			}
			return fmt.Errorf("write net.ipv4.tcp_congestion_control: %w", err)
		}
		got, err := sysctl(r, ccPath, tcpstack.ParseName)
		if err != nil {
			return err
		}
		if got != name {
			return fmt.Errorf("net.ipv4.tcp_congestion_control reads %q after writing %q", got, name)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("set congestion control: %w", err)
	}
	return nil
}

// SetCongestionControl sets name in the running kernel's namespace in runs
// in (Reader's zero value).
func SetCongestionControl(in In, name string) error { return Reader{}.SetCongestionControl(in, name) }

// SetSocket sets one socket's congestion control (TCP_CONGESTION) after
// checking name against available (Reader.Available), and reads it back.
// A name outside net.ipv4.tcp_allowed_congestion_control needs
// CAP_NET_ADMIN.
func SetSocket(c syscall.Conn, name string, available []string) error {
	if err := tcpstack.CheckAvailable(name, available); err != nil {
		return err
	}
	rc, err := c.SyscallConn()
	if err != nil {
		return err
	}
	var serr error
	if err := rc.Control(func(fd uintptr) {
		serr = unix.SetsockoptString(int(fd), unix.IPPROTO_TCP, unix.TCP_CONGESTION, name)
	}); err != nil {
		return err
	}
	if serr != nil {
		return fmt.Errorf("setsockopt TCP_CONGESTION %q: %w", name, serr)
	}
	got, err := SocketCongestion(c)
	if err != nil {
		return err
	}
	if got != name {
		return fmt.Errorf("TCP_CONGESTION reads %q after setting %q", got, name)
	}
	return nil
}

// SocketCongestion reads one socket's congestion control (TCP_CONGESTION).
func SocketCongestion(c syscall.Conn) (string, error) {
	rc, err := c.SyscallConn()
	if err != nil {
		return "", err
	}
	var got string
	var gerr error
	if err := rc.Control(func(fd uintptr) {
		got, gerr = unix.GetsockoptString(int(fd), unix.IPPROTO_TCP, unix.TCP_CONGESTION)
	}); err != nil {
		return "", err
	}
	return strings.TrimRight(got, "\x00"), gerr
}
