// Package sshtest plays a second host for tests. That is, Debian's
// OpenSSH server (sshd) inside a network namespace of its own, joined to
// this namespace by a veth pair with a fixed MTU, with a generated host
// key, a generated user key, a private ssh_config and known_hosts in a
// temporary folder. Nothing under the user's ~/.ssh is read or written.
//
// The namespace and devices are named Prefix<pid>-<n>[hr]; Close (run by
// t.Cleanup, also when the test fails) kills sshd by its PID, deletes the
// namespace (and with it both veth ends) and checks that nothing of the
// name is left.
package sshtest

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"pqrepro/experiments/instruments/sshhost"
)

// Prefix starts the names of everything a Host creates.
const Prefix = "pqrs"

// MTU of the veth pair.
const MTU = 1500

// Alias is the Host alias of the private ssh_config.
const Alias = "pqrs-remote"

var seq atomic.Int64

// Host is a running sshd in its namespace.
type Host struct {
	t        testing.TB
	Name     string // the namespace
	HostDev  string // the veth end in this namespace
	LocalIP  string // this end's address
	RemoteIP string // sshd's address
	Dir      string // keys, configs, sshd's log
	// RemoteDir is a folder for the deployed binary; SmallDir is a 1 MiB
	// tmpfs mounted only in sshd's mount namespace (a full remote disk).
	RemoteDir, SmallDir string
	ConfigFile          string
	sshd                *exec.Cmd
	sshdDone            chan struct{}
}

// Skip skips t with the reason when the host cannot be played here.
func Skip(t testing.TB) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("sshtest: needs root (network namespaces, sshd)")
	}
	if _, err := os.Stat(sshhost.SSHDPath); err != nil {
		t.Skipf("sshtest: %s is missing: install Debian's openssh-server (`mage test` installs it)", sshhost.SSHDPath)
	}
	for _, p := range []string{"ssh", "ssh-keygen", "ip", "unshare"} {
		if _, err := exec.LookPath(p); err != nil {
			t.Skipf("sshtest: %s is missing (openssh-client, iproute2, util-linux)", p)
		}
	}
}

// Start plays the host; it skips t when it cannot (Skip).
func Start(t testing.TB) *Host {
	t.Helper()
	Skip(t)
	n := seq.Add(1)
	pid := os.Getpid()
	name := fmt.Sprintf("%s%d-%d", Prefix, pid%100000, n)
	h := &Host{t: t, Name: name, HostDev: name + "h", Dir: t.TempDir()}
	sub := (pid*7 + int(n)) % 250
	h.LocalIP = fmt.Sprintf("10.211.%d.%d", sub, 1+4*(int(n)%60))
	h.RemoteIP = fmt.Sprintf("10.211.%d.%d", sub, 2+4*(int(n)%60))
	t.Cleanup(h.Close)
	peer := name + "r"
	for _, a := range [][]string{
		{"netns", "add", name},
		{"link", "add", h.HostDev, "mtu", strconv.Itoa(MTU), "type", "veth", "peer", "name", peer, "mtu", strconv.Itoa(MTU)},
		{"link", "set", peer, "netns", name},
		{"addr", "add", h.LocalIP + "/30", "dev", h.HostDev},
		{"link", "set", h.HostDev, "up"},
		{"-n", name, "addr", "add", h.RemoteIP + "/30", "dev", peer},
		{"-n", name, "link", "set", peer, "up"},
		{"-n", name, "link", "set", "lo", "up"},
	} {
		if out, err := exec.Command("ip", a...).CombinedOutput(); err != nil {
			t.Fatalf("sshtest: ip %s: %v: %s", strings.Join(a, " "), err, out)
		}
	}
	h.RemoteDir = filepath.Join(h.Dir, "remote")
	h.SmallDir = filepath.Join(h.Dir, "small")
	for _, d := range []string{h.RemoteDir, h.SmallDir} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	h.keygen("host_key")
	h.keygen("user_key")
	pub, err := os.ReadFile(filepath.Join(h.Dir, "user_key.pub"))
	if err != nil {
		t.Fatal(err)
	}
	h.write("authorized_keys", string(pub))
	h.write("sshd_config", fmt.Sprintf(`ListenAddress %s
Port 22
HostKey %s
PidFile none
AuthorizedKeysFile %s
PermitRootLogin prohibit-password
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
StrictModes no
ClientAliveInterval 1
ClientAliveCountMax 3
PrintMotd no
LogLevel VERBOSE
`, h.RemoteIP, filepath.Join(h.Dir, "host_key"), filepath.Join(h.Dir, "authorized_keys")))
	h.ConfigFile = filepath.Join(h.Dir, "ssh_config")
	h.write("ssh_config", fmt.Sprintf(`Host %s
  HostName %s
  User root
  IdentityFile %s
  IdentitiesOnly yes
  IdentityAgent none
  UserKnownHostsFile %s
  GlobalKnownHostsFile /dev/null
`, Alias, h.RemoteIP, filepath.Join(h.Dir, "user_key"), filepath.Join(h.Dir, "known_hosts")))
	h.TrustHostKey()
	h.startSSHD()
	return h
}

