package openssl

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"pqrepro/experiments/instruments/handshake"
)

// The openssl-cli stack: the build's own command-line tools in the roles
// the original study gave them, one long-running `openssl s_server` per
// configuration and one `openssl s_client` process per connection, so
// that every handshake pays what a fresh process pays (loading the
// program, the providers' first fetches, cold caches). The command lines
// are the spec's ([cli] in experiments/tls.toml, with the reason for each
// option); the placeholders below are filled per configuration and per
// connection.
//
// What each side reports is read from its -brief summary on standard
// error (apps/lib/s_cb.c print_ssl_summary):
//
//	Protocol version: TLSv1.3
//	Signature type: mldsa87          (client only: the server's signature)
//	Negotiated TLS1.3 group: MLKEM1024
//	Peer Temp Key: X25519, 253 bits   (instead of the line above when
//	                                   the peer sent an ephemeral key)
//
// Neither tool reports a HelloRetryRequest or, on the server, the peer's
// address and a handshake timer: those are checked in the capture only
// (tlsjoin), and the server's record has no Client and DurationNs -1.

// Placeholders of the [cli] command lines.
const (
	PlaceAddr    = "{addr}"   // the server's ip:port
	PlaceBind    = "{bind}"   // the client's ip:port (s_client -bind), chosen per connection
	PlaceCert    = "{cert}"   // the server's certificate chain (PEM)
	PlaceKey     = "{key}"    // the server's private key (PEM, PKCS#8)
	PlaceCA      = "{ca}"     // the client's trust anchor (PEM)
	PlaceGroups  = "{groups}" // the side's groups list (ServerGroups, ClientGroups)
	PlaceKeyLog  = "{keylog}" // the client's NSS key log file, one per connection
	PlaceSNIName = "{name}"   // the server name the client sends and verifies
)

// ServerPlaces and ClientPlaces are the placeholders each command line
// must hold, each exactly once, so that a spec cannot lose a check by
// dropping one. Both must also hold -brief, whose summary the driver
// reads.
var (
	ServerPlaces = []string{PlaceAddr, PlaceCert, PlaceKey, PlaceGroups}
	ClientPlaces = []string{PlaceAddr, PlaceBind, PlaceCA, PlaceGroups, PlaceKeyLog}
)

// CheckCommandLine reports whether args (the openssl program's arguments,
// its subcommand first) can drive the openssl-cli stack. The subcommand
// is want, -brief is present and every placeholder of places occurs
// exactly once.
func CheckCommandLine(want string, args []string, places []string) error {
	if len(args) == 0 || args[0] != want {
		return fmt.Errorf("command line %q: must start with %s", strings.Join(args, " "), want)
	}
	var errs []error
	if !slices.Contains(args, "-brief") {
		errs = append(errs, errors.New("-brief is missing (its summary is what the driver checks)"))
	}
	for _, p := range places {
		n := 0
		for _, a := range args {
			n += strings.Count(a, p)
		}
		if n != 1 {
			errs = append(errs, fmt.Errorf("placeholder %s occurs %d times, want once", p, n))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("%s command line: %w", want, err)
	}
	return nil
}

// fill replaces the placeholders of args.
func fill(args []string, values map[string]string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		for k, v := range values {
			a = strings.ReplaceAll(a, k, v)
		}
		out[i] = a
	}
	return out
}

// Launcher is where a path runs the openssl program. That is,
// natively (the program on this host's file system, started on a
// thread inside the path's network namespace) or inside a container.
type Launcher struct {
	// Argv is the command that runs the program with the given
	// arguments: {Build.Program(), args...} natively, or {"docker", ...,
	// "exec", "-i", container, "/usr/local/bin/openssl", args...}.
	Argv func(args []string) []string
	// Start starts cmd; nil means cmd.Start. A path with its own network
	// namespace starts it from a thread that has joined it, so the
	// process is born there.
	Start func(cmd *exec.Cmd) error
	// File maps a file written on this host to the name the program opens
	// (a container sees the certificate folder at its mount point); nil
	// is the identity.
	File func(hostPath string) string
	// Listening reports whether a server listens on addr where the
	// program runs; nil is ListeningTCP in the calling thread's
	// namespace. A path with its own namespace asks from a thread inside.
	Listening func(addr string) (bool, error)
}

