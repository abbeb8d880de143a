package picoboard

import (
	"os"
	"path/filepath"
	"strings"
)

// PortSerial returns the USB serial number of the device behind a serial
// port (/dev/ttyACM0, /dev/ttyUSB0, or a /dev/serial/by-id link), read
// from sysfs. That is, the tty's device, then its parents, up to the USB
// device that has a "serial" attribute. sysRoot is "/sys" ("" means that;
// tests give a fake tree). It returns "" when there is none: a
// pseudo-terminal, an adapter without a serial number, or a system
// without sysfs.
//
// For a USB-UART adapter on GP0/GP1 this is the adapter's serial number,
// not the Pico's: the board is then identified by the adapter it is wired
// to, which is stable as long as the wiring is. Untested on hardware here
// (no board or adapter attached); tested against a fake sysfs tree.
func PortSerial(port, sysRoot string) string {
	if sysRoot == "" {
		sysRoot = "/sys"
	}
	if p, err := filepath.EvalSymlinks(port); err == nil {
		port = p
	}
	dev := filepath.Join(sysRoot, "class", "tty", filepath.Base(port), "device")
	dir, err := filepath.EvalSymlinks(dev)
	if err != nil {
		return ""
	}
	for i := 0; i < 6 && strings.HasPrefix(dir, sysRoot); i++ {
		if b, err := os.ReadFile(filepath.Join(dir, "serial")); err == nil {
			if s := strings.TrimSpace(string(b)); s != "" {
				return s
			}
		}
		dir = filepath.Dir(dir)
	}
	return ""
}
