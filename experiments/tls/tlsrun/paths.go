package tlsrun

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"slices"

	"pqrepro/datasets/tlsdata"
	"pqrepro/experiments/tls/openssl"
	"pqrepro/internal/provenance"
)

// Network paths of a configuration (tlsdata.KnownPaths).
const (
	// PathLoopback: client and server in this process's namespace, on lo
	// (MTU 65,536), the servers on 127.0.0.1.
	PathLoopback = "loopback"
	// PathBridge: client and server in two namespaces through a bridge.
	// Veth pairs join them through a Linux bridge, MTU 1500, as Docker's
	// default bridge network joins two containers
	// (experiments/tls/bridgenet); the original study ran OpenSSL client
	// and server in Docker Compose on such a network.
	PathBridge = "bridge"
	// PathRemote: the servers on a second host ([remote] host, reached over
	// SSH; experiments/instruments/sshhost), the client and the capture
	// here.
	PathRemote = "remote"
	// PathDocker: client and server in two containers; the openssl-cli
	// stack only. The containers are a private Docker daemon's, on a
	// Compose bridge network, MTU 1500, as the original ran them
	// (experiments/tls/dockernet, dockerpath.go).
	PathDocker = "docker"
)

// allPaths is every path a profile or the matrix names, in first-seen
// order.
func (s *Spec) allPaths() []string {
	var out []string
	add := func(ps []string) {
		for _, p := range ps {
			if !slices.Contains(out, p) {
				out = append(out, p)
			}
		}
	}
	add(s.Matrix.Paths)
	for _, name := range slices.Sorted(maps.Keys(s.Profiles)) {
		add(s.Profiles[name].Paths)
	}
	return out
}

func validPaths(where string, paths []string) error {
	var errs []error
	for i, p := range paths {
		if !slices.Contains(tlsdata.KnownPaths, p) {
			errs = append(errs, fmt.Errorf("%s: %q is not a path: use %v", where, p, tlsdata.KnownPaths))
		}
		if slices.Contains(paths[:i], p) {
			errs = append(errs, fmt.Errorf("%s: %q listed twice", where, p))
		}
	}
	return errors.Join(errs...)
}

// Paths returns the network paths of a profile: its own paths, else
// [matrix] paths, else ["loopback"]. An unknown profile has the matrix's.
func (s *Spec) Paths(profile string) []string {
	if p, ok := s.Profiles[profile]; ok && len(p.Paths) > 0 {
		return p.Paths
	}
	if len(s.Matrix.Paths) > 0 {
		return s.Matrix.Paths
	}
	return []string{PathLoopback}
}

// Units returns the run's configurations on each of the profile's paths.
// They are Configs() on the first path, then Configs() on the next, and so
// on, each with Path set. Plan's steps index into it. With one path, unit i
// is Configs()[i], so single-path runs are planned exactly as before paths
// existed. A profile with other_cells = "paper" keeps, outside the primary
// cell, only the paper's configurations. Units leaves out the cells
// [matrix] cells does not list and the stack x path combinations a path
// cannot run (cellSupported).
func (s *Spec) Units(profile string) []Config {
	cs := s.Configs()
	prof := s.Profiles[profile]
	primary := s.PrimaryCell(profile)
	var out []Config
	for _, p := range s.Paths(profile) {
		for _, c := range cs {
			c.Path = p
			if cellSupported(c.Stack, p) != nil || !s.cellListed(cellOf(c)) {
				continue
			}
			if prof.OtherCells == OtherCellsPaper && cellOf(c) != primary && !s.isPaperConfig(c) {
				continue
			}
			out = append(out, c)
		}
	}
	return append(out, s.emulatedUnits(profile)...)
}

// hasPath says whether any unit runs on path p.
func hasPath(units []Config, p string) bool {
	return slices.ContainsFunc(units, func(c Config) bool { return c.Path == p })
}

// path is one network path of a run: where its servers listen, where its
// clients dial from and where its capture runs. Each path's type holds
// its own state: loopbackPath (loopback.go), bridgePath (bridgepath.go),
// dockerPath (dockerpath.go), remotePath (remotepath.go).
type path interface {
	// name is the path's name in the spec and the records (PathLoopback...).
	name() string
	// listen reserves configuration c's port where the path's servers run.
	listen(c Config) (net.Listener, error)
	// client runs f where the path's clients run: a namespace's thread, or
	// here.
	client(f func())
	// capture starts the path's capture into dir; servers are the run's.
	capture(ctx context.Context, dir string, servers []*server) (*pathCapture, error)
	// serverAddr names the servers' address for the log.
	serverAddr() string
	// info is the path's entry in meta.json's measured.paths.
	info() map[string]any
	// close removes what the path made; a failure is logged, since the
	// run's outcome is decided by then.
	close()
}

// watchedPath is a path that can break during the run: a namespace
// someone removes, a container that dies, an SSH session that drops.
type watchedPath interface {
	path
	// done closes when the path breaks.
	done() <-chan struct{}
	// failure is why the path broke, worded for the run's error; nil
	// while it works. loopErr is the connection loop's error, which may
	// be the first sign of a break the path has yet to report.
	failure(loopErr error) error
}

// cliPath is a path that can run the openssl-cli stack (clistack.go).
type cliPath interface {
	path
	// launchers say where s_server and s_client start, and the client's
	// address (s_client -bind).
	launchers(native openssl.Launcher) (server, client openssl.Launcher, bindIP string)
}

// metaPath is a path that records more than its measured.paths entry.
type metaPath interface {
	path
	// meta adds the path's provenance to meta.json.
	meta(m *provenance.Meta)
}

// logger writes a run's "tls: " lines; vlogf only when verbose.
type logger struct {
	w       io.Writer
	verbose bool
}

func (l logger) logf(format string, a ...any) { fmt.Fprintf(l.w, "tls: "+format+"\n", a...) }

func (l logger) vlogf(format string, a ...any) {
	if l.verbose {
		l.logf(format, a...)
	}
}
