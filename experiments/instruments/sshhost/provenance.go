package sshhost

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
)

// Provenance is what a run records about the remote host (meta.json
// measured.remote_host).
type Provenance struct {
	Dest     string `json:"dest"` // the SSH destination as the spec gives it
	Hostname string `json:"hostname"`
	Kernel   string `json:"kernel"` // uname -sr
	Arch     string `json:"arch"`   // uname -m
	CPUModel string `json:"cpu_model"`
	Cores    int    `json:"cores"`
	MemoryKB uint64 `json:"memory_kb"`
	OS       string `json:"os"` // PRETTY_NAME of /etc/os-release
	Binary   string `json:"binary"`
	// BinarySHA256 is the deployed binary's hash as the host computed it.
	BinarySHA256 string `json:"binary_sha256"`
	Clock        Clock  `json:"clock"`
}

// Clock is an estimate of the host's clock minus this one's.
//
// It is NTP-style (RFC 5905 8: offset = ((t1 - t0) + (t2 - t3)) / 2,
// here t1 = t2, one reading of the remote clock): from the sample with
// the smallest round trip, whose half bounds the error.
type Clock struct {
	OffsetNs int64 `json:"offset_ns"`
	// BoundNs: the true offset is within OffsetNs +- BoundNs (half the
	// round trip of the chosen sample, over SSH).
	BoundNs int64 `json:"bound_ns"`
	Samples int   `json:"samples"`
}

// provScript prints key=value lines about the host and the binary $f.
const provScript = `f=%s
printf 'hostname=%%s\n' "$(uname -n)"
printf 'kernel=%%s\n' "$(uname -sr)"
printf 'arch=%%s\n' "$(uname -m)"
printf 'cpu=%%s\n' "$(grep -m1 '^model name' /proc/cpuinfo | sed 's/^[^:]*: *//')"
printf 'cores=%%s\n' "$(getconf _NPROCESSORS_ONLN)"
printf 'mem_kb=%%s\n' "$(awk '/^MemTotal:/{print $2}' /proc/meminfo)"
printf 'os=%%s\n' "$(sed -n 's/^PRETTY_NAME=//p' /etc/os-release | tr -d '"')"
printf 'sha256=%%s\n' "$(sha256sum < "$f" | cut -d' ' -f1)"
`

// Provenance reads the host's machine facts, hashes the deployed binary
// there and estimates the clock offset with samples round trips (0: 8).
func (h *Host) Provenance(ctx context.Context, d Deployed, samples int) (Provenance, error) {
	out, err := h.Run(ctx, fmt.Sprintf(provScript, shq(d.Path)), nil)
	if err != nil {
		return Provenance{}, fmt.Errorf("provenance of %s: %w", h.opt.Dest, err)
	}
	p := parseProvenance(string(out))
	p.Dest, p.Binary = h.opt.Dest, d.Path
	if p.BinarySHA256 != d.SHA256 {
		return p, fmt.Errorf("provenance of %s: the binary %s hashes to %q there, not %s: deploy again", h.opt.Dest, d.Path, p.BinarySHA256, d.SHA256)
	}
	if p.Clock, err = h.ClockOffset(ctx, d, samples); err != nil {
		return p, err
	}
	return p, nil
}

// parseProvenance reads provScript's key=value lines; unknown keys and
// lines without "=" are ignored, a number that does not parse is 0.
func parseProvenance(out string) Provenance {
	var p Provenance
	for _, line := range strings.Split(out, "\n") {
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			continue
		}
		switch k {
		case "hostname":
			p.Hostname = v
		case "kernel":
			p.Kernel = v
		case "arch":
			p.Arch = v
		case "cpu":
			p.CPUModel = v
		case "cores":
			p.Cores, _ = strconv.Atoi(v)
		case "mem_kb":
			p.MemoryKB, _ = strconv.ParseUint(v, 10, 64)
		case "os":
			p.OS = v
		case "sha256":
			p.BinarySHA256 = v
		}
	}
	return p
}

// ClockOffset estimates the host's clock minus this one's over one SSH
// session running `pqrepro remote clock`.
func (h *Host) ClockOffset(ctx context.Context, d Deployed, samples int) (Clock, error) {
	if samples <= 0 {
		samples = 8
	}
	cmd := h.command(ctx, "exec "+shq(d.Path)+" remote clock")
	in, err := cmd.StdinPipe()
	if err != nil {
		return Clock{}, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return Clock{}, err
	}
	errb := &tail{}
	cmd.Stderr = errb
	if err := cmd.Start(); err != nil {
		return Clock{}, err
	}
	c, rerr := sampleClock(in, bufio.NewReader(out), samples)
	in.Close()
	werr := cmd.Wait()
	if rerr != nil {
		if werr != nil {
			return Clock{}, fmt.Errorf("clock of %s: %w", h.opt.Dest, h.classify(werr, errb.String()))
		}
		return Clock{}, fmt.Errorf("clock of %s: %w", h.opt.Dest, rerr)
	}
	return c, nil
}

// sampleClock asks n times and keeps the sample with the smallest round
// trip. t0 and t3 are this clock's readings around the request; the reply
// is the remote clock at an unknown moment between them, so the offset is
// reply - midpoint, within +- RTT/2.
func sampleClock(w io.Writer, r *bufio.Reader, n int) (Clock, error) {
	best := Clock{BoundNs: -1, Samples: n}
	for i := 0; i < n; i++ {
		t0 := time.Now()
		if _, err := w.Write([]byte{'\n'}); err != nil {
			return Clock{}, err
		}
		line, err := r.ReadString('\n')
		if err != nil {
			return Clock{}, err
		}
		t3 := time.Now()
		remote, err := strconv.ParseInt(strings.TrimSpace(line), 10, 64)
		if err != nil {
			return Clock{}, fmt.Errorf("clock reply %q: %w", line, err)
		}
		rtt := t3.Sub(t0)
		mid := t0.Add(rtt / 2).UnixNano()
		if best.BoundNs < 0 || int64(rtt/2) < best.BoundNs {
			best.OffsetNs, best.BoundNs = remote-mid, int64(rtt/2)
		}
	}
	return best, nil
}
