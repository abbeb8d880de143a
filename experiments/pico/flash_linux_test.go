//go:build linux

package pico

import (
	"errors"
	"os"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// fsImmutableFL is FS_IMMUTABLE_FL of linux/fs.h (chattr +i).
const fsImmutableFL = 0x00000010

// readOnlyDrive is a fake RPI-RP2 drive that refuses new files: mode 0555,
// and, for root (whom modes do not stop), the immutable attribute
// (chattr +i). It skips when neither can be had.
func readOnlyDrive(t *testing.T) string {
	t.Helper()
	dir := fakeDrive(t)
	if os.Geteuid() != 0 {
		if err := os.Chmod(dir, 0o555); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.Chmod(dir, 0o755) })
		return dir
	}
	f, err := os.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	flags, err := unix.IoctlGetUint32(int(f.Fd()), unix.FS_IOC_GETFLAGS)
	if err == nil {
		err = unix.IoctlSetPointerInt(int(f.Fd()), unix.FS_IOC_SETFLAGS, int(flags|fsImmutableFL))
	}
	if err != nil {
		t.Skipf("running as root and the file system of %s has no immutable attribute (%v): cannot make a read-only drive", dir, err)
	}
	t.Cleanup(func() {
		if f, err := os.Open(dir); err == nil {
			unix.IoctlSetPointerInt(int(f.Fd()), unix.FS_IOC_SETFLAGS, int(flags))
			f.Close()
		}
	})
	return dir
}

// TestFlashReadOnlyDrive: a drive that cannot be written fails at once,
// saying to remount it, and is not mistaken for a missing drive.
func TestFlashReadOnlyDrive(t *testing.T) {
	drive := readOnlyDrive(t)
	_, err := Flash(writeUF2(t), FlashConfig{Drive: drive})
	if err == nil || errors.Is(err, ErrNoBootselDrive) || !strings.Contains(err.Error(), "not writable") || !strings.Contains(err.Error(), "remount") {
		t.Errorf("read-only drive: %v", err)
	}
}
