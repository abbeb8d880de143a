// Package dockernet runs Study A's docker path. That is, a private Docker
// daemon, an image made locally from the openssl program, and two
// containers on a Compose bridge network, as the original study ran its
// s_server and s_client (two Docker Compose containers on a bridge, MTU
// 1500).
//
// Nothing comes from a registry and nothing of the host's Docker is used:
//
//   - the daemon is Debian docker.io's dockerd, started by Start with its
//     own socket, exec root and pidfile in a temp dir
//     (<TMPDIR>/<project>-*), its data root under <Root>/.cache/docker/,
//     no default bridge (--bridge=none) and no iptables rules
//     (--iptables=false, --ip6tables=false), and stopped by Close;
//   - the image is a tar this package writes itself (archive/tar,
//     byte-identical for the same files): the program at
//     /usr/local/bin/openssl, the shared objects ldd says it links
//     (glibc, the loader), and /pause, a static idle process
//     (pause/main.go) that keeps both containers alive at no CPU;
//     `docker import` makes it an image;
//   - compose.yaml (embedded; its SHA-256 goes into Info) declares the
//     two containers and a bridge network with the MTU of Options.MTU
//     (driver option com.docker.network.driver.mtu) and the bridge named
//     after the project, brought up with docker-compose (v1) or `docker
//     compose` (v2), whichever is installed (Info.Compose says which).
//
// The project, <prefix><pid>-<n>, names the compose project (and so its
// containers and network), the bridge device, the image, the temp dir and
// the data root, so that Leftovers and Clean find what a killed run left.
// Close, and Start when it fails half-way, remove the containers, the
// network and the image through the daemon, stop it (SIGTERM, then
// SIGKILL after 15 s), and delete the data root and the temp dir: the
// system is left as it was found.
//
// The caller starts s_server inside the server container (ServerArgv:
// docker exec -i, through a guard that stops it with the command), runs s_client natively on Client, a thread that joined
// the client container's network namespace, and captures on the client
// container's eth0 on that thread. Server is a thread in the server
// container's namespace (the caller reserves ports there).
package dockernet

import (
	"context"
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"pqrepro/experiments/instruments/netns"
	"pqrepro/experiments/tls/bridgenet"
)

// CertMount is where the server container sees Options.CertDir.
const CertMount = "/certs"

// Defaults of Options.
const (
	DefaultPrefix = "pqrd"
	DefaultMTU    = 1500 // Docker's default bridge network
	// Iface is the containers' device on the Compose network.
	Iface = "eth0"
)

//go:embed compose.yaml
var composeFile []byte

// ErrFailed is wrapped by Err when a container, the network or the
// daemon went away during the run.
var ErrFailed = errors.New("the docker path failed during the run")

// Options configure Start.
type Options struct {
	// Prefix starts the project's name, <prefix><pid>-<n>, which must fit
	// a device name (15 characters); "" is DefaultPrefix.
	Prefix string
	// Root is the repository: the daemon's data root and the idle
	// process's build go under Root/.cache/docker/.
	Root string
	// Program is the openssl program (any ELF: static, or dynamic with
	// the libraries ldd finds); the image holds it at ProgramPath.
	Program string
	// CertDir is bind-mounted read-only at CertMount in the server.
	CertDir string
	// MTU of the Compose bridge and every veth; 0 is DefaultMTU.
	MTU int
	// Offloads keeps the veth devices' TSO, GSO and GRO as Docker leaves
	// them; false turns them off on both containers' eth0 and on their
	// host-side peers, so that a capture sees frames of at most the MTU
	// (bridgenet does the same on its path).
	Offloads bool
	// Log gets one line per step; nil discards them. Verbose adds detail.
	Log     io.Writer
	Verbose bool
}

