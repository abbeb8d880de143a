package repro

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"

	"pqrepro/internal/atomicfile"
)

// LockVersion is the format version of the lock file. A lock file of
// another version is refused with an error that says how to rebuild it.
const LockVersion = 1

// A Lock records, for every stage that has run, what it ran on and what
// it produced. It is committed with the repository, so that `status` can
// say which input changed and `verify` can check the recorded hashes.
// It is written as indented JSON with sorted keys (encoding/json sorts map
// keys), so a rerun of one stage changes a few lines of the diff.
type Lock struct {
	Version int                    `json:"version"`
	Stages  map[string]*StageState `json:"stages"`
}

// StageState is the recorded state of one stage after its last
// successful run.
type StageState struct {
	// Code is the SHA-256 of the stage's own code (see Stage.Code).
	Code string `json:"code"`
	// Params are the stage's parameters, as strings.
	Params map[string]string `json:"params,omitempty"`
	// Inputs maps every input file (slash-separated, relative to the
	// repository root) to its SHA-256.
	Inputs map[string]string `json:"inputs"`
	// Outputs maps every output file to its SHA-256.
	Outputs map[string]string `json:"outputs"`
	// Tools records the versions of the tools the stage used (Go, and
	// any external program such as pdflatex). They are recorded, not
	// compared: a reviewer with another patch release of Go should be
	// told by verify whether the bytes still agree, not be forced to
	// rebuild.
	Tools map[string]string `json:"tools,omitempty"`
}

// ErrNoLock is returned by ReadLock when there is no lock file.
var ErrNoLock = errors.New("no lock file")

// ReadLock reads the lock file at path. A missing file gives ErrNoLock
// (wrapped); a corrupt one gives an error that says how to rebuild.
func ReadLock(path string) (*Lock, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("%s: %w (run `mage build` to create it)", path, ErrNoLock)
	}
	if err != nil {
		return nil, fmt.Errorf("read lock file: %w", err)
	}
	return ParseLock(path, b)
}

// ParseLock parses the content of a lock file; name is used in errors.
func ParseLock(name string, b []byte) (*Lock, error) {
	rebuild := "delete it and run `mage build` (or `git checkout " + name + "` to restore the committed one)"
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var l Lock
	if err := dec.Decode(&l); err != nil {
		return nil, fmt.Errorf("lock file %s is corrupt (%v): %s", name, err, rebuild)
	}
	if dec.More() {
		return nil, fmt.Errorf("lock file %s is corrupt (trailing data after the JSON object): %s", name, rebuild)
	}
	if l.Version != LockVersion {
		return nil, fmt.Errorf("lock file %s has version %d, this pqrepro writes version %d: %s", name, l.Version, LockVersion, rebuild)
	}
	if l.Stages == nil {
		l.Stages = map[string]*StageState{}
	}
	for name, s := range l.Stages {
		if s == nil || len(s.Code) != 64 {
			return nil, fmt.Errorf("lock file is corrupt: stage %q has no valid code hash: %s", name, rebuild)
		}
		for _, m := range []map[string]string{s.Inputs, s.Outputs} {
			for f, h := range m {
				if len(h) != 64 {
					return nil, fmt.Errorf("lock file is corrupt: stage %q file %q has hash %q: %s", name, f, h, rebuild)
				}
			}
		}
	}
	return &l, nil
}

// NewLock returns an empty lock.
func NewLock() *Lock {
	return &Lock{Version: LockVersion, Stages: map[string]*StageState{}}
}

// Marshal returns the canonical encoding of the lock: indented JSON,
// sorted keys, a final newline.
func (l *Lock) Marshal() []byte {
	b, err := json.MarshalIndent(l, "", "  ")
	if err != nil {
		panic(err) // only maps of strings: cannot fail
	}
	return append(b, '\n')
}

// Write atomically writes the lock to path, leaving the file untouched
// if its content would not change.
func (l *Lock) Write(path string) error {
	_, err := atomicfile.WriteIfChanged(path, l.Marshal(), 0o644)
	return err
}
