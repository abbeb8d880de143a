package dockernet

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// testPrefix names what the tests create; tlsrun's tests use "pqrdt" too,
// but never at the same time as this package's (go test runs packages
// one after another here; both clean only dead runs).
const testPrefix = "pqrdt"

// needDocker skips, with the reason, where the docker path cannot run;
// CI runs as root with docker.io and docker-compose installed, so there it
// runs.
func needDocker(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("skipped: needs root (a private dockerd, network namespaces); CI runs it as root")
	}
	if err := Available(); err != nil {
		t.Skipf("skipped: the docker path cannot run here: %v", err)
	}
}

// echoSource is a TCP echo server: it listens on os.Args[1], says
// "LISTEN" on stdout and echoes every connection's bytes back.
const echoSource = `package main

import (
	"fmt"
	"io"
	"net"
	"os"
)

func main() {
	ln, err := net.Listen("tcp", os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Println("LISTEN")
	for {
		c, err := ln.Accept()
		if err != nil {
			os.Exit(2)
		}
		go func() { io.Copy(c, c); c.Close() }()
	}
}
`

// buildEcho builds the echo server, static (cgo off) or dynamic (cgo's
// resolver links glibc), so that the image builder is tried on both.
func buildEcho(t *testing.T, cgo bool) string {
	t.Helper()
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "main.go"), []byte(echoSource), 0o644)
	os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module echo\n"), 0o644)
	cmd := exec.Command("go", "build", "-o", "echo", ".")
	cmd.Dir = dir
	env := "CGO_ENABLED=0"
	if cgo {
		env = "CGO_ENABLED=1"
	}
	cmd.Env = append(os.Environ(), env, "GOWORK=off", "GOFLAGS=")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build the echo server (%s): %v\n%s", env, err, out)
	}
	return filepath.Join(dir, "echo")
}

// noLeftovers checks that nothing of the run with state s is left.
func noLeftovers(t *testing.T, s state, daemonPID int) {
	t.Helper()
	for _, p := range []string{s.Dir, s.DataRoot, filepath.Join(sysNet, s.Project)} {
		if _, err := os.Stat(p); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s left behind (%v)", p, err)
		}
	}
	if daemonPID != 0 && startTime(daemonPID) != "" {
		t.Errorf("dockerd (pid %d) still running", daemonPID)
	}
	if l, err := Leftovers(testPrefix); err != nil || len(l) > 0 {
		t.Errorf("Leftovers: %v (%v)", l, err)
	}
	b, _ := os.ReadFile("/proc/self/mountinfo")
	if strings.Contains(string(b), s.Project) {
		t.Errorf("mounts of %s left:\n%s", s.Project, b)
	}
}

func startTest(t *testing.T, program string, log *strings.Builder, offloads bool) *Net {
	t.Helper()
	root := t.TempDir()
	certs := t.TempDir()
	os.WriteFile(filepath.Join(certs, "hello"), []byte("hi\n"), 0o644)
	t0 := time.Now()
	n, err := Start(context.Background(), Options{Prefix: testPrefix, Root: root, Program: program, CertDir: certs, Offloads: offloads, Log: log, Verbose: true})
	if err != nil {
		t.Fatalf("Start: %v\nlog:\n%s", err, log)
	}
	t.Logf("Start took %.2f s", time.Since(t0).Seconds())
	return n
}

