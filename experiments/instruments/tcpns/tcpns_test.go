package tcpns

import (
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"pqrepro/experiments/instruments/netns"
	"pqrepro/internal/tcpstack"
)

// fakeProc writes a /proc/sys tree with the sysctls Read reads, leaving
// out those named in skip.
func fakeProc(t *testing.T, skip ...string) string {
	t.Helper()
	dir := t.TempDir()
	for name, v := range map[string]string{
		ccPath: "bbr\n", availablePath: "reno bbr cubic\n", allowedPath: "reno bbr\n", qdiscPath: "fq_codel\n",
		"net/ipv4/tcp_pacing_ss_ratio": "200\n", "net/ipv4/tcp_pacing_ca_ratio": "120\n",
		"net/ipv4/tcp_slow_start_after_idle": "0\n", "net/ipv4/tcp_ecn": "1\n",
	} {
		if slices.Contains(skip, name) {
			continue
		}
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(v), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// fakeCommand answers ip's routes and tc's qdiscs.
func fakeCommand(routes, qdisc string) func(string, ...string) ([]byte, error) {
	return func(name string, args ...string) ([]byte, error) {
		switch name {
		case "ip":
			return []byte(routes), nil
		case "tc":
			return []byte(qdisc), nil
		}
		return nil, fmt.Errorf("unexpected command %s", name)
	}
}

func TestReadFake(t *testing.T) {
	r := Reader{ProcSys: fakeProc(t), Command: fakeCommand("10.0.0.0/24 dev tun-a proto kernel scope link initcwnd 32\n", "qdisc fq 8001: root refcnt 2\n")}
	s, err := r.Read(Here, []string{"tun-a"})
	if err != nil {
		t.Fatal(err)
	}
	want := tcpstack.Stack{CongestionControl: "bbr", Available: []string{"reno", "bbr", "cubic"}, Allowed: []string{"reno", "bbr"}, InitCwnd: 32, InitCwndFrom: tcpstack.InitCwndRoute,
		InitCwndRoutes: map[string]int{"10.0.0.0/24 dev tun-a": 32}, DefaultQdisc: "fq_codel", Qdiscs: map[string]string{"tun-a": "fq"},
		Pacing: tcpstack.PacingFQ, PacingSSRatio: 200, PacingCARatio: 120, SlowStartAfterIdle: 0, ECN: 1}
	if fmt.Sprint(s) != fmt.Sprint(want) {
		t.Fatalf("Read = %+v\nwant  %+v", s, want)
	}
	// No route sets initcwnd: the kernel's default, said so.
	r.Command = fakeCommand("10.0.0.0/24 dev tun-a proto kernel\n", "qdisc noqueue 0: root refcnt 2\n")
	if s, err = r.Read(Here, []string{"tun-a"}); err != nil || s.InitCwnd != 10 || s.InitCwndFrom != tcpstack.InitCwndDefault || s.Pacing != tcpstack.PacingInternal {
		t.Fatalf("Read without initcwnd = %+v, %v", s, err)
	}
	if _, err := r.Read(Here, nil); err == nil {
		t.Error("Read with no interface = nil error")
	}
	r.Command = func(string, ...string) ([]byte, error) { return nil, errors.New("no tc here") }
	if _, err := r.Read(Here, []string{"tun-a"}); err == nil || !strings.Contains(err.Error(), "no tc here") {
		t.Errorf("Read with a failing command = %v", err)
	}
	in := func(fn func() error) error { return errors.New("namespace gone") }
	if _, err := r.Read(in, []string{"tun-a"}); err == nil || !strings.Contains(err.Error(), "namespace gone") {
		t.Errorf("Read in a failing namespace = %v", err)
	}
}

// TestReadMissingSysctl: a sysctl file that is not there (an old kernel,
// a namespace without it) is an error naming it, not a zero.
func TestReadMissingSysctl(t *testing.T) {
	for _, name := range []string{ccPath, availablePath, allowedPath, qdiscPath, "net/ipv4/tcp_ecn", "net/ipv4/tcp_pacing_ca_ratio"} {
		r := Reader{ProcSys: fakeProc(t, name), Command: fakeCommand("", "qdisc noqueue 0: root\n")}
		_, err := r.Read(Here, []string{"lo"})
		if err == nil || !strings.Contains(err.Error(), strings.ReplaceAll(name, "/", ".")) || !errors.Is(err, os.ErrNotExist) {
			t.Errorf("missing %s: Read = %v, want an error naming it", name, err)
		}
	}
	// A value out of its range is an error too.
	dir := fakeProc(t)
	os.WriteFile(filepath.Join(dir, "net/ipv4/tcp_ecn"), []byte("9\n"), 0o644)
	if _, err := (Reader{ProcSys: dir, Command: fakeCommand("", "qdisc noqueue 0: root\n")}).Read(Here, []string{"lo"}); err == nil || !strings.Contains(err.Error(), "net.ipv4.tcp_ecn") {
		t.Errorf("tcp_ecn 9: Read = %v", err)
	}
}

// TestSetFake: an unknown name, or one the kernel lacks, is an error
// naming the available ones, and nothing is written.
func TestSetFake(t *testing.T) {
	dir := fakeProc(t)
	r := Reader{ProcSys: dir}
	for _, name := range []string{"vegas", "", "BBR", "bbr2"} {
		err := r.SetCongestionControl(Here, name)
		if err == nil {
			t.Errorf("SetCongestionControl(%q) = nil", name)
			continue
		}
		if name == "vegas" && !strings.Contains(err.Error(), `"reno bbr cubic"`) {
			t.Errorf("SetCongestionControl(vegas) = %v, want the available ones named", err)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(dir, ccPath)); string(b) != "bbr\n" {
		t.Fatalf("after refused names the setting is %q, want it untouched", b)
	}
	if err := r.SetCongestionControl(Here, "cubic"); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, ccPath)); string(b) != "cubic" {
		t.Fatalf("after setting cubic the file holds %q", b)
	}
	if err := (Reader{ProcSys: fakeProc(t, availablePath)}).SetCongestionControl(Here, "cubic"); err == nil || !errors.Is(err, os.ErrNotExist) {
		t.Errorf("without tcp_available_congestion_control: %v, want the missing file", err)
	}
}

// TestReadHere reads the test's own namespace: no root needed, and what
// Read says is what /proc/sys says.
func TestReadHere(t *testing.T) {
	if _, err := exec.LookPath("tc"); err != nil {
		t.Skip("skipped: iproute2's tc is not installed (apt-get install iproute2)")
	}
	s, err := Read(Here, []string{"lo"})
	if err != nil {
		t.Fatal(err)
	}
	cc, _ := os.ReadFile("/proc/sys/" + ccPath)
	if s.CongestionControl != strings.TrimSpace(string(cc)) || s.Qdiscs["lo"] == "" {
		t.Fatalf("Read = %+v, /proc/sys says %q", s, cc)
	}
}

// TestNamespace creates a network namespace, reads its stack, sets its
// congestion control to each available one and back, checks that the
// host's setting did not move, and sets one socket's with TCP_CONGESTION.
func TestNamespace(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("skipped: creating a network namespace and writing its sysctls needs root; CI runs as root")
	}
	if _, err := exec.LookPath("tc"); err != nil {
		t.Skip("skipped: iproute2 (ip, tc) is not installed")
	}
	name := fmt.Sprintf("pqt-tcpns-%d", os.Getpid())
	if out, err := exec.Command("ip", "netns", "add", name).CombinedOutput(); err != nil {
		t.Fatalf("ip netns add: %v: %s", err, out)
	}
	defer func() {
		if out, err := exec.Command("ip", "netns", "del", name).CombinedOutput(); err != nil {
			t.Errorf("ip netns del %s: %v: %s", name, err, out)
		}
	}()
	th, err := netns.NewThread("/run/netns/" + name)
	if err != nil {
		t.Fatal(err)
	}
	defer th.Close()
	in := Thread(th)
	if err := in(func() error { return exec.Command("ip", "link", "set", "lo", "up").Run() }); err != nil {
		t.Fatal(err)
	}
	hostCC := func() string { b, _ := os.ReadFile("/proc/sys/" + ccPath); return strings.TrimSpace(string(b)) }
	before := hostCC()
	s, err := Read(in, []string{"lo"})
	if err != nil {
		t.Fatal(err)
	}
	if s.Qdiscs["lo"] == "" || s.DefaultQdisc == "" {
		t.Fatalf("Read in %s = %+v", name, s)
	}
	for _, cc := range append(slices.Clone(s.Available), s.CongestionControl) {
		err := SetCongestionControl(in, cc)
		if !slices.Contains(s.Allowed, cc) {
			// The kernel keeps a restricted one for the initial namespace.
			if err == nil || !strings.Contains(err.Error(), "not allowed") || !strings.Contains(err.Error(), "per socket") {
				t.Fatalf("set %s (not allowed) in %s: %v, want the kernel's rule explained", cc, name, err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("set %s in %s: %v", cc, name, err)
		}
		got, err := Read(in, []string{"lo"})
		if err != nil || got.CongestionControl != cc {
			t.Fatalf("after setting %s: %+v, %v", cc, got, err)
		}
		if h := hostCC(); h != before {
			t.Fatalf("setting %s in %s moved the host's congestion control from %s to %s", cc, name, before, h)
		}
	}
	if err := (Reader{}).Check(s.Available, false); err != nil {
		t.Errorf("Check(every available one, per socket) = %v", err)
	}
	if err := (Reader{}).Check(s.Allowed, true); err != nil {
		t.Errorf("Check(every allowed one, per namespace) = %v", err)
	}
	if err := SetCongestionControl(in, "nosuchcc"); err == nil || !strings.Contains(err.Error(), "not available") {
		t.Fatalf("set nosuchcc: %v, want a clear error", err)
	}
	// Per socket: a connection inside the namespace takes each available one.
	var ln net.Listener
	var c net.Conn
	if err := in(func() (err error) {
		if ln, err = net.Listen("tcp", "127.0.0.1:0"); err != nil {
			return err
		}
		c, err = net.Dial("tcp", ln.Addr().String())
		return err
	}); err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	defer c.Close()
	tc := c.(*net.TCPConn)
	if got, err := SocketCongestion(tc); err != nil || got != s.CongestionControl {
		t.Fatalf("the socket's congestion control = %q, %v; want the namespace's %q", got, err, s.CongestionControl)
	}
	for _, cc := range s.Available {
		if err := SetSocket(tc, cc, s.Available); err != nil {
			t.Fatalf("SetSocket %s: %v", cc, err)
		}
	}
	if err := SetSocket(tc, "nosuchcc", s.Available); err == nil || !strings.Contains(err.Error(), "not available") {
		t.Fatalf("SetSocket(nosuchcc) = %v", err)
	}
}

// TestCheck: a spec's list is checked before any work, every bad name
// reported, the available (and, per namespace, allowed) ones named.
func TestCheck(t *testing.T) {
	r := Reader{ProcSys: fakeProc(t)}
	if err := r.Check([]string{"cubic", "bbr"}, false); err != nil {
		t.Fatalf("cubic, bbr per socket: %v", err)
	}
	if err := r.Check([]string{"bbr", "reno"}, true); err != nil {
		t.Fatalf("bbr, reno per namespace: %v", err)
	}
	for _, c := range []struct {
		names []string
		perNS bool
		want  []string
	}{
		{[]string{"cubic", "bbr"}, true, []string{`"cubic" is available but not allowed`, `"reno bbr"`}},
		{[]string{"vegas", "bbr", "bbr"}, false, []string{`"vegas" is not available`, `"reno bbr cubic"`, `"bbr" listed twice`}},
		{[]string{"Cubic"}, false, []string{"lowercase"}},
		{nil, false, []string{"no name"}},
	} {
		err := r.Check(c.names, c.perNS)
		for _, w := range c.want {
			if err == nil || !strings.Contains(err.Error(), w) {
				t.Errorf("Check(%v, %v) = %v, want %q", c.names, c.perNS, err, w)
			}
		}
	}
	if err := (Reader{ProcSys: fakeProc(t, availablePath)}).Check([]string{"bbr"}, false); err == nil || !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Check without the available list: %v", err)
	}
}