// Offloads is Info.Offloads: each device's offloads as read back after
// Start set them, by "client/eth0", "server/eth0", "host/<veth>".
type Offloads struct {
	Default bool                         `json:"default"` // left as Docker made them
	Devices map[string]bridgenet.Offload `json:"devices"`
}

// Info is what meta.json records about the docker path.
type Info struct {
	DaemonVersion string // dockerd's version as its API reports it
	// DaemonStarted is true: the path always starts its own daemon
	// (the host's, if any, is never used).
	DaemonStarted bool
	Image         string   // <project>:<first 12 hex of the tar's SHA-256>, and its ID
	ImageFiles    []string // the image's files
	ComposeSHA256 string   // of compose.yaml
	Compose       string   // the compose tool and its version
	Network       string   // the Compose network's name
	Bridge        string   // its bridge device on the host
	MTU           int      // eth0's MTU in the client container, read back
	Offloads      any      // Offloads
	// CongestionControl is net.ipv4.tcp_congestion_control in the
	// "client" and "server" containers' namespaces.
	CongestionControl map[string]string
	ClientAddr        string
	ServerAddr        string
	ClientIface       string
	ClientContainer   string
	ServerContainer   string
}

// Net is a running docker path.
type Net struct {
	Info           Info
	Client, Server *netns.Thread

	opts   Options
	tools  tools
	st     state
	daemon *daemon
	events *exec.Cmd

	// containerPIDs are the containers' main processes (client, server).
	containerPIDs []int

	done     chan struct{}
	stop     chan struct{} // closed by stopWatch
	stopOnce sync.Once
	failOnce sync.Once
	err      atomic.Pointer[error]
	closing  atomic.Bool
	closeMu  sync.Mutex
	closed   bool
	closeErr error
	watchWG  sync.WaitGroup
}

var seq atomic.Int64

// Start sets up Study A's docker path and checks it before any
// measurement.
//
// It starts the private daemon, builds and imports the image, brings the
// Compose project up, joins both containers' network namespaces, sets and
// reads back MTU, offloads and congestion control, checks that the server
// container answers TCP from the client's, and starts watching the
// containers, the network and the daemon (Done). On any error everything
// it made is removed. ctx bounds the setup only.
func Start(ctx context.Context, o Options) (n *Net, err error) {
	if o.Prefix == "" {
		o.Prefix = DefaultPrefix
	}
	if o.MTU == 0 {
		o.MTU = DefaultMTU
	}
	if o.Log == nil {
		o.Log = io.Discard
	}
	project := fmt.Sprintf("%s%d-%d", o.Prefix, os.Getpid(), seq.Add(1))
	switch {
	case len(project) > 15 || strings.ContainsAny(o.Prefix, "/ \t-_") || strings.ToLower(o.Prefix) != o.Prefix:
		return nil, fmt.Errorf("docker path: prefix %q: the project %q must be a device name (15 characters at most) of lower-case letters and digits", o.Prefix, project)
	case o.MTU < 1280 || o.MTU > 65535:
		return nil, fmt.Errorf("docker path: MTU %d out of range 1280..65535", o.MTU)
	case o.Root == "" || o.Program == "" || o.CertDir == "":
		return nil, fmt.Errorf("docker path: Options need Root, Program and CertDir")
	}
	if fi, err := os.Stat(o.CertDir); err != nil || !fi.IsDir() {
		return nil, fmt.Errorf("docker path: the certificate folder %s: not a directory (%v)", o.CertDir, err)
	}
	t, err := findTools()
	if err != nil {
		return nil, fmt.Errorf("docker path: %w", err)
	}
	dir, err := os.MkdirTemp(tempDir(), project+"-")
	if err != nil {
		return nil, fmt.Errorf("docker path: %w", err)
	}
	root, _ := filepath.Abs(o.Root)
	pid := os.Getpid()
	s := state{Project: project, ParentPID: pid, ParentStart: startTime(pid), Dir: dir, DataRoot: filepath.Join(root, ".cache", "docker", project)}
	n = &Net{opts: o, tools: t, st: s, done: make(chan struct{}), stop: make(chan struct{})}
	built := n
	defer func() {
		if err != nil {
			built.closing.Store(true)
			built.stopWatch()
			built.closeThreads()
			if _, terr := teardown(context.Background(), t, s, built.daemon); terr != nil {
				err = fmt.Errorf("%w; and %v (go run mage.go clean removes what is left)", err, terr)
			}
			n = nil
		}
	}()
	if err := s.write(); err != nil {
		return nil, fmt.Errorf("docker path: %w", err)
	}
	n.logf(true, "docker path: project %s, state in %s, data root %s", project, dir, s.DataRoot)
	steps := []struct {
		name string
		fn   func(context.Context) error
	}{{"daemon", n.startDaemon}, {"image", n.buildImage}, {"compose", n.composeUp}, {"containers", n.joinContainers}, {"network settings", n.settings}, {"probe", n.probe}}
	for _, st := range steps {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("docker path: setup interrupted before the %s step: %w", st.name, err)
		}
		if err := st.fn(ctx); err != nil {
			return nil, fmt.Errorf("docker path: %w", err)
		}
	}
	if err := n.watch(); err != nil {
		return nil, fmt.Errorf("docker path: %w", err)
	}
	return n, nil
}

