package quiet

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// cpuTimes are the aggregate "cpu" line of /proc/stat, in clock ticks
// (USER_HZ), as proc(5) defines them. Guest time is already inside user
// and nice, so it is not added again.
type cpuTimes struct {
	user, nice, system, idle, iowait, irq, softirq, steal uint64
}

// total is every tick of the interval on every CPU, stolen ones included.
func (c cpuTimes) total() uint64 {
	return c.user + c.nice + c.system + c.idle + c.iowait + c.irq + c.softirq + c.steal
}

// process is the CPU time processes spent: user, nice and system.
// Interrupt and softirq time is left out, because it is charged to
// whichever task was running, and on the studies' runs much of it is the
// experiment's own packets (veth, TUN, loopback).
func (c cpuTimes) process() uint64 { return c.user + c.nice + c.system }

// parseStat reads /proc/stat: the aggregate cpu line and the number of
// per-CPU lines.
func parseStat(b []byte) (cpuTimes, int, error) {
	var c cpuTimes
	found, cpus := false, 0
	for line := range bytes.Lines(b) {
		f := strings.Fields(string(line))
		if len(f) == 0 || !strings.HasPrefix(f[0], "cpu") {
			continue
		}
		if f[0] != "cpu" {
			if _, err := strconv.Atoi(f[0][3:]); err == nil {
				cpus++
			}
			continue
		}
		if len(f) < 5 {
			return c, 0, fmt.Errorf("/proc/stat: cpu line has %d fields, want at least 4 figures", len(f)-1)
		}
		dst := []*uint64{&c.user, &c.nice, &c.system, &c.idle, &c.iowait, &c.irq, &c.softirq, &c.steal}
		for i, p := range dst {
			if i+1 >= len(f) {
				break // older kernels have fewer columns; the rest stay 0
			}
			v, err := strconv.ParseUint(f[i+1], 10, 64)
			if err != nil {
				return c, 0, fmt.Errorf("/proc/stat: cpu field %d: %w", i+1, err)
			}
			*p = v
		}
		found = true
	}
	if !found {
		return c, 0, errors.New("/proc/stat: no aggregate cpu line")
	}
	return c, max(cpus, 1), nil
}

// parseLoadavg reads the 1, 5 and 15 minute load averages of
// /proc/loadavg ("0.52 0.58 0.59 1/467 12345").
func parseLoadavg(b []byte) ([3]float64, error) {
	var l [3]float64
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return l, fmt.Errorf("/proc/loadavg: %d fields, want at least 3", len(f))
	}
	for i := range l {
		v, err := strconv.ParseFloat(f[i], 64)
		if err != nil || v < 0 || v != v || v > 1e9 {
			return l, fmt.Errorf("/proc/loadavg: field %d is %q, not a load average", i+1, f[i])
		}
		l[i] = v
	}
	return l, nil
}

// pidStat is what the sampler reads of /proc/[pid]/stat.
type pidStat struct {
	comm  string
	ppid  int
	ticks uint64 // utime + stime: the process's own threads
	child uint64 // cutime + cstime: its children that it has waited for
	start uint64 // starttime, ticks after boot: tells a reused PID apart
}

// parsePidStat reads /proc/[pid]/stat (proc(5)). The command name is in
// parentheses and may itself hold spaces and parentheses, so the fields
// are counted from the last ')'.
func parsePidStat(b []byte) (pidStat, error) {
	var p pidStat
	open := bytes.IndexByte(b, '(')
	end := bytes.LastIndexByte(b, ')')
	if open < 0 || end < open {
		return p, errors.New("stat: no (comm)")
	}
	p.comm = string(b[open+1 : end])
	f := strings.Fields(string(b[end+1:]))
	// f[0] is field 3 (state); field n is f[n-3].
	if len(f) < 20 {
		return p, fmt.Errorf("stat: %d fields after comm, want at least 20", len(f))
	}
	ppid, err := strconv.Atoi(f[1])
	if err != nil || ppid < 0 {
		return p, fmt.Errorf("stat: ppid %q", f[1])
	}
	p.ppid = ppid
	var v [5]uint64 // utime, stime, cutime, cstime (fields 14-17), starttime (22)
	for i, n := range []int{14, 15, 16, 17, 22} {
		// cutime and cstime are signed in the kernel's format; a negative
		// value never occurs in practice and is read as an error.
		if v[i], err = strconv.ParseUint(f[n-3], 10, 64); err != nil {
			return p, fmt.Errorf("stat: field %d: %w", n, err)
		}
	}
	p.ticks, p.child, p.start = v[0]+v[1], v[2]+v[3], v[4]
	return p, nil
}

// parseCPUInfoMHz returns every "cpu MHz" of /proc/cpuinfo (x86 prints
// one per logical CPU; many other architectures print none).
func parseCPUInfoMHz(b []byte) []float64 {
	var out []float64
	for line := range bytes.Lines(b) {
		k, v, ok := strings.Cut(string(line), ":")
		if !ok || strings.TrimSpace(k) != "cpu MHz" {
			continue
		}
		if f, err := strconv.ParseFloat(strings.TrimSpace(v), 64); err == nil && f > 0 && f < 1e6 {
			out = append(out, f)
		}
	}
	return out
}