func (h *Host) write(name, s string) {
	if err := os.WriteFile(filepath.Join(h.Dir, name), []byte(s), 0o600); err != nil {
		h.t.Fatal(err)
	}
}

func (h *Host) keygen(name string) {
	p := filepath.Join(h.Dir, name)
	os.Remove(p)
	os.Remove(p + ".pub")
	if out, err := exec.Command("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "pqrs-test", "-f", p).CombinedOutput(); err != nil {
		h.t.Fatalf("sshtest: ssh-keygen: %v: %s", err, out)
	}
}

// TrustHostKey writes the current host key into the private known_hosts.
func (h *Host) TrustHostKey() {
	pub, err := os.ReadFile(filepath.Join(h.Dir, "host_key.pub"))
	if err != nil {
		h.t.Fatal(err)
	}
	f := strings.Fields(string(pub))
	h.write("known_hosts", h.RemoteIP+" "+f[0]+" "+f[1]+"\n")
}

// startSSHD runs sshd -D in the namespace and in a private mount namespace
// with SmallDir a 1 MiB tmpfs. ip, unshare and sh exec, so the PID is
// sshd's.
func (h *Host) startSSHD() {
	if err := os.MkdirAll("/run/sshd", 0o755); err != nil { // Debian's privilege separation directory
		h.t.Fatal(err)
	}
	script := fmt.Sprintf("mount -t tmpfs -o size=1m pqrs-small %s && exec %s -D -e -f %s",
		h.SmallDir, sshhost.SSHDPath, filepath.Join(h.Dir, "sshd_config"))
	cmd := exec.Command("ip", "netns", "exec", h.Name, "unshare", "-m", "--propagation", "private", "sh", "-c", script)
	logf, err := os.Create(filepath.Join(h.Dir, "sshd.log"))
	if err != nil {
		h.t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		h.t.Fatalf("sshtest: start sshd: %v", err)
	}
	logf.Close()
	h.sshd = cmd
	h.sshdDone = make(chan struct{})
	go func() { cmd.Wait(); close(h.sshdDone) }()
	deadline := time.Now().Add(10 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", net.JoinHostPort(h.RemoteIP, "22"), time.Second)
		if err == nil {
			c.Close()
			return
		}
		select {
		case <-h.sshdDone:
			h.t.Fatalf("sshtest: sshd exited: %s", h.Log())
		default:
		}
		if time.Now().After(deadline) {
			h.t.Fatalf("sshtest: sshd does not listen on %s:22: %v; %s", h.RemoteIP, err, h.Log())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func (h *Host) stopSSHD() {
	if h.sshd == nil {
		return
	}
	h.sshd.Process.Signal(syscall.SIGTERM)
	select {
	case <-h.sshdDone:
	case <-time.After(5 * time.Second):
		h.sshd.Process.Kill()
		<-h.sshdDone
	}
	h.sshd = nil
}

// Log is sshd's log so far.
func (h *Host) Log() string {
	b, _ := os.ReadFile(filepath.Join(h.Dir, "sshd.log"))
	return string(b)
}

// SSHDPID is the listening sshd's PID.
func (h *Host) SSHDPID() int { return h.sshd.Process.Pid }

// Options reach the host through the private ssh_config's alias, without
// the user's agent, with the binary going to RemoteDir.
func (h *Host) Options() sshhost.Options {
	var env []string
	for _, e := range os.Environ() {
		if !strings.HasPrefix(e, "SSH_AUTH_SOCK=") && !strings.HasPrefix(e, "HOME=") {
			env = append(env, e)
		}
	}
	env = append(env, "HOME="+h.Dir)
	return sshhost.Options{Dest: Alias, ConfigFile: h.ConfigFile, Dir: h.RemoteDir, Env: env, Watchdog: 3 * time.Second}
}

// Rekey gives the host a new host key (sshd restarted), as a reinstalled
// machine would have; known_hosts keeps the old one.
func (h *Host) Rekey() {
	h.stopSSHD()
	h.keygen("host_key")
	h.startSSHD()
}

// DropSessions kills sshd's per-connection processes (every child of the
// listener), which drops every SSH connection at once.
func (h *Host) DropSessions() int {
	n := 0
	for _, pid := range Children(h.SSHDPID()) {
		if syscall.Kill(pid, syscall.SIGKILL) == nil {
			n++
		}
	}
	return n
}

// LinkDown takes this end of the veth pair down: packets stop without a
// FIN or RST, as when a cable is pulled.
func (h *Host) LinkDown() {
	if out, err := exec.Command("ip", "link", "set", h.HostDev, "down").CombinedOutput(); err != nil {
		h.t.Fatalf("sshtest: %v: %s", err, out)
	}
}

// Alive says whether pid runs (sshd's namespace shares this PID
// namespace) and is not a zombie.
func Alive(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	s := string(b)
	if i := strings.LastIndexByte(s, ')'); i >= 0 && i+2 < len(s) {
		return s[i+2] != 'Z' && s[i+2] != 'X'
	}
	return true
}

// WaitGone waits up to d for pid to end.
func WaitGone(pid int, d time.Duration) bool {
	deadline := time.Now().Add(d)
	for Alive(pid) {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(50 * time.Millisecond)
	}
	return true
}

// Children lists the direct children of pid.
func Children(pid int) []int {
	var out []int
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		c, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		s := string(b)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(s[i+1:])
		if len(f) > 1 && f[1] == strconv.Itoa(pid) {
			out = append(out, c)
		}
	}
	return out
}

// Descendants lists every process below pid.
func Descendants(pid int) []int {
	var out []int
	for _, c := range Children(pid) {
		out = append(out, c)
		out = append(out, Descendants(c)...)
	}
	return out
}

// Close stops sshd, deletes the namespace and the veth pair, and fails the
// test when any of them is left.
func (h *Host) Close() {
	h.stopSSHD()
	exec.Command("ip", "netns", "del", h.Name).Run()
	exec.Command("ip", "link", "del", h.HostDev).Run()
	if left := Leftovers(h.Name); left != "" {
		h.t.Errorf("sshtest: left behind: %s", left)
	}
}

// Leftovers names the namespaces and links whose name starts with name.
func Leftovers(name string) string {
	var left []string
	out, _ := exec.Command("ip", "netns", "list").Output()
	for _, l := range strings.Split(string(out), "\n") {
		if f := strings.Fields(l); len(f) > 0 && strings.HasPrefix(f[0], name) {
			left = append(left, "namespace "+f[0])
		}
	}
	out, _ = exec.Command("ip", "-o", "link", "show").Output()
	for _, l := range strings.Split(string(out), "\n") {
		if f := strings.Fields(l); len(f) > 1 && strings.HasPrefix(strings.TrimSuffix(strings.SplitN(f[1], "@", 2)[0], ":"), name) {
			left = append(left, "link "+f[1])
		}
	}
	return strings.Join(left, ", ")
}
