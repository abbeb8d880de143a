package linkemu

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// helperEnv selects what TestHelperProcess does in a child process.
const helperEnv = "PQR_LINKEMU_HELPER"

// TestHelperProcess is not a test: the cleanup and rootless tests run the
// test binary again with helperEnv set, to fail, crash or run without root.
func TestHelperProcess(t *testing.T) {
	mode := os.Getenv(helperEnv)
	if mode == "" {
		t.Skip("helper for the cleanup and rootless tests; does something only in their child processes")
	}
	sc := Symmetric("helper", Direction{Delay: time.Millisecond, Rate: Unlimited}, 1)
	switch mode {
	case "fail": // a failing test that set up its link the usual way
		startLink(t, sc)
		t.Fatal("deliberate failure")
	case "crash": // dies without any cleanup, like a SIGKILL
		if _, err := Start(context.Background(), sc); err != nil {
			t.Fatal(err)
		}
		os.Exit(3)
	case "rootless-denied":
		_, err := Start(context.Background(), sc)
		fmt.Printf("ERROR: %v\n", err)
	case "rootless-ok":
		l, err := StartWith(context.Background(), sc, Options{
			TunPath: os.Getenv("PQR_TUN"), NetnsDir: os.Getenv("PQR_NETNS_DIR")})
		if err != nil {
			t.Fatalf("rootless start: %v", err)
		}
		rep, err := l.SelfTest(context.Background(), SelfTestConfig{Probes: 20})
		if err != nil {
			t.Fatalf("rootless self-test: %v", err)
		}
		if err := l.Close(); err != nil {
			t.Fatalf("rootless close: %v", err)
		}
		fmt.Printf("ROOTLESS OK uid %d p50 %.3f ms\n", os.Getuid(), rep.P50Ms)
	default:
		t.Fatalf("unknown helper mode %q", mode)
	}
}

func helper(t *testing.T, mode string, extraEnv ...string) (*exec.Cmd, string, error) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperProcess$", "-test.v", "-test.count=1")
	cmd.Env = append(append(os.Environ(), helperEnv+"="+mode), extraEnv...)
	out, err := cmd.CombinedOutput()
	return cmd, string(out), err
}

func TestCleanupAfterFailingTest(t *testing.T) {
	requireLink(t) // not parallel: concurrent traffic in one process competes for Go's Ps and skews timing
	cmd, out, err := helper(t, "fail")
	if err == nil || !strings.Contains(out, "deliberate failure") {
		t.Fatalf("helper did not fail as planned: %v\n%s", err, out)
	}
	if strings.Contains(out, "left behind") {
		t.Errorf("the failing test's own cleanup check fired:\n%s", out)
	}
	if left := ourNamespaces(t, cmd.Process.Pid); len(left) > 0 {
		t.Errorf("namespaces left after a failing test: %v", left)
	}
}

func TestCleanAfterCrash(t *testing.T) {
	requireLink(t) // not parallel: concurrent traffic in one process competes for Go's Ps and skews timing
	cmd, out, err := helper(t, "crash")
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 3 {
		t.Fatalf("helper did not crash as planned: %v\n%s", err, out)
	}
	pid := cmd.Process.Pid
	left := ourNamespaces(t, pid)
	if len(left) != 2 {
		t.Fatalf("a crashed process should leave its two namespaces, found %v", left)
	}
	prefix := fmt.Sprintf("%s%d-", DefaultPrefix, pid)
	rep, err := Clean("", prefix, false)
	if err != nil {
		t.Fatalf("Clean: %v", err)
	}
	if !slices.Equal(rep.Removed, left) {
		t.Errorf("Clean removed %v, want %v", rep.Removed, left)
	}
	if after := ourNamespaces(t, pid); len(after) > 0 {
		t.Errorf("left after Clean: %v", after)
	}
}

func TestCleanKeepsLiveLinks(t *testing.T) {
	requireLink(t) // not parallel: concurrent traffic in one process competes for Go's Ps and skews timing
	l := startLink(t, Symmetric("live", Direction{Rate: Unlimited}, 1))
	prefix := strings.TrimSuffix(l.Endpoint(A).Namespace, "-a")
	rep, err := Clean("", prefix, false)
	if err != nil || len(rep.Removed) != 0 || len(rep.InUse) != 2 {
		t.Fatalf("Clean of a live link's prefix: %+v, %v", rep, err)
	}
	if _, err := os.Stat(l.Endpoint(A).Path); err != nil {
		t.Fatalf("live namespace gone: %v", err)
	}
	if _, err := Clean("", "Bad Prefix", false); err == nil {
		t.Error("Clean accepted an invalid prefix")
	}
}

