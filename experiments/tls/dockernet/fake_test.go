package dockernet

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// fake is a set of shell scripts standing in for dockerd, docker,
// docker-compose and go, each logging its arguments to calls; mode makes
// one step fail: "dockerd-fails", "import-fails", "compose-fails".
type fake struct {
	dir   string
	tools tools
}

func newFake(t *testing.T, mode string) *fake {
	t.Helper()
	f := &fake{dir: t.TempDir()}
	script := func(name, body string) string {
		p := filepath.Join(f.dir, name)
		s := "#!/bin/sh\nDIR=" + f.dir + "\nMODE=" + mode + "\necho \"" + name + " $*\" >> $DIR/calls\n" + body
		if err := os.WriteFile(p, []byte(s), 0o755); err != nil {
			t.Fatal(err)
		}
		return p
	}
	f.tools.Dockerd = script("dockerd", `
if [ "$MODE" = dockerd-fails ]; then
	echo 'level=info msg="starting up"'
	echo 'level=fatal msg="failed to start daemon: error initializing graphdriver: boom"' >&2
	exit 1
fi
while [ $# -gt 0 ]; do [ "$1" = --pidfile ] && echo $$ > "$2"; shift; done
echo $$ > $DIR/dpid
touch $DIR/up
exec sleep 600
`)
	f.tools.Docker = script("docker", `
[ "$1" = -H ] && shift 2
case "$1" in
version) [ -f $DIR/up ] && echo 20.10.99-fake && exit 0; echo "Cannot connect to the Docker daemon" >&2; exit 1;;
import) [ "$MODE" = import-fails ] && { echo "Error response from daemon: no space left on device" >&2; exit 1; }; echo sha256:fakeimage;;
ps) echo fake_client_1;;
network) [ "$2" = ls ] && echo fake_net; exit 0;;
images) echo fake:tag;;
inspect) [ "$MODE" = exited ] && echo "false 3"; exit 0;;
events) [ -f $DIR/events ] && cat $DIR/events; [ -f $DIR/events-end ] && exit 0; exec sleep 600;;
esac
exit 0
`)
	f.tools.Compose = []string{script("docker-compose", `
case "$1" in
version) echo 1.29.2-fake;;
-p) [ "$MODE" = compose-fails ] && { echo "ERROR: for server  Cannot start service server: boom" >&2; exit 1; };;
esac
exit 0
`)}
	f.tools.Go = script("go", `
case "$1" in
env) echo go-fake;;
build) while [ $# -gt 0 ]; do [ "$1" = -o ] && printf '#!/bin/sh\n' > "$2"; shift; done;;
esac
`)
	old, oldTmp := findTools, tempDir
	tmp := t.TempDir()
	findTools = func() (tools, error) { return f.tools, nil }
	tempDir = func() string { return tmp }
	t.Cleanup(func() { findTools, tempDir = old, oldTmp })
	return f
}

func (f *fake) calls() string { b, _ := os.ReadFile(filepath.Join(f.dir, "calls")); return string(b) }

// daemonGone waits for the fake dockerd (if it started) to be gone.
func (f *fake) daemonGone(t *testing.T) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(f.dir, "dpid"))
	if err != nil {
		return
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	for end := time.Now().Add(5 * time.Second); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
		if startTime(pid) == "" {
			return
		}
	}
	t.Errorf("the fake dockerd (pid %d) still runs", pid)
}

// nothingLeft checks that the fake temp dir and the data roots are empty.
func nothingLeft(t *testing.T, root string) {
	t.Helper()
	if m, _ := filepath.Glob(filepath.Join(tempDir(), "*")); len(m) > 0 {
		t.Errorf("temp dirs left: %v", m)
	}
	if m, _ := filepath.Glob(filepath.Join(root, ".cache", "docker", testPrefix+"*")); len(m) > 0 {
		t.Errorf("data roots left: %v", m)
	}
}

