package quiet

import "sync"

// The experiment's processes that are not its descendants. A container
// runtime's shims daemonize away from the daemon the run started, so the
// processes in a container (and those `docker exec` starts there) would
// count as another job's CPU. A runner that starts such processes
// registers a function that lists their roots for as long as they run;
// every Sampler of the process counts them, and their descendants, as
// the experiment's.
var (
	includeMu sync.Mutex
	includes  = map[int]func() []int{}
	includeN  int
)

// IncludeProcesses registers pids, called at every sample, as more roots
// of this process's experiment; the returned function removes them.
func IncludeProcesses(pids func() []int) (remove func()) {
	includeMu.Lock()
	defer includeMu.Unlock()
	includeN++
	id := includeN
	includes[id] = pids
	return func() {
		includeMu.Lock()
		defer includeMu.Unlock()
		delete(includes, id)
	}
}

// daemonProcesses lists every registered root.
func daemonProcesses() []int {
	includeMu.Lock()
	fs := make([]func() []int, 0, len(includes))
	for _, f := range includes {
		fs = append(fs, f)
	}
	includeMu.Unlock()
	var out []int
	for _, f := range fs {
		out = append(out, f()...)
	}
	return out
}
