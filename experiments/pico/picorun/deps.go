package picorun

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"pqrepro/internal/deps"
)

// Requirements lists what Run needs installed: an ARM compiler and Node.js.
// They are Debian's bare-metal ARM compiler with newlib-nano (the firmware;
// pico-sdk is not packaged for Debian), and Node.js with npm (rp2040js and
// the PQClean sources come as pinned npm packages that
// experiments/pico/picoboard installs into .cache itself). A real board
// needs nothing more: go.bug.st/serial reads it.
func Requirements(root string) []deps.Requirement {
	return []deps.Requirement{
		{Name: "arm-none-eabi-gcc with newlib", Why: "the RP2040 benchmark firmware (pico:run builds it)",
			Present: func() bool { return deps.Command("arm-none-eabi-gcc")() && newlibNano() },
			Apt:     []string{"gcc-arm-none-eabi", "libnewlib-arm-none-eabi"}},
		{Name: "node and npm", Why: "the rp2040js emulator and the PQClean sources (pinned npm packages)",
			Present: func() bool { return deps.Command("node")() && deps.Command("npm")() },
			Apt:     []string{"nodejs", "npm"}},
	}
}

// InstallHint is the command that installs Requirements on Debian.
const InstallHint = "apt-get install -y gcc-arm-none-eabi libnewlib-arm-none-eabi nodejs npm"

// newlibNano reports whether the compiler finds newlib-nano's specs file
// (libnewlib-arm-none-eabi), which the firmware links with.
func newlibNano() bool {
	out, err := exec.Command("arm-none-eabi-gcc", "-print-file-name=nano.specs").Output()
	if err != nil {
		return false
	}
	p := strings.TrimSpace(string(out))
	if !filepath.IsAbs(p) {
		return false
	}
	_, err = os.Stat(p)
	return err == nil
}
