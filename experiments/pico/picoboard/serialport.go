package picoboard

import (
	"fmt"
	"time"

	"go.bug.st/serial"
)

// DefaultBaud is the firmware's UART0 rate (firmware/board.h UART_BAUD).
const DefaultBaud = 115200

// OpenSerial opens a board's or the emulator's serial port for ReadRun.
//
// The port is a board's USB-UART adapter, or the slave side of the
// emulator's pseudo-terminal, opened at 8N1 in raw mode, with a short read
// timeout so ReadRun can notice cancellation. The same function serves
// board and emulator, so both go through one reader.
func OpenSerial(path string, baud int) (serial.Port, error) {
	if baud <= 0 {
		baud = DefaultBaud
	}
	p, err := serial.Open(path, &serial.Mode{BaudRate: baud, DataBits: 8, Parity: serial.NoParity, StopBits: serial.OneStopBit})
	if err != nil {
		return nil, fmt.Errorf("open serial port %s: %w (list ports with 'ls /dev/ttyACM* /dev/ttyUSB*'; a USB-UART adapter on GP0/GP1 usually is /dev/ttyUSB0)", path, err)
	}
	if err := p.SetReadTimeout(200 * time.Millisecond); err != nil {
		p.Close()
		return nil, fmt.Errorf("set read timeout on %s: %w", path, err)
	}
	return p, nil
}
