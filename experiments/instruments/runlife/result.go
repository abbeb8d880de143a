package runlife

// Result is a committed run: what every study's Run returns.
type Result struct {
	// RunID is the run's ID: its folder's name and the spec's pin.
	RunID string
	// Dir is the committed run folder, DataDir/<study>/<run-id>.
	Dir string
	// Pinned says whether Commit pinned the run; false for a repeat run
	// (PinEnv=no) or when Commit's error says why it could not.
	Pinned bool
}

// Result returns the committed run, nil before Commit published it.
// A run that is committed but not pinned (Commit's error wraps
// ErrNotPinned) has a Result: its folder stays.
func (l *Life) Result() *Result {
	if !l.committed {
		return nil
	}
	return &Result{RunID: l.Run.ID, Dir: l.Run.Final, Pinned: l.pinned}
}