func (n *Net) logf(verbose bool, format string, args ...any) {
	if (verbose && !n.opts.Verbose) || n.opts.Log == nil {
		return
	}
	fmt.Fprintf(n.opts.Log, format+"\n", args...)
}

// startDaemon starts the private dockerd.
func (n *Net) startDaemon(ctx context.Context) error {
	t0 := time.Now()
	n.logf(true, "docker path: %s %s", n.tools.Dockerd, strings.Join(daemonArgs(n.st), " "))
	d, ver, err := startDaemon(ctx, n.tools, n.st, 60*time.Second)
	n.daemon = d
	if err != nil {
		return err
	}
	n.Info.DaemonVersion, n.Info.DaemonStarted = ver, true
	n.logf(false, "docker path: private dockerd %s started in %.2f s (pid %d)", ver, time.Since(t0).Seconds(), d.cmd.Process.Pid)
	return nil
}

// buildImage writes the image's tar and imports it.
func (n *Net) buildImage(ctx context.Context) error {
	t0 := time.Now()
	pause, err := buildPause(ctx, n.tools.Go, filepath.Join(filepath.Dir(n.st.DataRoot)))
	if err != nil {
		return err
	}
	files, err := imageFiles(ctx, n.opts.Program, pause)
	if err != nil {
		return err
	}
	tarPath := filepath.Join(n.st.Dir, "image.tar")
	f, err := os.Create(tarPath)
	if err != nil {
		return err
	}
	h := sha256.New()
	names, err := writeImageTar(io.MultiWriter(f, h), files)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("image tar: %w", err)
	}
	fi, _ := os.Stat(tarPath)
	ref := n.st.Project + ":" + hex.EncodeToString(h.Sum(nil))[:12]
	t1 := time.Now()
	out, err := n.tools.docker(ctx, n.st.socket(), "import", "--change", `CMD ["/pause"]`, tarPath, ref)
	if err != nil {
		return fmt.Errorf("import the image: %w", err)
	}
	id := strings.TrimSpace(out)
	n.Info.Image, n.Info.ImageFiles = ref+" "+id, names
	os.Remove(tarPath)
	n.logf(false, "docker path: image %s (%s) of %d files, %d bytes, written in %.2f s and imported in %.2f s",
		ref, id, len(names), fi.Size(), t1.Sub(t0).Seconds(), time.Since(t1).Seconds())
	n.logf(true, "docker path: image files %s", strings.Join(names, " "))
	return nil
}

