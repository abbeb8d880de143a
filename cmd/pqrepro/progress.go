package main

import (
	"fmt"
	"io"
	"os"
	"time"

	"pqrepro/analysis/compare"
)

// A step is one unit of a statistics command that progress can time
// (compare.Step: its cost model is analysis/compare's).
type step = compare.Step

// progress runs the steps of a statistics command and reports them on its
// writer (stderr, never stdout). It prints one line per step, before it
// starts, with the step's expected duration and the clock time when the steps
// will be done. A step prints only when it is expected to take longer than
// quiet, or always when the writer is a terminal, so that scripts and tests
// see nothing for quick runs. The expectation is the step's cost scaled by how
// long the finished steps took against their costs, so it adapts to the
// machine after the first step. The clock is injected so that tests can drive
// it.
type progress struct {
	w      io.Writer
	now    func() time.Time
	prefix string
	always bool          // the writer is a terminal
	quiet  time.Duration // report steps expected to take longer than this

	spent, costDone float64 // seconds taken by and cost of finished steps
}

func newProgress(w io.Writer, now func() time.Time, prefix string) *progress {
	return &progress{w: w, now: now, prefix: prefix, always: isTerminal(w), quiet: time.Second}
}

// isTerminal reports whether w is a character device such as a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// scale is the ratio of measured to expected time so far, 1 before any
// step has taken measurable time.
func (p *progress) scale() float64 {
	if p.spent <= 0 || p.costDone <= 0 {
		return 1
	}
	return p.spent / p.costDone
}

// run runs steps in order and stops at the first error.
func (p *progress) run(steps []step) error {
	for i, s := range steps {
		var left float64
		for _, r := range steps[i:] {
			left += r.Cost + compare.StepBase
		}
		cost := s.Cost + compare.StepBase
		sc := p.scale()
		expect := time.Duration(cost * sc * float64(time.Second))
		start := p.now()
		if p.always || expect > p.quiet {
			rest := time.Duration(left * sc * float64(time.Second))
			fmt.Fprintf(p.w, "%s: [%d/%d] %s: about %s; all %d done about %s (%s left)\n", p.prefix, i+1, len(steps), s.Name,
				roundDuration(expect), len(steps), start.Add(rest).Format("15:04:05"), roundDuration(rest))
		}
		if err := s.Run(); err != nil {
			return err
		}
		p.spent += p.now().Sub(start).Seconds()
		p.costDone += cost
	}
	return nil
}

// roundDuration keeps two significant figures of the seconds.
func roundDuration(d time.Duration) time.Duration {
	switch {
	case d >= 10*time.Second:
		return d.Round(time.Second)
	case d >= time.Second:
		return d.Round(100 * time.Millisecond)
	}
	return d.Round(time.Millisecond)
}

// nsPerReadByte is the cost of parsing one byte of a sample file, in
// seconds on the reference machine (compare's cost model).
const nsPerReadByte = 15e-9

// costRead is the expected cost of reading the sample file at path.
func costRead(path string) float64 {
	fi, err := os.Stat(path)
	if err != nil {
		return 0
	}
	return nsPerReadByte * float64(fi.Size())
}
