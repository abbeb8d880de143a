package picoboard

import (
	"os"
	"path/filepath"
	"testing"
)

// TestPortSerial builds a fake sysfs tree as Linux lays out a CDC-ACM
// device: /sys/class/tty/ttyACM0/device links to the USB interface, whose
// parent (the USB device) has the serial attribute.
func TestPortSerial(t *testing.T) {
	sys := t.TempDir()
	usb := filepath.Join(sys, "devices", "pci0", "usb1", "1-1")
	intf := filepath.Join(usb, "1-1:1.0")
	bare := filepath.Join(sys, "devices", "virtual", "tty", "ttyS0")
	for _, d := range []string{intf, bare, filepath.Join(sys, "class", "tty", "ttyACM0"), filepath.Join(sys, "class", "tty", "ttyS0")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	os.WriteFile(filepath.Join(usb, "serial"), []byte("E6614103E73F2C2A\n"), 0o644)
	os.Symlink(intf, filepath.Join(sys, "class", "tty", "ttyACM0", "device"))
	os.Symlink(bare, filepath.Join(sys, "class", "tty", "ttyS0", "device"))
	for _, c := range []struct{ port, want string }{
		{"/dev/ttyACM0", "E6614103E73F2C2A"},
		{"/dev/ttyS0", ""},   // no USB device above it
		{"/dev/pts/7", ""},   // a pseudo-terminal has no device
		{"/dev/ttyUSB9", ""}, // not present
	} {
		if got := PortSerial(c.port, sys); got != c.want {
			t.Errorf("PortSerial(%s) = %q, want %q", c.port, got, c.want)
		}
	}
}