func fakeOptions(t *testing.T) Options {
	prog := filepath.Join(t.TempDir(), "prog")
	os.WriteFile(prog, []byte("#!/bin/sh\n"), 0o755)
	return Options{Prefix: testPrefix, Root: t.TempDir(), Program: prog, CertDir: t.TempDir()}
}

// TestStartFails: each step that can fail fails Start with what to look
// at, and Start removes what it made before (the daemon stopped, its
// objects removed through it, no temp dir or data root left).
func TestStartFails(t *testing.T) {
	for _, tc := range []struct {
		mode     string
		want     []string
		teardown bool // the daemon was up: its objects are removed through it
	}{
		{"dockerd-fails", []string{"dockerd exited at start", "error initializing graphdriver: boom", "starting up"}, false},
		{"import-fails", []string{"import the image", "no space left on device"}, true},
		{"compose-fails", []string{"compose up", "Cannot start service server: boom"}, true},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			f := newFake(t, tc.mode)
			o := fakeOptions(t)
			n, err := Start(context.Background(), o)
			if err == nil {
				n.Close()
				t.Fatal("Start succeeded")
			}
			if n != nil {
				t.Errorf("a Net with the error %v", err)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
			calls := f.calls()
			for _, w := range []string{"rm -f -v fake_client_1", "network rm fake_net", "rmi -f fake:tag"} {
				if strings.Contains(calls, w) != tc.teardown {
					t.Errorf("call %q made: %v, want %v; calls:\n%s", w, !tc.teardown, tc.teardown, calls)
				}
			}
			f.daemonGone(t)
			nothingLeft(t, o.Root)
		})
	}
}

// TestStartInterrupted: a cancelled context stops Start before its first
// step, with nothing left.
func TestStartInterrupted(t *testing.T) {
	f := newFake(t, "")
	o := fakeOptions(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Start(ctx, o); err == nil || !errors.Is(err, context.Canceled) {
		t.Fatalf("Start = %v, want context.Canceled", err)
	}
	if strings.Contains(f.calls(), "dockerd ") {
		t.Errorf("dockerd started:\n%s", f.calls())
	}
	nothingLeft(t, o.Root)
}

func TestBadOptions(t *testing.T) {
	newFake(t, "")
	good := fakeOptions(t)
	for _, tc := range []struct {
		name string
		edit func(*Options)
		want string
	}{
		{"long prefix", func(o *Options) { o.Prefix = "muchtoolong" }, "15 characters"},
		{"upper case", func(o *Options) { o.Prefix = "PQ" }, "lower-case"},
		{"dash", func(o *Options) { o.Prefix = "p-q" }, "lower-case"},
		{"mtu", func(o *Options) { o.MTU = 100 }, "MTU 100"},
		{"no root", func(o *Options) { o.Root = "" }, "need Root"},
		{"no certs", func(o *Options) { o.CertDir = "/nonexistent" }, "not a directory"},
		{"no program", func(o *Options) { o.Program = "/nonexistent/openssl" }, "program"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := good
			tc.edit(&o)
			_, err := Start(context.Background(), o)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Start = %v, want an error with %q", err, tc.want)
			}
			nothingLeft(t, o.Root)
		})
	}
}

// watchedNet is a Net whose daemon and events are the fake's.
func watchedNet(t *testing.T, f *fake) *Net {
	n := &Net{tools: f.tools, st: state{Dir: f.dir}, done: make(chan struct{}), stop: make(chan struct{}),
		daemon: &daemon{exited: make(chan struct{})}}
	n.Info.ClientContainer, n.Info.ServerContainer, n.Info.Network = "p_client_1", "p_server_1", "p_net"
	return n
}

