package dockernet

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// state is what a run writes into its temp dir (stateFile) before it
// starts the daemon. Leftovers and Clean read it to find and remove what
// a killed run left: its daemon, the daemon's data root, its bridge.
type state struct {
	Project     string `json:"project"`      // <prefix><pid>-<n>: compose project, bridge, temp dir
	ParentPID   int    `json:"parent_pid"`   // the run's process
	ParentStart string `json:"parent_start"` // its start time (/proc/<pid>/stat field 22), against PID reuse
	Dir         string `json:"dir"`          // the temp dir: socket, exec root, pidfile, daemon log
	DataRoot    string `json:"data_root"`    // dockerd --data-root, under <Root>/.cache/docker/
}

const stateFile = "state.json"

func (s state) socket() string   { return filepath.Join(s.Dir, "docker.sock") }
func (s state) pidfile() string  { return filepath.Join(s.Dir, "docker.pid") }
func (s state) execRoot() string { return filepath.Join(s.Dir, "exec") }
func (s state) logFile() string  { return filepath.Join(s.Dir, "dockerd.log") }

func (s state) write() error {
	b, _ := json.MarshalIndent(s, "", "  ")
	return os.WriteFile(filepath.Join(s.Dir, stateFile), b, 0o600)
}

func readState(dir string) (state, error) {
	b, err := os.ReadFile(filepath.Join(dir, stateFile))
	if err != nil {
		return state{Dir: dir}, err
	}
	var s state
	if err := json.Unmarshal(b, &s); err != nil {
		return state{Dir: dir}, fmt.Errorf("%s: %w", filepath.Join(dir, stateFile), err)
	}
	s.Dir = dir
	return s, nil
}

// statFields are the fields of /proc/<pid>/stat after the command name
// (field 3 on, so field n is statFields[n-3]), nil when the process does
// not exist.
func statFields(pid int) []string {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return nil
	}
	// The command name (field 2) is in parentheses and may hold spaces.
	i := strings.LastIndexByte(string(b), ')')
	if i < 0 {
		return nil
	}
	return strings.Fields(string(b[i+1:]))
}

// startTime is field 22 of /proc/<pid>/stat (clock ticks since boot), ""
// when the process does not exist or is a zombie.
func startTime(pid int) string {
	f := statFields(pid)
	if len(f) < 20 || f[0] == "Z" {
		return ""
	}
	return f[19]
}

// parentPID is field 4 of /proc/<pid>/stat; 0 when the process is gone.
func parentPID(pid int) int {
	f := statFields(pid)
	if len(f) < 2 {
		return 0
	}
	pp, _ := strconv.Atoi(f[1])
	return pp
}

// alive says whether the run that wrote s is still running.
func (s state) alive() bool {
	return s.ParentPID > 0 && startTime(s.ParentPID) != "" && startTime(s.ParentPID) == s.ParentStart
}

