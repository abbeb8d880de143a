package pipeline

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"time"

	"pqrepro/internal/remote"
	"pqrepro/internal/repro"
	"pqrepro/internal/treelock"
	"pqrepro/reproduce"
)

// Leftovers are what a command killed by SIGKILL (or a crash) leaves
// behind, where no cleanup path could run.
type Leftovers struct {
	// Writer is the writing command running now, if any: while it runs,
	// its incomplete and stage folders are its own, not leftovers.
	Writer string
	// Incomplete and Stages are folders relative to the root.
	Incomplete, Stages []string
	// Studies are what killed runs of the studies' experiments left
	// outside the tree (Study.Leftovers), in the registry's order.
	Studies []Leftover
	// Verify are the scratch trees of killed verifies (.cache/verify-*
	// named after a dead PID: repro.VerifyLeftovers), relative to the
	// root. Verify takes no lock, so they are looked for whoever writes.
	Verify []string
	// StaleLocks are lock files that still name a killed command.
	StaleLocks []string
	// Remote are the data remote's leftovers of killed pushes (a dir
	// remote's .incoming-* files), relative to the remote's root.
	Remote []string
	// RemoteName names the remote they are on.
	RemoteName string
}

// A Leftover is one kind of what killed runs of a study's experiment left
// outside the tree, with the target removing it. Such are network
// namespaces whose creator is dead, a docker path's daemon, temporary
// folders.
type Leftover struct {
	// What names the kind, as status heads its list.
	What string
	// Items are the leftovers, one a line.
	Items []string
	// RemovedBy is the target that removes them: "clean" or one of the
	// study's own (net:clean removes network namespaces: it needs root).
	RemovedBy string
}

// FindLeftovers looks for leftovers of killed commands in the tree, on
// the data remote, and on the host (every study's Study.Leftovers).
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
		// one (.incomplete-*.old) that was not removed yet (reproduce.ReproduceDir).
		l.Incomplete = append(l.Incomplete, globRel(root, reproduce.ReproduceDir+"/.incomplete-*")...)
	}
	l.Verify = repro.VerifyLeftovers(root)
	if l.Writer == "" {
		l.Remote, l.RemoteName = remoteLeftovers(cfg)
	}
	for _, s := range Studies() {
		if s.Leftovers == nil {
			continue
		}
		for _, k := range s.Leftovers() {
			if len(k.Items) > 0 {
				l.Studies = append(l.Studies, k)
			}
		}
	}
	return l
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
	if len(l.Incomplete)+len(l.Stages)+len(l.Verify)+len(l.StaleLocks) > 0 {
		out = append(out, "leftovers of a killed command (`go run mage.go clean` removes them; data and outputs are intact):")
		for _, s := range slices.Concat(l.Incomplete, l.Stages, l.Verify, l.StaleLocks) {
			out = append(out, "  "+s)
		}
	}
	if len(l.Remote) > 0 {
		out = append(out, "on the data remote ("+l.RemoteName+"), leftovers of a killed data:push (`go run mage.go clean` or the next data:push removes them; no blob is affected):")
		for _, s := range l.Remote {
			out = append(out, "  "+s)
		}
	}
	for _, k := range l.Studies {
		out = append(out, k.What+" (`go run mage.go "+k.RemovedBy+"` removes them):")
		for _, s := range k.Items {
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