// Native runs the program at bin directly.
func Native(bin string) Launcher {
	return Launcher{Argv: func(args []string) []string { return append([]string{bin}, args...) }}
}

func (l Launcher) command(ctx context.Context, args []string) *exec.Cmd {
	argv := l.Argv(args)
	if ctx == nil {
		return exec.Command(argv[0], argv[1:]...)
	}
	return exec.CommandContext(ctx, argv[0], argv[1:]...)
}

func (l Launcher) start(cmd *exec.Cmd) error {
	if l.Start != nil {
		return l.Start(cmd)
	}
	return cmd.Start()
}

func (l Launcher) listening(addr string) (bool, error) {
	if l.Listening != nil {
		return l.Listening(addr)
	}
	return ListeningTCP(addr)
}

func (l Launcher) file(p string) string {
	if l.File != nil {
		return l.File(p)
	}
	return p
}

// summary is what one -brief summary said.
type summary struct {
	version, group, sigalg, verification string
}

// parseSummaryLine adds one line of a -brief summary to s and reports
// whether the line ends the summary (the group line is print_ssl_summary's
// last).
func parseSummaryLine(s *summary, line string) (done bool) {
	switch {
	case strings.HasPrefix(line, "Protocol version: "):
		s.version = strings.TrimPrefix(line, "Protocol version: ")
	case strings.HasPrefix(line, "Signature type: "):
		s.sigalg = strings.TrimPrefix(line, "Signature type: ")
	case strings.HasPrefix(line, "Verification: "), strings.HasPrefix(line, "Verification error: "):
		s.verification = line
	case strings.HasPrefix(line, "Negotiated TLS1.3 group: "):
		s.group = strings.TrimPrefix(line, "Negotiated TLS1.3 group: ")
		return true
	case strings.HasPrefix(line, "Peer Temp Key: "):
		s.group = tempKeyGroup(strings.TrimPrefix(line, "Peer Temp Key: "))
		return true
	}
	return false
}

// tempKeyGroup is the group of a "Peer Temp Key:" line's value.
// "X25519, 253 bits" is X25519, "ECDH, secp384r1, 384 bits" secp384r1, a
// KEM's key its type name ("ML-KEM-1024", "X25519MLKEM768").
func tempKeyGroup(v string) string {
	f := strings.Split(v, ", ")
	if len(f) == 3 && f[0] == "ECDH" {
		return f[1]
	}
	return f[0]
}

// cliGroupID is groupID that also reads the key type names OpenSSL gives
// KEM keys ("ML-KEM-1024").
func cliGroupID(name string) (tls.CurveID, bool) {
	if g, ok := groupID(name); ok {
		return g, true
	}
	return groupID(strings.ReplaceAll(name, "-", ""))
}

// sigalgKeys maps a "Signature type:" value (TLS SignatureScheme names as
// OpenSSL 3.5 prints them) to the certificate key that makes it.
var sigalgKeys = map[string]handshake.CertKey{
	"ed25519":                handshake.Ed25519,
	"ecdsa_secp256r1_sha256": handshake.ECDSAP256,
	"mldsa44":                handshake.MLDSA44,
	"mldsa65":                handshake.MLDSA65,
	"mldsa87":                handshake.MLDSA87,
}

// checkSummary compares a summary with e (the side's view: the server
// has no signature line).
func checkSummary(e handshake.Expect, s summary, client bool) error {
	var errs []error
	if s.version != "TLSv1.3" {
		errs = append(errs, fmt.Errorf("version %q, want TLSv1.3", s.version))
	}
	if g, ok := cliGroupID(s.group); !ok || g != e.Group {
		errs = append(errs, fmt.Errorf("negotiated group %q, want %s", s.group, e.Group))
	}
	if client {
		if k, ok := sigalgKeys[s.sigalg]; !ok || k != e.Key {
			errs = append(errs, fmt.Errorf("server signature %q, want one by a %s key", s.sigalg, e.Key))
		}
		if s.verification != "Verification: OK" {
			errs = append(errs, fmt.Errorf("certificate %q, want \"Verification: OK\"", s.verification))
		}
	}
	return errors.Join(errs...)
}