// TestWatch: a container's death, the network's removal, the daemon's
// exit or the end of its events close Done, and Err names the cause;
// other events (an exec ending, another container) do not.
func TestWatch(t *testing.T) {
	ev := func(typ, action, name string, attrs ...string) string {
		a := fmt.Sprintf(`"name":%q`, name)
		for i := 0; i+1 < len(attrs); i += 2 {
			a += fmt.Sprintf(`,%q:%q`, attrs[i], attrs[i+1])
		}
		return fmt.Sprintf(`{"Type":%q,"Action":%q,"Actor":{"ID":"x","Attributes":{%s}}}`, typ, action, a) + "\n"
	}
	harmless := ev("container", "exec_die", "p_server_1", "exitCode", "1") + ev("container", "die", "other_1", "exitCode", "0") + "not json\n"
	for _, tc := range []struct {
		name, events string
		end, daemon  bool
		want         string // "" means Done stays open
	}{
		{"server dies", harmless + ev("container", "die", "p_server_1", "exitCode", "137"), false, false, "the server container p_server_1 died (exit code 137)"},
		{"client oom", ev("container", "oom", "p_client_1"), false, false, "the client container p_client_1: oom"},
		{"network removed", ev("network", "destroy", "p_net"), false, false, "the network p_net: destroy"},
		{"daemon exits", "", false, true, "the private dockerd exited"},
		{"events end", "", true, false, "docker events ended"},
		{"harmless", harmless, false, false, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFake(t, "")
			os.WriteFile(filepath.Join(f.dir, "events"), []byte(tc.events), 0o644)
			if tc.end {
				os.WriteFile(filepath.Join(f.dir, "events-end"), nil, 0o644)
			}
			n := watchedNet(t, f)
			if err := n.watch(); err != nil {
				t.Fatal(err)
			}
			defer n.stopWatch()
			if tc.daemon {
				n.daemon.err = errors.New("exit status 2")
				close(n.daemon.exited)
			}
			wait := 5 * time.Second
			if tc.want == "" {
				wait = 300 * time.Millisecond
			}
			select {
			case <-n.Done():
				if tc.want == "" {
					t.Fatalf("Done closed: %v", n.Err())
				}
				if err := n.Err(); !errors.Is(err, ErrFailed) || !strings.Contains(err.Error(), tc.want) {
					t.Fatalf("Err = %v, want %q", err, tc.want)
				}
			case <-time.After(wait):
				if tc.want != "" {
					t.Fatalf("Done not closed, want %q", tc.want)
				}
				if n.Err() != nil {
					t.Fatalf("Err = %v on an intact path", n.Err())
				}
			}
		})
	}
}

// TestWatchExitedBefore: a container that died before the watcher's
// events began fails watch (the events cannot replay it).
func TestWatchExitedBefore(t *testing.T) {
	f := newFake(t, "exited")
	n := watchedNet(t, f)
	err := n.watch()
	defer n.stopWatch()
	if err == nil || !strings.Contains(err.Error(), "container p_client_1 exited before the run began (exit code 3)") {
		t.Fatalf("watch = %v", err)
	}
}

// TestCloseTwice: the second Close returns the first one's result and
// removes nothing again; a Close does not close Done (the run did not
// fail).
func TestCloseTwice(t *testing.T) {
	f := newFake(t, "")
	s := state{Project: testPrefix + "1-1", Dir: t.TempDir(), DataRoot: filepath.Join(t.TempDir(), "data")}
	os.MkdirAll(s.DataRoot, 0o755)
	d, _, err := startDaemon(context.Background(), f.tools, s, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	n := watchedNet(t, f)
	n.st, n.daemon = s, d
	if err := n.watch(); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 2; i++ {
		if err := n.Close(); err != nil {
			t.Fatalf("Close %d: %v", i+1, err)
		}
	}
	if c := strings.Count(f.calls(), "rm -f -v fake_client_1"); c != 1 {
		t.Errorf("container removed %d times, want once:\n%s", c, f.calls())
	}
	select {
	case <-n.Done():
		t.Errorf("Done closed by Close: %v", n.Err())
	default:
	}
	for _, p := range []string{s.Dir, s.DataRoot} {
		if _, err := os.Stat(p); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s left", p)
		}
	}
	f.daemonGone(t)
}

// deadPID is the PID of a process that has exited.
func deadPID(t *testing.T) int {
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	return cmd.Process.Pid
}

