package pico

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

// TestHeaderUID: an optional uid= field of the start line is the board's
// ID; a start line without one (today's firmware) leaves it empty.
func TestHeaderUID(t *testing.T) {
	base := []Field{{"proto", "1"}, {"run", "0"}, {"img", "1"}, {"clk", "133000000"}, {"seed", "1"}, {"stackcap", "1"}, {"heapcap", "1"}}
	for _, c := range []struct {
		extra []Field
		want  string
	}{
		{nil, ""},
		{[]Field{{"uid", "e6614103e73f2c2a"}}, "e6614103e73f2c2a"},
	} {
		l, err := ParseLine(FormatLine(0, KindStart, append(base, c.extra...)...))
		if err != nil {
			t.Fatal(err)
		}
		h, err := parseHeader(l)
		if err != nil || h.UID != c.want {
			t.Errorf("uid %q (%v), want %q", h.UID, err, c.want)
		}
	}
}