// CLIServer is one configuration's `openssl s_server`, long-running: it
// accepts on the listener's address, one connection at a time, until
// Serve's context ends.
type CLIServer struct {
	Launcher Launcher
	Args     []string  // the [cli] server command line, placeholders unfilled
	Files    CertFiles // WriteCerts
	Groups   string    // ServerGroups
	Expect   handshake.Expect
	// ChainFile, when set, holds the certificates s_server sends after
	// the leaf (-cert_chain): -cert reads only the first certificate of
	// its file, so a leaf + CA chain needs both.
	ChainFile string
	// Ready is how long to wait for s_server to listen; 0 means 10 s.
	Ready time.Duration
	// Up, when not nil, is closed once s_server listens (-brief prints
	// nothing then, so Serve watches the namespace's TCP table): the
	// runner connects only after every server is up.
	Up chan struct{}
}

// Serve runs s_server on ln's address and reports a record per
// handshake it prints.
//
// It closes ln (s_server cannot take a listening socket), starts
// s_server on ln's address, and reports one record per summary it
// prints (Client "", DurationNs -1: s_server reports neither), or per
// handshake it reports failed ("ERROR"). It returns when ctx ends (nil)
// or when s_server exits by itself (an error with its last output).
func (s *CLIServer) Serve(ctx context.Context, ln net.Listener, report func(handshake.ServerRecord)) error {
	addr := ln.Addr().String()
	ln.Close()
	if err := CheckCommandLine("s_server", s.Args, ServerPlaces); err != nil {
		return err
	}
	args := fill(s.Args, map[string]string{
		PlaceAddr: addr, PlaceCert: s.Launcher.file(s.Files.Chain), PlaceKey: s.Launcher.file(s.Files.Key), PlaceGroups: s.Groups,
	})
	if s.ChainFile != "" {
		args = append(args, "-cert_chain", s.Launcher.file(s.ChainFile))
	}
	cmd := s.Launcher.command(nil, args)
	// s_server reads its standard input and forwards it to the client; a
	// pipe nobody writes keeps it quiet (a closed one would read as EOF).
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return err
	}
	defer stdin.Close()
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return err
	}
	if err := s.Launcher.start(cmd); err != nil {
		return fmt.Errorf("openssl s_server: start %s: %w", strings.Join(cmd.Args, " "), err)
	}
	exited := make(chan error, 1)
	var tail tailBuffer
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { // stdout: nothing with -brief (s_quiet), drained in case
		defer wg.Done()
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			tail.line("stdout: " + sc.Text())
		}
	}()
	lines := make(chan string, 1024)
	go func() { // stderr: the -brief summaries and errors
		defer wg.Done()
		defer close(lines)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			tail.line(sc.Text())
			lines <- sc.Text()
		}
	}()
	go func() { wg.Wait(); exited <- cmd.Wait() }()
	stop := func() error {
		cmd.Process.Kill()
		go func() { // nobody reads the lines any more: let the reader end
			for range lines {
			}
		}()
		<-exited
		return nil
	}
	ready := s.Ready
	if ready == 0 {
		ready = 10 * time.Second
	}
	deadline := time.Now().Add(ready)
	for up := false; !up; {
		var lerr error
		if up, lerr = s.Launcher.listening(addr); lerr != nil {
			stop()
			return fmt.Errorf("openssl s_server on %s: is it listening? %w", addr, lerr)
		}
		if up {
			break
		}
		select {
		case <-ctx.Done():
			return stop()
		case err := <-exited:
			return fmt.Errorf("openssl s_server on %s exited at start (%v): %s", addr, err, tail.String())
		case <-time.After(5 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			stop()
			return fmt.Errorf("openssl s_server on %s: not listening within %s: %s", addr, ready, tail.String())
		}
	}
	if s.Up != nil {
		close(s.Up)
	}
	var sum summary
	for {
		select {
		case <-ctx.Done():
			return stop()
		case l, ok := <-lines:
			if !ok {
				err := <-exited
				return fmt.Errorf("openssl s_server on %s exited (%v): %s", addr, err, tail.String())
			}
			switch {
			case l == "ERROR":
				report(handshake.ServerRecord{DurationNs: -1, Err: fmt.Errorf("openssl s_server on %s reported a failed handshake: %s", addr, tail.String())})
				sum = summary{}
			case parseSummaryLine(&sum, l):
				rec := handshake.ServerRecord{Accept: time.Now(), DurationNs: -1}
				if err := checkSummary(s.Expect, sum, false); err != nil {
					rec.Err = fmt.Errorf("openssl s_server on %s: %w", addr, err)
				}
				report(rec)
				sum = summary{}
			}
		}
	}
}

