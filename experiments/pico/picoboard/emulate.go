package picoboard

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"pqrepro/datasets/picodata"
)

// RunConfig configures one emulator run.
type RunConfig struct {
	Root        string        // repository root; "" finds it
	Node        string        // node binary; "" means "node" from PATH
	Modules     string        // node_modules with rp2040js; "" installs the pinned one into .cache
	Timeout     time.Duration // wall-clock limit; 0 means 30 minutes
	MaxCycles   uint64        // simulated-cycle limit; 0 means none
	IdleTimeout time.Duration // passed to ReadRun; 0 means 60 s, or Timeout for an image with on-device RSA keygens (silent for minutes)
	RawLog      io.Writer     // receives the UART bytes verbatim
	Progress    func(picodata.Measurement)
	Log         io.Writer
}

// EmulatorStatus is what the rp2040js runner reports when it stops.
type EmulatorStatus struct {
	Reason      string   `json:"reason"` // end, fault, breakpoint, max-cycles, timeout, deadlock, error
	PC          uint32   `json:"pc"`
	IPSR        int      `json:"ipsr"`
	Breakpoint  *int     `json:"breakpoint"`
	Cycles      uint64   `json:"cycles"`
	SimSeconds  float64  `json:"simSeconds"`
	WallSeconds float64  `json:"wallSeconds"`
	SimMHz      float64  `json:"simMHz"`
	ClkSys      float64  `json:"clkSys"`
	Timing      Timing   `json:"timing"`
	Error       string   `json:"error"`
	Warnings    []string `json:"warnings"`
	LastLines   []string `json:"lastLines"`

	// XIP is a flash image's cache (xip-cache.js); nil for a RAM image.
	XIP *XIPStats `json:"xip,omitempty"`
}

// Timing counts what experiments/pico/emulator/m0plus-timing.js added to
// rp2040js's cycles in one run (Cortex-M0+ TRM r0p1: table 3-1, 3.6.1).
type Timing struct {
	PushLR           uint64 `json:"pushLR"`           // PUSH with LR: 1 cycle each
	PopPC            uint64 `json:"popPC"`            // POP with PC: 1 cycle each
	ExceptionEntries uint64 `json:"exceptionEntries"` // exception entries: 15 cycles each
	AddedCycles      uint64 `json:"addedCycles"`      // the sum (with a flash image's XIP misses), included in Cycles
}

// EmulatedRun is a Dataset read from rp2040js plus the emulator's report.
// Emulated results model no bus contention, and no flash cache unless the
// image's code is in flash (Image.CodeIn, through the XIP cache model):
// label them as emulated wherever they are shown.
type EmulatedRun struct {
	*picodata.Dataset
	Emulator EmulatorStatus `json:"emulator"`
}

