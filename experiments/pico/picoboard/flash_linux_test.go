//go:build linux

package picoboard

import (
	"errors"
	"strings"
	"testing"

	"pqrepro/experiments/instruments/readonly"
)

// TestFlashReadOnlyDrive: a drive that cannot be written fails at once,
// saying to remount it, and is not mistaken for a missing drive.
func TestFlashReadOnlyDrive(t *testing.T) {
	drive := fakeDrive(t)
	readonly.Dir(t, drive)
	_, err := Flash(writeUF2(t), FlashConfig{Drive: drive})
	if err == nil || errors.Is(err, ErrNoBootselDrive) || !strings.Contains(err.Error(), "not writable") || !strings.Contains(err.Error(), "remount") {
		t.Errorf("read-only drive: %v", err)
	}
}
