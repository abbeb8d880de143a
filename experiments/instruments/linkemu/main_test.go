package linkemu

import (
	"os"
	"runtime"
	"testing"
)

// TestMain raises GOMAXPROCS once, as StartWith would, so that no test or
// benchmark changes it (the testing package reports that as a leak).
func TestMain(m *testing.M) {
	if runtime.GOMAXPROCS(0) < MinProcs {
		runtime.GOMAXPROCS(MinProcs)
	}
	os.Exit(m.Run())
}
