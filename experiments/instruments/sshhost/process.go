package sshhost

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"sync"
	"time"
)

// Msg is one line a role writes on its standard output (JSON).
type Msg struct {
	Type string `json:"type"` // "pid", "listen", "ready", "rec"
	PID  int    `json:"pid,omitempty"`
	// I is the configuration's index (listen, rec).
	I    int    `json:"i,omitempty"`
	Addr string `json:"addr,omitempty"` // listen: ip:port on the host
	// rec: the client as accepted, Accept (the host's clock) and
	// accept-to-handshake-complete time, and the handshake's error.
	Client   string `json:"client,omitempty"`
	AcceptNs int64  `json:"accept_ns,omitempty"`
	ServerNs int64  `json:"server_ns,omitempty"`
	Err      string `json:"err,omitempty"`
}

// Process is a role running on the host, tied to one SSH session.
type Process struct {
	PID  int // on the host
	host *Host
	cmd  *exec.Cmd
	in   io.WriteCloser
	msgs chan Msg
	done chan struct{}
	err  error // set before done closes
	errb *tail

	stopOnce sync.Once
	stopping chan struct{}
}

// Start runs `<bin> remote <role> -watchdog D args...` on the host and waits
// for its PID line. The role's later lines arrive on Msgs; Done closes
// when the session ends, and Err then says why (nil only after Stop).
func (h *Host) Start(ctx context.Context, bin, role string, args ...string) (*Process, error) {
	q := []string{shq(bin), "remote", role, "-watchdog", h.opt.Watchdog.String()}
	for _, a := range args {
		q = append(q, shq(a))
	}
	// ctx bounds the start only: the process lives until Stop.
	cmd := h.command(context.WithoutCancel(ctx), "exec "+strings.Join(q, " "))
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	p := &Process{host: h, cmd: cmd, in: in, msgs: make(chan Msg, 64), done: make(chan struct{}), errb: &tail{}, stopping: make(chan struct{})}
	cmd.Stderr = p.errb
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("ssh %s: start %s: %w", h.opt.Dest, role, err)
	}
	first := make(chan Msg, 1)
	go p.read(out, first)
	go p.heartbeat()
	go func() {
		werr := cmd.Wait()
		select {
		case <-p.stopping:
		default:
			if werr == nil {
				werr = errors.New("exit status 0")
			}
			p.err = fmt.Errorf("%s (pid %d) on %s: %w: %w", role, p.PID, h.opt.Dest, ErrRemoteExited, p.why(werr))
		}
		close(p.done)
	}()
	select {
	case m, ok := <-first:
		if ok && m.Type == "pid" && m.PID > 0 {
			p.PID = m.PID
			return p, nil
		}
		p.Stop()
		<-p.done
		return nil, fmt.Errorf("ssh %s: %s did not report its PID: %w", h.opt.Dest, role, h.classify(errors.New("no PID line"), p.errb.String()))
	case <-p.done:
		return nil, fmt.Errorf("start %w", p.err)
	case <-ctx.Done():
		p.Stop()
		return nil, ctx.Err()
	}
}

func (p *Process) read(out io.Reader, first chan<- Msg) {
	sc := bufio.NewScanner(out)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	n := 0
	for sc.Scan() {
		var m Msg
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			continue // not a role's line (a login banner): ignored
		}
		if n == 0 {
			first <- m
			close(first)
		} else {
			select {
			case p.msgs <- m:
			case <-p.done:
				return
			}
		}
		n++
	}
	if n == 0 {
		close(first)
	}
	close(p.msgs)
}

// why classifies the end of the session. ssh exits with 255 both when the
// connection broke and when the remote process died of a signal (sshd
// reports exit-signal); a fresh connection tells which.
func (p *Process) why(werr error) error {
	err := p.host.classify(werr, p.errb.String())
	var ee *exec.ExitError
	if p.PID <= 0 || !errors.As(werr, &ee) || ee.ExitCode() != 255 || strings.TrimSpace(p.errb.String()) != "" {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), p.host.opt.ConnectTimeout)
	defer cancel()
	out, perr := p.host.Run(ctx, fmt.Sprintf("kill -0 %d 2>/dev/null && echo alive || echo gone", p.PID), nil)
	switch {
	case perr != nil:
		return fmt.Errorf("%w (a new connection fails too: %w)", err, perr)
	case strings.TrimSpace(string(out)) == "gone":
		return errors.New("it was killed by a signal or crashed; the SSH connection itself works")
	}
	return err
}

// heartbeat writes one byte a second until Stop or the session's end.
func (p *Process) heartbeat() {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		select {
		case <-t.C:
			if _, err := p.in.Write([]byte{'\n'}); err != nil {
				return
			}
		case <-p.stopping:
			return
		case <-p.done:
			return
		}
	}
}

// Msgs are the role's lines after its PID; closed when its output ends.
func (p *Process) Msgs() <-chan Msg { return p.msgs }

// Done closes when the SSH session has ended.
func (p *Process) Done() <-chan struct{} { return p.done }

// Err is why the session ended (after Done): nil after Stop, else wraps
// ErrRemoteExited and the ssh error class.
func (p *Process) Err() error {
	select {
	case <-p.done:
		return p.err
	default:
		return nil
	}
}

// Stop ends the role and reports whether the remote process may still run.
//
// It closes the role's input (the role exits at once), waits up to 5 s for
// the session to end, then kills the PID over a fresh connection and ends
// the local ssh. It returns an error when the remote process may still be
// running (the connection is gone and the role's watchdog will end it
// within Options.Watchdog). Safe to call twice.
func (p *Process) Stop() error {
	var err error
	p.stopOnce.Do(func() {
		select {
		case <-p.done:
			close(p.stopping)
			return // ended by itself: nothing runs remotely
		default:
		}
		close(p.stopping)
		p.in.Close()
		select {
		case <-p.done:
			return
		case <-time.After(5 * time.Second):
		}
		ctx, cancel := context.WithTimeout(context.Background(), p.host.opt.ConnectTimeout+5*time.Second)
		defer cancel()
		if p.PID > 0 {
			if _, kerr := p.host.Run(ctx, fmt.Sprintf("kill -TERM %d 2>/dev/null; sleep 1; kill -KILL %d 2>/dev/null; true", p.PID, p.PID), nil); kerr != nil {
				err = fmt.Errorf("stop pid %d on %s: %w; its watchdog ends it within %s of the last heartbeat", p.PID, p.host.opt.Dest, kerr, p.host.opt.Watchdog)
			}
		}
		p.cmd.Process.Kill()
		<-p.done
	})
	return err
}

// tail keeps the last 4 KiB written to it (a role's and ssh's stderr).
type tail struct {
	mu sync.Mutex
	b  []byte
}

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, p...)
	if len(t.b) > 4096 {
		t.b = append([]byte(nil), t.b[len(t.b)-4096:]...)
	}
	return len(p), nil
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.b)
}
