package pipeline

import "os"

// newlibPresent reports whether newlib-nano for arm-none-eabi is
// installed (Debian's libnewlib-arm-none-eabi puts it here).
func newlibPresent() bool {
	_, err := os.Stat("/usr/lib/arm-none-eabi/newlib/thumb/v6-m/nofp/libc_nano.a")
	return err == nil
}
