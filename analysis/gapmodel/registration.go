package gapmodel

import (
	_ "embed"
	"fmt"
	"math"
	"slices"
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
var Registered = Must(ParseRegistration(registrationText))

// Must is v, or a panic with err. A registration is embedded in the code
// that reads it, so one that does not parse is a defect of the build,
// which every test of the package finds at once.
func Must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// ParseRegistration reads the "key: value" lines of the first
// registration; every other line is prose (KeyLines). Every key must
// appear exactly once with a valid value. The first registration was
// written before unknown keys were refused, and a prose line of it starts
// "go:embed)", so its unknown keys are skipped.
func ParseRegistration(b []byte) (Registration, error) {
	var r Registration
	keys := []string{"split", "bound-ms", "explain-bound-ms", "level", "resamples", "seed"}
	err := KeyLines(b, keys, false, func(key, val string) (err error) {
		switch key {
		case "split":
			r.Split, err = split(val)
		case "bound-ms":
			r.BoundMs, err = positive(val)
		case "explain-bound-ms":
			r.ExplainBoundMs, err = positive(val)
		case "level":
			r.Level, err = Fraction(val)
		case "resamples":
			r.Resamples, err = resamples(val)
		case "seed":
			r.Seed, err = strconv.ParseUint(val, 10, 64)
		}
		return err
	})
	if err != nil {
		return Registration{}, err
	}
	return r, nil
}

// KeyLines calls set for each key line of a registration, in order. A key
// line starts at the margin with one word and a colon; an indented line,
// or one whose text before its first colon holds a space, is prose. A key
// not in keys is an error naming the line when strict (else skipped); a
// key given twice or missing, or set's error, is always one.
func KeyLines(b []byte, keys []string, strict bool, set func(key, val string) error) error {
	seen := map[string]bool{}
	for n, line := range strings.Split(string(b), "\n") {
		key, val, ok := strings.Cut(line, ":")
		if !ok || key == "" || strings.ContainsAny(key, " \t") {
			continue
		}
		if !slices.Contains(keys, key) {
			if !strict {
				continue
			}
			return fmt.Errorf("registration line %d: unknown key %q; the keys are %v (indent a line to make it prose)", n+1, key, keys)
		}
		if seen[key] {
			return fmt.Errorf("registration line %d: %s given twice; keep one", n+1, key)
		}
		if err := set(key, strings.TrimSpace(val)); err != nil {
			return fmt.Errorf("registration line %d (%s): %w", n+1, key, err)
		}
		seen[key] = true
	}
	for _, k := range keys {
		if !seen[k] {
			return fmt.Errorf("registration: no %q line; add \"%s: <value>\"", k, k)
		}
	}
	return nil
}

func split(s string) (string, error) {
	if s != SplitLowestHighest {
		return s, fmt.Errorf("split %q: the one split implemented is %q", s, SplitLowestHighest)
	}
	return s, nil
}

// Fraction parses a number in (0, 1): a level or an alpha.
func Fraction(s string) (float64, error) {
	v, err := positive(s)
	if err == nil && v >= 1 {
		err = fmt.Errorf("%v: want a number in (0, 1)", v)
	}
	return v, err
}

func resamples(s string) (int, error) {
	n, err := strconv.Atoi(s)
	if err == nil && n < 2 {
		err = fmt.Errorf("resamples %d: want at least 2", n)
	}
	return n, err
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
