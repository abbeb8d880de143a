package tcpstack

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"
)

// Since is when runs began to record measured.tcp_stack (issue 41). A run
// that started later must have it; an earlier one has none, which
// FromMeta returns as nil.
var Since = time.Date(2026, 12, 8, 0, 0, 0, 0, time.UTC)

// FromMeta reads measured.tcp_stack of a run's meta.json (name names it in
// errors): each side's Stack, keyed as the runner keys them. Each must
// validate; unknown keys are errors. A run that started before Since
// without it gives nil; one that started later without it is an error.
func FromMeta(name string, b []byte) (map[string]Stack, error) {
	var m struct {
		Start    time.Time `json:"start"`
		Measured struct {
			TCPStack json.RawMessage `json:"tcp_stack"`
		} `json:"measured"`
	}
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	raw := m.Measured.TCPStack
	if len(raw) == 0 || string(raw) == "null" {
		if !m.Start.Before(Since) {
			return nil, fmt.Errorf("%s: no measured.tcp_stack, yet the run started %s, after runs began to record it (%s)", name, m.Start.Format(time.RFC3339), Since.Format(time.RFC3339))
		}
		return nil, nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	var st map[string]Stack
	if err := dec.Decode(&st); err != nil {
		return nil, fmt.Errorf("%s: measured.tcp_stack: %w", name, err)
	}
	if len(st) == 0 {
		return nil, fmt.Errorf("%s: measured.tcp_stack: no side", name)
	}
	var errs []error
	for _, side := range slices.Sorted(maps.Keys(st)) {
		if side == "" {
			errs = append(errs, errors.New("a side without a name"))
		}
		if err := st[side].Validate(); err != nil {
			errs = append(errs, fmt.Errorf("[%q]: %w", side, err))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("%s: measured.tcp_stack%w", name, err)
	}
	return st, nil
}
