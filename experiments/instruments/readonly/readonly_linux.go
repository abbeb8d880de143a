//go:build linux

// Package readonly makes a folder refuse new files for the length of a
// test. Tests need it where the real thing cannot be had here: a board's
// BOOTSEL drive mounted read-only, a data folder a run cannot publish
// into. It knows no study, so the instruments' tests use it as freely as
// a study's.
package readonly

import (
	"os"
	"testing"

	"golang.org/x/sys/unix"
)

// fsImmutableFL is FS_IMMUTABLE_FL of linux/fs.h (chattr +i).
const fsImmutableFL = 0x00000010

// Dir makes dir refuse new files until the test ends, as a drive mounted
// read-only does. That is, mode 0555, and, for root (whom modes do not
// stop), the immutable attribute (chattr +i). It skips the test when
// neither can be had.
func Dir(t testing.TB, dir string) {
	t.Helper()
	if os.Geteuid() != 0 {
		if err := os.Chmod(dir, 0o555); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.Chmod(dir, 0o755) })
		return
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
}
