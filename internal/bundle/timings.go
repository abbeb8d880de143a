package bundle

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strings"
	"time"

	"pqrepro/internal/atomicfile"
)

// DefaultTimingsFile is where the measured wall times of the targets that
// are not experiments (build, verify, paper) are committed, relative to
// the repository root.
//
// They are measured once (PQREPRO_BUNDLE_MEASURE=1 mage bundle), written
// here and committed, and the bundle reads them, rather than timing the
// targets while bundling: a wall time differs from run to run, and a
// bundle whose bytes depended on it would not be reproducible.
const DefaultTimingsFile = "artifact/timings.json"

// Timings are measured wall times of targets, as committed in
// DefaultTimingsFile.
type Timings struct {
	// Host is the machine they were measured on (CPU model and cores).
	Host string `json:"host"`
	// Go is the Go version that ran them.
	Go      string            `json:"go"`
	Targets map[string]Timing `json:"targets"`
}

// A Timing is one target's measured wall time.
type Timing struct {
	Seconds float64 `json:"seconds"`
	// Note says what state the tree was in (for example "no-op: every
	// stage up to date") or why the target failed.
	Note string `json:"note,omitempty"`
	// Failed is set when the target returned an error; its time is then
	// not a measurement of the target's work.
	Failed bool `json:"failed,omitempty"`
}

// A Step is a target to time.
type Step struct {
	Name string
	Note string
	// State, if set, is called just before Run and its answer (for
	// example how many stages are stale) is added to the note.
	State func() string
	Run   func(ctx context.Context) error
}

// Measure runs each step once, in order, and records its wall time (now
// is the clock; nil is time.Now). A failing step is recorded as failed
// with its error and the next one still runs, so that one broken target
// does not hide the others' times; cancellation stops at once.
func Measure(ctx context.Context, host, goVersion string, steps []Step, now func() time.Time, log io.Writer) (*Timings, error) {
	if now == nil {
		now = time.Now
	}
	if log == nil {
		log = io.Discard
	}
	t := &Timings{Host: host, Go: goVersion, Targets: map[string]Timing{}}
	for i, s := range steps {
		fmt.Fprintf(log, "measure %d/%d: %s\n", i+1, len(steps), s.Name)
		note := s.Note
		if s.State != nil {
			note = strings.TrimPrefix(note+"; "+s.State(), "; ")
		}
		start := now()
		err := s.Run(ctx)
		secs := math.Round(now().Sub(start).Seconds()*1000) / 1000
		if ctx.Err() != nil {
			return nil, fmt.Errorf("measure %s: %w", s.Name, ctx.Err())
		}
		tm := Timing{Seconds: secs, Note: note}
		if err != nil {
			tm.Failed = true
			tm.Note = strings.TrimPrefix(note+"; failed: "+err.Error(), "; ")
		}
		fmt.Fprintf(log, "measure %s: %.3f s%s\n", s.Name, secs, map[bool]string{true: " (failed)"}[tm.Failed])
		t.Targets[s.Name] = tm
	}
	return t, nil
}

// Write writes the timings atomically as indented JSON with sorted keys.
func (t *Timings) Write(path string) error {
	b, err := json.MarshalIndent(t, "", "  ")
	if err != nil {
		return err
	}
	return atomicfile.WriteFile(path, append(b, '\n'), 0o644)
}

// parseTimings parses a committed timings file; name is used in errors.
func parseTimings(name string, b []byte) (*Timings, error) {
	var t Timings
	if err := json.Unmarshal(b, &t); err != nil {
		return nil, fmt.Errorf("%s: %w: measure again with PQREPRO_BUNDLE_MEASURE=1 mage bundle", name, err)
	}
	for k, v := range t.Targets {
		if v.Seconds < 0 || math.IsNaN(v.Seconds) {
			return nil, fmt.Errorf("%s: target %s has an invalid time %v", name, k, v.Seconds)
		}
	}
	return &t, nil
}
