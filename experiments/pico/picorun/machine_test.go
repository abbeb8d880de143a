package picorun

import (
	"os"
	"testing"

	"pqrepro/experiments/instruments/runlife"
	"pqrepro/internal/quiet"
)

// The runs of these tests watch a stand-in machine that is always quiet:
// they must not depend on how busy the machine running them is (a busy
// one would leave their runs unpinned), nor wait for a pre-flight. The
// busy case is TestBusyRunNotPinned's.
func TestMain(m *testing.M) {
	runlife.DefaultMachine = func() quiet.Watcher { return quiet.NewFixed(quiet.Quiet) }
	os.Exit(m.Run())
}
