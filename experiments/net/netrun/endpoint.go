package netrun

import (
	"bufio"
	"context"
	"crypto/sha256"
	"crypto/x509"
	"debug/buildinfo"
	"encoding/csv"
	"encoding/hex"
	"encoding/pem"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"pqrepro/experiments/instruments/handshake"
)

// EndpointDir is the Study B endpoint program's source, relative to the
// repository root. It is a module of its own (go 1.24, standard library
// only), so that it builds with the original study's Go 1.24 as well as
// with the project's toolchain. The toolchain factor of the spec picks
// which build runs; the source is the same.
const EndpointDir = "experiments/net/endpoint"

// endpointCache is where built endpoints are kept, relative to the root:
// <toolchain>-<source hash>/endpoint.
const endpointCache = ".cache/netstudy-endpoint"

var toolchainRE = regexp.MustCompile(`^go1\.[0-9]+(\.[0-9]+)?$`)

// Endpoint is one build of the endpoint program.
type Endpoint struct {
	Path      string // the binary
	Toolchain string // the GOTOOLCHAIN it was built with, e.g. go1.24.4
	GoVersion string // runtime version recorded in the binary's build info
	SourceSHA string // SHA-256 over the source files' names and contents
}

// endpointSource hashes the endpoint's source files (go.mod and *.go,
// sorted by name; tests excluded, they do not go into the binary).
func endpointSource(dir string) (string, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return "", fmt.Errorf("endpoint source: %w", err)
	}
	h := sha256.New()
	n := 0
	for _, e := range ents { // sorted by name
		name := e.Name()
		if e.IsDir() || !(name == "go.mod" || strings.HasSuffix(name, ".go") && !strings.HasSuffix(name, "_test.go")) {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			return "", fmt.Errorf("endpoint source: %w", err)
		}
		fmt.Fprintf(h, "%s %d\n", name, len(b))
		h.Write(b)
		n++
	}
	if n == 0 {
		return "", fmt.Errorf("endpoint source: no Go files in %s", dir)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// BuildEndpoint returns the endpoint built with toolchain ("go1.24.4"),
// building it into root/.cache/netstudy-endpoint/<toolchain>-<hash>/ when
// that build is not cached yet. The go command fetches the toolchain from
// the module proxy when it is not installed (GOTOOLCHAIN); the build is
// -trimpath, without VCS stamping and cgo, so the binary depends only on
// the source and the toolchain. The toolchain is checked against the
// binary's build info.
func BuildEndpoint(ctx context.Context, root, toolchain string, log io.Writer) (*Endpoint, error) {
	if !toolchainRE.MatchString(toolchain) {
		return nil, fmt.Errorf("toolchain %q: want a Go release such as go1.24.4", toolchain)
	}
	src := filepath.Join(root, EndpointDir)
	sum, err := endpointSource(src)
	if err != nil {
		return nil, err
	}
	dir := filepath.Join(root, endpointCache, toolchain+"-"+sum[:16])
	bin := filepath.Join(dir, "endpoint")
	if _, err := os.Stat(bin); err != nil {
		if log != nil {
			fmt.Fprintf(log, "net:run: building the endpoint with %s (GOTOOLCHAIN=%s go build; fetched from the module proxy the first time)\n", toolchain, toolchain)
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, fmt.Errorf("endpoint cache: %w", err)
		}
		// A name of this process's own, so that two runs building at
		// once do not write into one file; the rename is atomic.
		tmp := filepath.Join(dir, fmt.Sprintf(".endpoint-%d.tmp", os.Getpid()))
		cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-buildvcs=false", "-o", tmp, ".")
		cmd.Dir = src
		cmd.Env = append(os.Environ(), "GOTOOLCHAIN="+toolchain, "CGO_ENABLED=0", "GOFLAGS=", "GOWORK=off")
		if out, err := cmd.CombinedOutput(); err != nil {
			os.Remove(tmp)
			return nil, fmt.Errorf("build the endpoint with %s: %w\n%s(is the Go module proxy reachable? GOTOOLCHAIN=%s go version fetches the toolchain)", toolchain, err, out, toolchain)
		}
		if err := os.Rename(tmp, bin); err != nil {
			return nil, fmt.Errorf("endpoint cache: %w", err)
		}
	}
	bi, err := buildinfo.ReadFile(bin)
	if err != nil {
		return nil, fmt.Errorf("endpoint %s: read build info: %w", bin, err)
	}
	if bi.GoVersion != toolchain {
		return nil, fmt.Errorf("endpoint %s was built by %s, not %s: remove %s and run again", bin, bi.GoVersion, toolchain, dir)
	}
	return &Endpoint{Path: bin, Toolchain: toolchain, GoVersion: bi.GoVersion, SourceSHA: sum}, nil
}

// endpointFiles writes the bundle's certificate chain, key and trust
// anchors as PEM into dir for the endpoint processes.
func endpointFiles(dir string, b *handshake.Bundle) (cert, key, roots string, err error) {
	cert, key, roots = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem"), filepath.Join(dir, "roots.pem")
	var cb, rb []byte
	for _, der := range b.Server.Certificate {
		cb = append(cb, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})...)
	}
	// The trust anchor is the last certificate: the CA when chained, the
	// self-signed leaf otherwise.
	rb = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: b.Server.Certificate[len(b.Server.Certificate)-1]})
	kd, err := x509.MarshalPKCS8PrivateKey(b.Server.PrivateKey)
	if err != nil {
		return "", "", "", fmt.Errorf("endpoint key: %w (Go 1.24 cannot use a %s key)", err, b.Key)
	}
	kb := pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: kd})
	for _, f := range []struct {
		p string
		b []byte
	}{{cert, cb}, {key, kb}, {roots, rb}} {
		if err := os.WriteFile(f.p, f.b, 0o600); err != nil {
			return "", "", "", fmt.Errorf("endpoint files: %w", err)
		}
	}
	return cert, key, roots, nil
}

