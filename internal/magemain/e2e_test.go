package magemain

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"pqrepro/internal/treelock"
)

// These tests run `go run mage.go` in a temporary copy of the tree, as a
// person or CI does, with real processes and real signals.

var (
	cloneOnce sync.Once
	cloneDir  string
	cloneErr  string // why there is no clone: the tests skip
)

// clone returns a copy of the tree shared by the tests of this file (one
// compile instead of one per test): the tracked and untracked (not
// ignored) files, in a temporary directory removed by TestMain.
func clone(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: builds the magefile in a temporary copy of the tree (about 30 s on a cold cache)")
	}
	cloneOnce.Do(func() { cloneDir, cloneErr = makeClone() })
	if cloneErr != "" {
		t.Skip(cloneErr)
	}
	return cloneDir
}

func TestMain(m *testing.M) {
	code := m.Run()
	if cloneDir != "" {
		os.RemoveAll(cloneDir)
	}
	os.Exit(code)
}

func makeClone() (string, string) {
	src, err := filepath.Abs("../..")
	if err != nil {
		return "", err.Error()
	}
	if _, err := exec.LookPath("git"); err != nil {
		return "", fmt.Sprintf("git lists the files to copy: %v", err)
	}
	out, err := exec.Command("git", "-C", src, "ls-files", "-z", "-co", "--exclude-standard").Output()
	if err != nil {
		return "", fmt.Sprintf("not a git checkout (%v): the test copies the tree's files", err)
	}
	dst, err := os.MkdirTemp("", "magemain-e2e-")
	if err != nil {
		return "", err.Error()
	}
	for _, f := range strings.Split(strings.TrimRight(string(out), "\x00"), "\x00") {
		fi, err := os.Stat(filepath.Join(src, f))
		if os.IsNotExist(err) {
			continue // deleted in the work tree
		}
		if err == nil {
			var b []byte
			if b, err = os.ReadFile(filepath.Join(src, f)); err == nil {
				p := filepath.Join(dst, f)
				if err = os.MkdirAll(filepath.Dir(p), 0o755); err == nil {
					err = os.WriteFile(p, b, fi.Mode().Perm())
				}
			}
		}
		if err != nil {
			os.RemoveAll(dst)
			return "", fmt.Sprintf("copy the tree: %v", err)
		}
	}
	return dst, ""
}

// linkOpenSSL makes the copy use the source tree's OpenSSL build (made
// once by `mage test` or `mage tls:openssl`, keyed by the source hash)
// instead of building it again for minutes: Study A's quick profile runs
// the OpenSSL stack. It links again after a test's `mage clean` removed
// the link. It reports whether the copy has a build.
func linkOpenSSL(root string) bool {
	dst := filepath.Join(root, ".cache", "openssl")
	if _, err := os.Stat(dst); err == nil {
		return true
	}
	src, err := filepath.Abs(filepath.Join("..", "..", ".cache", "openssl"))
	if err != nil {
		return false
	}
	if fi, err := os.Stat(src); err != nil || !fi.IsDir() {
		return false
	}
	os.Remove(dst) // a dangling link
	os.MkdirAll(filepath.Dir(dst), 0o755)
	return os.Symlink(src, dst) == nil
}

// mage runs `go run mage.go args...` in root and returns its output.
func goRunMage(ctx context.Context, root string, env []string, args ...string) (string, error) {
	c := exec.CommandContext(ctx, "go", append([]string{"run", "mage.go"}, args...)...)
	c.Dir = root
	c.Env = append(os.Environ(), env...)
	out, err := c.CombinedOutput()
	return string(out), err
}

func TestConcurrentCommandsAllCompile(t *testing.T) {
	root := clone(t)
	ctx := context.Background()
	if out, err := goRunMage(ctx, root, nil, "status"); err != nil { // warm the build cache
		t.Fatalf("status: %v\n%s", err, out)
	}
	const pairs = 10
	for i := range pairs {
		// The second command of each pair alternates between a writer
		// (build, which waits for no one here) and a reader.
		second := []string{"status", "build"}[i%2]
		var wg sync.WaitGroup
		outs := make([]string, 2)
		errs := make([]error, 2)
		for k, target := range []string{"status", second} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				outs[k], errs[k] = goRunMage(ctx, root, nil, target)
			}()
		}
		wg.Wait()
		for k := range 2 {
			if errs[k] != nil || strings.Contains(outs[k], "error compiling") {
				t.Errorf("pair %d, command %d: %v\n%s", i, k, errs[k], outs[k])
			}
		}
	}
	if _, err := os.Stat(filepath.Join(root, "mage_output_file.go")); err == nil {
		t.Error("mage_output_file.go left in the root")
	}
}