// TestDocker runs the whole path: a real private daemon, an image of a
// static and of a dynamic program, the program started in the server
// container through ServerArgv and reached from the client container's
// namespace, MTU 1500 and offloads off there, Close twice, nothing left.
func TestDocker(t *testing.T) {
	needDocker(t)
	for _, tc := range []struct {
		name     string
		cgo      bool
		offloads bool
	}{{"static", false, false}, {"dynamic-offloads-default", true, true}} {
		t.Run(tc.name, func(t *testing.T) {
			prog := buildEcho(t, tc.cgo)
			var log strings.Builder
			n := startTest(t, prog, &log, tc.offloads)
			s, dpid := n.st, n.daemon.cmd.Process.Pid
			t.Cleanup(func() { n.Close() })
			t.Logf("log:\n%s", log.String())
			i := n.Info
			if i.MTU != 1500 || i.ClientIface != "eth0" || i.ClientAddr == "" || i.ServerAddr == "" || !i.DaemonStarted || i.DaemonVersion == "" || !strings.Contains(i.Compose, "compose") {
				t.Errorf("Info %+v", i)
			}
			if i.CongestionControl["client"] == "" || i.CongestionControl["server"] == "" {
				t.Errorf("congestion control %v", i.CongestionControl)
			}
			off := i.Offloads.(Offloads)
			if len(off.Devices) != 4 {
				t.Errorf("offloads of %d devices, want 4: %v", len(off.Devices), off.Devices)
			}
			for d, o := range off.Devices {
				if !tc.offloads && (o.TSO || o.GSO || o.GRO) {
					t.Errorf("%s: offloads %+v, want all off", d, o)
				}
				if tc.offloads && !(o.TSO && o.GSO) {
					t.Errorf("%s: offloads %+v, want Docker's (the kernel's) default TSO and GSO on", d, o)
				}
			}
			if off.Default != tc.offloads {
				t.Errorf("offloads default %v, want %v", off.Default, tc.offloads)
			}
			wantLib := tc.cgo
			hasLib := false
			for _, f := range i.ImageFiles {
				hasLib = hasLib || strings.Contains(f, "libc.so")
			}
			if hasLib != wantLib || !strings.Contains(strings.Join(i.ImageFiles, " "), ProgramPath) {
				t.Errorf("image files %v: libc %v, want %v", i.ImageFiles, hasLib, wantLib)
			}
			// The program in the server container, as the caller starts
			// s_server: stdin kept open, stdout streamed.
			addr := net.JoinHostPort(i.ServerAddr, "4433")
			argv := n.ServerArgv([]string{addr})
			cmd := exec.Command(argv[0], argv[1:]...)
			stdin, _ := cmd.StdinPipe()
			defer stdin.Close()
			stdout, _ := cmd.StdoutPipe()
			cmd.Stderr = os.Stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			defer func() { cmd.Process.Kill(); cmd.Wait() }()
			line, err := bufio.NewReader(stdout).ReadString('\n')
			if err != nil || line != "LISTEN\n" {
				t.Fatalf("the program in the server container said %q (%v)", line, err)
			}
			var reply string
			var mtu int
			n.Client.Do(func() {
				var c net.Conn
				if c, err = net.DialTimeout("tcp", addr, 5*time.Second); err != nil {
					return
				}
				defer c.Close()
				fmt.Fprintf(c, "ping\n")
				c.SetDeadline(time.Now().Add(5 * time.Second))
				reply, err = bufio.NewReader(c).ReadString('\n')
				var ifc *net.Interface
				if ifc, err = net.InterfaceByName("eth0"); err == nil {
					mtu = ifc.MTU
				}
			})
			if err != nil || reply != "ping\n" || mtu != 1500 {
				t.Fatalf("from the client container: reply %q, eth0 MTU %d, err %v", reply, mtu, err)
			}
			// Stopping the command stops the program in the container.
			cmd.Process.Kill()
			cmd.Wait()
			for end := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
				top, err := n.tools.docker(context.Background(), s.socket(), "top", i.ServerContainer)
				if err != nil {
					t.Fatal(err)
				}
				if !strings.Contains(top, ProgramPath) {
					break
				}
				if time.Now().After(end) {
					t.Fatalf("the program outlived its docker exec by 10 s:\n%s", top)
				}
			}
			select {
			case <-n.Done():
				t.Fatalf("Done closed on an intact path: %v", n.Err())
			default:
			}
			t0 := time.Now()
			if err := n.Close(); err != nil {
				t.Fatal(err)
			}
			t.Logf("Close took %.2f s", time.Since(t0).Seconds())
			if err := n.Close(); err != nil {
				t.Fatalf("second Close: %v", err)
			}
			if n.Err() != nil {
				t.Errorf("Err after Close: %v", n.Err())
			}
			noLeftovers(t, s, dpid)
		})
	}
}

// TestDockerContainerDies kills the client container from outside: Done
// closes, Err names it, Close still removes everything.
func TestDockerContainerDies(t *testing.T) {
	needDocker(t)
	var log strings.Builder
	n := startTest(t, buildEcho(t, false), &log, false)
	s, dpid := n.st, n.daemon.cmd.Process.Pid
	defer n.Close()
	if _, err := n.tools.docker(context.Background(), s.socket(), "kill", n.Info.ClientContainer); err != nil {
		t.Fatal(err)
	}
	select {
	case <-n.Done():
	case <-time.After(20 * time.Second):
		t.Fatal("Done did not close after the client container was killed")
	}
	if err := n.Err(); !errors.Is(err, ErrFailed) || !strings.Contains(err.Error(), n.Info.ClientContainer) || !strings.Contains(err.Error(), "client") {
		t.Fatalf("Err = %v, want the client container named", err)
	}
	if err := n.Close(); err != nil {
		t.Fatal(err)
	}
	noLeftovers(t, s, dpid)
}

// TestDockerKilledRun leaves a run as SIGKILL would (the parent gone, its
// daemon, containers, network and image still there): Leftovers lists
// them, Clean removes them, and then nothing is left.
func TestDockerKilledRun(t *testing.T) {
	needDocker(t)
	var log strings.Builder
	n := startTest(t, buildEcho(t, false), &log, false)
	s, dpid := n.st, n.daemon.cmd.Process.Pid
	n.abandon()
	left, err := Leftovers(testPrefix)
	if err != nil {
		t.Fatal(err)
	}
	all := strings.Join(left, "\n")
	for _, want := range []string{"dockerd (pid", "container " + n.Info.ClientContainer, "container " + n.Info.ServerContainer, "network " + n.Info.Network, "image " + strings.Fields(n.Info.Image)[0], "bridge " + s.Project, "data root", "temp dir " + s.Dir} {
		if !strings.Contains(all, want) {
			t.Errorf("Leftovers lack %q:\n%s", want, all)
		}
	}
	var clog strings.Builder
	t0 := time.Now()
	removed, err := Clean(context.Background(), testPrefix, &clog)
	if err != nil {
		t.Fatalf("Clean: %v\n%s", err, clog.String())
	}
	t.Logf("Clean took %.2f s: %s", time.Since(t0).Seconds(), strings.Join(removed, ", "))
	noLeftovers(t, s, dpid)
}

// abandon leaves the path as a killed run would: the watcher and threads
// end, the daemon and everything in it stay, and the state file names a
// parent that is gone (for the tests of Leftovers and Clean).
func (n *Net) abandon() {
	n.closing.Store(true)
	n.stopWatch()
	n.closeThreads()
	n.closed = true
	n.st.ParentStart = "gone"
	n.st.write()
}
