package sshhost

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"pqrepro/experiments/instruments/handshake"
)

func TestNewRejectsBadDestinations(t *testing.T) {
	for _, d := range []string{"", "-oProxyCommand=x", "a b", "host'x", "h\"", "a\nb",
		"h\r", "h\x00x", "h\vx", "h\fx", "h\u00a0x", "h\u2028x", "h\u2029x", "h\u0085x", "h\u200bx", "h\x7f", "h\xffx", "h;id", "h`id`", "$(id)",
		"user@-oProxyCommand=x", "ssh://user@-oProxyCommand=x", "u@-p", "@host", "user@", "ssh://", "h{x}"} {
		if _, err := New(Options{Dest: d}); err == nil {
			t.Errorf("New(%q): no error", d)
		}
		if err := (Spec{Host: d}).Validate(); d != "" && err == nil {
			t.Errorf("Spec{Host: %q}.Validate(): no error", d)
		}
	}
	for _, bad := range []string{"-x", "--help", "a\rb", "a\x00", "d\u2028", "d\u00a0x", "a\vb"} {
		if err := (Spec{Host: "h", Dir: bad}).Validate(); err == nil {
			t.Errorf("dir %q: no error", bad)
		}
		if err := (Spec{Host: "h", SSHConfig: bad}).Validate(); err == nil {
			t.Errorf("ssh_config %q: no error", bad)
		}
		if err := (Spec{Dir: bad}).Validate(); err == nil {
			t.Errorf("dir %q without a host: no error", bad)
		}
	}
	if err := (Spec{Host: "h", Dir: "bench dir/x", SSHConfig: "./ssh config"}).Validate(); err == nil {
		t.Error("a space in dir or ssh_config: no error")
	}
	if err := (Spec{Host: "u@h", Dir: "/srv/pqrepro", SSHConfig: "./ssh_config"}).Validate(); err != nil {
		t.Errorf("a good [remote] table: %v", err)
	}
	for _, d := range []string{"host", "user@host", "user@10.0.0.1", "alias-1", "ssh://user@host:2222", "me@corp@host", "user@h-1"} {
		if _, err := New(Options{Dest: d}); err != nil {
			t.Errorf("New(%q): %v", d, err)
		}
	}
}

// The options that make host keys strict and the run non-interactive come
// before the destination, where they override any configuration file.
func TestArgs(t *testing.T) {
	h, _ := New(Options{Dest: "u@h", ConfigFile: "/c"})
	a := h.Args("true")
	if a[0] != "-F" || a[1] != "/c" {
		t.Errorf("no -F first: %q", a)
	}
	for _, o := range []string{"BatchMode=yes", "StrictHostKeyChecking=yes", "ControlMaster=no", "ControlPath=none", "UpdateHostKeys=no"} {
		if !slices.Contains(a, o) {
			t.Errorf("missing -o %s: %q", o, a)
		}
	}
	if got := a[len(a)-3:]; got[0] != "--" || got[1] != "u@h" || got[2] != "true" {
		t.Errorf("tail %q", got)
	}
	h, _ = New(Options{Dest: "h"})
	if a := h.Args("x"); a[0] == "-F" {
		t.Errorf("-F without a config file: %q", a)
	}
}

func exitErr(t *testing.T, code int) error {
	err := exec.Command("sh", "-c", fmt.Sprintf("exit %d", code)).Run()
	if err == nil {
		t.Fatal("no exit error")
	}
	return err
}

func TestClassify(t *testing.T) {
	h, _ := New(Options{Dest: "h"})
	for _, c := range []struct {
		code   int
		stderr string
		want   error
	}{
		{255, "@@@ WARNING: REMOTE HOST IDENTIFICATION HAS CHANGED! @@@\nHost key verification failed.", ErrHostKey},
		{255, "No ED25519 host key is known for h and you have requested strict checking.\nHost key verification failed.", ErrHostKey},
		{255, "ssh: connect to host h port 22: Connection refused", ErrConnection},
		{255, "Connection to h closed by remote host.", ErrConnection},
		{1, "cat: write error: No space left on device", ErrDiskFull},
	} {
		err := h.classify(exitErr(t, c.code), c.stderr)
		if !errors.Is(err, c.want) {
			t.Errorf("%q: %v, want %v", c.stderr, err, c.want)
		}
	}
	// ssh's own refusals, as the real client prints them (see
	// TestSSHConfigErrorsFromTheRealClient).
	for _, stderr := range []string{
		"/x/ssh_config: line 1: Bad configuration option: bogus\n/x/ssh_config: terminating, 1 bad configuration options",
		"Can't open user config file /x/nope: No such file or directory",
		"command-line: line 0: Bad configuration option: bogus",
		"unknown option -- Z\nusage: ssh [-46AaCfGgKkMNnqsTtVvXxYy] [-B bind_interface]",
		"hostname contains invalid characters",
	} {
		if err := h.classify(exitErr(t, 255), stderr); !errors.Is(err, ErrSSHConfig) || errors.Is(err, ErrConnection) {
			t.Errorf("%q: %v, want ErrSSHConfig", stderr, err)
		}
	}
	if err := h.classify(exitErr(t, 3), "sha256 mismatch"); errors.Is(err, ErrConnection) || !strings.Contains(err.Error(), "sha256 mismatch") {
		t.Errorf("a remote failure: %v", err)
	}
}

