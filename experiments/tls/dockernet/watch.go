package dockernet

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"strings"
)

// event is the part of a `docker events` line the watcher reads.
type event struct {
	Type   string
	Action string
	Actor  struct{ Attributes map[string]string }
}

// watch follows the daemon's events (a container's die, oom or destroy,
// the network's destroy or a disconnect) and the daemon's exit. The first
// one closes Done. A private daemon has only this run's objects. Once
// the events flow, both containers are checked to be still running, so
// that one that died before the watcher started is not missed (the
// events before it cannot be replayed: compose up's own network
// disconnects are among them).
func (n *Net) watch() error {
	n.events = exec.Command(n.tools.Docker, "-H", "unix://"+n.st.socket(), "events", "--format", "{{json .}}")
	out, err := n.events.StdoutPipe()
	if err != nil {
		return err
	}
	if err := n.events.Start(); err != nil {
		return fmt.Errorf("docker events: %w", err)
	}
	role := map[string]string{n.Info.ClientContainer: "client", n.Info.ServerContainer: "server"}
	n.watchWG.Add(2)
	go func() {
		defer n.watchWG.Done()
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			var e event
			if json.Unmarshal(sc.Bytes(), &e) != nil {
				continue
			}
			if err := fatalEvent(e, role, n.Info.Network); err != nil {
				n.fail(err)
			}
		}
		n.events.Wait()
		n.fail(errors.New("docker events ended (the daemon stopped answering)"))
	}()
	go func() {
		defer n.watchWG.Done()
		select {
		case <-n.daemon.exited:
			n.fail(fmt.Errorf("the private dockerd exited (%v); its log ends:\n%s", n.daemon.err, logTail(n.st.logFile(), 10)))
		case <-n.done:
		case <-n.stop:
		}
	}()
	for _, c := range []string{n.Info.ClientContainer, n.Info.ServerContainer} {
		out, err := n.tools.docker(context.Background(), n.st.socket(), "inspect", "--format", "{{.State.Running}} {{.State.ExitCode}}", c)
		if err != nil {
			return fmt.Errorf("check container %s: %w", c, err)
		}
		if f := strings.Fields(out); len(f) == 2 && f[0] != "true" {
			return fmt.Errorf("container %s exited before the run began (exit code %s)", c, f[1])
		}
	}
	return nil
}

// fatalEvent says why e ends the run, nil when it does not.
func fatalEvent(e event, role map[string]string, network string) error {
	a := e.Actor.Attributes
	switch {
	case e.Type == "container" && (e.Action == "die" || e.Action == "oom" || e.Action == "destroy"):
		name := a["name"]
		r, ok := role[name]
		if !ok {
			return nil
		}
		if e.Action == "die" {
			return fmt.Errorf("the %s container %s died (exit code %s)", r, name, a["exitCode"])
		}
		return fmt.Errorf("the %s container %s: %s", r, name, e.Action)
	case e.Type == "network" && a["name"] == network && (e.Action == "destroy" || e.Action == "disconnect"):
		return fmt.Errorf("the network %s: %s", network, e.Action)
	}
	return nil
}

func (n *Net) fail(err error) {
	if n.closing.Load() {
		return
	}
	n.failOnce.Do(func() {
		e := fmt.Errorf("%w: %w", ErrFailed, err)
		n.err.Store(&e)
		close(n.done)
	})
}

// Done is closed when a container dies or the network or the daemon goes
// away during the run; Err then says which.
func (n *Net) Done() <-chan struct{} { return n.done }

// Err is nil while the path is intact, else an error wrapping ErrFailed.
func (n *Net) Err() error {
	if p := n.err.Load(); p != nil {
		return *p
	}
	return nil
}

// stopWatch ends the events follower and waits for the watcher.
func (n *Net) stopWatch() {
	if n.events != nil && n.events.Process != nil {
		n.events.Process.Kill()
	}
	n.stopOnce.Do(func() { close(n.stop) })
	n.watchWG.Wait()
}
