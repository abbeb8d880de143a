package tlsrun

import (
	"context"
	"fmt"
	"io"
	"net"

	"pqrepro/experiments/instruments/capture"
	"pqrepro/experiments/tls/tlsjoin"
)

// pathCapture is one path's capture: on lo for loopback, on the client's
// veth inside the client namespace for bridge, and so on (path.capture).
type pathCapture struct {
	path, iface, name, file string
	c                       *capture.Capture
	st                      capture.Stats
	// serverEnd marks the second capture of an emulated path, at the
	// server's end of the link; joined is what its join found.
	serverEnd bool
	joined    *tlsjoin.ServerEndStats
	stopped   bool
	err       error
	// After the run: size and SHA-256 of the uncompressed file, and
	// where it is kept (for the log and meta.json's notes).
	size       int64
	sum, where string
}

// serverEndPath is a path captured at both ends: the emulated paths.
type serverEndPath interface {
	path
	// serverCapture starts the capture at the server's end into dir.
	serverCapture(ctx context.Context, dir string) (*pathCapture, error)
}

// startCaptures starts one capture per path of the run, into dir, in the
// paths' order: the first is the run-wide capture of meta.json. A path
// captured at both ends has its server end's capture right after.
func (r *runner) startCaptures(ctx context.Context, dir string) ([]*pathCapture, error) {
	var caps []*pathCapture
	for _, p := range r.paths {
		pc, err := p.capture(ctx, dir, r.servers)
		if err != nil {
			return caps, err
		}
		caps = append(caps, pc)
		if sp, ok := p.(serverEndPath); ok {
			if pc, err = sp.serverCapture(ctx, dir); err != nil {
				return caps, err
			}
			caps = append(caps, pc)
		}
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

// keyLogs maps each path to its (client-end) capture's key log.
func keyLogs(caps []*pathCapture) map[string]io.Writer {
	m := map[string]io.Writer{}
	for _, pc := range caps {
		if !pc.serverEnd {
			m[pc.path] = pc.c.KeyLog()
		}
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
		r.logf("capture: stopped on %s (%s): %d packets, %d kernel drops, %d key log bytes", pc.iface, pc.name, pc.st.Packets, pc.st.KernelDrops, pc.st.SecretBytes)
	}
	return st, capErr
}

// pathsMeta is meta.json's measured.paths: per path, MTU, offloads,
// congestion control, TCP_NODELAY and where it was captured. A path
// captured at both ends also gets its server end's capture and join.
func (r *runner) pathsMeta(caps []*pathCapture, sums map[string]string) map[string]any {
	out := map[string]any{}
	for _, pc := range caps {
		if pc.serverEnd {
			if info, ok := out[pc.path].(map[string]any); ok {
				info["server_capture"] = map[string]any{
					"capture": pc.name, "capture_sha256": sums[pc.name], "interface": pc.iface,
					"packets_captured": pc.st.Packets, "kernel_drops": pc.st.KernelDrops, "join": pc.joined,
				}
			}
			continue
		}
		info := r.path(pc.path).info()
		info["capture"] = pc.name
		info["capture_sha256"] = sums[pc.name]
		info["packets_captured"] = pc.st.Packets
		info["kernel_drops"] = pc.st.KernelDrops
		out[pc.path] = info
	}
	return out
}

// logServerEnd logs the server-end joins and hands each to its capture
// for meta.json. A connection a server-end capture lacks is a warning
// (its server-end columns are empty), never a silent gap.
func (r *runner) logServerEnd(caps []*pathCapture, js tlsjoin.Stats) {
	for i := range js.ServerEnd {
		se := &js.ServerEnd[i]
		for _, pc := range caps {
			if pc.serverEnd && pc.path == se.Path {
				pc.joined = se
			}
		}
		r.logf("capture %s: %d connections joined at the server's end (%d without their SYN), %d missing", se.Capture, se.Joined, se.NoSyn, se.Missing)
	}
	for _, m := range js.Misses() {
		r.logf("WARNING: %s", m)
	}
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
