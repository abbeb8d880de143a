package sshhost_test

import (
	"context"
	"crypto/tls"
	"errors"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"pqrepro/experiments/instruments/handshake"
	"pqrepro/experiments/instruments/sshhost"
	"pqrepro/experiments/instruments/sshhost/sshtest"
)

var (
	binOnce sync.Once
	binPath string
	binErr  error
)

// binary builds the static pqrepro once per test process.
func binary(t testing.TB) string {
	t.Helper()
	binOnce.Do(func() { binPath, binErr = sshhost.BuildBinary(context.Background(), "../../..", runtime.GOARCH) })
	if binErr != nil {
		t.Fatal(binErr)
	}
	return binPath
}

func newHost(t testing.TB) (*sshtest.Host, *sshhost.Host) {
	t.Helper()
	sh := sshtest.Start(t)
	h, err := sshhost.New(sh.Options())
	if err != nil {
		t.Fatal(err)
	}
	return sh, h
}

func ctx(t testing.TB) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return c
}

// Deploy copies once, then finds the same binary; the provenance hashes it
// on the host; a served configuration answers handshakes from here; Stop
// leaves no process.
func TestDeployServeStop(t *testing.T) {
	sh, h := newHost(t)
	bin := binary(t)
	d, err := h.Deploy(ctx(t), bin, "")
	if err != nil {
		t.Fatalf("deploy: %v\nsshd: %s", err, sh.Log())
	}
	if !d.Copied || !strings.HasPrefix(d.Path, sh.RemoteDir) {
		t.Errorf("first deploy: %+v", d)
	}
	d2, err := h.Deploy(ctx(t), bin, "")
	if err != nil || d2.Copied || d2.SHA256 != d.SHA256 {
		t.Errorf("second deploy: %+v, %v (want found, not copied)", d2, err)
	}
	ents, _ := os.ReadDir(sh.RemoteDir)
	if len(ents) != 1 {
		t.Errorf("remote dir holds %d files, want the binary only", len(ents))
	}
	p, err := h.Provenance(ctx(t), d, 4)
	if err != nil {
		t.Fatal(err)
	}
	if p.BinarySHA256 != d.SHA256 || p.Kernel == "" || p.Arch == "" || p.Cores < 1 || p.OS == "" {
		t.Errorf("provenance %+v", p)
	}
	// Same machine: the true offset is 0, within the bound.
	if p.Clock.OffsetNs > p.Clock.BoundNs+int64(time.Millisecond) || -p.Clock.OffsetNs > p.Clock.BoundNs+int64(time.Millisecond) {
		t.Errorf("clock %+v: the same clock is off by more than the bound", p.Clock)
	}

	proc, addrs := startServe(t, h, d, `[{"group":"X25519MLKEM768","cert":"ecdsa-p256","seed":1},{"group":"X25519","cert":"ed25519","seed":1}]`)
	for i, a := range addrs {
		if host, _, _ := net.SplitHostPort(a); host != sh.RemoteIP {
			t.Errorf("server %d listens on %s, want %s (SSH_CONNECTION)", i, a, sh.RemoteIP)
		}
	}
	dial(t, addrs[0], tls.X25519MLKEM768, handshake.CertKey("ecdsa-p256"))
	m := recv(t, proc)
	if m.Type != "rec" || m.I != 0 || m.Err != "" || m.ServerNs <= 0 {
		t.Errorf("record %+v", m)
	}
	if err := proc.Stop(); err != nil {
		t.Fatal(err)
	}
	if !sshtest.WaitGone(proc.PID, 5*time.Second) {
		t.Errorf("remote pid %d still runs after Stop", proc.PID)
	}
	if proc.Err() != nil {
		t.Errorf("Err after Stop: %v", proc.Err())
	}
}

func startServe(t testing.TB, h *sshhost.Host, d sshhost.Deployed, configs string) (*sshhost.Process, []string) {
	t.Helper()
	proc, err := h.Start(ctx(t), d.Path, "serve", "-configs", configs)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { proc.Stop() })
	var addrs []string
	for {
		m := recv(t, proc)
		if m.Type == "listen" {
			addrs = append(addrs, m.Addr)
		}
		if m.Type == "ready" {
			return proc, addrs
		}
	}
}

func recv(t testing.TB, p *sshhost.Process) sshhost.Msg {
	t.Helper()
	select {
	case m, ok := <-p.Msgs():
		if !ok {
			<-p.Done()
			t.Fatalf("remote output ended: %v", p.Err())
		}
		return m
	case <-time.After(30 * time.Second):
		t.Fatal("no message from the remote role in 30 s")
	}
	return sshhost.Msg{}
}

