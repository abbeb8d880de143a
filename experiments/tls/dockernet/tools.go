package dockernet

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"

	"pqrepro/internal/deps"
)

// tools are the programs the docker path runs. Tests replace findTools
// with fakes (shell scripts) to make each step fail.
type tools struct {
	Dockerd string   // Debian docker.io's daemon
	Docker  string   // its CLI
	Compose []string // docker-compose (v1) or {Docker, "compose"} (v2)
	Go      string   // builds the idle process
}

// debianDocker is where docker.io puts the CLI. It is preferred to an
// earlier docker on PATH (another distribution's CLI, which may not speak
// the daemon's API version).
var debianDocker = "/usr/bin/docker"

var findTools = func() (tools, error) {
	var t tools
	var errs []error
	look := func(name string, alt ...string) string {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
		for _, a := range alt {
			if _, err := os.Stat(a); err == nil {
				return a
			}
		}
		errs = append(errs, fmt.Errorf("no %s", name))
		return ""
	}
	t.Dockerd = look("dockerd", "/usr/sbin/dockerd")
	if _, err := os.Stat(debianDocker); err == nil {
		t.Docker = debianDocker
	} else {
		t.Docker = look("docker")
	}
	if p, err := exec.LookPath("docker-compose"); err == nil {
		t.Compose = []string{p}
	} else if t.Docker != "" && exec.Command(t.Docker, "compose", "version").Run() == nil {
		t.Compose = []string{t.Docker, "compose"}
	} else {
		errs = append(errs, errors.New("no docker-compose and no `docker compose`"))
	}
	t.Go = look("go")
	if err := errors.Join(errs...); err != nil {
		return t, fmt.Errorf("%w: apt-get install docker.io docker-compose (and Go on PATH)", err)
	}
	return t, nil
}

// Available says why this host cannot run the docker path, nil when it
// can. That is, Debian's dockerd, the docker CLI, a compose tool and Go
// are present, the process is root (dockerd and the namespaces need it)
// and the kernel has cgroups and network namespaces. It starts nothing.
func Available() error {
	if _, err := findTools(); err != nil {
		return err
	}
	if os.Geteuid() != 0 {
		return errors.New("the private Docker daemon needs root")
	}
	for _, p := range []string{"/sys/fs/cgroup", "/proc/self/ns/net"} {
		if _, err := os.Stat(p); err != nil {
			return fmt.Errorf("the kernel cannot run containers here: %w", err)
		}
	}
	return nil
}

// Requirements are the Debian packages the docker path needs.
func Requirements() []deps.Requirement {
	present := func(f func(tools) bool) func() bool {
		return func() bool { t, _ := findTools(); return f(t) }
	}
	return []deps.Requirement{
		{Name: "dockerd", Why: "Study A's docker path runs a private Docker daemon", Apt: []string{"docker.io"},
			Present: present(func(t tools) bool { return t.Dockerd != "" && t.Docker != "" })},
		{Name: "docker-compose", Why: "Study A's docker path brings its two containers up from a compose file", Apt: []string{"docker-compose"},
			Present: present(func(t tools) bool { return len(t.Compose) > 0 })},
	}
}

// run runs argv and returns its standard output; an error carries its
// standard error.
func run(ctx context.Context, env []string, argv ...string) (string, error) {
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	if env != nil {
		cmd.Env = append(os.Environ(), env...)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return stdout.String(), fmt.Errorf("%s: %w: %s", strings.Join(argv, " "), err, strings.TrimSpace(stderr.String()))
	}
	return stdout.String(), nil
}

// docker runs the CLI against the daemon at sock.
func (t tools) docker(ctx context.Context, sock string, args ...string) (string, error) {
	return run(ctx, nil, append([]string{t.Docker, "-H", "unix://" + sock}, args...)...)
}
