package picodata

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"
)

// ErrIncomplete says a run was read only in part; the Dataset returned
// with it keeps every good record and lists the problems.
var ErrIncomplete = errors.New("pico: incomplete run")

// ReadOptions tunes ReadRun.
type ReadOptions struct {
	// IdleTimeout ends the read when no byte arrives for this long
	// (default 30 s). The longest silent stretch of the firmware is one
	// operation (an RSA-2048 keygen can take tens of seconds on a board).
	IdleTimeout time.Duration
	// RawLog, when set, receives every byte read, verbatim.
	RawLog io.Writer
	// Progress, when set, is called for each measurement as it arrives.
	Progress func(Measurement)
}

// ReadRun reads one run of the protocol from r. That is, it skips
// everything up to the first start line (so a host may connect late: the
// firmware repeats its run), then collects lines until the end line. It
// never hangs: it stops at ctx's end, after IdleTimeout without data, at a
// read error (a port that disappeared) or EOF. Noise, a checksum mismatch,
// a truncated or lost line (sequence gap), a reset (a new start before the
// end) or a fault are reported as Problems with the raw-log line number;
// good records are kept, and the error is ErrIncomplete unless the run was
// whole. The returned Dataset is never nil. The goroutine reading r may
// stay blocked in Read after a timeout until the caller closes r.
func ReadRun(ctx context.Context, r io.Reader, opt ReadOptions) (*Dataset, error) {
	if opt.IdleTimeout <= 0 {
		opt.IdleTimeout = 30 * time.Second
	}
	type chunk struct {
		b   []byte
		err error
	}
	ch := make(chan chunk, 16)
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		buf := make([]byte, 4096)
		for {
			n, err := r.Read(buf)
			if n == 0 && err == nil { // a serial read timeout
				select {
				case <-stop:
					return
				default:
					continue
				}
			}
			{
				c := chunk{append([]byte(nil), buf[:n]...), err}
				select {
				case ch <- c:
				case <-stop:
					return
				}
			}
			if err != nil {
				return
			}
		}
	}()

	st := &runState{d: &Dataset{}, vec: map[string]*vectorChunk{}, opt: opt}
	var raw bytes.Buffer
	var pending []byte
	idle := time.NewTimer(opt.IdleTimeout)
	defer idle.Stop()
	for !st.done {
		select {
		case <-ctx.Done():
			st.stopWith(fmt.Sprintf("stopped before the end line: %v", context.Cause(ctx)))
		case <-idle.C:
			st.stopWith(fmt.Sprintf("no data for %v (is the board running and the port right?)", opt.IdleTimeout))
		case c := <-ch:
			if len(c.b) > 0 {
				raw.Write(c.b)
				if opt.RawLog != nil {
					if _, err := opt.RawLog.Write(c.b); err != nil {
						st.stopWith(fmt.Sprintf("write raw log: %v", err))
						break
					}
				}
				idle.Reset(opt.IdleTimeout)
				pending = append(pending, c.b...)
				for !st.done {
					i := bytes.IndexByte(pending, '\n')
					if i < 0 {
						if len(pending) > MaxLineLen {
							st.rawLine++
							st.problem(fmt.Sprintf("line longer than %d bytes without a newline (noise?); dropped", MaxLineLen))
							st.rawLine--
							pending = pending[:0]
							st.dropToNewline = true
						}
						break
					}
					line := string(pending[:i])
					pending = pending[i+1:]
					st.rawLine++
					if st.dropToNewline {
						st.dropToNewline = false
						continue
					}
					if len(line) > MaxLineLen {
						st.problem(fmt.Sprintf("line longer than %d bytes (noise?); dropped", MaxLineLen))
						continue
					}
					st.line(line)
				}
			}
			if c.err != nil && !st.done {
				if len(pending) > 0 {
					st.rawLine++
					st.problem(fmt.Sprintf("truncated last line %q", trunc(string(pending), 60)))
				}
				if errors.Is(c.err, io.EOF) {
					st.stopWith("stream ended (EOF) before the end line")
				} else {
					st.stopWith(fmt.Sprintf("read error (port gone?): %v", c.err))
				}
			}
		}
	}
	d := st.d
	d.Raw = raw.Bytes()
	d.finishVectors(st.vec, st.rawLine)
	d.Complete = st.sawEnd && len(d.Problems) == 0 && d.Fault == nil
	if !d.Complete {
		msgs := make([]string, 0, len(d.Problems))
		for _, p := range d.Problems {
			msgs = append(msgs, p.String())
		}
		if d.Fault != nil {
			msgs = append(msgs, fmt.Sprintf("firmware fault: exception %d at pc=0x%08x lr=0x%08x", d.Fault.Exception, d.Fault.PC, d.Fault.LR))
		}
		if len(msgs) > 8 {
			msgs = append(msgs[:8], fmt.Sprintf("... and %d more", len(msgs)-8))
		}
		return d, fmt.Errorf("%w (%d measurements kept): %s", ErrIncomplete, len(d.Measurements), strings.Join(msgs, "; "))
	}
	return d, nil
}