func dial(t testing.TB, addr string, g tls.CurveID, k handshake.CertKey) handshake.ClientRecord {
	t.Helper()
	b, err := handshake.MakeCerts(handshake.CertConfig{Key: k, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	c := &handshake.Client{TLS: handshake.ClientTLSConfig(b.Roots, "localhost", []tls.CurveID{g}, nil), Expect: handshake.Expect{Group: g, Key: k}}
	r, err := c.Dial(ctx(t), addr)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// Faults while the server role runs: each ends the session with a clear
// error and leaves no remote process.
func TestFaultsWhileServing(t *testing.T) {
	for _, c := range []struct {
		name  string
		fault func(sh *sshtest.Host, p *sshhost.Process)
		want  error
	}{
		{"connection dropped", func(sh *sshtest.Host, p *sshhost.Process) {
			if sh.DropSessions() == 0 {
				t.Error("no sshd session to kill")
			}
		}, sshhost.ErrConnection},
		{"link down", func(sh *sshtest.Host, p *sshhost.Process) { sh.LinkDown() }, sshhost.ErrConnection},
		{"remote server killed", func(sh *sshtest.Host, p *sshhost.Process) { syscall.Kill(p.PID, syscall.SIGKILL) }, sshhost.ErrRemoteExited},
	} {
		t.Run(strings.ReplaceAll(c.name, " ", "_"), func(t *testing.T) {
			sh, h := newHost(t)
			d, err := h.Deploy(ctx(t), binary(t), "")
			if err != nil {
				t.Fatal(err)
			}
			proc, _ := startServe(t, h, d, `[{"group":"X25519","cert":"ed25519","seed":1}]`)
			c.fault(sh, proc)
			select {
			case <-proc.Done():
			case <-time.After(20 * time.Second):
				t.Fatal("the session did not end within 20 s of the fault")
			}
			err = proc.Err()
			if !errors.Is(err, sshhost.ErrRemoteExited) || !errors.Is(err, c.want) {
				t.Errorf("Err() = %v, want %v", err, c.want)
			}
			t.Logf("message: %v", err)
			if !sshtest.WaitGone(proc.PID, 10*time.Second) {
				t.Errorf("remote pid %d still runs 10 s after the fault", proc.PID)
			}
			if err := proc.Stop(); err != nil {
				t.Errorf("Stop after the end: %v", err)
			}
		})
	}
}

// A full remote disk refuses the deploy and leaves no partial file.
func TestFaultDiskFull(t *testing.T) {
	sh := sshtest.Start(t)
	o := sh.Options()
	o.Dir = sh.SmallDir // a 1 MiB tmpfs in sshd's mount namespace
	h, err := sshhost.New(o)
	if err != nil {
		t.Fatal(err)
	}
	_, err = h.Deploy(ctx(t), binary(t), "")
	if !errors.Is(err, sshhost.ErrDiskFull) {
		t.Fatalf("deploy to a full disk: %v, want ErrDiskFull", err)
	}
	t.Logf("message: %v", err)
	out, rerr := h.Run(ctx(t), "ls -A "+sh.SmallDir, nil)
	if rerr != nil || strings.TrimSpace(string(out)) != "" {
		t.Errorf("left on the full disk: %q (%v)", out, rerr)
	}
}

// A changed host key refuses the connection before anything runs.
func TestFaultHostKeyChanged(t *testing.T) {
	sh, h := newHost(t)
	if _, err := h.Deploy(ctx(t), binary(t), ""); err != nil {
		t.Fatal(err)
	}
	sh.Rekey()
	_, err := h.Deploy(ctx(t), binary(t), "")
	if !errors.Is(err, sshhost.ErrHostKey) {
		t.Fatalf("after a rekey: %v, want ErrHostKey", err)
	}
	t.Logf("message: %v", err)
	// An unknown host (empty known_hosts) is refused the same way.
	if err := os.WriteFile(filepath.Join(sh.Dir, "known_hosts"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := h.Run(ctx(t), "true", nil); !errors.Is(err, sshhost.ErrHostKey) {
		t.Fatalf("unknown host: %v, want ErrHostKey", err)
	}
	// sshd's pre-authentication children end once the client has gone.
	deadline := time.Now().Add(10 * time.Second)
	for len(sshtest.Descendants(sh.SSHDPID())) != 0 && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
	}
	if kids := sshtest.Descendants(sh.SSHDPID()); len(kids) != 0 {
		t.Errorf("sshd has processes %v 10 s after refused connections", kids)
	}
}
