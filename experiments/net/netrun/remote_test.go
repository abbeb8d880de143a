package netrun

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"pqrepro/datasets/netdata"
	"pqrepro/experiments/instruments/linkemu"
	"pqrepro/experiments/instruments/sshhost"
	"pqrepro/experiments/instruments/sshhost/sshtest"
	"pqrepro/internal/provenance"
)

func remoteTree(t *testing.T, sh *sshtest.Host) (RunConfig, func() string) {
	cfg, log := tree(t, tinySpec(0, "5000", "[10]")+"[remote]\nhost = \""+sshtest.Alias+"\"\n")
	o := sh.Options()
	cfg.RemoteSSH = &o
	cfg.BuildRoot = filepath.Join("..", "..", "..")
	return cfg, func() string { return log.String() }
}

func noRemoteProcs(t *testing.T, sh *sshtest.Host) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for len(sshtest.Descendants(sh.SSHDPID())) > 0 && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
	}
	if p := sshtest.Descendants(sh.SSHDPID()); len(p) > 0 {
		t.Errorf("processes %v still run on the remote host", p)
	}
}

// A quick Study B series across a second host: each series' link between
// the client's namespace and B, B relaying to the servers on the host.
func TestRunRemote(t *testing.T) {
	needRoot(t)
	sh := sshtest.Start(t)
	cfg, log := remoteTree(t, sh)
	if _, err := Run(context.Background(), cfg); err != nil {
		t.Fatalf("Run: %v\n%s\nsshd:\n%s", err, log(), sh.Log())
	}
	noRemoteProcs(t, sh)
	if l := leftovers(t); len(l) > 0 {
		t.Errorf("namespaces left behind: %v", l)
	}
	dirs := runDirs(t, cfg)
	if len(dirs) != 1 {
		t.Fatalf("data/net holds %v", dirs)
	}
	dir := filepath.Join(cfg.Root, "data", Study, dirs[0])
	rows := readRows(t, filepath.Join(dir, netdata.RecordsFile))
	if len(rows) != 1+20 {
		t.Fatalf("records: %d lines, want header + 20", len(rows))
	}
	col := map[string]int{}
	for i, c := range rows[0] {
		col[c] = i
	}
	for _, r := range rows[1:] {
		if r[col["ok"]] != "true" || r[col["ths_ns"]] == "" || r[col["cap_group"]] != r[col["group"]] || r[col["server_ns"]] == "" || r[col["server_ns"]] == "0" {
			t.Errorf("row %v: want ok with capture and the remote server's timer", r)
		}
	}
	m, err := provenance.Read(dir)
	if err != nil {
		t.Fatal(err)
	}
	if rh, _ := m.Measured["remote_host"].(map[string]any); rh["binary_sha256"] == "" || rh["kernel"] == "" {
		t.Errorf("meta remote_host: %v", m.Measured["remote_host"])
	}
	checkRederive(t, cfg.Root, dir, 2)
}

// Faults: the SSH connection drops mid-run, the remote server dies
// mid-run, the host key changes before the run. Each stops the run with
// the reason, registers nothing, and leaves no namespace and no remote
// process.
func TestRunRemoteFaults(t *testing.T) {
	needRoot(t)
	for _, c := range []struct {
		name   string
		before func(sh *sshtest.Host)
		during func(sh *sshtest.Host)
		want   error
	}{
		{name: "connection dropped", want: sshhost.ErrConnection, during: func(sh *sshtest.Host) { sh.DropSessions() }},
		{name: "remote server killed", want: sshhost.ErrRemoteExited, during: func(sh *sshtest.Host) {
			for _, pid := range sshtest.Descendants(sh.SSHDPID()) {
				if comm, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/comm"); strings.HasPrefix(string(comm), "pqrepro") {
					syscall.Kill(pid, syscall.SIGKILL)
				}
			}
		}},
		{name: "host key changed", want: sshhost.ErrHostKey, before: func(sh *sshtest.Host) { sh.Rekey() }},
	} {
		t.Run(strings.ReplaceAll(c.name, " ", "_"), func(t *testing.T) {
			sh := sshtest.Start(t)
			cfg, log := remoteTree(t, sh)
			if c.before != nil {
				c.before(sh)
			}
			hit := false
			cfg.afterAttempt = func(done int, _ *linkemu.Link, _ func(error)) {
				if done == 5 && !hit && c.during != nil {
					hit = true
					c.during(sh)
				}
			}
			_, err := Run(context.Background(), cfg)
			if !errors.Is(err, c.want) || !strings.Contains(err.Error(), "remote host") {
				t.Fatalf("Run: %v, want %v\n%s", err, c.want, log())
			}
			t.Logf("message: %v", err)
			if d := runDirs(t, cfg); len(d) != 0 {
				t.Errorf("data/net holds %v, want nothing", d)
			}
			if l := leftovers(t); len(l) > 0 {
				t.Errorf("namespaces left behind: %v", l)
			}
			noRemoteProcs(t, sh)
		})
	}
}

// The toolchain factor with a remote host: the endpoint clients (Go 1.24
// and 1.27 builds) in namespace A, the relay in B, the servers remote.
func TestRunRemoteToolchains(t *testing.T) {
	needRoot(t)
	sh := sshtest.Start(t)
	cfg, log := tree(t, toolchainSpec("[5]")+"[remote]\nhost = \""+sshtest.Alias+"\"\n")
	o := sh.Options()
	cfg.RemoteSSH, cfg.BuildRoot = &o, filepath.Join("..", "..", "..")
	copyEndpoint(t, cfg.Root)
	skipWithoutToolchains(t, cfg.Root)
	if _, err := Run(context.Background(), cfg); err != nil {
		t.Fatalf("Run: %v\n%s", err, log)
	}
	noRemoteProcs(t, sh)
	dirs := runDirs(t, cfg)
	if len(dirs) != 1 {
		t.Fatalf("data/net holds %v", dirs)
	}
	rows := readRows(t, filepath.Join(cfg.Root, "data", Study, dirs[0], netdata.RecordsFile))
	col := map[string]int{}
	for i, c := range rows[0] {
		col[c] = i
	}
	n := map[string]int{}
	for _, r := range rows[1:] {
		n[r[col["toolchain"]]]++
		if r[col["ok"]] != "true" || r[col["server_ns"]] == "" || r[col["server_ns"]] == "0" {
			t.Errorf("row %v: want ok with the remote server's timer", r)
		}
	}
	if len(n) != 2 || len(rows) != 1+2*10 {
		t.Errorf("rows per toolchain %v (%d rows), want 10 each", n, len(rows)-1)
	}
}
