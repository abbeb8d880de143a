//go:build linux

package picoboard

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"pqrepro/datasets/picodata"
	"pqrepro/datasets/picodata/picodatatest"
)

// TestReadOverPTY drives the real serial path: bytes written to a pty master
// (as the emulator does) are read through OpenSerial on the slave.
func TestReadOverPTY(t *testing.T) {
	master, slave, err := OpenPTY()
	if err != nil {
		t.Skipf("no pseudo-terminals here: %v", err)
	}
	defer master.Close()
	port, err := OpenSerial(slave, DefaultBaud)
	if err != nil {
		t.Fatal(err)
	}
	defer port.Close()
	lines := picodatatest.Run(4)
	go func() {
		// A late host: a partial old run first, then a whole one, in
		// small writes that split lines.
		s := strings.Join(lines[3:], "\n") + "\n" + strings.Join(lines, "\n") + "\n"
		for len(s) > 0 {
			n := min(37, len(s))
			master.WriteString(s[:n])
			s = s[n:]
			time.Sleep(time.Millisecond)
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	d, err := picodata.ReadRun(ctx, port, picodata.ReadOptions{IdleTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Measurements) != 4 || d.Skipped != len(lines)-3 {
		t.Fatalf("measurements %d skipped %d", len(d.Measurements), d.Skipped)
	}
}

// TestReadOverPTYPortGone: the writer side vanishes mid-run; the reader
// reports it (EIO on the slave or idle timeout) and keeps the good records.
func TestReadOverPTYPortGone(t *testing.T) {
	master, slave, err := OpenPTY()
	if err != nil {
		t.Skipf("no pseudo-terminals here: %v", err)
	}
	port, err := OpenSerial(slave, DefaultBaud)
	if err != nil {
		master.Close()
		t.Fatal(err)
	}
	defer port.Close()
	lines := picodatatest.Run(4)
	master.WriteString(strings.Join(lines[:3], "\n") + "\n")
	go func() {
		time.Sleep(200 * time.Millisecond)
		master.Close()
	}()
	d, err := picodata.ReadRun(context.Background(), port, picodata.ReadOptions{IdleTimeout: 2 * time.Second})
	if !errors.Is(err, picodata.ErrIncomplete) {
		t.Fatalf("err = %v", err)
	}
	if len(d.Measurements) != 2 {
		t.Errorf("kept %d measurements, want 2", len(d.Measurements))
	}
}