// rootlessChild runs the helper as uid/gid 65534 on the host, mapped to 0
// inside a new user + network + mount namespace: what 'unshare -Urnm' gives
// an ordinary user.
func rootlessChild(t *testing.T, bin, mode string, env ...string) (string, error) {
	cmd := exec.Command(bin, "-test.run=^TestHelperProcess$", "-test.v", "-test.count=1")
	cmd.Env = append([]string{helperEnv + "=" + mode, "PATH=/usr/bin:/bin", "HOME=/"}, env...)
	cmd.Dir = "/"
	cmd.SysProcAttr = &syscall.SysProcAttr{
		Cloneflags:  syscall.CLONE_NEWUSER | syscall.CLONE_NEWNET | syscall.CLONE_NEWNS,
		UidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: 65534, Size: 1}},
		GidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: 65534, Size: 1}},
		Credential:  &syscall.Credential{Uid: 0, Gid: 0, NoSetGroups: true},
	}
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func TestRootless(t *testing.T) {
	requireLink(t) // not parallel: concurrent traffic in one process competes for Go's Ps and skews timing
	// A directory the unprivileged child can read, holding a copy of this
	// test binary.
	dir := t.TempDir()
	for _, d := range []string{filepath.Dir(dir), dir} {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	bin := filepath.Join(dir, "linkemu.test")
	if err := copyFile(os.Args[0], bin, 0o755); err != nil {
		t.Fatal(err)
	}
	var st unix.Stat_t
	if err := unix.Stat(DefaultTunPath, &st); err != nil {
		t.Fatal(err)
	}
	if st.Mode&0o006 != 0o006 { // the system's device is not open to others
		out, err := rootlessChild(t, bin, "rootless-denied")
		if err != nil && strings.Contains(out, "operation not permitted") && !strings.Contains(out, "ERROR") {
			t.Skipf("this machine does not allow unprivileged user namespaces: %v\n%s", err, out)
		}
		if !strings.Contains(out, "ERROR: link emulator cannot run here") || !strings.Contains(out, "permission denied") ||
			!strings.Contains(out, fmt.Sprintf("mode %04o", st.Mode&0o7777)) {
			t.Errorf("unprivileged start does not say why it cannot run (%v):\n%s", err, out)
		} else {
			t.Logf("without access: %s", strings.TrimSpace(grepLine(out, "ERROR")))
		}
	}
	// A TUN node of our own that others may open (same device numbers as
	// /dev/net/tun; the system's node is not touched), and a namespace
	// directory the child owns: the link must work without root.
	node := filepath.Join(dir, "tun")
	if err := unix.Mknod(node, unix.S_IFCHR|0o666, int(st.Rdev)); err != nil {
		t.Skipf("cannot create a TUN device node for the rootless test: %v", err)
	}
	os.Chmod(node, 0o666)
	nsdir := filepath.Join(dir, "netns")
	if err := os.Mkdir(nsdir, 0o777); err != nil {
		t.Fatal(err)
	}
	os.Chmod(nsdir, 0o777)
	out, err := rootlessChild(t, bin, "rootless-ok", "PQR_TUN="+node, "PQR_NETNS_DIR="+nsdir)
	if fd, oerr := unix.Open(node, unix.O_RDWR, 0); oerr != nil {
		t.Skipf("the copied TUN node is unusable on this filesystem (nodev?): %v", oerr)
	} else {
		unix.Close(fd)
	}
	if err != nil || !strings.Contains(out, "ROOTLESS OK uid 0") {
		t.Fatalf("rootless link failed: %v\n%s", err, out)
	}
	t.Log(strings.TrimSpace(grepLine(out, "ROOTLESS")))
}

func grepLine(s, sub string) string {
	for _, line := range strings.Split(s, "\n") {
		if strings.Contains(line, sub) {
			return line
		}
	}
	return ""
}

func copyFile(src, dst string, mode os.FileMode) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