type runState struct {
	d             *Dataset
	vec           map[string]*vectorChunk
	opt           ReadOptions
	rawLine       int
	started       bool
	nextSeq       uint64
	sawEnd        bool
	done          bool
	dropToNewline bool
}

func (s *runState) problem(msg string) {
	s.d.Problems = append(s.d.Problems, Problem{s.rawLine, msg})
}

func (s *runState) stopWith(msg string) {
	if !s.sawEnd {
		s.problem(msg)
	}
	s.done = true
}

func trunc(s string, n int) string {
	if len(s) > n {
		return s[:n] + "..."
	}
	return s
}

func (s *runState) line(text string) {
	l, err := ParseLine(text)
	if !s.started {
		if err == nil && l.Kind == KindStart {
			h, herr := parseHeader(l)
			if herr != nil {
				s.problem(fmt.Sprintf("bad start line: %v", herr))
				s.d.Skipped++
				return
			}
			if l.Seq != 0 {
				s.problem(fmt.Sprintf("start line has sequence %d, want 0", l.Seq))
			}
			s.started = true
			s.d.Header = h
			s.nextSeq = l.Seq + 1
			return
		}
		s.d.Skipped++
		return
	}
	switch {
	case errors.Is(err, ErrNotProtocol):
		if strings.TrimSpace(text) != "" {
			s.problem(fmt.Sprintf("noise: %q", trunc(text, 60)))
		}
		return
	case err != nil:
		s.problem(fmt.Sprintf("%v; line dropped", err))
		return
	}
	if l.Kind == KindStart {
		s.problem(fmt.Sprintf("new start line (seq %d) before the end line: the board reset or restarted", l.Seq))
		s.done = true
		return
	}
	if l.Seq != s.nextSeq {
		if l.Seq > s.nextSeq {
			s.problem(fmt.Sprintf("lost %d line(s): sequence jumps from %d to %d", l.Seq-s.nextSeq, s.nextSeq, l.Seq))
		} else {
			s.problem(fmt.Sprintf("sequence went back from %d to %d (duplicate or reset)", s.nextSeq, l.Seq))
		}
	}
	s.nextSeq = l.Seq + 1
	switch l.Kind {
	case KindEnd:
		n, err := l.Uint("lines")
		if err != nil || n != l.Seq {
			s.problem(fmt.Sprintf("end line counts %d lines, its own sequence is %d", n, l.Seq))
		}
		s.d.EndMicros, _ = l.Uint("us")
		s.sawEnd = true
		s.done = true
		return
	case KindFault:
		if err := s.d.apply(l, s.rawLine, s.vec); err != nil {
			s.problem(err.Error())
		}
		s.problem("firmware reported a fault; run stopped")
		s.done = true
		return
	}
	if err := s.d.apply(l, s.rawLine, s.vec); err != nil {
		s.problem(fmt.Sprintf("%v; line dropped", err))
		return
	}
	if l.Kind == KindMeasure && s.opt.Progress != nil {
		s.opt.Progress(s.d.Measurements[len(s.d.Measurements)-1])
	}
}