// endpointError is a failed connection as the endpoint reported it: class
// is the network failure class ("" for a configuration error).
type endpointError struct {
	class, msg string
}

func (e *endpointError) Error() string { return "endpoint: " + e.msg }

// proc is a running endpoint process and its stdout as CSV records.
type proc struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	lines chan []string
	done  chan struct{} // closed when stdout ends
	errb  *strings.Builder
	mu    sync.Mutex
}

// startProc starts the endpoint process. start runs cmd.Start, so that the
// caller can run it on a thread inside a network namespace (a child process
// is in the namespace of the thread that forks it).
func startProc(ep *Endpoint, args []string, start func(func())) (*proc, error) {
	p := &proc{cmd: exec.Command(ep.Path, args...), lines: make(chan []string, 64), done: make(chan struct{}), errb: &strings.Builder{}}
	stdout, err := p.cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if p.stdin, err = p.cmd.StdinPipe(); err != nil {
		return nil, err
	}
	p.cmd.Stderr = &lockedWriter{w: p.errb}
	start(func() { err = p.cmd.Start() })
	if err != nil {
		return nil, fmt.Errorf("start endpoint %s: %w", ep.Path, err)
	}
	go func() {
		defer close(p.done)
		cr := csv.NewReader(bufio.NewReader(stdout))
		cr.FieldsPerRecord = -1
		for {
			rec, err := cr.Read()
			if err != nil {
				return
			}
			p.lines <- rec
		}
	}()
	return p, nil
}

// next returns the next record of the endpoint's output.
func (p *proc) next(ctx context.Context) ([]string, error) {
	select {
	case l := <-p.lines:
		return l, nil
	case <-ctx.Done():
		return nil, context.Cause(ctx)
	case <-p.done:
		select {
		case l := <-p.lines:
			return l, nil
		default:
		}
		return nil, fmt.Errorf("the endpoint %s exited: %s", filepath.Base(p.cmd.Path), strings.TrimSpace(p.errb.String()))
	}
}

// stop closes stdin (the endpoint's signal to finish), waits up to grace
// and kills it after that.
func (p *proc) stop(grace time.Duration) error {
	p.stdin.Close()
	w := make(chan error, 1)
	go func() { w <- p.cmd.Wait() }()
	select {
	case err := <-w:
		return err
	case <-time.After(grace):
		p.cmd.Process.Kill()
		<-w
		return fmt.Errorf("endpoint did not stop within %v, killed", grace)
	}
}

// epServer is an endpoint server with one listener per group.
type epServer struct {
	p      *proc
	addrs  map[string]string // group -> listening address
	report func(handshake.ServerRecord)
	expect map[string]string // listening port -> group
	wg     sync.WaitGroup
}

// startEndpointServer starts the endpoint's server on "ADDR=GROUP" pairs.
// It passes every accepted connection to report; a connection whose group
// (read from its ServerHello) is not its listener's, or that had a
// HelloRetryRequest, is reported with an error. cc, when set, is every
// socket's congestion control (the endpoint's -cc), and a connection that
// reads back another is reported with an error.
func startEndpointServer(ctx context.Context, ep *Endpoint, cert, key string, timeout time.Duration, cc string, listen []string, start func(func()), report func(handshake.ServerRecord)) (*epServer, error) {
	args := []string{"server", "-cert", cert, "-key", key, "-timeout", timeout.String()}
	if cc != "" {
		args = append(args, "-cc", cc)
	}
	for _, l := range listen {
		args = append(args, "-listen", l)
	}
	p, err := startProc(ep, args, start)
	if err != nil {
		return nil, err
	}
	s := &epServer{p: p, addrs: map[string]string{}, report: report, expect: map[string]string{}}
	for {
		l, err := p.next(ctx)
		if err != nil {
			p.stop(time.Second)
			return nil, fmt.Errorf("endpoint server (%s): %w", ep.Toolchain, err)
		}
		if l[0] != "ready" {
			continue
		}
		if len(l) == 1 {
			break
		}
		s.addrs[l[2]] = l[1]
		_, port, _ := net.SplitHostPort(l[1])
		s.expect[port] = l[2]
	}
	s.wg.Add(1)
	go s.read()
	return s, nil
}