// CLIClient makes each connection with a new `openssl s_client` process.
type CLIClient struct {
	Launcher Launcher
	Args     []string // the [cli] client command line, placeholders unfilled
	CA       string   // CertFiles.CA
	Groups   string   // ClientGroups
	Name     string   // server name; "" means localhost
	Expect   handshake.Expect
	// BindIP is the client's address; each connection binds a port the
	// kernel has just handed out on it (see Dial).
	BindIP string
	// FreePort returns a port the kernel would hand out on BindIP; nil is
	// FreePort. The runner calls Dial on a thread inside the client's
	// namespace, so the port is that namespace's.
	FreePort func(ip string) (int, error)
	// KeyDir holds the per-connection key log files ("" means the
	// system's temporary folder); KeyLog receives their lines.
	KeyDir  string
	KeyLog  io.Writer
	Timeout time.Duration // per connection; 0 means 30 s
}

// Dial runs one s_client to addr with standard input at EOF, so that it
// makes the handshake, prints its summary, sends close_notify and exits.
// The record's Start is taken just before the process starts and
// DurationNs runs to its exit (the first moment the driver sees; the
// summary is printed just before the close_notify): unlike the harness's
// timer it includes the process's start and end. The client's port is
// chosen here (FreePort) and handed to s_client -bind, so that the
// capture's connection can be found by its 4-tuple.
func (c *CLIClient) Dial(ctx context.Context, addr string) (handshake.ClientRecord, error) {
	if err := CheckCommandLine("s_client", c.Args, ClientPlaces); err != nil {
		return handshake.ClientRecord{}, err
	}
	timeout := c.Timeout
	if timeout == 0 {
		timeout = 30 * time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	freePort := c.FreePort
	if freePort == nil {
		freePort = FreePort
	}
	port, err := freePort(c.BindIP)
	if err != nil {
		return handshake.ClientRecord{}, fmt.Errorf("openssl s_client: choose a client port on %s: %w", c.BindIP, err)
	}
	local := net.JoinHostPort(c.BindIP, fmt.Sprint(port))
	kl, err := os.CreateTemp(c.KeyDir, "keylog-*.txt")
	if err != nil {
		return handshake.ClientRecord{}, fmt.Errorf("openssl s_client: key log: %w", err)
	}
	klPath := kl.Name()
	kl.Close()
	defer os.Remove(klPath)
	name := c.Name
	if name == "" {
		name = "localhost"
	}
	args := fill(c.Args, map[string]string{
		PlaceAddr: addr, PlaceBind: local, PlaceCA: c.Launcher.file(c.CA), PlaceGroups: c.Groups,
		PlaceKeyLog: c.Launcher.file(klPath), PlaceSNIName: name,
	})
	cmd := c.Launcher.command(ctx, args)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	cmd.Stdin = nil // /dev/null: EOF once the handshake is done
	// Group and Key come from the summary; s_client reports no
	// HelloRetryRequest, so HRR stays false here and the capture decides.
	rec := handshake.ClientRecord{Local: local, Server: addr}
	rec.Start = time.Now()
	if err := c.Launcher.start(cmd); err != nil {
		return rec, fmt.Errorf("openssl s_client: start: %w", err)
	}
	werr := cmd.Wait()
	rec.DurationNs = time.Since(rec.Start).Nanoseconds()
	what := fmt.Sprintf("openssl s_client %s -> %s", local, addr)
	if ctx.Err() != nil && werr != nil {
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return rec, fmt.Errorf("%s: no exit within %s: %s", what, timeout, lastLines(stderr.String()))
		}
		return rec, ctx.Err()
	}
	if werr != nil {
		return rec, fmt.Errorf("%s exited with %v: %s", what, werr, lastLines(stderr.String()))
	}
	var sum summary
	complete := false
	for _, l := range strings.Split(stderr.String(), "\n") {
		if parseSummaryLine(&sum, strings.TrimRight(l, "\r")) {
			complete = true
			break
		}
	}
	if !complete {
		return rec, fmt.Errorf("%s: no -brief summary on its standard error: %s", what, lastLines(stderr.String()))
	}
	if g, ok := cliGroupID(sum.group); ok {
		rec.Group = g
	}
	if k, ok := sigalgKeys[sum.sigalg]; ok {
		rec.Key = k
	}
	if err := checkSummary(c.Expect, sum, true); err != nil {
		return rec, fmt.Errorf("%s: %w", what, err)
	}
	keys, err := os.ReadFile(klPath)
	if err != nil {
		return rec, fmt.Errorf("%s: key log: %w", what, err)
	}
	if len(keys) == 0 {
		return rec, fmt.Errorf("%s: wrote no key log lines to %s", what, klPath)
	}
	if c.KeyLog != nil {
		c.KeyLog.Write(keys)
	}
	return rec, nil
}

