package sshhost

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"pqrepro/internal/deps"
)

// Errors that stop a remote run, each with what to do in its message
// (match with errors.Is).
var (
	// ErrHostKey: the host's key is not in known_hosts, or differs from
	// the one recorded there. The run refuses it rather than ignoring it.
	ErrHostKey = errors.New("the remote host's key is unknown or has changed (StrictHostKeyChecking=yes refused it): " +
		"if the host was re-keyed on purpose, verify the new key's fingerprint out of band, then update known_hosts " +
		"(ssh-keygen -R HOST, then ssh HOST once); nothing was started remotely")
	// ErrSSHConfig: ssh refused its own command line or configuration
	// (a bad option, an unreadable or malformed ssh_config); nothing was
	// sent to the host.
	ErrSSHConfig = errors.New("ssh refused its command line or configuration before connecting (not a connection failure): fix [remote] ssh_config or host in the study's spec, or the ssh configuration file ssh names")
	// ErrConnection: ssh could not connect or the connection dropped.
	ErrConnection = errors.New("the SSH connection failed or dropped: check that `ssh HOST true` works non-interactively (BatchMode=yes: a key in the agent or IdentityFile, no password)")
	// ErrDiskFull: the remote file system has no room for the binary.
	ErrDiskFull = errors.New("the remote disk is full: free space there or point [remote] dir at another file system")
	// ErrRemoteExited: the remote role ended before it was stopped.
	ErrRemoteExited = errors.New("the remote process ended before the run was complete")
)

// Options say how to reach the host.
type Options struct {
	// Dest is the SSH destination: [user@]host or a Host alias of the
	// ssh configuration. Required.
	Dest string
	// ConfigFile is passed as `ssh -F`; "" uses ssh's defaults
	// (~/.ssh/config and /etc/ssh/ssh_config).
	ConfigFile string
	// Dir is where the binary goes on the host, relative to the remote
	// user's home unless absolute; "" is DefaultDir.
	Dir string
	// SSH is the client program; "" is "ssh" from PATH.
	SSH string
	// Env is the environment of the ssh processes (SSH_AUTH_SOCK for the
	// agent); nil is this process's.
	Env []string
	// ConnectTimeout bounds connecting; 0 is 10 s.
	ConnectTimeout time.Duration
	// Watchdog: a started role exits when it has had no heartbeat for
	// this long; 0 is 6 s.
	Watchdog time.Duration
}

// DefaultDir is where the binary is copied on the remote host (relative to
// the remote user's home).
const DefaultDir = ".cache/pqrepro"

// Requirements lists what a remote run needs here: the OpenSSH client.
func Requirements() []deps.Requirement {
	return []deps.Requirement{{Name: "ssh", Why: "a TLS study's remote host ([remote] host): the server role runs there over SSH",
		Present: deps.Command("ssh"), Apt: []string{"openssh-client"}}}
}

// TestRequirements lists what this package's tests need besides
// Requirements: sshd plays the second host inside a network namespace.
func TestRequirements() []deps.Requirement {
	return append(Requirements(), deps.Requirement{Name: "sshd", Why: "the two-host tests (a real OpenSSH server in a network namespace)",
		Present: func() bool { _, err := os.Stat(SSHDPath); return err == nil }, Apt: []string{"openssh-server"}})
}

// SSHDPath is where Debian's openssh-server installs the server.
const SSHDPath = "/usr/sbin/sshd"

// Host is one remote machine reached with ssh.
type Host struct {
	opt Options
}

