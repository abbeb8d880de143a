package gapmodel

import (
	_ "embed"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// registrationText is registration.txt, committed before any run that
// fits the model; Registered is parsed from it.
//
//go:embed registration.txt
var registrationText []byte

// SplitLowestHighest fits on the lowest and the highest delay level and
// holds out every other level.
const SplitLowestHighest = "lowest-and-highest"

// Registration is what registration.txt fixes before the run. That is the
// fit's split, the acceptance bound of the held-out predictions, the
// bootstrap and the bound under which a published number counts as
// explained.
type Registration struct {
	Split          string  // SplitLowestHighest
	BoundMs        float64 // every held-out |error| at most this (ms)
	Resamples      int     // bootstrap resamples over rounds
	Seed           uint64  // bootstrap seed
	Level          float64 // interval level, e.g. 0.95
	ExplainBoundMs float64 // every published |residual| at most this (ms)
}

// Registered is the registration committed in registration.txt.
var Registered = mustParse(registrationText)

func mustParse(b []byte) Registration {
	r, err := ParseRegistration(b)
	if err != nil {
		panic(err)
	}
	return r
}

// ParseRegistration reads the "key: value" lines of a registration; every
// other line is prose. A key line is one whose first word, up to a colon,
// is a known key. Every key must appear exactly once with a valid value.
func ParseRegistration(b []byte) (Registration, error) {
	var r Registration
	seen := map[string]bool{}
	for n, line := range strings.Split(string(b), "\n") {
		key, val, ok := strings.Cut(line, ":")
		if !ok || strings.ContainsAny(key, " \t") {
			continue
		}
		val = strings.TrimSpace(val)
		if seen[key] {
			return Registration{}, fmt.Errorf("registration line %d: %s given twice; keep one", n+1, key)
		}
		var err error
		switch key {
		case "split":
			if val != SplitLowestHighest {
				err = fmt.Errorf("split %q: the one split implemented is %q", val, SplitLowestHighest)
			}
			r.Split = val
		case "bound-ms":
			r.BoundMs, err = positive(val)
		case "explain-bound-ms":
			r.ExplainBoundMs, err = positive(val)
		case "level":
			r.Level, err = positive(val)
			if err == nil && r.Level >= 1 {
				err = fmt.Errorf("level %v: want a level in (0, 1)", r.Level)
			}
		case "resamples":
			r.Resamples, err = strconv.Atoi(val)
			if err == nil && r.Resamples < 2 {
				err = fmt.Errorf("resamples %d: want at least 2", r.Resamples)
			}
		case "seed":
			r.Seed, err = strconv.ParseUint(val, 10, 64)
		default:
			continue
		}
		if err != nil {
			return Registration{}, fmt.Errorf("registration line %d (%s): %w", n+1, key, err)
		}
		seen[key] = true
	}
	for _, k := range []string{"split", "bound-ms", "explain-bound-ms", "level", "resamples", "seed"} {
		if !seen[k] {
			return Registration{}, fmt.Errorf("registration: no %q line; add \"%s: <value>\"", k, k)
		}
	}
	return r, nil
}

func positive(s string) (float64, error) {
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return 0, err
	}
	if !(v > 0) || math.IsInf(v, 0) {
		return 0, fmt.Errorf("%v: want a positive finite number", v)
	}
	return v, nil
}
