package tlsrun

import (
	"errors"
	"fmt"
	"slices"

	"pqrepro/datasets/tlsdata"
)

// Network paths of a configuration (tlsdata.KnownPaths).
const (
	// PathLoopback: client and server in this process's namespace, on lo
	// (MTU 65,536), the servers on 127.0.0.1.
	PathLoopback = "loopback"
	// PathBridge: client and server in two namespaces joined by veth pairs
	// through a Linux bridge, MTU 1500, as Docker's default bridge network
	// joins two containers (experiments/tls/bridgenet); the original study ran
	// OpenSSL client and server in Docker Compose on such a network.
	PathBridge = "bridge"
	// PathRemote: the servers on a second host ([remote] host, reached
	// over SSH; experiments/instruments/sshhost), the client and the capture here.
	PathRemote = "remote"
	// PathDocker: client and server in two containers of a private Docker
	// daemon on a Compose bridge network, MTU 1500, as the original ran
	// them (experiments/tls/dockernet, dockerpath.go); the openssl-cli
	// stack only.
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
	for _, name := range sortedKeys(s.Profiles) {
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

// Units returns the run's configurations on each of the profile's paths:
// Configs() on the first path, then Configs() on the next, and so on, each
// with Path set. Plan's steps index into it. With one path, unit i is
// Configs()[i], so single-path runs are planned exactly as before paths
// existed. A profile with other_cells = "paper" keeps, outside the
// primary cell, only the paper's configurations. Units leaves out the
// cells [matrix] cells does not list and the stack x path combinations a
// path cannot run (cellSupported).
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
	return out
}

// hasPath says whether any unit runs on path p.
func hasPath(units []Config, p string) bool {
	return slices.ContainsFunc(units, func(c Config) bool { return c.Path == p })
}
