//go:build linux

package picoboard

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// OpenPTY allocates a pseudo-terminal pair through /dev/ptmx (pts(4)). It
// returns the master side and the path of the slave, which a serial reader
// opens like any tty. The emulator writes UART bytes to the master.
func OpenPTY() (master *os.File, slave string, err error) {
	fd, err := unix.Open("/dev/ptmx", unix.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, "", fmt.Errorf("open /dev/ptmx (is devpts mounted?): %w", err)
	}
	if err := unix.IoctlSetPointerInt(fd, unix.TIOCSPTLCK, 0); err != nil {
		unix.Close(fd)
		return nil, "", fmt.Errorf("unlock pty: %w", err)
	}
	n, err := unix.IoctlGetInt(fd, unix.TIOCGPTN)
	if err != nil {
		unix.Close(fd)
		return nil, "", fmt.Errorf("get pty number: %w", err)
	}
	return os.NewFile(uintptr(fd), "/dev/ptmx"), fmt.Sprintf("/dev/pts/%d", n), nil
}