func TestGOARCH(t *testing.T) {
	for in, want := range map[string]string{"x86_64\n": "amd64", "aarch64": "arm64", "sparc": ""} {
		if got := GOARCH(in); got != want {
			t.Errorf("GOARCH(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestSSHServerIP(t *testing.T) {
	if got := sshServerIP("10.0.0.1 5555 10.0.0.2 22"); got != "10.0.0.2" {
		t.Errorf("%q", got)
	}
	if got := sshServerIP("junk"); got != "" {
		t.Errorf("%q", got)
	}
}

// sampleClock against a clock role whose clock is 1 s ahead: the estimate
// is within its own bound of 1 s.
func TestSampleClock(t *testing.T) {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	go func() {
		sc := bufio.NewScanner(inR)
		for sc.Scan() {
			fmt.Fprintf(outW, "%d\n", time.Now().Add(time.Second).UnixNano())
		}
		outW.Close()
	}()
	c, err := sampleClock(inW, bufio.NewReader(outR), 5)
	inW.Close()
	if err != nil {
		t.Fatal(err)
	}
	if d := c.OffsetNs - int64(time.Second); d > c.BoundNs+int64(time.Millisecond) || -d > c.BoundNs+int64(time.Millisecond) {
		t.Errorf("offset %d ns +- %d, want 1e9", c.OffsetNs, c.BoundNs)
	}
	if c.Samples != 5 {
		t.Errorf("samples %d", c.Samples)
	}
	// A reply that is not a number is an error, not a zero offset.
	outR2, outW2 := io.Pipe()
	go func() { fmt.Fprintln(outW2, "banner"); outW2.Close() }()
	if _, err := sampleClock(io.Discard, bufio.NewReader(outR2), 2); err == nil {
		t.Error("a junk reply gave no error")
	}
}

// The watchdog ends the role when its input ends and when the heartbeat
// stops without an end (a dead connection).
func TestWatch(t *testing.T) {
	r, w := io.Pipe()
	dead := watch(r, time.Hour)
	w.Write([]byte{'\n'})
	w.Close()
	select {
	case <-dead:
	case <-time.After(5 * time.Second):
		t.Fatal("no exit on EOF")
	}
	r2, w2 := io.Pipe()
	defer w2.Close()
	dead = watch(r2, 50*time.Millisecond)
	select {
	case <-dead:
	case <-time.After(5 * time.Second):
		t.Fatal("no exit on silence")
	}
}

func TestRunRoleBadUsage(t *testing.T) {
	for _, args := range [][]string{{"nope"}, {"serve", "-configs", "{"}, {"serve", "extra"}} {
		if code := RunRole(args[0], args[1:], nil, strings.NewReader(""), io.Discard, io.Discard); code != 2 {
			t.Errorf("%q: exit %d, want 2", args, code)
		}
	}
}

// TestServeRoleStacks: the serve role runs a configuration of a stack
// other than go on the Stack of that name its caller passed, given the
// harness; a stack it was not passed is an error naming those it has.
func TestServeRoleStacks(t *testing.T) {
	var made []string
	stacks := Stacks{"fake": func(harness string, i int, b *handshake.Bundle, g tls.CurveID, exp handshake.Expect) (Serve, error) {
		made = append(made, fmt.Sprintf("%s %d %s %s hrr=%v", harness, i, g, b.Key, exp.HRR))
		return func(ctx context.Context, ln net.Listener, _ func(handshake.ServerRecord)) error {
			<-ctx.Done()
			ln.Close()
			return ctx.Err()
		}, nil
	}}
	cs := []ServerConfig{{Group: "X25519", Cert: "ed25519"}, {Group: "X25519MLKEM768", Cert: "ed25519", HRR: true, Stack: "fake"}}
	// An empty stdin ends the role at once, as a closed session does.
	var out bytes.Buffer
	if err := serveRole(strings.NewReader(""), &out, "127.0.0.1", cs, stacks, "pqssl-0123", time.Minute); err != nil {
		t.Fatal(err)
	}
	if want := []string{"pqssl-0123 1 X25519MLKEM768 ed25519 hrr=true"}; !slices.Equal(made, want) {
		t.Errorf("stacks made %q, want %q", made, want)
	}
	var lines []string
	for line := range strings.Lines(out.String()) {
		var m Msg
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("%q: %v", line, err)
		}
		if m.Type != "pid" {
			lines = append(lines, fmt.Sprint(m.Type, m.I))
		}
	}
	if want := []string{"listen0", "listen1", "ready0"}; !slices.Equal(lines, want) {
		t.Errorf("the role wrote %q, want %q:\n%s", lines, want, out.String())
	}
	cs[1].Stack = "openssl"
	err := serveRole(strings.NewReader(""), io.Discard, "127.0.0.1", cs, stacks, "", time.Minute)
	if want := `config 1: unknown stack "openssl" (go, fake)`; err == nil || err.Error() != want {
		t.Errorf("a stack not passed: %v, want %s", err, want)
	}
}

func TestParseProvenance(t *testing.T) {
	p := parseProvenance("hostname=h\nkernel=Linux 6.1.0\narch=x86_64\ncpu=Intel(R) Xeon(R) = fast\ncores=2\nmem_kb=x\nos=Debian GNU/Linux 12 (bookworm)\nsha256=ab\njunk\n")
	want := Provenance{Hostname: "h", Kernel: "Linux 6.1.0", Arch: "x86_64", CPUModel: "Intel(R) Xeon(R) = fast", Cores: 2, OS: "Debian GNU/Linux 12 (bookworm)", BinarySHA256: "ab"}
	if p != want {
		t.Errorf("got %+v\nwant %+v", p, want)
	}
}

// FuzzParseProvenance: whatever a remote shell prints, the parser neither
// panics nor takes a value from a line of another key.
func FuzzParseProvenance(f *testing.F) {
	f.Add("hostname=h\ncores=2\nsha256=ab\n")
	f.Add("=\n==\ncores=-1\nmem_kb=99999999999999999999999\n")
	f.Fuzz(func(t *testing.T, s string) {
		p := parseProvenance(s)
		if p.BinarySHA256 != "" && !strings.Contains(s, "sha256="+p.BinarySHA256) {
			t.Errorf("sha256 %q not from a sha256 line of %q", p.BinarySHA256, s)
		}
	})
}

// TestSSHConfigErrorsFromTheRealClient runs the system's ssh with a
// malformed and a missing configuration file: it refuses before
// connecting (exit 255), and that is reported as ErrSSHConfig, not as a
// connection failure.
func TestSSHConfigErrorsFromTheRealClient(t *testing.T) {
	if _, err := exec.LookPath("ssh"); err != nil {
		t.Skipf("needs the OpenSSH client: %v", err)
	}
	// A destination New refuses, given to ssh anyway: its refusal is
	// ssh's own, not a dropped connection.
	h := &Host{opt: Options{Dest: "user@-oProxyCommand=x", SSH: "ssh", ConnectTimeout: time.Second}}
	if _, err := h.Run(context.Background(), "true", nil); !errors.Is(err, ErrSSHConfig) || errors.Is(err, ErrConnection) {
		t.Errorf("ssh user@-oProxyCommand=x: %v, want ErrSSHConfig", err)
	}
	bad := filepath.Join(t.TempDir(), "ssh_config")
	os.WriteFile(bad, []byte("Bogus yes\n"), 0o600)
	for _, cfg := range []string{bad, filepath.Join(t.TempDir(), "missing")} {
		h, err := New(Options{Dest: "pqrepro-test.invalid", ConfigFile: cfg, ConnectTimeout: time.Second})
		if err != nil {
			t.Fatal(err)
		}
		_, err = h.Run(context.Background(), "true", nil)
		if !errors.Is(err, ErrSSHConfig) || errors.Is(err, ErrConnection) {
			t.Errorf("ssh -F %s: %v, want ErrSSHConfig", cfg, err)
		}
	}
}
