package dockernet

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
)

// tempDir is where runs keep their state dirs (tests replace it).
var tempDir = os.TempDir

// leftover is one killed run's state, or a bridge no state names.
type leftover struct {
	st     state
	bridge bool // only a bridge device is left
}

// projectPID parses <prefix><pid>-<n> at the start of name; 0 when name
// is not of that form.
func projectPID(prefix, name string) (project string, pid int) {
	m := regexp.MustCompile(`^` + regexp.QuoteMeta(prefix) + `([0-9]+)-([0-9]+)`).FindStringSubmatch(name)
	if m == nil {
		return "", 0
	}
	pid, _ = strconv.Atoi(m[1])
	return m[0], pid
}

// findLeftovers lists the state dirs of runs with prefix whose process is
// gone, and bridges of dead runs without one.
func findLeftovers(prefix string) ([]leftover, error) {
	if prefix == "" {
		prefix = DefaultPrefix
	}
	var out []leftover
	seen := map[string]bool{}
	dirs, err := filepath.Glob(filepath.Join(tempDir(), prefix+"[0-9]*-*"))
	if err != nil {
		return nil, err
	}
	for _, d := range dirs {
		project, pid := projectPID(prefix, filepath.Base(d))
		if pid == 0 || !strings.HasPrefix(filepath.Base(d), project+"-") {
			continue
		}
		s, err := readState(d)
		if err != nil {
			// Killed before it wrote its state: nothing but the dir.
			s = state{Project: project, ParentPID: pid, ParentStart: startTime(pid), Dir: d}
		}
		if s.alive() {
			continue
		}
		seen[s.Project] = true
		out = append(out, leftover{st: s})
	}
	devs, _ := os.ReadDir(sysNet)
	for _, dev := range devs {
		project, pid := projectPID(prefix, dev.Name())
		if pid == 0 || project != dev.Name() || seen[project] || startTime(pid) != "" {
			continue
		}
		out = append(out, leftover{st: state{Project: project}, bridge: true})
	}
	return out, nil
}

// describe lists what one leftover holds: its daemon and, through it,
// containers, networks and images; the data root, the bridge, the dir.
func (l leftover) describe(ctx context.Context, t tools) []string {
	if l.bridge {
		return []string{"bridge " + l.st.Project + " (of a killed run)"}
	}
	s := l.st
	var out []string
	if pid := s.daemonPID(); pid != 0 {
		out = append(out, fmt.Sprintf("dockerd (pid %d) of killed run %s (pid %d), socket %s", pid, s.Project, s.ParentPID, s.socket()))
		if t.Docker != "" {
			for _, q := range []struct {
				kind string
				args []string
			}{
				{"container", []string{"ps", "-a", "--format", "{{.Names}}"}},
				{"network", []string{"network", "ls", "--filter", "type=custom", "--format", "{{.Name}}"}},
				{"image", []string{"images", "--format", "{{.Repository}}:{{.Tag}}"}},
			} {
				o, _ := t.docker(ctx, s.socket(), q.args...)
				for _, f := range strings.Fields(o) {
					out = append(out, q.kind+" "+f+" (daemon of "+s.Project+")")
				}
			}
		}
	}
	if _, err := os.Stat(filepath.Join(sysNet, s.Project)); err == nil && s.Project != "" {
		out = append(out, "bridge "+s.Project)
	}
	if s.DataRoot != "" {
		if _, err := os.Stat(s.DataRoot); err == nil {
			out = append(out, "data root "+s.DataRoot)
		}
	}
	return append(out, "temp dir "+s.Dir)
}

// Leftovers lists what killed runs with prefix left. That is, a private
// dockerd still running (its state dir names a parent that is gone) and
// its containers, networks and images, a bridge device, the data root and
// the temp dir. Runs whose process still lives are not leftovers.
func Leftovers(prefix string) ([]string, error) {
	ls, err := findLeftovers(prefix)
	if err != nil {
		return nil, fmt.Errorf("docker leftovers: %w", err)
	}
	if len(ls) == 0 {
		return nil, nil
	}
	t, _ := findTools()
	var out []string
	for _, l := range ls {
		out = append(out, l.describe(context.Background(), t)...)
	}
	return out, nil
}

// Clean removes Leftovers(prefix), the remains of killed docker-path
// runs.
//
// It removes, through each killed run's daemon, its containers, networks
// and images, then the daemon, the bridge, the data root and the temp
// dir (the same teardown as Close). It returns what it removed, one line
// each also written to log.
func Clean(ctx context.Context, prefix string, log io.Writer) ([]string, error) {
	if log == nil {
		log = io.Discard
	}
	ls, err := findLeftovers(prefix)
	if err != nil {
		return nil, fmt.Errorf("docker clean: %w", err)
	}
	t, _ := findTools()
	var removed []string
	var errs []string
	for _, l := range ls {
		var r []string
		var err error
		if l.bridge {
			if _, err = run(ctx, nil, "ip", "link", "del", l.st.Project); err == nil {
				r = []string{"bridge " + l.st.Project}
			}
		} else {
			r, err = teardown(ctx, t, l.st, nil)
		}
		for _, x := range r {
			fmt.Fprintf(log, "docker clean: removed %s\n", x)
		}
		removed = append(removed, r...)
		if err != nil {
			errs = append(errs, err.Error())
		}
	}
	if len(errs) > 0 {
		return removed, fmt.Errorf("docker clean: %s; remove the rest by hand (see docs/security.md)", strings.Join(errs, "; "))
	}
	return removed, nil
}
