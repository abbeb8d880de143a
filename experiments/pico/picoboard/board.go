package picoboard

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"

	"pqrepro/datasets/picodata"
)

// ReadConfig configures Read.
type ReadConfig struct {
	Baud        int           // 0 means DefaultBaud
	IdleTimeout time.Duration // 0 means 60 s
	RawLogPath  string        // the serial log, kept verbatim; "" keeps it only in memory
	Progress    func(picodata.Measurement)
}

// Read opens a real board's serial port (a USB-UART adapter on GP0/GP1) and
// reads one whole run with ReadRun. A host that connects mid-run waits for
// the next start line, as the firmware repeats its run. The raw log is
// written to RawLogPath as it arrives, so nothing is lost if the run breaks.
// Untested on hardware here (no board attached); the same reader is tested
// against a pseudo-terminal and runs every emulator result.
func Read(ctx context.Context, port string, cfg ReadConfig) (*picodata.Dataset, error) {
	if cfg.IdleTimeout <= 0 {
		cfg.IdleTimeout = 60 * time.Second
	}
	p, err := OpenSerial(port, cfg.Baud)
	if err != nil {
		return nil, err
	}
	defer p.Close()
	var raw io.Writer
	if cfg.RawLogPath != "" {
		f, err := os.Create(cfg.RawLogPath)
		if err != nil {
			return nil, fmt.Errorf("create raw log: %w", err)
		}
		defer f.Close()
		raw = f
	}
	return picodata.ReadRun(ctx, p, picodata.ReadOptions{IdleTimeout: cfg.IdleTimeout, RawLog: raw, Progress: cfg.Progress})
}