func TestWritersWaitRunsRefuse(t *testing.T) {
	root := clone(t)
	ctx := context.Background()
	if out, err := goRunMage(ctx, root, nil, "-l"); err != nil {
		t.Fatalf("-l: %v\n%s", err, out)
	}
	// This test process plays a build in progress.
	l, err := treelock.Acquire(ctx, root, treelock.Write, "build", treelock.Refuse, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release()
	held := fmt.Sprintf("build (PID %d, started ", os.Getpid())

	out, err := goRunMage(ctx, root, []string{"PQREPRO_PROFILE=quick", "PQREPRO_SETTLE=0"}, "tls:run")
	if err == nil || !strings.Contains(out, "tls:run refuses to start while "+held) {
		t.Errorf("tls:run while a build holds the lock: %v, want a refusal naming the build\n%s", err, out)
	}
	if out, err := goRunMage(ctx, root, nil, "status"); err != nil || !strings.Contains(out, "running now: "+held) {
		t.Errorf("status alongside a writer: %v, want it to run and name the writer\n%s", err, out)
	}

	// clean waits, saying for whom, and runs when the build ends.
	c := exec.Command("go", "run", "mage.go", "clean")
	c.Dir = root
	var buf syncBuffer
	c.Stdout, c.Stderr = &buf, &buf
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(2 * time.Minute)
	for !strings.Contains(buf.String(), "clean: waiting for "+held) {
		if time.Now().After(deadline) {
			c.Process.Kill()
			t.Fatalf("clean did not say it waits:\n%s", buf.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	l.Release()
	if err := c.Wait(); err != nil || !strings.Contains(buf.String(), "clean: ") {
		t.Errorf("clean after the build ended: %v\n%s", err, buf.String())
	}
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// children lists the child PIDs of pid.
func children(pid int) []int {
	// Each thread lists the children it forked.
	files, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/children", pid))
	var out []int
	for _, file := range files {
		b, _ := os.ReadFile(file)
		for _, f := range strings.Fields(string(b)) {
			if n, err := strconv.Atoi(f); err == nil {
				out = append(out, n)
			}
		}
	}
	return out
}

func alive(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	// A zombie (state Z) has exited; its parent has not reaped it yet.
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
	return len(f) > 0 && f[0] != "Z"
}

// tlsTree is a clone whose quick Study A profile lasts long enough to be
// interrupted (about a minute instead of 2 s).
func tlsTree(t *testing.T) (root string, spec []byte) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root: tls:run captures on lo")
	}
	root = clone(t)
	if !linkOpenSSL(root) {
		t.Skip("Study A's quick profile runs the OpenSSL stack, whose build is not in .cache/openssl: `go run mage.go tls:openssl` makes it (minutes, once; `go run mage.go test` does it first)")
	}
	p := filepath.Join(root, "experiments", "tls.toml")
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	const quick, long = "[profiles.quick]\nn = 30\n", "[profiles.quick]\nn = 600\n"
	if !bytes.Contains(b, []byte(long)) {
		if !bytes.Contains(b, []byte(quick)) {
			t.Skipf("experiments/tls.toml has no %q to lengthen", quick)
		}
		b = bytes.Replace(b, []byte(quick), []byte(long), 1)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if out, err := goRunMage(context.Background(), root, nil, "-l"); err != nil {
		t.Fatalf("-l: %v\n%s", err, out)
	}
	return root, b
}

// A started `go run mage.go tls:run` and its process tree.
type tree struct {
	cmd                  *exec.Cmd
	log                  *syncBuffer
	goRun, entry, target int // go run, mage.go, the compiled magefile
}

func startRun(t *testing.T, root, target string) *tree {
	t.Helper()
	c := exec.Command("go", "run", "mage.go", target)
	c.Dir = root
	c.Env = append(os.Environ(), "PQREPRO_PROFILE=quick", "PQREPRO_SETTLE=0")
	c.SysProcAttr = &syscall.SysProcAttr{Setsid: true} // a group of its own, as in a terminal
	tr := &tree{cmd: c, log: &syncBuffer{}}
	c.Stdout, c.Stderr = tr.log, tr.log
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	tr.goRun = c.Process.Pid
	t.Cleanup(func() { syscall.Kill(-tr.goRun, syscall.SIGKILL); c.Wait() })
	return tr
}

// waitFor waits until the log says s, or fails.
func (tr *tree) waitFor(t *testing.T, s string) {
	t.Helper()
	tr.waitUntil(t, fmt.Sprintf("%q in the output", s), func() bool { return strings.Contains(tr.log.String(), s) })
	if c := children(tr.goRun); len(c) == 1 {
		tr.entry = c[0]
		if c := children(tr.entry); len(c) == 1 {
			tr.target = c[0]
		}
	}
	if tr.entry == 0 || tr.target == 0 {
		t.Fatalf("process tree of go run (PID %d) not found:\n%s", tr.goRun, tr.log.String())
	}
}

// waitUntil polls cond until it holds. It fails at once when the run
// has ended by itself (its go run process exited), and after three
// minutes, with the run's output either way.
func (tr *tree) waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(3 * time.Minute)
	for !cond() {
		if !alive(tr.goRun) {
			t.Fatalf("the run ended by itself before %s:\n%s", what, tr.log.String())
		}
		if time.Now().After(deadline) {
			t.Fatalf("no %s after 3 minutes:\n%s", what, tr.log.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// end waits until every process of the tree has exited.
func (tr *tree) end(t *testing.T) {
	t.Helper()
	done := make(chan struct{})
	go func() { tr.cmd.Wait(); close(done) }()
	deadline := time.After(time.Minute)
	for _, pid := range []int{tr.goRun, tr.entry, tr.target} {
		for alive(pid) {
			select {
			case <-deadline:
				t.Fatalf("PID %d still runs a minute after the signal:\n%s", pid, tr.log.String())
			case <-time.After(20 * time.Millisecond):
			}
		}
	}
	<-done
}

// assertNothingLeft checks that the run left no trace: no new run, no
// incomplete or stage folder, the spec unchanged (nothing pinned), the
// write lock free.
func assertNothingLeft(t *testing.T, root string, spec []byte, runsBefore []string, log string) {
	t.Helper()
	runs, _ := filepath.Glob(filepath.Join(root, "data", "tls", "*"))
	if fmt.Sprint(runs) != fmt.Sprint(runsBefore) {
		t.Errorf("data/tls now holds %v, before %v", runs, runsBefore)
	}
	for _, pat := range []string{"data/*/.incomplete-*", ".stage-*"} {
		if m, _ := filepath.Glob(filepath.Join(root, pat)); len(m) > 0 {
			t.Errorf("left behind: %v", m)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(root, "experiments", "tls.toml")); !bytes.Equal(b, spec) {
		t.Error("experiments/tls.toml changed: the interrupted run was pinned")
	}
	if st, h, err := treelock.Inspect(root, treelock.Write); err != nil || st != treelock.Free {
		t.Errorf("write lock after the run: %v %v %v", st, h, err)
	}
	if t.Failed() {
		t.Logf("output:\n%s", log)
	}
}

func TestSignalsStopTheRunCleanly(t *testing.T) {
	root, spec := tlsTree(t)
	runsBefore, _ := filepath.Glob(filepath.Join(root, "data", "tls", "*"))
	const (
		early = "tls:run: "       // the target has started
		mid   = "tls: handshakes" // the first progress line: recording
	)
	for _, tc := range []struct {
		to   string // go run, mage.go, magefile, group
		sig  syscall.Signal
		when string
	}{
		{"group", syscall.SIGINT, mid}, // Ctrl-C in a terminal
		{"go run", syscall.SIGTERM, mid},
		{"go run", syscall.SIGTERM, early},
		{"mage.go", syscall.SIGINT, mid},
		{"mage.go", syscall.SIGTERM, early},
		{"magefile", syscall.SIGINT, mid},
		{"magefile", syscall.SIGTERM, mid},
		{"magefile", syscall.SIGINT, early},
		{"group", syscall.SIGTERM, early}, // kill -TERM -PGID, timeout(1)
	} {
		t.Run(fmt.Sprintf("%s-%s-%s", strings.ReplaceAll(tc.to, " ", ""), tc.sig, map[string]string{early: "early", mid: "recording"}[tc.when]), func(t *testing.T) {
			tr := startRun(t, root, "tls:run")
			tr.waitFor(t, tc.when)
			pid := map[string]int{"group": -tr.goRun, "go run": tr.goRun, "mage.go": tr.entry, "magefile": tr.target}[tc.to]
			if err := syscall.Kill(pid, tc.sig); err != nil {
				t.Fatal(err)
			}
			tr.end(t)
			assertNothingLeft(t, root, spec, runsBefore, tr.log.String())
			if out := tr.log.String(); !strings.Contains(out, "interrupted") && !strings.Contains(out, "canceled") {
				t.Errorf("the run did not say it was interrupted:\n%s", out)
			}
		})
	}
}

// A SIGKILL leaves the run's folder and a stale lock; status says so and
// names clean, which removes them.
func TestStatusReportsWhatAKillLeaves(t *testing.T) {
	root, _ := tlsTree(t)
	tr := startRun(t, root, "tls:run")
	tr.waitFor(t, "tls: handshakes")
	if err := syscall.Kill(-tr.target, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	tr.end(t)
	// The quick profile runs the bridge path too: a SIGKILL leaves its
	// namespaces, named after the killed process. Whatever the checks
	// below find, they do not outlive the test.
	killedNetns := fmt.Sprintf("pqrb%d-", tr.target)
	t.Cleanup(func() { removeNetns(killedNetns) })
	out, err := goRunMage(context.Background(), root, nil, "status")
	if err != nil {
		t.Fatalf("status: %v\n%s", err, out)
	}
	for _, want := range []string{"`go run mage.go clean` removes them", "data/tls/.incomplete-", "write.lock names tls:run (PID"} {
		if !strings.Contains(out, want) {
			t.Errorf("status does not say %q:\n%s", want, out)
		}
	}
	if netnsNamed(killedNetns) && !strings.Contains(out, killedNetns) {
		t.Errorf("status does not name the killed run's namespaces %s*:\n%s", killedNetns, out)
	}
	if out, err := goRunMage(context.Background(), root, nil, "clean"); err != nil {
		t.Fatalf("clean: %v\n%s", err, out)
	}
	if out, err := goRunMage(context.Background(), root, nil, "net:clean"); err != nil {
		t.Fatalf("net:clean: %v\n%s", err, out)
	}
	if netnsNamed(killedNetns) {
		t.Errorf("net:clean left namespaces %s*", killedNetns)
	}
	out, _ = goRunMage(context.Background(), root, nil, "status")
	if strings.Contains(out, "leftovers") {
		t.Errorf("status after clean and net:clean still reports leftovers:\n%s", out)
	}
}

// netnsNamed reports whether a network namespace's name starts with
// prefix.
func netnsNamed(prefix string) bool {
	out, _ := exec.Command("ip", "netns", "list").Output()
	for _, f := range strings.Fields(string(out)) {
		if strings.HasPrefix(f, prefix) {
			return true
		}
	}
	return false
}

// netnsOf lists the named network namespaces (iproute2's, in /run/netns)
// of process pid: each instrument names its namespaces <prefix><pid>-...,
// the prefix of letters and hyphens.
//
// It matches no instrument's prefix because internal/ is the bottom
// layer: its tests import no experiment (TestLayering), and which
// namespaces a target makes is its study's business.
func netnsOf(pid int) []string {
	entries, _ := os.ReadDir("/run/netns")
	var names []string
	for _, e := range entries {
		rest := strings.TrimLeft(e.Name(), "abcdefghijklmnopqrstuvwxyz-")
		if strings.HasPrefix(rest, strconv.Itoa(pid)+"-") {
			names = append(names, e.Name())
		}
	}
	return names
}

// removeNetns deletes every namespace whose name starts with prefix (one
// process's, by the PID in the prefix).
func removeNetns(prefix string) {
	out, _ := exec.Command("ip", "netns", "list").Output()
	for _, f := range strings.Fields(string(out)) {
		if strings.HasPrefix(f, prefix) {
			exec.Command("ip", "netns", "del", f).Run()
		}
	}
}

// net:run stopped while its links are up removes its namespaces, commits
// and pins nothing, whichever way it is stopped.
func TestNetRunStopsCleanly(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: net:run creates network namespaces")
	}
	if _, err := os.Stat("/dev/net/tun"); err != nil {
		t.Skipf("no TUN device: %v", err)
	}
	root := clone(t)
	spec, err := os.ReadFile(filepath.Join(root, "experiments", "net.toml"))
	if err != nil {
		t.Fatal(err)
	}
	runsBefore, _ := filepath.Glob(filepath.Join(root, "data", "net", "*"))
	for _, tc := range []struct {
		name string
		sig  syscall.Signal
	}{{"group", syscall.SIGINT}, {"go run", syscall.SIGTERM}} {
		t.Run(strings.ReplaceAll(tc.name, " ", "")+"-"+tc.sig.String(), func(t *testing.T) {
			tr := startRun(t, root, "net:run")
			// The link is up from "starting its link" on, through its
			// self-test and the handshakes. The test stops the run as soon
			// as the link's namespace exists: waiting for the self-test's
			// result would make it depend on the machine's load (a loaded
			// CI machine fails the self-test twice, and the run ends by
			// itself before it can be stopped).
			tr.waitFor(t, "starting its link")
			tr.waitUntil(t, fmt.Sprintf("a namespace of PID %d", tr.target), func() bool { return len(netnsOf(tr.target)) > 0 })
			pid := map[string]int{"group": -tr.goRun, "go run": tr.goRun}[tc.name]
			if err := syscall.Kill(pid, tc.sig); err != nil {
				t.Fatal(err)
			}
			tr.end(t)
			if m := netnsOf(tr.target); len(m) > 0 {
				t.Errorf("namespaces left: %v", m)
			}
			runs, _ := filepath.Glob(filepath.Join(root, "data", "net", "*"))
			if fmt.Sprint(runs) != fmt.Sprint(runsBefore) {
				t.Errorf("data/net now holds %v, before %v", runs, runsBefore)
			}
			if m, _ := filepath.Glob(filepath.Join(root, "data", "*", ".incomplete-*")); len(m) > 0 {
				t.Errorf("left behind: %v", m)
			}
			if b, _ := os.ReadFile(filepath.Join(root, "experiments", "net.toml")); !bytes.Equal(b, spec) {
				t.Error("experiments/net.toml changed: the interrupted run was pinned")
			}
			if t.Failed() {
				t.Logf("output:\n%s", tr.log.String())
			}
		})
	}
}

// A signal that kills an experiment's child process (rp2040js under node)
// fails the run like any other stop: nothing committed, pinned or left
// running.
func TestPicoRunChildSignalled(t *testing.T) {
	for _, tool := range []string{"node", "npm", "arm-none-eabi-gcc"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("pico:run needs %s (go run mage.go pico:run installs it): %v", tool, err)
		}
	}
	root := clone(t)
	spec, err := os.ReadFile(filepath.Join(root, "experiments", "pico.toml"))
	if err != nil {
		t.Fatal(err)
	}
	runsBefore, _ := filepath.Glob(filepath.Join(root, "data", "pico", "*"))
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) {
			tr := startRun(t, root, "pico:run")
			tr.waitFor(t, "pico:run: ")
			var node int
			deadline := time.Now().Add(5 * time.Minute)
			for node == 0 {
				for _, c := range children(tr.target) {
					if b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", c)); bytes.Contains(b, []byte("emulator/run.js")) {
						node = c
					}
				}
				if !alive(tr.target) || time.Now().After(deadline) {
					t.Fatalf("no rp2040js child appeared:\n%s", tr.log.String())
				}
				time.Sleep(50 * time.Millisecond)
			}
			if err := syscall.Kill(node, sig); err != nil {
				t.Fatal(err)
			}
			tr.end(t)
			if alive(node) {
				t.Errorf("rp2040js (PID %d) still runs", node)
			}
			runs, _ := filepath.Glob(filepath.Join(root, "data", "pico", "*"))
			if fmt.Sprint(runs) != fmt.Sprint(runsBefore) {
				t.Errorf("data/pico now holds %v, before %v", runs, runsBefore)
			}
			if m, _ := filepath.Glob(filepath.Join(root, "data", "*", ".incomplete-*")); len(m) > 0 {
				t.Errorf("left behind: %v", m)
			}
			if b, _ := os.ReadFile(filepath.Join(root, "experiments", "pico.toml")); !bytes.Equal(b, spec) {
				t.Error("experiments/pico.toml changed: the failed run was pinned")
			}
			if t.Failed() {
				t.Logf("output:\n%s", tr.log.String())
			}
		})
	}
}