// daemonPID is the pid in the daemon's pidfile if that process runs, else 0.
func (s state) daemonPID() int {
	b, err := os.ReadFile(s.pidfile())
	if err != nil {
		return 0
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || pid <= 0 || startTime(pid) == "" {
		return 0
	}
	return pid
}

// daemon is a private dockerd this process started.
type daemon struct {
	cmd    *exec.Cmd
	exited chan struct{} // closed when it exits
	err    error         // its exit status, set before exited closes
}

// daemonArgs are dockerd's options. They give it its own socket, data root,
// exec root and pidfile, no default bridge (docker0), no iptables or ip6tables
// rules, so that the host's firewall and any system daemon are untouched.
func daemonArgs(s state) []string {
	return []string{
		"--host", "unix://" + s.socket(),
		"--data-root", s.DataRoot,
		"--exec-root", s.execRoot(),
		"--pidfile", s.pidfile(),
		"--bridge=none", "--iptables=false", "--ip6tables=false", "--ip-masq=false",
		"--userland-proxy=false",
	}
}

// startDaemon starts dockerd and waits until its API answers (`docker
// version`), at most wait; a failure carries the tail of its log.
func startDaemon(ctx context.Context, t tools, s state, wait time.Duration) (*daemon, string, error) {
	logf, err := os.Create(s.logFile())
	if err != nil {
		return nil, "", err
	}
	defer logf.Close()
	d := &daemon{cmd: exec.Command(t.Dockerd, daemonArgs(s)...), exited: make(chan struct{})}
	d.cmd.Stdout, d.cmd.Stderr = logf, logf
	// Its own process group: a Ctrl-C to the run's terminal reaches the
	// run, which then stops the daemon in order (Close), not both at once.
	d.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := d.cmd.Start(); err != nil {
		return nil, "", fmt.Errorf("start dockerd: %w", err)
	}
	go func() { d.err = d.cmd.Wait(); close(d.exited) }()
	deadline := time.After(wait)
	for {
		v, verr := t.docker(ctx, s.socket(), "version", "--format", "{{.Server.Version}}")
		if verr == nil && strings.TrimSpace(v) != "" {
			return d, strings.TrimSpace(v), nil
		}
		select {
		case <-d.exited:
			return d, "", fmt.Errorf("dockerd exited at start (%v); its log ends:\n%s", d.err, logTail(s.logFile(), 15))
		case <-ctx.Done():
			return d, "", fmt.Errorf("dockerd start interrupted: %w", ctx.Err())
		case <-deadline:
			return d, "", fmt.Errorf("dockerd did not answer on %s within %s (%v); its log ends:\n%s", s.socket(), wait, verr, logTail(s.logFile(), 15))
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// logTail is the last n lines of a file.
func logTail(path string, n int) string {
	b, _ := os.ReadFile(path)
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return "  " + strings.Join(lines, "\n  ")
}

// stopProcess sends SIGTERM to pid, waits up to grace for exited (or, with
// exited nil, for the process to disappear), then sends SIGKILL.
func stopProcess(pid int, exited <-chan struct{}, grace time.Duration) error {
	gone := func() bool {
		if exited != nil {
			select {
			case <-exited:
				return true
			default:
				return false
			}
		}
		return startTime(pid) == ""
	}
	if gone() {
		return nil
	}
	syscall.Kill(pid, syscall.SIGTERM)
	for end := time.Now().Add(grace); time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
		if gone() {
			return nil
		}
	}
	syscall.Kill(pid, syscall.SIGKILL)
	for end := time.Now().Add(5 * time.Second); time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
		if gone() {
			return fmt.Errorf("dockerd (pid %d) did not stop within %s of SIGTERM and was killed", pid, grace)
		}
	}
	return fmt.Errorf("dockerd (pid %d) survives SIGKILL; stop it by hand", pid)
}

// teardown removes what a run made, in order. It removes, through the daemon
// (if it answers), its containers, networks and images; the daemon itself; the
// bridge if a dead daemon left it; mounts under the data and exec roots; the
// data root and the temp dir. d is the daemon when this process started it
// (nil from Clean). It returns what it removed.
func teardown(ctx context.Context, t tools, s state, d *daemon) ([]string, error) {
	var removed []string
	var errs []error
	pid := s.daemonPID()
	var exited <-chan struct{}
	if d != nil {
		exited = d.exited
		if pid == 0 && d.cmd.Process != nil {
			pid = d.cmd.Process.Pid
		}
	}
	if pid != 0 && t.Docker != "" {
		if _, err := t.docker(ctx, s.socket(), "version"); err == nil {
			ids := func(args ...string) []string {
				out, err := t.docker(ctx, s.socket(), args...)
				if err != nil {
					errs = append(errs, err)
				}
				return strings.Fields(out)
			}
			for _, c := range ids("ps", "-a", "--format", "{{.Names}}") {
				if _, err := t.docker(ctx, s.socket(), "rm", "-f", "-v", c); err != nil {
					errs = append(errs, err)
				} else {
					removed = append(removed, "container "+c)
				}
			}
			for _, n := range ids("network", "ls", "--filter", "type=custom", "--format", "{{.Name}}") {
				if _, err := t.docker(ctx, s.socket(), "network", "rm", n); err != nil {
					errs = append(errs, err)
				} else {
					removed = append(removed, "network "+n)
				}
			}
			for _, im := range ids("images", "-q", "--no-trunc") {
				if _, err := t.docker(ctx, s.socket(), "rmi", "-f", im); err != nil {
					errs = append(errs, err)
				} else {
					removed = append(removed, "image "+im)
				}
			}
		}
	}
	if pid != 0 || d != nil {
		if pid != 0 {
			if err := stopProcess(pid, exited, 15*time.Second); err != nil {
				errs = append(errs, err)
			}
		}
		removed = append(removed, fmt.Sprintf("dockerd (pid %d)", pid))
	}
	if s.Project != "" {
		if _, err := os.Stat("/sys/class/net/" + s.Project); err == nil {
			if _, err := run(ctx, nil, "ip", "link", "del", s.Project); err != nil {
				errs = append(errs, err)
			} else {
				removed = append(removed, "bridge "+s.Project)
			}
		}
	}
	for _, root := range []string{s.DataRoot, s.Dir} {
		if root == "" {
			continue
		}
		unmountUnder(root)
		if _, err := os.Stat(root); err == nil {
			if err := os.RemoveAll(root); err != nil {
				errs = append(errs, fmt.Errorf("remove %s: %w", root, err))
			} else {
				removed = append(removed, root)
			}
		}
	}
	if err := errors.Join(errs...); err != nil {
		return removed, fmt.Errorf("docker path cleanup of %s: %w", s.Project, err)
	}
	return removed, nil
}

// unmountUnder detaches every mount at or below dir (a daemon killed
// without its shutdown leaves overlay and shm mounts), deepest first.
func unmountUnder(dir string) {
	if dir == "" {
		return
	}
	b, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return
	}
	var mps []string
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) > 4 && (f[4] == dir || strings.HasPrefix(f[4], dir+"/")) {
			mps = append(mps, f[4])
		}
	}
	for i := len(mps) - 1; i >= 0; i-- {
		syscall.Unmount(mps[i], syscall.MNT_DETACH)
	}
}
