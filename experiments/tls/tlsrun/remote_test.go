package tlsrun

import (
	"context"
	"crypto/tls"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"pqrepro/experiments/instruments/handshake"
	"pqrepro/experiments/instruments/sshhost"
	"pqrepro/experiments/instruments/sshhost/sshtest"
	"pqrepro/experiments/tls/openssl"
	"pqrepro/internal/provenance"
)

// remoteSpec is tinySpec on loopback and on the remote path.
var remoteSpec = strings.Replace(tinySpec, `cert_keys = ["ed25519"]`, `cert_keys = ["ed25519"]
paths = ["loopback", "remote"]`, 1) + `
[remote]
host = "` + sshtest.Alias + `"
`

// remoteEnv is a test tree whose remote path reaches sh.
func remoteEnv(t *testing.T, sh *sshtest.Host) (*testEnv, RunConfig) {
	e := newEnv(t, remoteSpec)
	cfg := e.config(time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC))
	o := sh.Options()
	cfg.RemoteSSH = &o
	cfg.BuildRoot = repoRoot(t)
	return e, cfg
}

// remoteProcs lists the processes on the played host (below its sshd).
func remoteProcs(sh *sshtest.Host) []int { return sshtest.Descendants(sh.SSHDPID()) }

func waitNoRemote(t *testing.T, sh *sshtest.Host) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for len(remoteProcs(sh)) > 0 && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
	}
	if p := remoteProcs(sh); len(p) > 0 {
		t.Errorf("processes %v still run on the remote host", p)
	}
}

// A quick Study A series across a second host: the servers there, the
// client and the capture here; the records re-derive from the committed
// run; meta.json has the remote host's provenance. Then the host key
// changes and the next run is refused before it starts.
func TestRunRemote(t *testing.T) {
	needRoot(t)
	sh := sshtest.Start(t)
	e, cfg := remoteEnv(t, sh)
	res, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatalf("%v\nlog:\n%s\nsshd:\n%s", err, e.log.String(), sh.Log())
	}
	waitNoRemote(t, sh)
	recs := readRunRecords(t, res.Dir)
	count := map[string]int{}
	for _, r := range recs {
		count[r.Path]++
		if !r.Complete || r.NegotiatedGroup != r.Group || r.ThsNs == nil || r.InprocServerNs == nil {
			t.Errorf("seq %d (%s on %s) incomplete: %+v", r.Seq, r.Config, r.Path, r)
		}
		if r.Path == PathRemote && !strings.HasPrefix(r.Server, sh.RemoteIP+":") {
			t.Errorf("seq %d on the remote path: server %s, want %s", r.Seq, r.Server, sh.RemoteIP)
		}
	}
	if count[PathLoopback] != 16 || count[PathRemote] != 16 {
		t.Fatalf("rows per path %v, want 16 each", count)
	}
	m, err := provenance.Read(res.Dir)
	if err != nil {
		t.Fatal(err)
	}
	if m.Files[RemoteCaptureName] == "" {
		t.Errorf("meta files lack %s: %v", RemoteCaptureName, m.Files)
	}
	rh, _ := m.Measured["remote_host"].(map[string]any)
	clock, _ := rh["clock"].(map[string]any)
	if len(rh["binary_sha256"].(string)) != 64 || rh["kernel"] == "" || rh["cpu_model"] == nil || rh["os"] == "" || clock["bound_ns"] == nil {
		t.Errorf("meta remote_host: %v", rh)
	}
	paths, _ := m.Measured["paths"].(map[string]any)
	if rp, _ := paths[PathRemote].(map[string]any); rp["mtu"] != float64(sshtest.MTU) || rp["interface"] != sh.HostDev {
		t.Errorf("meta paths.remote: %v", rp)
	}
	// The remote path's note says where the servers ran and with which
	// binary; the run-wide notes used to overwrite it.
	if notes := strings.Join(m.Notes, "\n"); !strings.Contains(notes, "remote path: servers on "+sshtest.Alias+" over SSH") {
		t.Errorf("meta notes lack the remote path's: %v", m.Notes)
	}
	rel, _ := filepath.Rel(e.root, res.Dir)
	checkRederive(t, e.root, filepath.ToSlash(rel))

	// The host key changes between runs: refused, nothing registered.
	sh.Rekey()
	specBefore, _ := os.ReadFile(e.spec)
	cfg.Now = func() time.Time { return time.Date(2026, 12, 1, 9, 1, 0, 0, time.UTC) }
	_, err = Run(context.Background(), cfg)
	if !errors.Is(err, sshhost.ErrHostKey) {
		t.Fatalf("run after a host key change: %v, want ErrHostKey", err)
	}
	t.Logf("message: %v", err)
	if got := entries(t, filepath.Join(e.root, "data", "tls")); got != res.RunID {
		t.Errorf("data/tls holds %q, want only the first run", got)
	}
	if after, _ := os.ReadFile(e.spec); string(after) != string(specBefore) {
		t.Error("the refused run changed the spec")
	}
}

