package pipeline

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"time"

	"pqrepro/experiments/net/linkemu"
	"pqrepro/experiments/tls/dockernet"
	"pqrepro/experiments/tls/tlsrun"
	"pqrepro/internal/remote"
	"pqrepro/internal/treelock"
)

// Leftovers are what a command killed by SIGKILL (or a crash) leaves
// behind, where no cleanup path could run.
type Leftovers struct {
	// Writer is the writing command running now, if any: while it runs,
	// its incomplete and stage folders are its own, not leftovers.
	Writer string
	// Incomplete and Stages are folders relative to the root.
	Incomplete, Stages []string
	// Namespaces are pqr-* network namespaces whose creator is dead.
	Namespaces []string
	// Docker is what killed runs of the docker path left: a private
	// dockerd still running and its containers, networks and images, a
	// bridge, a data root, a temp dir (dockernet.Leftovers).
	Docker []string
	// TempDirs are temporary folders of killed runs outside the tree:
	// Study A's PEM folders (tlsrun.CertLeftovers).
	TempDirs []string
	// StaleLocks are lock files that still name a killed command.
	StaleLocks []string
	// Remote are the data remote's leftovers of killed pushes (a dir
	// remote's .incoming-* files), relative to the remote's root.
	Remote []string
	// RemoteName names the remote they are on.
	RemoteName string
}

// FindLeftovers looks for leftovers of killed commands in the tree and
// for orphaned network namespaces on the host.
func FindLeftovers(cfg Config) Leftovers {
	root := cfg.Root
	var l Leftovers
	for _, name := range []string{treelock.Write, treelock.Compile} {
		st, h, err := treelock.Inspect(root, name)
		switch {
		case err != nil:
		case st == treelock.Stale:
			l.StaleLocks = append(l.StaleLocks, filepath.Join(treelock.Dir, name)+" names "+h.String()+", which was killed")
		case st == treelock.Held && name == treelock.Write && h.PID != os.Getpid():
			l.Writer = h.String()
		}
	}
	if l.Writer == "" {
		l.Incomplete = globRel(root, "data/*/.incomplete-*")
		l.Stages = globRel(root, ".stage-*")
		// A reproduction tree that never became complete, or a replaced
		// one (.incomplete-*.old) that was not removed yet (ReproduceDir).
		l.Incomplete = append(l.Incomplete, globRel(root, ReproduceDir+"/.incomplete-*")...)
	}
	if l.Writer == "" {
		l.Remote, l.RemoteName = remoteLeftovers(cfg)
	}
	// The studies' namespaces: the prefixes net:clean removes.
	for _, prefix := range netnsPrefixes() {
		orphans, _ := linkemu.Orphaned("", prefix)
		l.Namespaces = append(l.Namespaces, orphans...)
	}
	for _, prefix := range dockerPrefixes() {
		left, _ := dockernet.Leftovers(prefix)
		l.Docker = append(l.Docker, left...)
	}
	l.TempDirs = tlsrun.CertLeftovers()
	return l
}

// dockerPrefixes name what the studies' docker paths create.
func dockerPrefixes() []string {
	var out []string
	for _, s := range Studies() {
		out = append(out, s.DockerPrefixes...)
	}
	return out
}

// remoteLeftovers lists what killed pushes left on the configured data
// remote, if it is one that can have any (internal/remote.LeftoverRemover).
func remoteLeftovers(cfg Config) ([]string, string) {
	lr, name := leftoverRemover(cfg)
	if lr == nil {
		return nil, ""
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	left, _ := lr.Leftovers(ctx)
	return left, name
}

// leftoverRemover is the configured data remote if it can hold leftovers.
func leftoverRemover(cfg Config) (remote.LeftoverRemover, string) {
	rem, err := openRemote(cfg)
	if err != nil {
		return nil, ""
	}
	lr, ok := rem.(remote.LeftoverRemover)
	if !ok {
		return nil, ""
	}
	return lr, rem.String()
}

func globRel(root, pattern string) []string {
	m, _ := filepath.Glob(filepath.Join(root, pattern))
	for i := range m {
		m[i], _ = filepath.Rel(root, m[i])
	}
	return m
}

// Lines says what is left and the command that removes it; none when
// nothing is.
func (l Leftovers) Lines() []string {
	var out []string
	if len(l.Incomplete)+len(l.Stages)+len(l.StaleLocks) > 0 {
		out = append(out, "leftovers of a killed command (`go run mage.go clean` removes them; data and outputs are intact):")
		for _, s := range append(append(l.Incomplete, l.Stages...), l.StaleLocks...) {
			out = append(out, "  "+s)
		}
	}
	if len(l.TempDirs) > 0 {
		out = append(out, "temporary folders of killed runs (`go run mage.go clean` removes them):")
		for _, s := range l.TempDirs {
			out = append(out, "  "+s)
		}
	}
	if len(l.Remote) > 0 {
		out = append(out, "on the data remote ("+l.RemoteName+"), leftovers of a killed data:push (`go run mage.go clean` or the next data:push removes them; no blob is affected):")
		for _, s := range l.Remote {
			out = append(out, "  "+s)
		}
	}
	if len(l.Namespaces) > 0 {
		out = append(out, "network namespaces of a killed net:run (`go run mage.go net:clean` removes them): "+strings.Join(l.Namespaces, ", "))
	}
	if len(l.Docker) > 0 {
		out = append(out, "left by a killed run's docker path (`go run mage.go clean` removes them):")
		for _, s := range l.Docker {
			out = append(out, "  "+s)
		}
	}
	if l.Writer != "" {
		out = append(out, "running now: "+l.Writer)
	}
	return out
}

// reportLeftovers prints Lines, if any.
func reportLeftovers(cfg Config) {
	for _, s := range FindLeftovers(cfg).Lines() {
		cfg.printf("%s", s)
	}
}