// New checks opt and returns a Host; it does not connect.
func New(opt Options) (*Host, error) {
	if opt.Dest == "" {
		return nil, errors.New("sshhost: no destination: set [remote] host to an SSH destination such as user@host")
	}
	if err := checkArg(opt.Dest); err != nil || strings.ContainsAny(opt.Dest, "'\"\\`$;|&<>(){}") {
		return nil, fmt.Errorf("sshhost: [remote] host %q is not an SSH destination ([user@]host or a Host alias)", opt.Dest)
	}
	if err := checkDest(opt.Dest); err != nil {
		return nil, fmt.Errorf("sshhost: [remote] host %q: %v", opt.Dest, err)
	}
	if err := checkArg(opt.ConfigFile); opt.ConfigFile != "" && err != nil {
		return nil, fmt.Errorf("sshhost: ssh_config %q: %v (name the file by a path, like ./ssh_config)", opt.ConfigFile, err)
	}
	if err := checkArg(opt.Dir); opt.Dir != "" && err != nil {
		return nil, fmt.Errorf("sshhost: dir %q: %v (name the folder by a path, like ./pqrepro)", opt.Dir, err)
	}
	if opt.SSH == "" {
		opt.SSH = "ssh"
	}
	if opt.Dir == "" {
		opt.Dir = DefaultDir
	}
	if opt.ConnectTimeout <= 0 {
		opt.ConnectTimeout = 10 * time.Second
	}
	if opt.Watchdog <= 0 {
		opt.Watchdog = 6 * time.Second
	}
	return &Host{opt: opt}, nil
}

// checkArg refuses what would reach a program as something other than the one
// word it is meant to be. It refuses a leading '-' (an option of ssh, of the
// remote mkdir or rm), invalid UTF-8, and any control, separator or format
// character (CR, NUL, VT, FF, NEL, NBSP, U+2028, U+2029, a zero-width
// space...), which split or hide words in a shell, a log or a terminal.
func checkArg(s string) error {
	if strings.HasPrefix(s, "-") {
		return errors.New("starts with '-', so a program would take it as an option")
	}
	if !utf8.ValidString(s) {
		return errors.New("is not valid UTF-8")
	}
	for i, r := range s {
		if unicode.IsControl(r) || unicode.Is(unicode.Z, r) || unicode.Is(unicode.Cf, r) {
			return fmt.Errorf("holds %U at byte %d: a control, space or separator character", r, i)
		}
	}
	return nil
}

// checkDest checks the parts of an SSH destination ([ssh://][user@]host
// [:port]) that checkArg cannot see. The user and the host must not be
// empty, and the host must not start with '-'. ssh refuses such a host
// itself ("hostname contains invalid characters", exit 255), which would
// otherwise be reported as a dropped connection.
func checkDest(dest string) error {
	d := strings.TrimPrefix(dest, "ssh://")
	user, host, hasUser := "", d, false
	if i := strings.LastIndexByte(d, '@'); i >= 0 {
		user, host, hasUser = d[:i], d[i+1:], true
	}
	switch {
	case hasUser && user == "":
		return errors.New("the user before '@' is empty; write user@host or host")
	case host == "":
		return errors.New("no host after the user; write user@host or host")
	case strings.HasPrefix(host, "-"):
		return errors.New("the host starts with '-', which ssh refuses (an option's shape); write user@host or a Host alias")
	}
	return nil
}

// Dest is the destination as given.
func (h *Host) Dest() string { return h.opt.Dest }

// Args are the ssh arguments that run remoteCmd (a POSIX sh command line)
// on the host.
func (h *Host) Args(remoteCmd string) []string {
	var a []string
	if h.opt.ConfigFile != "" {
		a = append(a, "-F", h.opt.ConfigFile)
	}
	a = append(a, "-T",
		"-o", "BatchMode=yes",
		"-o", "StrictHostKeyChecking=yes",
		"-o", "UpdateHostKeys=no",
		"-o", "ControlMaster=no",
		"-o", "ControlPath=none",
		"-o", fmt.Sprintf("ConnectTimeout=%d", max(1, int(h.opt.ConnectTimeout/time.Second))),
		"-o", "ServerAliveInterval=2",
		"-o", "ServerAliveCountMax=3",
		"-o", "LogLevel=INFO", // the host key and connection messages classify needs
		"--", h.opt.Dest, remoteCmd)
	return a
}

func (h *Host) command(ctx context.Context, remoteCmd string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, h.opt.SSH, h.Args(remoteCmd)...)
	cmd.Env = h.opt.Env
	cmd.WaitDelay = 2 * time.Second
	return cmd
}