// TestLeftoversClean: a killed run's state dir with its daemon still
// running is listed with the daemon's objects and removed by Clean; a
// live run's dir and a dir of another prefix are not touched.
func TestLeftoversClean(t *testing.T) {
	f := newFake(t, "")
	dead := deadPID(t)
	mk := func(name string, s state) state {
		s.Dir = filepath.Join(tempDir(), name)
		os.MkdirAll(s.Dir, 0o755)
		if s.Project != "" {
			if err := s.write(); err != nil {
				t.Fatal(err)
			}
		}
		return s
	}
	killed := mk(fmt.Sprintf("%s%d-1-abc", testPrefix, dead), state{Project: fmt.Sprintf("%s%d-1", testPrefix, dead), ParentPID: dead, ParentStart: "12345", DataRoot: filepath.Join(t.TempDir(), "data")})
	os.MkdirAll(killed.DataRoot, 0o755)
	unwritten := mk(fmt.Sprintf("%s%d-2-def", testPrefix, dead), state{}) // killed before its state was written
	me := os.Getpid()
	live := mk(fmt.Sprintf("%s%d-3-ghi", testPrefix, me), state{Project: fmt.Sprintf("%s%d-3", testPrefix, me), ParentPID: me, ParentStart: startTime(me)})
	other := mk(fmt.Sprintf("pqrdx%d-1-jkl", dead), state{})
	d := exec.Command(f.tools.Dockerd, "--pidfile", killed.pidfile())
	if err := d.Start(); err != nil {
		t.Fatal(err)
	}
	go d.Wait()
	defer d.Process.Kill()
	for end := time.Now().Add(5 * time.Second); killed.daemonPID() == 0 && time.Now().Before(end); {
		time.Sleep(10 * time.Millisecond)
	}
	left, err := Leftovers(testPrefix)
	if err != nil {
		t.Fatal(err)
	}
	all := strings.Join(left, "\n")
	for _, w := range []string{fmt.Sprintf("dockerd (pid %d) of killed run", d.Process.Pid), "container fake_client_1", "network fake_net", "image fake:tag", "data root " + killed.DataRoot, "temp dir " + killed.Dir, "temp dir " + unwritten.Dir} {
		if !strings.Contains(all, w) {
			t.Errorf("Leftovers lack %q:\n%s", w, all)
		}
	}
	for _, w := range []string{live.Dir, other.Dir} {
		if strings.Contains(all, w) {
			t.Errorf("Leftovers list %s:\n%s", w, all)
		}
	}
	var log strings.Builder
	removed, err := Clean(context.Background(), testPrefix, &log)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(log.String(), "docker clean: removed container fake_client_1") || len(removed) < 6 {
		t.Errorf("removed %v; log:\n%s", removed, log.String())
	}
	if left, _ := Leftovers(testPrefix); len(left) > 0 {
		t.Errorf("after Clean: %v", left)
	}
	for _, p := range []string{killed.Dir, killed.DataRoot, unwritten.Dir} {
		if _, err := os.Stat(p); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s left after Clean", p)
		}
	}
	for _, p := range []string{live.Dir, other.Dir} {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("Clean removed %s", p)
		}
	}
	if syscall.Kill(d.Process.Pid, 0) == nil && startTime(d.Process.Pid) != "" {
		t.Errorf("the killed run's daemon still runs")
	}
}

// TestRequirements: docker.io and docker-compose, present exactly when
// the tools are found.
func TestRequirements(t *testing.T) {
	f := newFake(t, "")
	for _, have := range []bool{true, false} {
		if !have {
			findTools = func() (tools, error) { return tools{}, errors.New("none") }
		}
		var apt []string
		for _, r := range Requirements() {
			apt = append(apt, r.Apt...)
			if r.Present() != have {
				t.Errorf("%s present %v with tools %v", r.Name, r.Present(), have)
			}
		}
		if strings.Join(apt, " ") != "docker.io docker-compose" {
			t.Errorf("apt packages %v", apt)
		}
	}
	_ = f
}