// Close is a no-op: every connection's process has exited when Dial
// returns.
func (c *CLIClient) Close() error { return nil }

// lastLines is the last few lines of a tool's output, for an error.
func lastLines(s string) string {
	ls := strings.Split(strings.TrimSpace(s), "\n")
	if len(ls) > 6 {
		ls = ls[len(ls)-6:]
	}
	if len(ls) == 1 && ls[0] == "" {
		return "(no output)"
	}
	return strings.Join(ls, " | ")
}

// tailBuffer keeps a process's last lines for its error messages.
type tailBuffer struct {
	mu    sync.Mutex
	lines []string
}

func (t *tailBuffer) line(l string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.lines = append(t.lines, l)
	if len(t.lines) > 8 {
		t.lines = t.lines[len(t.lines)-8:]
	}
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.lines) == 0 {
		return "(no output)"
	}
	return strings.Join(t.lines, " | ")
}

// TLSGroups lists the TLS groups the program offers (`openssl list
// -tls-groups`, as OpenSSL spells them).
func TLSGroups(ctx context.Context, bin string) ([]string, error) {
	out, err := exec.CommandContext(ctx, bin, "list", "-tls-groups").Output()
	if err != nil {
		return nil, fmt.Errorf("%s list -tls-groups: %w", filepath.Base(bin), err)
	}
	return ParseTLSGroups(string(out)), nil
}

// ParseTLSGroups reads the colon-separated list `openssl list
// -tls-groups` prints.
func ParseTLSGroups(out string) []string {
	var gs []string
	for _, g := range strings.FieldsFunc(out, func(r rune) bool { return r == ':' || r == '\n' || r == ' ' || r == '\r' }) {
		gs = append(gs, g)
	}
	return gs
}

// MissingGroups returns the groups of a groups list that offered lacks,
// compared without regard to case. The list is in OpenSSL's syntax, with
// '*' and '?' prefixes and ':' or '/' separators.
func MissingGroups(list string, offered []string) []string {
	var out []string
	for _, g := range strings.FieldsFunc(list, func(r rune) bool { return r == ':' || r == '/' }) {
		g = strings.TrimLeft(g, "*?")
		if g != "" && !slices.ContainsFunc(offered, func(o string) bool { return strings.EqualFold(o, g) }) {
			out = append(out, g)
		}
	}
	return out
}

// ProgramVersion asks the program for its version ("OpenSSL 3.5.7 ...").
func ProgramVersion(ctx context.Context, bin string) (string, error) {
	out, err := exec.CommandContext(ctx, bin, "version").Output()
	if err != nil {
		return "", fmt.Errorf("%s version: %w", filepath.Base(bin), err)
	}
	return strings.TrimSpace(string(out)), nil
}