// Emulate runs a UF2 in rp2040js at the firmware's own clock.
//
// It reads its UART0 through a pseudo-terminal with the same OpenSerial and
// ReadRun a board uses. It fails, with the PC and the last UART lines, when
// the firmware faults, hits a breakpoint, deadlocks or runs out of time.
// An image with its code in flash runs with the XIP cache model on.
func Emulate(ctx context.Context, img Image, cfg RunConfig) (*EmulatedRun, error) {
	root, err := FindRoot(cfg.Root)
	if err != nil {
		return nil, err
	}
	node := cfg.Node
	if node == "" {
		node = "node"
	}
	if node, err = exec.LookPath(node); err != nil {
		return nil, fmt.Errorf("node not found: %s", hintNode)
	}
	mods := cfg.Modules
	if mods == "" {
		if mods, err = EnsureEmulator(ctx, root, cfg.Log); err != nil {
			return nil, err
		}
	}
	if _, err := os.Stat(img.UF2); err != nil {
		return nil, fmt.Errorf("emulate %s: %w (build it first)", img.Name, err)
	}
	timeout := cfg.Timeout
	if timeout <= 0 {
		timeout = 30 * time.Minute
	}
	idle := cfg.IdleTimeout
	if idle <= 0 {
		idle = 60 * time.Second
		if img.silentOps() {
			idle = timeout
		}
	}

	master, slave, err := OpenPTY()
	if err != nil {
		return nil, err
	}
	defer master.Close()
	// Open (and so put into raw mode) the slave before the emulator writes,
	// so no byte meets the tty's cooked-mode line discipline.
	port, err := OpenSerial(slave, DefaultBaud)
	if err != nil {
		return nil, err
	}
	defer port.Close()

	runCtx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	args := []string{filepath.Join(root, "experiments/pico/emulator/run.js"),
		"--uf2", img.UF2, "--uart-fd", "3", "--modules", mods, "--stop-at-end",
		"--timeout-ms", fmt.Sprint(timeout.Milliseconds())}
	if cfg.MaxCycles > 0 {
		args = append(args, "--max-cycles", fmt.Sprint(cfg.MaxCycles))
	}
	args = append(args, xipArgs(img)...)
	cmd := exec.CommandContext(runCtx, node, args...)
	cmd.ExtraFiles = []*os.File{master}
	var stdout, stderr bytes.Buffer
	cmd.Stdout = &stdout
	cmd.Stderr = &stderr
	cmd.WaitDelay = 5 * time.Second
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start rp2040js runner: %w", err)
	}
	waitErr := make(chan error, 1)
	go func() {
		err := cmd.Wait()
		waitErr <- err
		// Let the reader drain what the runner wrote, then stop it.
		time.AfterFunc(2*time.Second, func() { cancel(errors.New("emulator exited")) })
	}()
	ds, readErr := picodata.ReadRun(runCtx, port, picodata.ReadOptions{IdleTimeout: idle, RawLog: cfg.RawLog, Progress: cfg.Progress})
	ds.Emulated = true
	if readErr != nil {
		// The reader gave up first (idle timeout): stop the emulator.
		cancel(readErr)
	}
	werr := <-waitErr
	run := &EmulatedRun{Dataset: ds}
	line := strings.TrimSpace(stdout.String())
	if i := strings.LastIndexByte(line, '\n'); i >= 0 {
		line = line[i+1:]
	}
	if jerr := json.Unmarshal([]byte(line), &run.Emulator); jerr != nil {
		return run, fmt.Errorf("emulate %s%s: runner gave no status (%v); stderr: %s", img.Name, inOp(ds), werr, trunc(stderr.String(), 2000))
	}
	st := run.Emulator
	if st.Reason != "end" {
		return run, fmt.Errorf("emulate %s: stopped (%s)%s at pc=0x%08x ipsr=%d after %d cycles%s; last UART lines:\n%s",
			img.Name, st.Reason, inOp(ds), st.PC, st.IPSR, st.Cycles, errSuffix(st.Error), strings.Join(st.LastLines, "\n"))
	}
	if readErr != nil {
		return run, fmt.Errorf("emulate %s%s: %w", img.Name, inOp(ds), readErr)
	}
	return run, nil
}

// inOp names the operation a stopped run was in (begun by a "b" line and
// not ended), or "" when the stream does not say.
func inOp(ds *picodata.Dataset) string {
	if ds == nil || ds.InProgress == nil {
		return ""
	}
	return " in " + ds.InProgress.String()
}

func errSuffix(s string) string {
	if s == "" {
		return ""
	}
	return " (" + s + ")"
}

// silentOps reports whether the image runs on-device RSA-2048 keygens or
// SPHINCS+. One RSA keygen or SPHINCS+ signature is seconds to minutes of
// simulated time without a UART line, minutes (a SPHINCS+-128s signature:
// tens of minutes) of wall time in rp2040js, longer than the default idle
// timeout. The emulator's own timeout and deadlock detection still stop a
// hung image.
func (img Image) silentOps() bool {
	for _, s := range img.Schemes {
		if slices.Contains(picodata.SPHINCSSchemes, s) {
			return true
		}
	}
	for _, d := range img.Defines {
		if v, ok := strings.CutPrefix(d, "REPS_RSA_KEYGEN="); ok && v != "0" {
			for _, s := range img.Schemes {
				if s == "rsa-2048" {
					return true
				}
			}
		}
	}
	return false
}