func (s *epServer) read() {
	defer s.wg.Done()
	for {
		l, err := s.p.next(context.Background())
		if err != nil {
			return
		}
		if l[0] != "accept" || len(l) != 9 {
			continue
		}
		rec := handshake.ServerRecord{Client: l[1]}
		if ns, err := strconv.ParseInt(l[3], 10, 64); err == nil {
			rec.Accept = time.Unix(0, ns)
		}
		rec.DurationNs, _ = strconv.ParseInt(l[4], 10, 64)
		_, port, _ := net.SplitHostPort(l[2])
		switch want := s.expect[port]; {
		case l[7] != "":
			rec.Err = fmt.Errorf("endpoint server: connection from %s: %s", l[1], l[7])
		case l[5] != want || l[6] != "false":
			rec.Err = fmt.Errorf("endpoint server: connection from %s to %s negotiated %s (HelloRetryRequest %s), want %s without one", l[1], l[2], l[5], l[6], want)
		}
		s.report(rec)
	}
}

// close stops the server and waits for its reports.
func (s *epServer) close() error {
	err := s.p.stop(10 * time.Second)
	s.wg.Wait()
	return err
}

// epClient is an endpoint client making one connection per dial.
type epClient struct {
	p      *proc
	keyLog io.Writer
}

// startEndpointClient starts the endpoint's client; cc, when set, is its
// sockets' congestion control (the endpoint's -cc).
func startEndpointClient(ep *Endpoint, roots string, timeout time.Duration, cc string, keyLog io.Writer, start func(func())) (*epClient, error) {
	args := []string{"client", "-roots", roots, "-servername", "localhost", "-timeout", timeout.String()}
	if cc != "" {
		args = append(args, "-cc", cc)
	}
	p, err := startProc(ep, args, start)
	if err != nil {
		return nil, err
	}
	return &epClient{p: p, keyLog: keyLog}, nil
}

// response is what the client read of a transfer connection's response (our
// extension). It holds the bytes and dial start to the last of them (0 when
// the response did not complete), and the congestion control its socket read
// back ("" without a socket).
type response struct {
	read, ttlbNs int64
	cc           string
}

// dial makes one connection offering group only; the record says what
// the endpoint measured. size >= 0 asks for a response of size bytes
// after the handshake (the transfer block), size < 0 makes the
// handshake-only connection. A negotiated group other than group, or a
// HelloRetryRequest, is an error of class "" (the configuration is wrong).
func (c *epClient) dial(ctx context.Context, addr, group string, size int) (handshake.ClientRecord, response, error) {
	var rec handshake.ClientRecord
	var resp response
	cmd := fmt.Sprintf("dial %s %s\n", addr, group)
	if size >= 0 {
		cmd = fmt.Sprintf("dial %s %s %d\n", addr, group, size)
	}
	if _, err := io.WriteString(c.p.stdin, cmd); err != nil {
		return rec, resp, fmt.Errorf("endpoint client: %w", err)
	}
	for {
		l, err := c.p.next(ctx)
		if err != nil {
			return rec, resp, fmt.Errorf("endpoint client: %w", err)
		}
		switch {
		case l[0] == "keylog" && len(l) == 2:
			if c.keyLog != nil {
				io.WriteString(c.keyLog, l[1]+"\n")
			}
			continue
		case l[0] != "conn" || len(l) != 12:
			return rec, resp, fmt.Errorf("endpoint client: unexpected output %q", strings.Join(l, ","))
		}
		resp.read, _ = strconv.ParseInt(l[9], 10, 64)
		resp.ttlbNs, _ = strconv.ParseInt(l[10], 10, 64)
		resp.cc = l[11]
		rec.Local, rec.Server = l[1], l[2]
		if ns, err := strconv.ParseInt(l[3], 10, 64); err == nil {
			rec.Start = time.Unix(0, ns)
		}
		rec.DurationNs, _ = strconv.ParseInt(l[4], 10, 64)
		rec.HRR = l[6] == "true"
		if l[8] != "" {
			return rec, resp, &endpointError{class: l[7], msg: l[8]}
		}
		if l[5] != group || rec.HRR {
			return rec, resp, &endpointError{msg: fmt.Sprintf("connection %s -> %s negotiated %s (HelloRetryRequest %v), want %s without one", rec.Local, addr, l[5], rec.HRR, group)}
		}
		return rec, resp, nil
	}
}

func (c *epClient) close() error { return c.p.stop(10 * time.Second) }