// Faults mid-run stop the run with a clear error, register nothing and
// leave no process on the remote host; a full remote disk stops it before
// it starts.
func TestRunRemoteFaults(t *testing.T) {
	needRoot(t)
	for _, c := range []struct {
		name  string
		fault func(t *testing.T, sh *sshtest.Host)
		want  error
		small bool
	}{
		{name: "connection dropped", want: sshhost.ErrConnection, fault: func(t *testing.T, sh *sshtest.Host) {
			sh.DropSessions()
		}},
		{name: "link down", want: sshhost.ErrConnection, fault: func(t *testing.T, sh *sshtest.Host) { sh.LinkDown() }},
		{name: "remote server killed", want: sshhost.ErrRemoteExited, fault: func(t *testing.T, sh *sshtest.Host) {
			n := 0
			for _, pid := range remoteProcs(sh) {
				if comm, _ := os.ReadFile("/proc/" + itoa(pid) + "/comm"); strings.HasPrefix(string(comm), "pqrepro") {
					syscall.Kill(pid, syscall.SIGKILL)
					n++
				}
			}
			if n != 1 {
				t.Errorf("killed %d remote servers, want 1", n)
			}
		}},
		{name: "remote disk full", want: sshhost.ErrDiskFull, small: true},
	} {
		t.Run(strings.ReplaceAll(c.name, " ", "_"), func(t *testing.T) {
			sh := sshtest.Start(t)
			e, cfg := remoteEnv(t, sh)
			if c.small {
				cfg.RemoteSSH.Dir = sh.SmallDir
			}
			specBefore, _ := os.ReadFile(e.spec)
			done := false
			cfg.Progress = func(n, total int) {
				if n == 5 && !done && c.fault != nil {
					done = true
					c.fault(t, sh)
				}
			}
			// A fault must stop the run within seconds (ssh's keepalive
			// is 2 s x 3): a run still going after 3 minutes is a hang,
			// reported as such with every goroutine's stack.
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()
			_, err := Run(ctx, cfg)
			if ctx.Err() != nil {
				buf := make([]byte, 1<<20)
				t.Fatalf("the run did not stop within 3 minutes of the fault (%v); goroutines:\n%s\nlog:\n%s", err, buf[:runtime.Stack(buf, true)], e.log.String())
			}
			if !errors.Is(err, c.want) {
				t.Fatalf("%v, want %v\nlog:\n%s", err, c.want, e.log.String())
			}
			if !strings.Contains(err.Error(), "remote path") || (!c.small && !strings.Contains(err.Error(), "not registered")) {
				t.Errorf("message does not say what happened: %v", err)
			}
			t.Logf("message: %v", err)
			if got := entries(t, filepath.Join(e.root, "data", "tls")); got != "" {
				t.Errorf("data/tls holds %q, want nothing", got)
			}
			if after, _ := os.ReadFile(e.spec); string(after) != string(specBefore) {
				t.Error("the failed run changed the spec")
			}
			waitNoRemote(t, sh)
		})
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

// Every stack runs on the remote path (the OpenSSL harness is deployed
// beside pqrepro).
func TestRemoteUnits(t *testing.T) {
	s := loadTiny(t, strings.Replace(remoteSpec, `paths = ["loopback", "remote"]`, `paths = ["loopback", "remote"]
stacks = ["openssl", "go"]`, 1))
	n := map[string]int{}
	for _, u := range s.Units("quick") {
		n[u.stackName()+"/"+u.Path]++
	}
	if n["openssl/remote"] != 2 || n["go/remote"] != 2 || n["openssl/loopback"] != 2 || n["go/loopback"] != 2 {
		t.Errorf("units per stack/path: %v", n)
	}
}

// TestRemoteStacks: the serve role gets the openssl stack from this
// study, and that stack refuses to start without the deployed harness.
func TestRemoteStacks(t *testing.T) {
	stack, ok := RemoteStacks[StackOpenSSL]
	if !ok || len(RemoteStacks) != 1 {
		t.Fatalf("RemoteStacks has %d stacks, want the %s stack alone", len(RemoteStacks), StackOpenSSL)
	}
	if _, err := stack("", 0, nil, tls.X25519, handshake.Expect{}); err == nil || !strings.Contains(err.Error(), "needs -harness") {
		t.Errorf("without a harness: %v", err)
	}
}

// Both stacks and both key-share modes on loopback and the remote path: the
// OpenSSL harness is copied to the host and serves there; every row of
// both paths is complete and re-derives from the captures. Needs the
// OpenSSL build in this repository's cache.
func TestRunRemoteOpenSSL(t *testing.T) {
	needRoot(t)
	root, _ := filepath.Abs("../../..")
	if _, err := openssl.Cached(root); err != nil {
		t.Skipf("the OpenSSL build is not in the cache (go run mage.go tls:openssl makes it once): %v", err)
	}
	sh := sshtest.Start(t)
	e := newEnv(t, strings.Replace(remoteSpec, `paths = ["loopback", "remote"]`, `paths = ["loopback", "remote"]
stacks = ["openssl", "go"]
keyshares = ["direct", "hrr"]`, 1))
	cfg := e.config(time.Date(2026, 12, 1, 9, 2, 0, 0, time.UTC))
	o := sh.Options()
	cfg.RemoteSSH, cfg.BuildRoot = &o, root
	res, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatalf("%v\nlog:\n%s", err, e.log.String())
	}
	waitNoRemote(t, sh)
	n := map[string]int{}
	for _, r := range readRunRecords(t, res.Dir) {
		n[r.Stack+"/"+r.Path]++
		if !r.Complete || r.NegotiatedGroup != r.Group || r.HRR != strings.Contains(r.Config, "/hrr") {
			t.Errorf("seq %d (%s on %s): %+v", r.Seq, r.Config, r.Path, r)
		}
	}
	for _, k := range []string{"openssl/remote", "go/remote", "openssl/loopback", "go/loopback"} {
		if n[k] != 32 {
			t.Errorf("rows per stack/path %v, want 32 each", n)
			break
		}
	}
	m, err := provenance.Read(res.Dir)
	if err != nil {
		t.Fatal(err)
	}
	if h, _ := m.Measured["remote_harness"].(map[string]any); h["sha256"] == "" || h["path"] == "" {
		t.Errorf("meta remote_harness: %v", m.Measured["remote_harness"])
	}
	rel, _ := filepath.Rel(e.root, res.Dir)
	checkRederive(t, e.root, filepath.ToSlash(rel))
}