// composeUp writes compose.yaml into the temp dir and brings the project up.
func (n *Net) composeUp(ctx context.Context) error {
	t0 := time.Now()
	sum := sha256.Sum256(composeFile)
	n.Info.ComposeSHA256 = hex.EncodeToString(sum[:])
	file := filepath.Join(n.st.Dir, "compose.yaml")
	if err := os.WriteFile(file, composeFile, 0o644); err != nil {
		return err
	}
	certs, _ := filepath.Abs(n.opts.CertDir)
	env := []string{"DOCKER_HOST=unix://" + n.st.socket(), "PQRD_IMAGE=" + strings.Fields(n.Info.Image)[0],
		"PQRD_CERTS=" + certs, "PQRD_MTU=" + strconv.Itoa(n.opts.MTU), "PQRD_BRIDGE=" + n.st.Project}
	ver, err := run(ctx, env, append(append([]string{}, n.tools.Compose...), "version", "--short")...)
	if err != nil {
		return fmt.Errorf("compose: %w", err)
	}
	n.Info.Compose = strings.Join(append([]string{filepath.Base(n.tools.Compose[0])}, n.tools.Compose[1:]...), " ") + " " + strings.TrimSpace(ver)
	argv := append(append([]string{}, n.tools.Compose...), "-p", n.st.Project, "-f", file, "up", "-d", "--no-build")
	if _, err := run(ctx, env, argv...); err != nil {
		return fmt.Errorf("compose up: %w", err)
	}
	n.Info.Bridge = n.st.Project
	n.logf(false, "docker path: %s up in %.2f s (compose file sha256 %s)", n.Info.Compose, time.Since(t0).Seconds(), n.Info.ComposeSHA256[:12])
	return nil
}

// ServerArgv is the command that runs the image's openssl program with
// args in the server container, its standard input and output those of
// the command:
//
//	docker -H unix://<private socket> exec -i <server> /pause -guard /usr/local/bin/openssl args...
//
// The guard (pause/main.go) kills the program when the command's input
// ends, which is how the daemon tells that the docker CLI was stopped
// (killing `docker exec` does not kill what it started).
func (n *Net) ServerArgv(args []string) []string {
	return append([]string{n.tools.Docker, "-H", "unix://" + n.st.socket(), "exec", "-i", n.Info.ServerContainer, PausePath, "-guard", ProgramPath}, args...)
}

func (n *Net) closeThreads() {
	for _, th := range []*netns.Thread{n.Client, n.Server} {
		if th != nil {
			th.Close()
		}
	}
}

// Close removes the containers, the network and the image, stops the
// daemon, and deletes its data root and the temp dir. It may be called
// more than once; it returns the first call's error.
func (n *Net) Close() error {
	n.closeMu.Lock()
	defer n.closeMu.Unlock()
	if n.closed {
		return n.closeErr
	}
	n.closed = true
	t0 := time.Now()
	n.closing.Store(true)
	n.stopWatch()
	n.closeThreads()
	removed, err := teardown(context.Background(), n.tools, n.st, n.daemon)
	if err != nil {
		n.closeErr = fmt.Errorf("%w (go run mage.go clean removes what is left)", err)
		return n.closeErr
	}
	n.logf(false, "docker path: removed in %.2f s: %s", time.Since(t0).Seconds(), strings.Join(removed, ", "))
	return nil
}

// Processes are the processes that run the containers. That is, each
// container's runtime shim (the parent of its main process), whose
// descendants are the container's main process and every process
// `docker exec` starts in it (the s_server processes). The shims are
// not descendants of the run's own process (they daemonize away from
// the daemon that started them), so the machine's quiet check
// (internal/quiet, Options.Include) is told about them: their CPU is
// the experiment's, not another job's.
func (n *Net) Processes() []int {
	var out []int
	for _, pid := range n.containerPIDs {
		if pp := parentPID(pid); pp > 1 {
			out = append(out, pp)
		} else {
			out = append(out, pid)
		}
	}
	return out
}