// Run runs remoteCmd on the host with stdin (nil: none) and returns its
// standard output. A failure is classified (ErrHostKey, ErrConnection,
// ErrDiskFull) and carries ssh's and the command's standard error.
func (h *Host) Run(ctx context.Context, remoteCmd string, stdin []byte) ([]byte, error) {
	cmd := h.command(ctx, remoteCmd)
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return out.Bytes(), h.classify(err, errb.String())
	}
	return out.Bytes(), nil
}

// classify wraps a failed ssh's error with the sentinel its standard error
// and exit status point to.
func (h *Host) classify(err error, stderr string) error {
	msg := strings.TrimSpace(stderr)
	if len(msg) > 600 {
		msg = "..." + msg[len(msg)-600:]
	}
	detail := ""
	if msg != "" {
		detail = ": " + strings.ReplaceAll(msg, "\n", " | ")
	}
	var ee *exec.ExitError
	code := -1
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	}
	switch {
	case strings.Contains(stderr, "Host key verification failed") ||
		strings.Contains(stderr, "REMOTE HOST IDENTIFICATION HAS CHANGED") ||
		strings.Contains(stderr, "No matching host key") ||
		strings.Contains(stderr, "host key") && strings.Contains(stderr, "known"):
		return fmt.Errorf("ssh %s: %w (%v%s)", h.opt.Dest, ErrHostKey, err, detail)
	case strings.Contains(stderr, "No space left on device") || strings.Contains(stderr, "Disk quota exceeded"):
		return fmt.Errorf("ssh %s: %w (%v%s)", h.opt.Dest, ErrDiskFull, err, detail)
	case code == 255 && sshConfigError(stderr):
		return fmt.Errorf("ssh %s: %w (%v%s)", h.opt.Dest, ErrSSHConfig, err, detail)
	case code == 255 || code == -1:
		return fmt.Errorf("ssh %s: %w (%v%s)", h.opt.Dest, ErrConnection, err, detail)
	}
	return fmt.Errorf("ssh %s: remote command failed (%v%s)", h.opt.Dest, err, detail)
}

// sshConfigError reports whether ssh's standard error is its own usage
// or configuration error (OpenSSH's messages: readconf.c, ssh.c), which
// it prints before connecting.
func sshConfigError(stderr string) bool {
	for _, m := range []string{
		"usage: ssh ", "Bad configuration option", "bad configuration options", "Can't open user config file",
		"Bad owner or permissions on", "unknown option -- ", "illegal option -- ", "option requires an argument -- ",
		"no argument after keyword", "Unsupported option", "garbage at end of line", "missing argument.",
		"hostname contains invalid characters", "Invalid hostname", "user contains invalid characters",
	} {
		if strings.Contains(stderr, m) {
			return true
		}
	}
	return false
}

// shq quotes s for a POSIX shell.
func shq(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// Spec is a study spec's [remote] table (experiments/tls.toml and
// net.toml): the second host. The zero value is "no remote host".
type Spec struct {
	// Host is an SSH destination ([user@]host or a Host alias of
	// ~/.ssh/config), reached with the system's ssh honouring the user's
	// config, agent and known_hosts; an unknown or changed host key is
	// refused.
	Host string `toml:"host"`
	// SSHConfig is an ssh_config file used instead of ~/.ssh/config
	// (ssh -F); empty uses ssh's defaults.
	SSHConfig string `toml:"ssh_config"`
	// Dir is where the binary is copied on the host, relative to the
	// remote user's home unless absolute; empty is DefaultDir.
	Dir string `toml:"dir"`
}

// Options are the Options of s.
func (s Spec) Options() Options { return Options{Dest: s.Host, ConfigFile: s.SSHConfig, Dir: s.Dir} }

// Validate checks the table before any program runs: host when it is
// set, and ssh_config and dir whenever they are (see New).
func (s Spec) Validate() error {
	if s.Host == "" {
		if s.SSHConfig == "" && s.Dir == "" {
			return nil
		}
		o := s.Options()
		o.Dest = "unset"
		if _, err := New(o); err != nil {
			return fmt.Errorf("[remote]: %w", err)
		}
		return nil
	}
	if _, err := New(s.Options()); err != nil {
		return fmt.Errorf("[remote]: %w", err)
	}
	return nil
}
