package tlsrun

import (
	"context"
	"fmt"
	"io"
	"net"

	"pqrepro/experiments/instruments/capture"
)

// pathCapture is one path's capture: on lo for loopback, on the client's
// veth inside the client namespace for bridge, and so on (path.capture).
type pathCapture struct {
	path, iface, name, file string
	c                       *capture.Capture
	st                      capture.Stats
	stopped                 bool
	err                     error
	// After the run: size and SHA-256 of the uncompressed file, and
	// where it is kept (for the log and meta.json's notes).
	size       int64
	sum, where string
}

// startCaptures starts one capture per path of the run, into dir, in the
// paths' order: the first is the run-wide capture of meta.json.
func (r *runner) startCaptures(ctx context.Context, dir string) ([]*pathCapture, error) {
	var caps []*pathCapture
	for _, p := range r.paths {
		pc, err := p.capture(ctx, dir, r.servers)
		if err != nil {
			return caps, err
		}
		caps = append(caps, pc)
	}
	return caps, nil
}

// stopCaptures stops every capture not yet stopped (safe to call twice).
func stopCaptures(caps []*pathCapture) {
	for _, pc := range caps {
		if !pc.stopped {
			pc.stopped = true
			pc.st, pc.err = pc.c.Stop()
		}
	}
}

// keyLogs maps each path to its capture's key log.
func keyLogs(caps []*pathCapture) map[string]io.Writer {
	m := map[string]io.Writer{}
	for _, pc := range caps {
		m[pc.path] = pc.c.KeyLog()
	}
	return m
}

// captureStats sums the stopped captures' statistics, logs each, and
// returns the first capture's error, named by its interface.
func (r *runner) captureStats(caps []*pathCapture) (st capture.Stats, capErr error) {
	for _, pc := range caps {
		if testHookCaptureStats != nil {
			testHookCaptureStats(&pc.st)
		}
		st.Packets += pc.st.Packets
		st.KernelSeen += pc.st.KernelSeen
		st.KernelDrops += pc.st.KernelDrops
		st.Truncated += pc.st.Truncated
		st.SecretBytes += pc.st.SecretBytes
		if pc.err != nil && capErr == nil {
			capErr = fmt.Errorf("%s: %w", pc.iface, pc.err)
		}
		r.logf("capture: stopped on %s: %d packets, %d kernel drops, %d key log bytes", pc.iface, pc.st.Packets, pc.st.KernelDrops, pc.st.SecretBytes)
	}
	return st, capErr
}

// pathsMeta is meta.json's measured.paths: per path, MTU, offloads,
// congestion control, TCP_NODELAY and where it was captured.
func (r *runner) pathsMeta(caps []*pathCapture, sums map[string]string) map[string]any {
	out := map[string]any{}
	for _, pc := range caps {
		info := r.path(pc.path).info()
		info["capture"] = pc.name
		info["capture_sha256"] = sums[pc.name]
		info["packets_captured"] = pc.st.Packets
		info["kernel_drops"] = pc.st.KernelDrops
		out[pc.path] = info
	}
	return out
}

// serverPorts lists the listening ports of the servers on path, for a
// capture filter.
func serverPorts(servers []*server, path string) []uint16 {
	var ports []uint16
	for _, s := range servers {
		if s.cfg.Path == path {
			ports = append(ports, uint16(s.ln.Addr().(*net.TCPAddr).Port))
		}
	}
	return ports
}

// portRange is the servers' lowest and highest port, for the log.
func portRange(servers []*server) string {
	lo, hi := 1<<16, 0
	for _, s := range servers {
		p := s.ln.Addr().(*net.TCPAddr).Port
		lo, hi = min(lo, p), max(hi, p)
	}
	return fmt.Sprintf("%d..%d", lo, hi)
}
